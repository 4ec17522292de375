"""Symmetry augmentation (simrl/rl/symmetry.py) through rsl-rl's PPO."""

from __future__ import annotations

import pytest
import torch
from tensordict import TensorDict

import simrl
from simrl import mirror
from simrl.errors import ConfigError
from simrl.rl.symmetry import augment
from simrl.rl.vecenv import RslRlVecEnv


def test_augment_appends_the_mirror_images_after_the_originals():
    venv = RslRlVecEnv(simrl.make("quadruped", 4, device="cpu"))
    obs = venv.get_observations()
    actions = torch.randn(4, 12)
    big, acts = augment(venv, obs=obs, actions=actions)
    maps = venv.env.mirror_maps()
    assert big.batch_size[0] == 8 and acts.shape == (8, 12)
    for g in obs.keys():
        assert torch.equal(big[g][:4], obs[g])
        assert torch.equal(big[g][4:], mirror.apply(obs[g], maps["obs"][g]))
    assert torch.equal(acts[4:], mirror.apply(actions, maps["actions"]))
    only, none = augment(venv, obs=TensorDict(dict(obs), batch_size=[4]), actions=None)
    assert none is None and only.batch_size[0] == 8


def test_a_humanoid_trains_two_iterations_with_symmetry(tmp_path):
    run = simrl.train("humanoid", "max_iterations=2", "num_envs=16", "symmetry=true",
                      device="cpu", progress=False, run_dir=tmp_path / "run")
    last = run.history[-1]
    assert "Loss/symmetry" in last and last["Loss/symmetry"] >= 0.0 and run.checkpoint.name == "model_2.pt"


def test_symmetry_on_a_task_without_a_mirror_is_refused_in_one_line(tmp_path):
    with pytest.raises(ConfigError, match="task 'cartpole' has no robot, so no mirror image of its actions"):
        simrl.train("cartpole", "max_iterations=1", "num_envs=8", "symmetry=true",
                    device="cpu", progress=False, run_dir=tmp_path / "run")
