"""Benchmarks in their quick mode: each prints its table and rerun line, and its figures are the
work it did over the time it measured.

No assertion here depends on how fast the machine is. Where the bench times with its own clock
(`time` in simrl.bench.sim and simrl.bench.env), a stand-in clock that advances one second per
read makes every rate the work counted over the clock reads of the timed span, so the figures
are exact; elsewhere the printed table is checked against the values it was printed from.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import simrl.bench
from simrl.bench import bench_graphs, main, parse
from simrl.errors import ConfigError, UnknownNameError


class _Ticks:
    """A stand-in for the bench's clock: every read advances it one second."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 1.0
        return self.now


@pytest.fixture
def ticks(monkeypatch):
    clock = _Ticks()
    for module in (simrl.bench.sim, simrl.bench.env):  # the modules that time with it
        monkeypatch.setattr(module, "time", clock)
    return clock


def _spy(monkeypatch, owner, name: str) -> list:
    """Record what `owner.name` returns while the test runs; returns the list of results."""
    real, seen = getattr(owner, name), []

    def spy(*args, **kwargs):
        seen.append(real(*args, **kwargs))
        return seen[-1]

    monkeypatch.setattr(owner, name, spy)
    return seen


def _rows(out: str, first: str) -> list[list[float]]:
    """Numeric table rows whose first column is `first`."""
    rows = []
    for line in out.splitlines():
        cells = line.split()
        if cells and cells[0] == first and all(re.fullmatch(r"[\d,.]+%?", c) for c in cells):
            rows.append([float(c.replace(",", "").rstrip("%")) for c in cells])
    return rows


def test_sim_mode_rates_count_the_env_steps_of_each_loop(ticks, capsys):
    """quick=true: 10 control steps of 32 worlds per loop; each loop reads the clock once before
    and once after, so on the ticking clock both rates are 32 x 10 env-steps per second."""
    main(["sim", "quick=true", "num_worlds=32"])
    out = capsys.readouterr().out
    assert _rows(out, "32") == [[32, 320, 320, 1.0]]
    assert "rerun: python -m simrl.bench sim quick=true num_worlds=32" in out


@pytest.mark.parametrize(("robot", "task"), [(None, None), ("unitree_go1", None), (None, "lift")])
def test_env_mode_rates_and_physics_share_count_the_timed_calls(robot, task, ticks, capsys):
    """The task loop times each env step and, inside it, its one physics call (sim.step with the
    decimation): 4 clock reads per step, 10 steps, one read before. So the task rate is
    n x 10 / 41, and the physics share is the 10 physics seconds over those 41."""
    n = 16 if robot or task else 32
    args = ["env", "quick=true", f"num_worlds={n}", *([f"robot={robot}"] if robot else []),
            *([f"task={task}"] if task else [])]
    main(args)
    out = capsys.readouterr().out
    if task:
        assert "lift task (mujoco)" in out
    elif robot:
        assert "robot unitree_go1" in out and "quadruped task (mujoco)" in out
    else:
        assert "quadruped" in out
    (row,) = _rows(out, str(n))
    bare, ours, share = n * 10, n * 10 / 41, 10 / 41
    assert row == [n, bare, round(ours), round(ours / bare, 3)]
    assert f"physics share of the task step (its own states, same run): {share:.3f}" in out
    assert f"(task logic + resets: {1 - share:.1%})" in out
    assert f"rerun: python -m simrl.bench {' '.join(args)}" in out


def test_iteration_mode_splits_the_iteration_into_shares(monkeypatch, capsys):
    seen = _spy(monkeypatch, simrl.bench.iteration, "bench_iteration")
    main(["iteration", "quick=true", "num_worlds=32", "device=cpu"])
    (row,) = _rows(capsys.readouterr().out, "32")
    (r,) = seen
    # the rate is the iteration's env steps (envs x the agent's steps per env) over its time
    steps_per_iteration = 32 * simrl.bench.quadruped_agent()["num_steps_per_env"]
    assert r["steps_per_s"] * r["iteration_s"] == pytest.approx(steps_per_iteration, rel=1e-9)
    # physics inside the env step, the env step inside the rollout: no part is negative
    parts = [r["physics"], r["task"], r["policy_storage"], r["ppo_update"]]
    assert min(parts) > 0 and sum(parts) == pytest.approx(1.0, abs=1e-9)
    # the table is those figures
    assert row == [32, round(r["iteration_s"], 2), round(r["steps_per_s"]), *(round(100 * x) for x in parts)]


