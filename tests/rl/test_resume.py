"""Resume bit for bit, runs killed with SIGKILL, disk-full checkpoint writes, blow-up stops.

The chaos run (20 kills at random moments) is `python bench/chaos.py`; docs/reliability.md has
its figures."""

from __future__ import annotations

import csv
import errno
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from simrl import CONFIGS, ROOT
from simrl.registry import make
from simrl.rl.app import seed_everything
from simrl.rl.checkpoint import (
    RunWriteError,
    TrainingDiverged,
    latest_checkpoint,
    learner_differences,
    load_checkpoint,
)
from simrl.rl.runner import Trainer

TIMING = ("steps_per_s", "collect_s", "learn_s")  # wall-clock columns: the only ones that differ


def _agent(task: str, steps: int = 8) -> dict:
    with initialize_config_dir(config_dir=str(CONFIGS), version_base=None):
        cfg = compose("train", overrides=[f"task={task}"])
    agent = OmegaConf.to_container(cfg.agent, resolve=True)
    agent["num_steps_per_env"] = steps
    return agent


def _trainer(task: str, n: int, run_dir: Path | None = None, backend: str = "mujoco", **cfg) -> Trainer:
    seed_everything(1)
    sim = {"graphs": False} if backend == "mjwarp" else None
    env = make(task, n, device="cpu", backend=backend, seed=1, sim=sim, cfg=cfg or None)
    return Trainer(env, _agent(task), run_dir=run_dir)


def _rows(history: list[dict]) -> list[dict]:
    """The metrics rows without the wall-clock columns, NaN (no episode ended yet) as a string."""
    return [{k: (v if v == v else "nan") for k, v in m.items() if k not in TIMING} for m in history]


@pytest.mark.parametrize("task,n,backend", [
    ("cartpole", 64, "mujoco"), ("quadruped", 48, "mujoco"),
    pytest.param("quadruped", 8, "mjwarp", marks=pytest.mark.mjwarp),  # Warp's CPU device
])
def test_resume_continues_bit_for_bit(task, n, backend, tmp_path):
    """a + b iterations with a checkpoint between equal a + b straight: weights, normalizer,
    optimizer moments and every logged metric but the wall-clock ones. Without the env state the
    same checkpoint continues differently (the test can fail)."""
    half = 2 if backend == "mjwarp" else 3  # Warp's CPU device is slow
    straight = _trainer(task, n, backend=backend)
    straight.learn(2 * half, progress=False)

    first = _trainer(task, n, tmp_path, backend=backend)
    first.learn(half, progress=False)  # saves model_<half>.pt at the end
    torch.rand(7)  # the caller's random state moves on; the checkpoint's comes back

    second = _trainer(task, n, backend=backend)
    ckpt = second.load(tmp_path / f"model_{half}.pt")
    assert ckpt["env_restored"], ckpt["env_note"]
    second.learn(half, progress=False)
    assert learner_differences(straight.state_dict(False), second.state_dict(False)) == []
    assert _rows(first.history + second.history) == _rows(straight.history)
    if backend == "mjwarp":
        return

    learner_only = _trainer(task, n, backend=backend)
    assert not learner_only.load(tmp_path / f"model_{half}.pt", with_env=False)["env_restored"]
    learner_only.learn(half, progress=False)
    assert learner_differences(straight.state_dict(False), learner_only.state_dict(False)) != []


def test_resume_with_another_config_restores_the_learner_only(tmp_path):
    t = _trainer("cartpole", 16, tmp_path)
    t.learn(1, progress=False)
    other = _trainer("cartpole", 32)  # another world count: the env state does not fit
    ckpt = other.load(tmp_path / "model_1.pt")
    assert not ckpt["env_restored"] and "num_envs 16 -> 32" in ckpt["env_note"]
    assert other.iteration == 1
    changed = _trainer("cartpole", 16, init_noise=0.2)
    assert "task.cfg.init_noise" in changed.load(tmp_path / "model_1.pt")["env_note"]


def _train_cmd(run_dir: Path, iterations: int, *extra: str) -> list[str]:
    return [sys.executable, str(ROOT / "train.py"), "task=cartpole", "num_envs=32", "progress=false",
            "device=cpu", f"max_iterations={iterations}", "agent.save_interval=2",
            "agent.num_steps_per_env=8", f"hydra.run.dir={run_dir}", *extra]


