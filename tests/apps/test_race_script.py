"""bench/race_mjlab.sh (the same-GPU race with mjlab): the four runs it would make, and its
table's arithmetic on each side's own per-iteration logs."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _parser():
    spec = importlib.util.spec_from_file_location("race_parse", ROOT / "bench" / "race_parse.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_dry_run_names_both_sides_at_the_same_envs_and_iterations():
    out = subprocess.run(["bash", "bench/race_mjlab.sh", "30", "--dry-run"], cwd=ROOT, text=True,
                         capture_output=True, check=True).stdout
    cmds = [line for line in out.splitlines() if not line.startswith("#")]
    assert len(cmds) == 4
    mjlab, simrl = cmds[0::2], cmds[1::2]
    assert ["Unitree-Go1" in mjlab[0], "Unitree-G1" in mjlab[1]] == [True, True]
    assert "robot=unitree_go1" in simrl[0] and "robot=unitree_g1" in simrl[1]
    for c in mjlab:  # each side on its own install only
        assert ".stash-mjlab/site" in c and "--env.scene.num-envs 4096" in c
        assert "--agent.max-iterations 30" in c
    for c in simrl:
        assert ".stash/site:" in c and ".stash-mjlab" not in c and "num_envs=4096" in c
        assert "max_iterations=30" in c and "device=cuda" in c
    bad = subprocess.run(["bash", "bench/race_mjlab.sh", "many"], cwd=ROOT, text=True, capture_output=True)
    assert bad.returncode == 2 and "usage" in bad.stderr


def _rsl_rl_block(it: int, total: int, steps: int, collect: float, learn: float) -> str:
    """One iteration as rsl-rl's Logger prints it (bold title, right-aligned keys)."""
    return (f"{'#' * 80}\n\x1b[1m{f' Learning iteration {it}/{total} '.center(80)}\x1b[0m \n\n"
            f"{'Total steps:':>35} {steps} \n{'Steps per second:':>35} 1 \n"
            f"{'Collection time:':>35} {collect:.3f}s \n{'Learning time:':>35} {learn:.3f}s \n"
            f"{'Mean value_function loss:':>35} 0.0100\n")


def test_the_table_sums_steps_and_seconds_after_the_warm_up(tmp_path, capsys):
    race = _parser()
    # mjlab: 4 iterations of 4096 x 24 steps, the first slow (compile); skip 1
    log = tmp_path / "mjlab_go1.log"
    times = [(5.0, 2.0), (0.5, 0.25), (0.5, 0.25), (1.0, 0.5)]
    log.write_text("".join(_rsl_rl_block(i, 4, 98304 * (i + 1), c, u) for i, (c, u) in enumerate(times)))
    rows = race.mjlab_iterations(log)
    assert rows == [(98304, 5.0, 2.0), (98304, 0.5, 0.25), (98304, 0.5, 0.25), (98304, 1.0, 0.5)]
    s = race.summarize(rows, skip=1)
    assert s["kept"] == 3
    assert s["collect_sps"] == pytest.approx(3 * 98304 / 2.0)
    assert s["iter_sps"] == pytest.approx(3 * 98304 / 3.0)
    # simrl: metrics.csv, cumulative env_steps; a torn last line is dropped
    run = tmp_path / "simrl_go1"
    run.mkdir()
    (run / "metrics.csv").write_text("iteration,env_steps,collect_s,learn_s\n1,98304,9.0,1.0\n"
                                     "2,196608,0.4,0.2\n3,294912,0.4,0.2\n4,3932")
    assert race.simrl_iterations(run / "metrics.csv") == [(98304, 9.0, 1.0), (98304, 0.4, 0.2),
                                                          (98304, 0.4, 0.2)]
    (tmp_path / "runs.tsv").write_text(f"mjlab_go1\tmjlab\tGo1 flat\t{log}\t0\t60\n"
                                       f"simrl_go1\tsimrl\tGo1 flat\t{run / 'metrics.csv'}\t0\t50\n"
                                       "mjlab_g1\tmjlab\tG1 flat\t-\tskipped\t-\n")
    assert race.main([str(tmp_path), "--skip", "1", "--envs", "4096"]) == 1  # a skipped run: exit 1
    table = capsys.readouterr().out
    # simrl after the warm-up: 2 x 98304 steps over 0.8 s collecting, 1.2 s in all
    assert "245,760" in table and "163,840" in table
    assert "skipped" in table
