"""The learning benchmark (simrl.rl.learnbench): criterion logic, a tiny real run, CSV -> plot."""

from __future__ import annotations

import csv
import json
import math

import pytest

from simrl.errors import ConfigError, UserError
from simrl.rl.learnbench import Criterion, parse_args, run
from simrl.rl.learnreport import first_met, median, seed_rows, worst


def _result(cmd, err, falls, ret=1.0):
    return {"command": cmd, "lin_vel_error": err, "fall_share": falls, "mean_return": ret}


def test_criterion_names_each_miss():
    c = Criterion()
    good = [_result([0.5, 0, 0], 0.15, 0.0), _result([0, 0, 0], 0.02, 0.03)]
    assert c.met(good) and c.failures(good) == []
    slow = [_result([0.5, 0, 0], 0.15, 0.0), _result([1.0, 0, 0], 0.31, 0.0)]
    assert c.failures(slow) == ["cmd [1.0, 0, 0]: lin-vel error 0.310 > 0.2"]
    falls = [_result([0.5, 0, 0], 0.1, 0.0625)]
    assert not c.met(falls) and "falls 6.2% > 5%" in c.failures(falls)[0]
    # a task without commands (cartpole): its lin-vel error is not judged, falls and return are
    untracked = [_result(None, 9.9, 0.0, ret=50.0)]
    assert c.met(untracked)
    assert not Criterion(min_return=60.0).met(untracked)
    assert not c.met([])


def test_parse_args_splits_bench_keys_from_train_overrides(tmp_path):
    cfg = parse_args(["task=cartpole", "seeds=2", "iterations=6", "eval_every=4", "max_fall_share=0.5",
                      "task.cfg.push_vel=0.5", f"out={tmp_path}"])
    assert cfg.seeds == [1, 2] and cfg.checkpoints == [4, 6]
    assert cfg.criterion.max_fall_share == 0.5
    assert cfg.overrides == ["task=cartpole", "task.cfg.push_vel=0.5"]
    assert parse_args(["seeds=[3,7]"]).seeds == [3, 7]
    assert parse_args(["iterations=200", "eval_every=50", "first_eval=100"]).checkpoints == [100, 150, 200]
    for bad in (["seeds"], ["seeds=0"], ["iterations=x"], ["seed=4"], [f"checkout={tmp_path}"],
                ["first_eval=70"], ["eval_every=0", "first_eval=50"], ["iterations=100", "first_eval=150"],
                ["seeds=[1,1]"]):
        with pytest.raises(UserError):
            parse_args(bad)


