"""The deploy runtime asks for exactly the readings a policy observes, and keeps its history."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import simrl
from simrl.deploy.runtime import observation, required_readings
from simrl.rehearse.scene import Readings
from simrl.rl.export import deploy_metadata


def test_the_default_policy_observes_only_what_the_robot_measures():
    env = simrl.make("quadruped", 2, seed=0)
    meta = deploy_metadata(env, ["policy"])
    assert meta["readings"] == ["gyro", "quat", "command", "joint_pos", "joint_vel"]  # in term order
    names = [t["name"] for t in meta["obs_terms"]]
    assert "base_lin_vel" not in names and "height_scan" not in names
    critic = [s.name for s in env.obs_layout["critic"]]  # privileged state goes to the critic
    assert {"base_lin_vel", "foot_contact", "ground_friction", "height_scan"} <= set(critic)


def test_missing_readings_are_refused_by_name():
    env = simrl.make("quadruped", 2, seed=0)
    meta = deploy_metadata(env, ["policy"])
    read = Readings(env.model, meta)
    r = read(env.sim.get_mjdata(0), [0.5, 0.0, 0.0])
    r["last_action"] = np.zeros(env.num_actions)
    del r["gyro"]
    with pytest.raises(KeyError, match=r"readings lack \['gyro'\].*IMU angular velocity"):
        observation(meta, r)
    r["gyro"] = np.zeros(3)
    r["gravity"] = r.pop("quat") * 0 + np.array([0.0, 0.0, 0.0, 0.0])  # wrong size: refused too
    with pytest.raises(ValueError, match="has 4 values"):
        observation(meta, r)
    meta_lin = {**meta, "obs_terms": [{"name": "base_lin_vel", "start": 0, "stop": 3, "scale": 1.0,
                                       "read": {"reading": "base_lin_vel"}}]}
    meta_lin.pop("readings")
    assert required_readings(meta_lin) == ["base_lin_vel"]


def test_deploy_history_equals_the_envs_over_steps():
    """With a history of 3 frames, the runtime fed raw readings every control step builds the
    env's stacked observation, step after step (within 1e-5)."""
    env = simrl.make("quadruped", 2, seed=1, cfg={"history": 3, "obs_noise": False, "push_vel": 0.0})
    meta = deploy_metadata(env, ["policy"])
    assert [t.get("history") for t in meta["obs_terms"]] == [3, 3, 1, 3, 3, 3, 1]  # the clock: its time
    read = Readings(env.model, meta)
    obs, _ = env.reset()
    histories = [{}, {}]
    gen = torch.Generator().manual_seed(0)
    for step in range(6):
        for w in range(2):
            r = read(env.sim.get_mjdata(w), env.command()[w].numpy())
            r["last_action"] = env.actions[w].numpy()
            r["policy_time"] = env.episode_length_buf[w].item() * env.dt  # DeployPolicy counts it itself
            ours = observation(meta, r, histories[w])
            np.testing.assert_allclose(ours, obs["policy"][w].numpy(), atol=1e-5, err_msg=f"step {step}")
        obs, _, term, trunc, _ = env.step(0.3 * torch.randn(2, env.num_actions, generator=gen))
        assert not (term | trunc).any()


def test_reach_policy_reads_joints_and_a_target_pose_and_deploy_builds_the_envs_observation():
    """An arm's policy.json names its readings (no IMU, a target pose) and says how each term is
    read; the runtime, knowing no task, builds the env's observation from them."""
    env = simrl.make("reach", 3, seed=2, cfg={"obs_noise": False})
    meta = deploy_metadata(env, ["policy"])
    assert meta["readings"] == ["joint_pos", "joint_vel", "ee_pose", "target_pose"]
    assert "quaternion wxyz" in meta["reading_docs"]["target_pose"]
    read = Readings(env.model, meta)
    env.reset()
    gen = torch.Generator().manual_seed(0)
    for step in range(3):
        env.sim.forward()  # kinematics of the present joints, as a robot's controller reports them
        obs = env.compute_observations(commit=False)
        for w in range(3):
            cmd = env.command_terms["ee_pose"]
            target = np.concatenate([cmd.pos_b[w].numpy(), cmd.quat_b[w].numpy()])
            r = read(env.sim.get_mjdata(w), None, target)
            r["last_action"] = env.actions[w].numpy()
            np.testing.assert_allclose(observation(meta, r), obs["policy"][w].numpy(), atol=1e-5,
                                       err_msg=f"step {step}")
        env.step(0.3 * torch.randn(3, env.num_actions, generator=gen))


def test_a_policy_term_without_a_reading_is_refused_at_export():
    from simrl.env import ObsTerm
    from simrl.rl.export import ExportError

    env = simrl.make("reach", 1, cfg={"observations": {"policy": [
        ObsTerm("joint_pos"), ObsTerm("ee_error", params={"site": "attachment_site"})]}})
    with pytest.raises(ExportError, match="term 'ee_error' of group 'policy' declares no reading"):
        deploy_metadata(env, ["policy"])
