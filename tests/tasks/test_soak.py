"""Reliability of the env batch: a long random-action soak, finite states, no memory growth."""

from __future__ import annotations

import resource

import torch

from simrl.registry import make


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
