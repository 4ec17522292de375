"""Metric terms: stateful ones keep an episode's history, are reset by mask and saved with the
env; a success metric declares the rule sim-to-sim applies."""

from __future__ import annotations

import pytest
import torch

import simrl
from simrl.env import EnvBatch
from simrl.envs.manipulation import ReachCfg
from simrl.envs.manipulation.lift import CUBE
from simrl.errors import ConfigError


def _lift(**cfg):
    return simrl.make("lift", 2, device="cpu", seed=0, cfg={"obs_noise": False, **cfg})


def test_a_stateful_metric_remembers_a_lift_until_its_env_resets():
    env = _lift()
    q = env.scene.objects[CUBE].qpos
    zero = torch.zeros(2, env.num_actions)
    env.sim.qpos[0, q + 2] += 0.2  # world 0's cube in the air: lifted
    env.step(zero)
    lifted = env.metric_manager.stateful["lifted"]
    assert lifted.grasped.tolist() == [True, False]
    for _ in range(30):  # the cube falls back; lifted it was
        env.step(zero)
    assert lifted.grasped.tolist() == [True, False]
    assert env.metric_manager.stateful["success"].dropped.tolist() == [True, False]
    env._reset(torch.tensor([True, False]))
    assert lifted.grasped.tolist() == [False, False]


def test_stateful_metric_state_is_saved_and_restored_with_the_env():
    env = _lift()
    env.sim.qpos[1, env.scene.objects[CUBE].qpos + 2] += 0.2
    env.step(torch.zeros(2, env.num_actions))
    saved = env.state_dict()
    other = _lift()
    assert other.metric_manager.stateful["lifted"].grasped.tolist() == [False, False]
    other.load_state_dict(saved)
    assert other.metric_manager.stateful["lifted"].grasped.tolist() == [False, True]


def test_a_metric_class_without_update_or_reset_is_refused_in_one_line():
    class Count:
        def __init__(self, env):
            self.n = torch.zeros(env.num_envs)

        def __call__(self, env):
            return self.n

    class Cfg(ReachCfg):
        TERMS = {**ReachCfg.TERMS, "metrics": {"count": Count}}

    with pytest.raises(ConfigError, match=r"metric 'count': Count is a class, so it keeps state over an "
                                          r"episode; it needs update\(env\) and reset\(env, mask\)"):
        EnvBatch(Cfg(), 2, device="cpu")


def test_success_rules_come_from_the_metric_declarations():
    reach = simrl.make("reach", 2, device="cpu", seed=0)
    rule = reach.deploy_spec()["success"]
    assert rule == {"site": "attachment_site", "frame_body": "link0", "pos": 0.02, "ori": 0.1, "hold_s": 1.0}
    lift = _lift(success_dist=0.05)
    rule = lift.deploy_spec()["success"]
    assert rule["kind"] == "object_at_target" and rule["body"] == CUBE and rule["dist"] == 0.05
    assert "success" not in simrl.make("cartpole", 2, device="cpu").deploy_spec()