def _iterations(run_dir: Path) -> list[int]:
    with open(run_dir / "metrics.csv", newline="") as f:  # a row being written is skipped
        return [int(r["iteration"]) for r in csv.DictReader(f) if (r["iteration"] or "").isdigit()]


def test_a_killed_run_started_again_finishes_as_if_never_killed(tmp_path):
    """SIGKILL mid-run, then the same command again: it resumes from the newest checkpoint, runs
    to the iteration it was started for, logs every iteration once, and ends with the weights of
    a run never killed."""
    N = 40  # iterations: enough that the kill lands mid-run even on a fast machine
    killed, straight = tmp_path / "killed", tmp_path / "straight"
    subprocess.run(_train_cmd(straight, N), cwd=ROOT, check=True, capture_output=True)
    proc = subprocess.Popen(_train_cmd(killed, N), cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and not (
            (killed / "metrics.csv").exists() and len(_iterations(killed)) >= 7):
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (killed / "summary.json").exists()
    done = int(latest_checkpoint(killed).stem.split("_")[1])
    assert 0 < done < N

    again = subprocess.run(_train_cmd(killed, N), cwd=ROOT, capture_output=True, text=True)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]
    assert f"holds a stopped run at iteration {done}" in again.stdout
    assert "continues bit for bit" in again.stdout
    assert _iterations(killed) == list(range(1, N + 1))
    a, b = load_checkpoint(killed / f"model_{N}.pt"), load_checkpoint(straight / f"model_{N}.pt")
    assert learner_differences(a, b) == []
    for path in killed.glob("model_*.pt"):
        load_checkpoint(path)  # every checkpoint left behind loads

    done_again = subprocess.run(_train_cmd(killed, N), cwd=ROOT, capture_output=True, text=True)
    assert done_again.returncode == 0 and "that run is complete" in done_again.stdout
    assert _iterations(killed) == list(range(1, N + 1))


def test_disk_full_while_writing_a_checkpoint_stops_with_the_last_one_intact(tmp_path, monkeypatch):
    t = _trainer("cartpole", 16, tmp_path)
    t.agent_cfg["save_interval"] = 2
    real_save, calls = torch.save, []

    def save(obj, f, *a, **k):
        calls.append(str(f))
        if len(calls) >= 2:  # the second checkpoint: the disk is full
            with open(f, "wb") as partial:
                partial.write(b"torn")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_save(obj, f, *a, **k)

    monkeypatch.setattr("simrl.rl.runner.torch.save", save)
    with pytest.raises(RunWriteError) as err:
        t.learn(10, progress=False)
    msg = str(err.value)
    assert "model_4.pt" in msg and "No space left on device" in msg
    assert f"'{tmp_path / 'model_2.pt'}' is intact" in msg and "\n" not in msg
    assert len(calls) == 2  # the run stopped: no further write was tried
    assert sorted(p.name for p in tmp_path.glob("model_*")) == ["model_2.pt"]
    assert load_checkpoint(tmp_path)["iter"] == 2


def test_a_run_where_too_many_worlds_blow_up_stops_before_learning_from_them(tmp_path):
    t = _trainer("cartpole", 16, tmp_path)
    t.max_unstable_share = 0.25
    t.learn(1, progress=False)
    before = t.state_dict(False)
    t.env.sim.step = _poison(t)  # half the worlds diverge every step
    with pytest.raises(TrainingDiverged, match=r"blew up in iteration 2 .*max_unstable_share=0.25 of 16"):
        t.learn(3, progress=False)
    saved = load_checkpoint(tmp_path / "model_1.pt")  # the run's end-of-iteration checkpoint
    assert learner_differences(before, saved) == [] and "env_state" in saved
    assert not (tmp_path / "model_2.pt").exists()

    fresh = _trainer("cartpole", 16, tmp_path / "no_checkpoint_yet")
    fresh.max_unstable_share = 0.25
    fresh.env.sim.step = _poison(fresh)
    with pytest.raises(TrainingDiverged, match=r"weights before it are in .*model_0.pt.*learner only"):
        fresh.learn(3, progress=False)
    assert "env_state" not in load_checkpoint(tmp_path / "no_checkpoint_yet" / "model_0.pt")


def _poison(t: Trainer):
    real_step = t.env.sim.step

    def step(nstep=1):
        real_step(nstep)
        t.env.sim.qvel[::2] = float("nan")

    return step
