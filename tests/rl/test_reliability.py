"""Reliability in training: diverged worlds mid-training are reset and never reach the learner.

The env batch's long random-action soak is tests/tasks/test_soak.py."""

from __future__ import annotations

import math

import torch
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from simrl import CONFIGS
from simrl.registry import make
from simrl.rl.runner import Trainer


def _agent(task: str) -> dict:
    with initialize_config_dir(config_dir=str(CONFIGS), version_base=None):
        cfg = compose("train", overrides=[f"task={task}"])
    return OmegaConf.to_container(cfg.agent, resolve=True)


def test_nan_injected_mid_training_is_reset_and_never_reaches_the_learner():
    torch.manual_seed(0)
    env = make("quadruped", 16, device="cpu", seed=0)
    agent = _agent("quadruped")
    agent["num_steps_per_env"] = 8
    trainer = Trainer(env, agent)
    trainer.learn(2, progress=False)
    env.sim.qvel[3, 10] = float("nan")  # world 3 diverges
    env.sim.qpos[7, 2] = float("inf")   # and world 7
    trainer.learn(3, progress=False)
    assert env.unstable_count == 2  # worlds 3 and 7, once each; no other world diverged
    assert sum(m.get("sim/unstable_resets", 0.0) for m in trainer.history) == env.unstable_count
    for m in trainer.history:
        assert all(math.isfinite(v) for k, v in m.items() if k.startswith("Loss/")), m
    actor = trainer.alg.get_policy()
    assert all(torch.isfinite(p).all() for p in actor.parameters())
    norm = actor.obs_normalizer
    assert torch.isfinite(norm._mean).all() and torch.isfinite(norm._var).all()
    assert torch.isfinite(env.sim.qpos).all() and torch.isfinite(env.sim.qvel).all()


def test_a_checkpoint_that_runs_code_when_unpickled_is_refused_unrun(cartpole_export, tmp_path):
    """weights_only loading: a pickle that calls a function on load is refused by name, and the
    function never runs; simrl's own checkpoints load as before."""
    from pathlib import Path

    import pytest
    import torch

    from simrl.rl.runner import CheckpointError, load_checkpoint

    run_dir, _ = cartpole_export
    good = load_checkpoint(run_dir)
    assert "actor_state_dict" in good and good["infos"]["config"]["task"]["name"] == "cartpole"

    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (Path.touch, (marker,))

    evil = tmp_path / "model_9.pt"
    torch.save({**good, "infos": Payload()}, evil)
    with pytest.raises(CheckpointError, match=r"holds GLOBAL \S+, which simrl does not unpickle"):
        load_checkpoint(evil)
    assert not marker.exists()
