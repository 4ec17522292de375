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
    script = ["bash", str(ROOT / "bench" / "gpu.sh"), "--cpu", "--sweeps", "--lift"]
    return subprocess.run(script, env=env, capture_output=True, text=True, timeout=1200)


def test_gpu_script_rehearses_end_to_end_on_the_cpu(tmp_path):
    """bench/gpu.sh --cpu: the GPU check's every step, on Warp's CPU device, tiny sizes."""
    r = _gpu_script(tmp_path)
    log = (tmp_path / "gpu.log").read_text()
    assert r.returncode == 0, log[-3000:]
    assert "simrl GPU check: all steps passed" in log
    steps = re.findall(r"^-- (.*): exit 0", log, flags=re.M)
    assert steps == ["versions", "train quadruped", "eval quadruped: tracking, falls, criterion",
                     "train Menagerie Go1", "eval Menagerie Go1: tracking, falls, criterion",
                     "PPO iteration shares", "quadruped task, graphs on/off",
                     "launches and syncs per env step",
                     "learn Unitree G1 walking recipe (to the criterion)",
                     "learn Franka lift (to 80% success)", "sim layer, graphs on/off",
                     "quadruped task sizes, graphs on/off",
                     "rough-terrain task, graphs on/off"], steps  # learning first, sweeps last
    assert (tmp_path / "train" / "model_2.pt").is_file() and (tmp_path / "train_go1" / "model_1.pt").is_file()
    # G1's recipe and lift on mjwarp through the learning benchmark (2 iterations: neither meets it)
    assert (tmp_path / "learn_g1" / "seed1" / "model_2.pt").is_file()
    assert log.count("0 of 1 seeds met the criterion by iteration 2") == 2
    assert (tmp_path / "learn_lift" / "learn.csv").is_file()
    # each evaluation says whether the criterion is met (2 iterations: it is not)
    assert log.count("walking criterion: not met: ") == 2
    assert "graphs on env-steps/s" in log
    assert "quadruped task, random actions, terrain rough" in log
    # eval: the 2-iteration run, 2 episodes (EVAL_ENVS) under each command of configs/eval.yaml
    assert "(iteration 2) on quadruped, 2 episodes per command" in log
    commands = re.findall(r"cmd \[([^]]*)\]: return (\S+) \| lin-vel error (\S+) m/s", log)
    assert [c for c, _, _ in commands[:3]] == ["0.5, 0.0, 0.0", "1.0, 0.0, 0.0", "0.0, 0.0, 0.0"], commands
    assert len(commands) == 6  # the quadruped and Go1 under the same three commands
    # finite figures from real episodes (the quadrupeds stand through 1.2 s episodes)
    assert all(math.isfinite(float(ret)) and 0 <= float(err) < 5 for _, ret, err in commands), commands
    # the launches table: both rows, zero syncs
    rows = [ln.split() for ln in log.splitlines() if ln.strip().startswith(("no resets", "with resets"))]
    assert len(rows) == 2 and all(float(row[3]) == 0.0 for row in rows), rows


def test_gpu_script_reports_failed_steps_and_keeps_going(tmp_path):
    r = _gpu_script(tmp_path, PYTHON="false")  # every python step fails at once
    log = (tmp_path / "gpu.log").read_text()
    # versions, 2 x (train, eval), iteration, task graphs, launches, G1 learn, lift, 3 sweeps
    assert r.returncode == 13, log
    assert "13 step(s) failed: versions (exit 1)" in log
