"""Reliability: a diverged world mid-training, a long random-action soak, memory."""

from __future__ import annotations

import math
import resource

import torch
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from simrl import ROOT
from simrl.registry import make
from simrl.rl.runner import Trainer


def _agent(task: str) -> dict:
    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base=None):
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
    assert env.unstable_count >= 2
    assert sum(m.get("sim/unstable_resets", 0.0) for m in trainer.history) == env.unstable_count
    for m in trainer.history:
        assert all(math.isfinite(v) for k, v in m.items() if k.startswith("Loss/")), m
    actor = trainer.alg.get_policy()
    assert all(torch.isfinite(p).all() for p in actor.parameters())
    norm = actor.obs_normalizer
    assert torch.isfinite(norm._mean).all() and torch.isfinite(norm._var).all()
    assert torch.isfinite(env.sim.qpos).all() and torch.isfinite(env.sim.qvel).all()


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def test_soak_200k_random_env_steps():
    """256 envs x 800 steps of random actions: finite observations, no memory growth."""
    env = make("quadruped", 256, device="cpu", seed=1)
    gen = torch.Generator().manual_seed(1)
    actions = torch.empty(256, 12)
    with torch.inference_mode():
        for step in range(800):
            actions.normal_(0, 1.0, generator=gen)
            obs, rew, term, trunc, _ = env.step(actions)
            if step == 100:
                rss_start = _rss_mb()
            if step % 50 == 0:
                assert all(torch.isfinite(v).all() for v in obs.values())
                assert torch.isfinite(rew).all()
    growth = _rss_mb() - rss_start
    assert growth < 50, f"resident memory grew {growth:.1f} MB over 700 steps"
    assert all(torch.isfinite(v).all() for v in obs.values())