def test_seed_rows_first_checkpoint_and_minutes(tmp_path):
    """Rows carry env steps and training minutes from metrics.csv; the first met one is found."""
    with open(tmp_path / "metrics.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["iteration", "env_steps", "collect_s", "learn_s"])
        for it in range(1, 5):
            w.writerow([it, 100 * it, 20.0, 10.0])  # 0.5 min per iteration
    cfg = parse_args(["iterations=4", "eval_every=2"])
    evals = {2: [_result([0.5, 0, 0], 0.4, 0.0)], 4: [_result([0.5, 0, 0], 0.1, 0.0)]}
    rows = seed_rows(cfg, 1, tmp_path, evals)
    assert [r["met"] for r in rows] == [0, 1]
    f = first_met(rows)
    assert f["iteration"] == 4 and f["env_steps"] == 400 and f["train_minutes"] == pytest.approx(2.0)
    assert rows[0]["lin_vel_error@0.5,0,0"] == 0.4


def test_worst_and_median_never_hide_a_nan():
    assert worst([0.1, 0.3]) == 0.3
    assert math.isnan(worst([0.1, math.nan])) and math.isnan(worst([math.nan, 0.1]))
    assert median([100, 150]) == 150 and median([100, 150, math.inf]) == 150  # even: the later one
    assert math.isnan(median([0.1, math.nan, 0.2]))


def test_tiny_cartpole_run_fails_then_passes_and_plots(tmp_path, capsys):
    """2 seeds x 2 iterations of cartpole really train and evaluate (in subprocesses, as
    eval.py does): the pole falls in every episode, so the default criterion is missed; a
    criterion that tolerates every fall is met at the first checkpoint, from the stored runs
    and evaluations (nothing retrained or re-evaluated). The CSV draws through simrl.plot; the
    exported policy runs sim-to-sim; a rerun with other training settings is refused."""
    from simrl.plot import main as plot_main
    from simrl.plot import read_runs

    out = tmp_path / "learn"
    args = ["task=cartpole", "num_envs=32", "seeds=2", "iterations=2", "eval_every=1", "eval_envs=8",
            f"out={out}"]
    rows = run(parse_args(args), progress=False)
    assert [(r["seed"], r["iteration"]) for r in rows] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert all(r["worst_fall_share"] > 0.05 and r["met"] == 0 for r in rows)
    text = capsys.readouterr().out
    assert "0 of 2 seeds met the criterion by iteration 2" in text and "| 1 | not by 2 |" in text

    stored = sorted(out.glob("seed*/model_*.pt")) + sorted(out.glob("seed*/eval_*.json"))
    assert len(stored) == 8
    mtimes = [p.stat().st_mtime_ns for p in stored]
    rows = run(parse_args([*args, "max_fall_share=1.0"]), progress=False)
    assert [r["met"] for r in rows] == [1, 1, 1, 1]
    assert [p.stat().st_mtime_ns for p in stored] == mtimes  # read back, not redone
    text = capsys.readouterr().out
    assert "2 of 2 seeds met the criterion by iteration 2" in text and "median first checkpoint 1," in text

    runs = read_runs(out / "learn.csv")
    assert [name for name, _ in runs] == ["seed 1", "seed 2"]
    assert list(runs[0][1]["met"]) == [1.0, 1.0] and list(runs[0][1]["iteration"]) == [1.0, 2.0]
    png = tmp_path / "learn.png"
    plot_main([str(out / "learn.csv"), "-o", str(png), "-m", "worst_fall_share", "mean_return@episodes"])
    assert png.stat().st_size > 1000

    # sim-to-sim of the export at the last checkpoint: its own columns, judged by the same rule
    s2s_args = [*args, "sim2sim_at=2", "sim2sim_episodes=2", "max_fall_share=1.0"]
    rows = run(parse_args(s2s_args), progress=False)
    assert [r.get("s2s_met") for r in rows] == [None, 1, None, 1]
    assert all(r["s2s_worst_fall_share"] == 1.0 for r in rows if r["iteration"] == 2)
    assert (out / "seed1" / "export_model_2" / "policy.onnx").is_file()
    assert "sim-to-sim at 2 (2 episodes per command" in capsys.readouterr().out

    with pytest.raises(ConfigError, match=r"holds runs trained with other settings \(overrides: "):
        run(parse_args([*args, "task.cfg.max_angle=0.5"]), progress=False)


def test_more_iterations_continue_the_stored_runs_bit_for_bit(tmp_path):
    """A benchmark rerun with a larger `iterations=` continues each seed from its last
    checkpoint (the stored checkpoints and evaluations are kept, not retrained) and ends with the
    same weights as a seed trained to that count in one go."""
    import torch

    base = ["task=cartpole", "num_envs=32", "seeds=[1]", "eval_every=1", "eval_envs=4"]
    out, straight = tmp_path / "continued", tmp_path / "straight"
    run(parse_args([*base, "iterations=2", f"out={out}"]), progress=False)
    kept = sorted(out.glob("seed1/model_*.pt")) + sorted(out.glob("seed1/eval_*.json"))
    mtimes = [p.stat().st_mtime_ns for p in kept]
    rows = run(parse_args([*base, "iterations=3", f"out={out}"]), progress=False)
    assert [r["iteration"] for r in rows] == [1, 2, 3]
    assert [p.stat().st_mtime_ns for p in kept] == mtimes
    assert json.loads((out / "learn.json").read_text())["iterations"] == 3
    run(parse_args([*base, "iterations=3", f"out={straight}"]), progress=False)
    a, b = (torch.load(d / "seed1" / "model_3.pt", weights_only=False) for d in (out, straight))
    for key in ("actor_state_dict", "critic_state_dict"):
        assert a[key].keys() == b[key].keys()
        assert all(torch.equal(a[key][k], b[key][k]) for k in a[key]), key
    # fewer iterations than stored: the earlier checkpoints are read, nothing is trained
    rows = run(parse_args([*base, "iterations=2", f"out={out}"]), progress=False)
    assert [r["iteration"] for r in rows] == [1, 2] and not (out / "seed1" / "model_4.pt").exists()


def test_the_evaluated_commands_are_a_benchmark_key_kept_in_its_manifest(tmp_path):
    from simrl.rl.learnbench import check_manifest, parse_args

    cfg = parse_args(["task=humanoid", "commands=[[0.5,0,0],[0,0,0]]", f"out={tmp_path}"])
    assert cfg.commands == [[0.5, 0.0, 0.0], [0.0, 0.0, 0.0]] and cfg.overrides == ["task=humanoid"]
    check_manifest(cfg)
    other = parse_args(["task=humanoid", "commands=[[1.0,0,0]]", f"out={tmp_path}"])
    with pytest.raises(ConfigError, match="holds runs trained with other settings"):
        check_manifest(other)  # results evaluated on other commands are not reused
