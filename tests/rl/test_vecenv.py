"""rsl-rl's view of the env batch (simrl.rl.vecenv): the VecEnv contract, zero-copy, logs."""

from __future__ import annotations

import pytest
import torch
from rsl_rl.env import VecEnv
from tensordict import TensorDict

from simrl.registry import make
from simrl.rl.vecenv import RslRlVecEnv

N = 8


@pytest.fixture(scope="module")
def quad():
    return make("quadruped", N, device="cpu", seed=3)


def test_rsl_rl_vecenv_contract(quad):
    venv = RslRlVecEnv(quad)
    assert isinstance(venv, VecEnv)
    assert venv.num_envs == N and venv.num_actions == 12 and venv.max_episode_length == 1000
    td = venv.get_observations()
    assert isinstance(td, TensorDict) and set(td.keys()) == {"policy", "critic"}
    assert td["policy"].shape == (N, 53) and td["critic"].shape[0] == N
    # zero-copy: the TensorDict holds the env's observation buffers themselves
    assert td["policy"].data_ptr() == quad.obs_buf["policy"].data_ptr()
    obs, rew, dones, extras = venv.step(torch.zeros(N, 12))
    assert rew.shape == (N,) and dones.shape == (N,)
    assert extras["time_outs"].shape == (N,)
    venv.episode_length_buf = torch.full((N,), 5)
    assert (quad.episode_length_buf == 5).all()


def test_episode_logs_only_when_episodes_end():
    """rsl-rl's view logs each step's ended episodes; nothing on steps where none ended."""
    env = make("cartpole", 4, device="cpu", seed=0)
    venv = RslRlVecEnv(env)
    saw_log = False
    for _ in range(100):
        length_s = (env.episode_length_buf + 1).float() * env.dt  # lengths if they end now
        _, _, dones, extras = venv.step(torch.ones(4, 1))
        if dones.any():
            assert "Episode_Reward/alive" in extras["log"]
            want = length_s[dones].mean().item()
            assert extras["log"]["Episode/length_s"] == pytest.approx(want, rel=1e-5)
            saw_log = True
        else:
            assert "log" not in extras
    assert saw_log
