"""The humanoid walking recipe (configs/experiment/humanoid_walk.yaml) as configuration over any
humanoid: it trains on G1, T1 and H1, and each robot's mirror is an involution."""

from __future__ import annotations

import math

import pytest
import torch

import simrl
from tests.conftest import compose_config


@pytest.mark.parametrize("experiment", ["g1_walk", "t1_walk", "h1_walk"])
def test_the_recipe_trains_two_iterations_on_each_humanoid(experiment, tmp_path):
    from simrl.rl.app import train

    cfg = compose_config("train", "task=humanoid", f"experiment={experiment}", "num_envs=16",
                         "max_iterations=2", "progress=false", "device=cpu", "agent.num_steps_per_env=8")
    trainer = train(cfg, tmp_path)
    assert trainer.iteration == 2 and (tmp_path / "model_2.pt").is_file()
    prior = trainer.env.action_manager.terms["reference_gait"]
    assert len(prior.cols) == 6  # hip pitch, knee and ankle pitch of both legs
    assert "Loss/symmetry" in trainer.history[-1]  # the recipe trains on mirror images too
    contact = trainer.env.cfg.rewards["gait_contact"]["params"]
    assert contact["still_when_standing"] is True and contact["period"] == 0.8
    assert trainer.env.cfg.rewards["terminated"] == -200.0  # a fall costs
    stand = trainer.env.curriculum_manager.terms["stand"]
    assert stand.stages == [{"at_step": 2400, "standing_share": 0.5}] and stand.steps == 16
    assert all(math.isfinite(m["Loss/value"]) and math.isfinite(m["Loss/surrogate"]) for m in trainer.history)


@pytest.mark.parametrize("robot", ["booster_t1", "unitree_h1_legs"])
def test_a_humanoids_mirror_applied_twice_is_the_identity(robot):
    env = simrl.make("humanoid", 2, device="cpu", robot=robot, cfg={"gait_period_s": 0.8})
    maps = env.mirror_maps()
    for perm, sign in [maps["actions"], *maps["obs"].values()]:
        assert torch.equal(perm[perm], torch.arange(len(perm)))
        assert torch.equal(sign * sign[perm], torch.ones(len(sign)))
