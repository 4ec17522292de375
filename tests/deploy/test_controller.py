"""The deploy controller's state machine and faults, driving a MuJoCo robot in-process."""

from __future__ import annotations

import time

import numpy as np
import pytest

from simrl.deploy import DeployPolicy
from simrl.deploy.controller import Controller, limits_from_meta
from simrl.rehearse.mujoco_robot import MujocoRobot


def _setup(quad_export, **limits):
    _, report = quad_export
    policy = DeployPolicy(report["onnx"])
    robot = MujocoRobot(policy.meta)
    ctl = Controller(policy, robot, limits_from_meta(policy.meta, **{"stand_s": 0.4, **limits}))
    return policy, robot, ctl


def _in_policy(quad_export, **limits):
    policy, robot, ctl = _setup(quad_export, **limits)
    ctl.request("stand")
    ctl.run(cycles=1)
    ctl.request("policy")
    ctl.run(seconds=0.6)
    assert ctl.state == "policy", ctl.transitions
    return policy, robot, ctl


def _damping_after(ctl, cycles: int) -> int:
    """Cycles run until the controller is in damping (at most `cycles`)."""
    for i in range(cycles):
        ctl.run(cycles=1)
        if ctl.state == "damping":
            return i + 1
    return -1


def test_passive_then_stand_then_policy_never_before_the_stand_is_done(quad_export):
    policy, robot, ctl = _setup(quad_export)
    ctl.request("policy")  # from passive: refused (stand first)
    ctl.run(cycles=5)
    assert ctl.state == "passive"
    assert all(not np.any(c.kp) and np.allclose(c.kd, ctl.limits.damping_kd) for _, c in robot.sent)
    ctl.request("stand")
    ctl.run(cycles=1)
    t_stand = ctl.transitions[-1][0]
    ctl.request("policy")  # early: held until the stand has finished
    ctl.run(seconds=1.0)
    (t_policy, frm, to, _), = [t for t in ctl.transitions if t[2] == "policy"]
    assert frm == "stand" and t_policy >= t_stand + 0.4 - 1e-9
    default = ctl.limits.default_pose
    for t, cmd in robot.sent:
        if t < t_policy:  # before the policy: damping or the interpolation to the default pose
            assert not np.any(cmd.kp) or np.allclose(cmd.kp, ctl.limits.kp)
    stand_end = [c for t, c in robot.sent if t_stand + 0.4 <= t < t_policy]
    assert stand_end and np.allclose(stand_end[-1].q, default)
    assert ctl.fault is None and ctl.state == "policy"


def test_a_dead_link_means_damping_within_three_control_periods(quad_export):
    _, robot, ctl = _in_policy(quad_export)
    robot.freeze()  # the last state report was at this instant
    t_last = robot.latest().stamp
    assert _damping_after(ctl, 10) > 0
    t_damping = ctl.transitions[-1][0]
    assert t_damping - t_last <= 3 * ctl.period + 1e-9 and "no new state" in ctl.fault
    assert not np.any(robot.sent[-1][1].kp)  # the robot is damped, not driven


@pytest.mark.parametrize("reading,index,value,why", [
    ("joint_vel", 2, float("nan"), "non-finite reading 'joint_vel'"),
    ("joint_pos", 0, 10.0, "joint 0 at 10.000 rad, past its limits"),
    ("joint_vel", 1, 500.0, "joint 1 at 500.0 rad/s, past its velocity limit 30.0"),
    ("quat", slice(None), [0.7071, 0.7071, 0.0, 0.0], "base tilted past the policy's limit"),  # 90 deg roll
])
def test_a_bad_reading_means_damping_at_once(quad_export, reading, index, value, why):
    _, robot, ctl = _in_policy(quad_export, joint_vel=np.full(12, 30.0))
    robot.poison = {reading: (index, value)}
    ctl.run(cycles=1)  # the sim reports the poisoned state at the end of this cycle's sleep
    assert _damping_after(ctl, 1) == 1 and why in ctl.fault


def test_a_policy_that_overruns_means_damping_after_the_streak(quad_export):
    policy, robot, ctl = _in_policy(quad_export, overrun_streak=3)
    infer = policy.infer
    policy.infer = lambda obs: (time.sleep(1.2 * ctl.period), infer(obs))[1]
    assert _damping_after(ctl, 10) == 3 and "3 cycles in a row over the 20 ms period" in ctl.fault
    assert ctl.overruns >= 3


def test_a_non_finite_action_means_damping(quad_export):
    policy, robot, ctl = _in_policy(quad_export)
    policy.infer = lambda obs: np.full(12, np.nan, dtype=np.float32)
    assert _damping_after(ctl, 1) == 1 and ctl.fault == "non-finite action from the policy"


