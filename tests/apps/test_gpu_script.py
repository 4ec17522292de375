"""bench/gpu.sh, the one-shot GPU check: rehearsed end to end on the CPU, and its failure report."""

from __future__ import annotations

import math
import re

import pytest

pytestmark = pytest.mark.mjwarp  # the rehearsal runs MuJoCo Warp on Warp's CPU device


def _gpu_script(tmp_path, **env_vars):
    import os
    import subprocess

    from simrl import ROOT

    env = {**os.environ, "SIMRL_GPU_RESULTS": str(tmp_path), **env_vars}
    return subprocess.run(["bash", str(ROOT / "bench" / "gpu.sh"), "--rehearse"], env=env,
                          capture_output=True, text=True, timeout=900)


def test_gpu_script_rehearses_end_to_end_on_the_cpu(tmp_path):
    """bench/gpu.sh --rehearse: the GPU check's every step, on Warp's CPU device, tiny sizes."""
    r = _gpu_script(tmp_path)
    log = (tmp_path / "gpu.log").read_text()
    assert r.returncode == 0, log[-3000:]
    assert "simrl GPU check: all steps passed" in log
    for step in ("sim layer, graphs on/off", "quadruped task, graphs on/off", "PPO iteration shares",
                 "train to the walking criterion", "play: tracking and falls",
                 "launches and syncs per env step", "rough-terrain task, graphs on/off"):
        assert f"-- {step}: exit 0" in log, step
    assert (tmp_path / "train" / "model_2.pt").is_file()
    assert "graphs on env-steps/s" in log
    assert "quadruped task, random actions, terrain rough" in log
    # play: the 2-iteration run, 2 episodes (PLAY_ENVS) under each command of configs/play.yaml
    assert "(iteration 2) on quadruped, 2 episodes per command" in log
    commands = re.findall(r"cmd \[([^]]*)\]: return (\S+) \| lin-vel error (\S+) m/s", log)
    assert [c for c, _, _ in commands] == ["0.5, 0.0, 0.0", "1.0, 0.0, 0.0", "0.0, 0.0, 0.0"], commands
    # finite figures from real episodes: a NaN or an empty evaluation would print nan
    assert all(math.isfinite(float(ret)) and 0 <= float(err) < 5 for _, ret, err in commands), commands
    # the launches table: both rows, zero syncs
    rows = [ln.split() for ln in log.splitlines() if ln.strip().startswith(("no resets", "with resets"))]
    assert len(rows) == 2 and all(float(row[3]) == 0.0 for row in rows), rows


def test_gpu_script_reports_failed_steps_and_keeps_going(tmp_path):
    r = _gpu_script(tmp_path, PYTHON="false")  # every python step fails at once
    log = (tmp_path / "gpu.log").read_text()
    assert r.returncode == 8, log  # versions, 3 graphs tables, iteration, train, play, launches
    assert "8 step(s) failed: versions (exit 1)" in log
