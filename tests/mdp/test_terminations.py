"""Terminations by configuration (simrl.mdp.terminations): terms with params, time-out terms, the
per-term log, and the facts they give the robot-side check (policy.json's deploy.termination)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import simrl
from simrl.errors import ConfigError, UnknownNameError


def _cartpole(n=4, **cfg):
    env = simrl.make("cartpole", n, device="cpu", seed=0, cfg={"init_noise": 0.0, **cfg})
    env.reset(seed=0)
    return env


def _place(env, cart=0.0, pole=0.0):
    env.sim.qpos[:, 0] = cart
    env.sim.qpos[:, 1] = pole
    env.sim.forward()


def test_cartpole_terms_end_episodes_and_log_which_one():
    env = _cartpole()
    assert env.termination_manager.names == ["pole_down", "off_rail"]
    _place(env, pole=0.5)  # past max_angle 0.4, the cart centred
    assert env.terminated().all()
    _place(env)
    assert not env.terminated().any()
    env.episode_log()  # start counting from here
    env.sim.qpos[:2, 1] = 0.6  # two poles down, two cart off the rail
    env.sim.qpos[2:, 0] = 2.45
    env.sim.forward()
    _, _, term, trunc, _ = env.step(torch.zeros(4, 1))
    assert term.all() and not trunc.any()
    log = env.episode_log()
    assert log["Episode_Termination/pole_down"] == pytest.approx(0.5)
    assert log["Episode_Termination/off_rail"] == pytest.approx(0.5)
    assert log["Episode/terminated"] == 1.0


def test_a_config_entry_replaces_or_drops_the_tasks_own_and_the_deploy_facts_follow():
    env = _cartpole(terminations={"pole_down": None})
    assert env.termination_manager.names == ["off_rail"]
    _place(env, pole=1.0)  # a fallen pole no longer ends the episode; the rail still does
    assert not env.terminated().any()
    _place(env, cart=2.5)
    assert env.terminated().all()
    assert env.deploy_spec()["termination"] == {"max_abs_qpos": {"0": 2.4}}

    env = _cartpole(terminations={"pole_down": {"func": "joint_pos_out_of_range",
                                                "params": {"joint": "hinge", "limit": 0.1}}})
    _place(env, pole=0.2)  # inside the task's 0.4, past the config's 0.1
    assert env.terminated().all()
    assert env.deploy_spec()["termination"] == {"max_abs_qpos": {"1": 0.1, "0": 2.4}}


def test_a_time_out_term_truncates_instead_of_terminating():
    far = {"far": {"func": "joint_pos_out_of_range", "params": {"joint": "slider", "limit": 1.0},
                   "time_out": True}}
    env = _cartpole(terminations=far)
    env.sim.qpos[:2, 0] = 1.5  # two envs far out: a time-out (bootstrapped), not a failure
    env.sim.forward()
    _, _, term, trunc, infos = env.step(torch.zeros(4, 1))
    assert trunc.tolist() == [True, True, False, False] and not term.any()
    assert torch.equal(infos["time_outs"], trunc)
    # a time-out is no robot fault: the rail's 2.4 m stays the robot-side rule, not the 1.0 m
    assert env.deploy_spec()["termination"] == {"max_abs_qpos": {"1": 0.4, "0": 2.4}}


def test_legged_terms_take_params_and_name_bodies():
    terms = {"base_tilt": {"func": "base_tilt", "params": {"max_tilt_cos": 0.99}},
             "body_contact": {"func": "body_contact", "params": {"bodies": ["trunk", ".*_thigh"]}}}
    env = simrl.make("quadruped", 1, device="cpu", seed=0, cfg={"terminations": terms})
    env.reset(seed=0)
    facts = env.deploy_spec()["termination"]
    assert facts["max_tilt_cos"] == 0.99
    assert facts["contact_bodies"] == ["trunk", "FR_thigh", "FL_thigh", "RR_thigh", "RL_thigh"]
    assert "min_base_height" not in facts  # the quadruped has no height term
    assert not env.terminated().item()
    a = 0.2  # rolled 11 degrees: within the default 60, past acos(0.99) = 8.1
    env.sim.qpos[0, 3:7] = torch.tensor([np.cos(a / 2), np.sin(a / 2), 0, 0], dtype=env.sim.dtype)
    env.sim.forward()
    env.refresh()
    assert env.terminated().item()


def test_the_humanoids_height_term_comes_from_its_field():
    env = simrl.make("humanoid", 1, device="cpu", seed=0, cfg={"min_base_height": 0.3})
    names = env.termination_manager.names
    assert names == ["base_tilt", "body_contact", "base_height"]
    assert env.deploy_spec()["termination"]["min_base_height"] == 0.3
    env.reset(seed=0)
    assert not env.terminated().item()
    env.sim.qpos[0, 2] -= env.legged.base_height[0].item() - 0.2  # the pelvis 0.2 m over the ground
    env.sim.forward()
    env.refresh()
    assert env.terminated().item()


def test_bad_termination_entries_are_named():
    valid = r"unknown func 'tipped'.*'body_contact'.*'joint_pos_out_of_range'"
    with pytest.raises(UnknownNameError, match=valid):
        _cartpole(terminations={"x": {"func": "tipped"}})
    with pytest.raises(UnknownNameError, match=r"joint 'axle' matches nothing.*'slider', 'hinge'"):
        _cartpole(terminations={"x": {"func": "joint_pos_out_of_range",
                                      "params": {"joint": "axle", "limit": 1}}})
    with pytest.raises(ConfigError, match=r"params \['limit'\] are required"):
        _cartpole(terminations={"x": {"func": "joint_pos_out_of_range", "params": {"joint": "hinge"}}})
    with pytest.raises(ConfigError, match="time_out must be true or false"):
        _cartpole(terminations={"x": {"func": "joint_pos_out_of_range", "time_out": "yes",
                                      "params": {"joint": "hinge", "limit": 1}}})
    with pytest.raises(ConfigError, match=r"unknown keys \['limit'\]; an entry takes func, params, time_out"):
        _cartpole(terminations={"x": {"limit": 1}})
    with pytest.raises(ConfigError, match="'root' is not a hinge or a slide"):
        simrl.make("quadruped", 1, device="cpu", cfg={"terminations": {
            "x": {"func": "joint_pos_out_of_range", "params": {"joint": "root", "limit": 1}}}})