def test_damping_is_latched_until_passive_is_asked_for(quad_export):
    _, robot, ctl = _in_policy(quad_export)
    ctl.request("damping")
    ctl.run(cycles=1)
    ctl.request("stand")
    ctl.run(cycles=3)
    assert ctl.state == "damping"
    ctl.request("passive")
    ctl.run(cycles=1)
    ctl.request("stand")
    ctl.run(cycles=1)
    assert ctl.state == "stand"


def test_the_loop_keeps_absolute_deadlines_and_logs_every_cycle(quad_export, tmp_path):
    policy, robot, _ = _setup(quad_export)
    ctl = Controller(policy, robot, log_path=tmp_path / "log.csv")
    ctl.run(seconds=1.0)
    summary = ctl.close()
    assert ctl.cycles == 50 and summary["period_p50_ms"] == pytest.approx(20.0, abs=0.01)
    assert abs(robot.clock() - 1.0) < robot.m.opt.timestep  # no drift over 50 cycles
    rows = (tmp_path / "log.csv").read_text().splitlines()
    assert rows[0].startswith("t,period_s,compute_s,state,fault") and len(rows) == 51


def test_held_joints_are_commanded_after_the_policys_from_stand_on_and_damped_otherwise(g1_legs_export):
    """A legs-only G1: every command covers the 12 policy joints and then the 17 held ones;
    passive damps them all; the stand brings the held joints from where they were measured to
    their pose with their own gains, and the policy state keeps them there."""
    _, report = g1_legs_export
    policy = DeployPolicy(report["onnx"])
    held = policy.meta["robot"]["held"]
    assert policy.meta["num_actions"] == 12 and len(held["joint_names"]) == 17
    robot = MujocoRobot(policy.meta)
    ctl = Controller(policy, robot, limits_from_meta(policy.meta, stand_s=0.2))
    robot.d.qpos[robot.read.held_qpos] += 0.1  # the arms start off their pose
    robot.restart()
    ctl.run(cycles=2)
    measured = robot.latest().readings["held_joint_pos"].copy()  # what the stand starts from
    ctl.request("stand")
    ctl.run(seconds=0.3)
    ctl.request("policy")
    ctl.run(seconds=0.2)
    assert ctl.state == "policy", ctl.transitions
    sent = [c for _, c in robot.sent]
    assert all(len(c.q) == len(c.kp) == len(c.kd) == 29 for c in sent)
    passive, stand_first = sent[0], sent[2]
    assert not passive.kp.any() and np.allclose(passive.kd[12:], held["kd"])
    assert np.abs(measured - held["pos"]).max() > 0.05
    np.testing.assert_allclose(stand_first.q[12:], measured)
    assert np.allclose(stand_first.kp[12:], held["kp"])
    np.testing.assert_allclose(sent[-1].q[12:], held["pos"])  # in policy: at the pose
    m = robot.m
    held_act = robot.act[12:]
    np.testing.assert_allclose(m.actuator_gainprm[held_act, 0], held["kp"])  # the servos got the gains
    np.testing.assert_allclose(robot.d.ctrl[held_act], held["pos"])


def test_a_held_joint_past_its_range_is_a_fault(g1_legs_export):
    """The export carries the held joints' ranges; one pushed past its range (an arm caught on
    something) ends the policy in damping, naming the joint."""
    _, report = g1_legs_export
    policy = DeployPolicy(report["onnx"])
    held = policy.meta["robot"]["held"]
    assert len(held["joint_pos"]) == len(held["joint_names"]) == 17
    robot = MujocoRobot(policy.meta)
    ctl = Controller(policy, robot, limits_from_meta(policy.meta, stand_s=0.1))
    ctl.run(cycles=2)
    ctl.request("stand")
    ctl.run(seconds=0.2)
    ctl.request("policy")
    ctl.run(seconds=0.1)
    assert ctl.state == "policy" and ctl.fault is None
    k = held["joint_names"].index("left_elbow_joint")
    inside = held["joint_pos"][k][1] - 0.01  # within the range: no fault
    robot.poison = {"held_joint_pos": (k, inside)}
    ctl.run(cycles=2)
    assert ctl.state == "policy" and ctl.fault is None
    robot.poison = {"held_joint_pos": (k, held["joint_pos"][k][1] + 0.2)}
    ctl.run(cycles=1)  # the sim reports the poisoned state at the end of this cycle's sleep
    assert _damping_after(ctl, 1) == 1 and "held joint 'left_elbow_joint'" in ctl.fault