def test_export_mode_times_onnxruntime_against_torch(monkeypatch, capsys):
    import simrl.rl.export

    samples = _spy(monkeypatch, simrl.rl.export, "latency_us")
    main(["export", "quick=true"])
    out = capsys.readouterr().out
    assert "batch 1, 1 thread, 200 runs" in out and "(random weights)" in out
    ort_us, torch_us = samples  # onnxruntime first, then torch: quick=true times 200 calls of each
    assert len(ort_us) == len(torch_us) == 200
    for label, us in (("onnxruntime (CPU)", ort_us), ("torch eager (CPU)", torch_us)):
        assert f"{label:>22} {np.median(us):>10.1f} {np.percentile(us, 99):>10.1f}" in out
    ratio = np.median(ort_us) / np.median(torch_us)
    assert f"onnxruntime / torch median latency ratio: {ratio:.2f}" in out
    if not torch.cuda.is_available():
        assert "TensorRT fp16: no figure (cannot build a TensorRT engine here" in out


@pytest.mark.mjwarp
@pytest.mark.parametrize("what", ["sim", "task"])
def test_graphs_on_and_off_on_warps_cpu_device(what, ticks, capsys):
    """The GPU tables' code path, run on Warp's CPU device (graph capture works there too). Each
    loop reads the clock before and after its 2 steps of 4 worlds: 8 env-steps per tick."""
    (row,) = bench_graphs(what, [4], steps=2, repeats=1, device="cpu")
    assert row == {"num_worlds": 4, "graphs_on": 8.0, "graphs_off": 8.0, "ratio": 1.0}
    assert _rows(capsys.readouterr().out, "4") == [[4, 8, 8, 1.0]]


def test_ranks_mode_compares_torchrun_ranks_with_one(capsys):
    main(["ranks", "quick=true", "task=cartpole", "num_worlds=64", "device=cpu"])
    out = capsys.readouterr().out
    one, two = _rows(out, "1"), _rows(out, "2")
    assert one[0][1] == 64 and two[0][1] == 32 and one[0][2] > 0 and two[0][2] > 0
    ratio = float(re.search(r"ratio 2 ranks / 1 rank: ([\d.]+)", out).group(1))
    assert ratio == pytest.approx(two[0][2] / one[0][2], abs=0.01)


def test_ranks_mode_refuses_totals_it_cannot_split():
    with pytest.raises(ConfigError, match="a multiple of ranks=2"):
        main(["ranks", "num_worlds=63", "device=cpu"])


def test_every_key_is_a_key_value_word_read_as_yaml():
    args = parse(["env", "robot=unitree_go1", "num_worlds=[256,1024]", "steps=30", "quick=true"])
    assert (args.mode, args.robot, args.num_worlds, args.steps, args.repeats) == (
        "env", "unitree_go1", [256, 1024], 30, 1)  # quick: one repeat
    args = parse(["iteration", "num_worlds=4096", "device=cuda:0", "versus.height_scan_size=[1.6,1.0]",
                  "versus.history=3"])
    assert args.num_worlds == [4096] and args.device == "cuda:0"
    assert args.versus == {"height_scan_size": [1.6, 1.0], "history": 3}
    assert parse([]).mode == "sim" and parse(["quick=true"]).num_worlds == [64]


@pytest.mark.parametrize(("words", "message"), [
    (["env", "--robot", "unitree_go1", "--num-worlds", "256", "1024", "--quick"],
     "python -m simrl.bench takes key=value words: --robot unitree_go1 is robot=unitree_go1 (the whole "
     "command: python -m simrl.bench env robot=unitree_go1 num_worlds=[256,1024] quick=true)"),
    (["iteration", "--versus", "height_scan_size=[1.6,1.0]"],
     "--versus height_scan_size=[1.6,1.0] is versus.height_scan_size=[1.6,1.0]"),
    (["learn", "--seeds", "3"], "--seeds 3 is seeds=3"),
])
def test_flag_words_are_refused_naming_the_key_value_form(words, message):
    with pytest.raises(ConfigError) as e:
        main(words)
    assert message in str(e.value)


def test_unknown_keys_are_refused_listing_the_modes_keys():
    valid = "valid: num_worlds, steps, repeats, nthread, quick, robot, task, terrain$"
    with pytest.raises(UnknownNameError, match=f"unknown key 'robt' for python -m simrl.bench env; {valid}"):
        parse(["env", "robt=go1"])
    elsewhere = r"'robot' for python -m simrl.bench sim; .* \(robot is a key of env\)$"
    with pytest.raises(UnknownNameError, match=elsewhere):
        parse(["sim", "robot=go1"])
    with pytest.raises(ConfigError, match=r"num_worlds=\[0\]: num_worlds takes an integer >= 1 or a list"):
        parse(["num_worlds=[0]"])
