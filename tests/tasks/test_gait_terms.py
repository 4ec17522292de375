"""Biped gait terms of the velocity task (envs/locomotion.py) and per-joint term params."""

from __future__ import annotations

import math

import pytest
import torch

import simrl
from simrl.envs.locomotion import feet_air_time_biped, foot_slip, posture
from simrl.errors import ConfigError


@pytest.fixture(scope="module")
def g1():
    return simrl.make("humanoid", 3, device="cpu", cfg={"rewards": {
        "posture": {"weight": 0.5, "params": {"std_by_joint": {".*knee_joint": 0.1, ".*": 1.0}}},
        "foot_slip": -0.1, "feet_air_time_biped": {"weight": 1.0, "params": {"threshold": 0.3}}}})


def test_single_stance_earns_the_shorter_of_stance_and_swing_time_capped(g1):
    g1.commands[:] = torch.tensor([0.5, 0.0, 0.0])
    g1.commands[2] = 0.0  # standing: nothing earned
    g1.contact = torch.tensor([[True, False], [True, True], [False, True]])
    g1.contact_time = torch.tensor([[0.2, 0.0], [0.5, 0.5], [0.0, 0.9]])
    g1.air_time = torch.tensor([[0.0, 0.15], [0.0, 0.0], [0.6, 0.0]])
    got = feet_air_time_biped(g1, threshold=0.3)
    assert got.tolist() == pytest.approx([0.15, 0.0, 0.0])  # single; double stance; standing
    g1.commands[2, 0] = 0.5
    assert feet_air_time_biped(g1, threshold=0.3)[2].item() == pytest.approx(0.3)  # capped


def test_slip_counts_only_planted_feet(g1):
    g1.contact = torch.tensor([[True, False], [False, False], [True, True]])
    g1.foot_vel = torch.tensor([[[0.3, 0.4, 5.0], [9.0, 9.0, 9.0]]] * 3)
    assert foot_slip(g1).tolist() == pytest.approx([0.25, 0.0, 0.25 + 162.0])


def test_posture_uses_each_joints_own_tolerance(g1):
    fn = g1._reward_fns[[t.name for _, t in g1._reward_terms].index("posture")]
    g1.joint_pos = g1.default_joint_pos.expand(3, -1).clone()
    assert fn(g1).tolist() == pytest.approx([1.0] * 3)
    knee = g1.robot.joints.index("left_knee_joint")
    hip = g1.robot.joints.index("left_hip_pitch_joint")
    g1.joint_pos[0, knee] += 0.1  # one std of the knee
    g1.joint_pos[1, hip] += 0.1  # a tenth of the hip's
    n = len(g1.robot.joints)
    assert fn(g1).tolist() == pytest.approx([math.exp(-1 / n), math.exp(-0.01 / n), 1.0], rel=1e-5)
    assert posture(g1, std_by_joint=1.0).shape == (3,)


def test_foot_velocity_is_zero_right_after_a_reset_and_finite_while_walking(g1):
    g1.reset()
    for _ in range(5):
        g1.step(torch.randn(3, g1.num_actions))
    assert torch.isfinite(g1.foot_vel).all() and g1.foot_vel.abs().sum() > 0
    g1.reset_envs(torch.tensor([True, False, False]))
    g1.update()  # the next step's finite difference: a reset env's feet teleported, not slid
    assert g1.foot_vel[0].abs().sum() == 0


def test_a_per_joint_param_that_misses_a_joint_is_named():
    with pytest.raises(ConfigError, match="no pattern of .* matches joint"):
        simrl.make("humanoid", 2, device="cpu", cfg={"rewards": {
            "posture": {"weight": 0.5, "params": {"std_by_joint": {".*knee_joint": 0.1}}}}})
