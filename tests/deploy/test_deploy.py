"""simrl.deploy, the robot-side runtime: observations and actions equal the env's, targets and
gains, metadata, clear errors; and sim-to-sim through it in plain MuJoCo C (simrl.rl.sim2sim).

The exported policies are tests/conftest.py's fixtures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from omegaconf import OmegaConf

from simrl.deploy import DeployPolicy, load_metadata, projected_gravity
from simrl.registry import make
from simrl.rl.app import policy_from_checkpoint
from simrl.scene import assemble
from tests.conftest import with_deploy_spec


def test_deploy_observation_and_actions_match_the_env(quad_export):
    run_dir, report = quad_export
    env = make("quadruped", 64, device="cpu", seed=9, cfg={"obs_noise": False})
    agent = OmegaConf.to_container(OmegaConf.load(run_dir / "config.yaml").agent)
    policy, _ = policy_from_checkpoint(env, run_dir, agent)
    deploy = DeployPolicy(report["onnx"])
    env.reset(seed=9)
    obs = env.compute_observations()
    worst_obs = worst_act = 0.0
    n = 0
    gen = torch.Generator().manual_seed(0)
    with torch.inference_mode():
        for _ in range(16):  # 16 steps x 64 envs = 1024 states
            q, v = env.sim.qpos.numpy(), env.sim.qvel.numpy()
            readings = {
                "joint_pos": q[:, 7:], "joint_vel": v[:, 6:], "gyro": v[:, 3:6], "quat": q[:, 3:7],
                "base_lin_vel": env.legged.base_lin_vel_b.numpy(), "command": env.command().numpy(),
                "last_action": env.actions.numpy(),
                "policy_time": env.episode_length_buf.numpy() * env.dt,  # the trot clock's time
            }
            got = deploy.observation(readings)
            worst_obs = max(worst_obs, float(np.abs(got - obs["policy"].numpy()).max()))
            want_act = policy(obs).numpy()
            worst_act = max(worst_act, float(np.abs(deploy.infer(got) - want_act).max()))
            n += len(got)
            obs, *_ = env.step(torch.from_numpy(want_act) + 0.3 * torch.randn(64, 12, generator=gen))
    assert n >= 1000
    assert worst_obs <= 1e-5, worst_obs
    assert worst_act <= 1e-5, worst_act


def test_deploy_targets_use_offset_scale_and_gains(quad_export):
    _, report = quad_export
    deploy = DeployPolicy(report["onnx"])
    readings = {"joint_pos": np.asarray(deploy.meta["default_joint_pos"]), "joint_vel": np.zeros(12),
                "gyro": np.zeros(3), "quat": np.array([1.0, 0, 0, 0]), "base_lin_vel": np.zeros(3),
                "command": np.zeros(3)}
    targets, kp, kd = deploy.act(readings)
    action = deploy.last_action
    np.testing.assert_allclose(targets, deploy.offset + 0.25 * action, atol=1e-6)
    scene = assemble("quadruped")  # the gains the env's actuators had, in action order
    np.testing.assert_allclose(kp, scene.kp)
    np.testing.assert_allclose(kd, scene.kd)


def test_projected_gravity_matches_the_env():
    env = make("quadruped", 4, device="cpu", seed=2)
    env.reset(seed=2)
    quat, gravity = env.legged.base_quat.numpy(), env.legged.gravity_b.numpy()
    np.testing.assert_allclose(projected_gravity(quat), gravity, atol=1e-6)


def test_metadata_readable_from_onnx_alone(quad_export, tmp_path):
    _, report = quad_export
    lone = tmp_path / "policy.onnx"
    lone.write_bytes(open(report["onnx"], "rb").read())  # no sidecar JSON beside it
    assert load_metadata(lone)["task"] == "quadruped"


def test_sim2sim_on_cartpole_ends_episodes_as_the_export_says(cartpole_export, tmp_path):
    """Sim-to-sim of the exported cartpole under rules that decide the outcome whatever the
    policy does: a pole-angle limit of 0 ends every episode at its first control step (the reset
    noise tilts the pole); with no termination rule, every episode lasts its full length."""
    from simrl.rl.sim2sim import run_sim2sim

    _, report = cartpole_export
    spec = load_metadata(report["onnx"])["deploy"]
    assert spec["termination"] == {"max_abs_qpos": {"0": 2.4, "1": 0.4}}  # the task's own rule
    assert spec["reset"] == {"qpos_noise": 0.1} and spec["tracks_commands"] is False

    at_once = with_deploy_spec(report, tmp_path / "at_once", termination={"max_abs_qpos": {"1": 0.0}})
    r = run_sim2sim(at_once, episodes=3, seed=0)
    assert (r["episodes"], r["fall_share"], r["mean_steps"]) == (3, 1.0, 1.0)

    never = with_deploy_spec(report, tmp_path / "never", termination={}, episode_length_s=0.2)
    r = run_sim2sim(never, episodes=3, seed=0)
    assert (r["episodes"], r["fall_share"], r["mean_steps"]) == (3, 0.0, 10.0)  # 0.2 s at 50 Hz
    assert np.isnan(r["lin_vel_error"]) and np.isnan(r["yaw_rate_error"])  # no commands tracked


def test_sim2sim_imu_reads_the_same_instant_as_the_encoders():
    """The simulated robot sim-to-sim drives reports IMU and encoders of one instant (mj_step
    evaluates sensors before it integrates; the robot brings them up to date)."""
    import mujoco

    from simrl.rehearse.mujoco_robot import MujocoRobot

    scene = assemble("quadruped")
    m = scene.model
    names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, i) for i in range(m.nu)]
    robot = MujocoRobot({"robot": scene.facts(), "action": {"actuator_names": names}, "deploy": {}},
                        keyframe=False, model=m)
    d = robot.d
    mujoco.mj_resetDataKeyframe(m, d, 0)
    d.qvel[:6] = [0.4, -0.2, 0.1, 0.8, -0.5, 1.2]  # a moving, tumbling base
    robot.restart()
    for k in range(3):
        robot.sleep_until(0.02 * (k + 1))
        r = robot.latest().readings
        np.testing.assert_allclose(r["gyro"], d.qvel[3:6], atol=1e-9)  # the IMU sits at the base origin
        np.testing.assert_allclose(r["quat"], d.qpos[3:7], atol=1e-9)
        v_b = np.zeros(3)
        mujoco.mju_rotVecQuat(v_b, d.qvel[:3], d.qpos[3:7] * [1, -1, -1, -1])
        np.testing.assert_allclose(r["base_lin_vel"], v_b, atol=1e-9)
        np.testing.assert_allclose(r["joint_pos"], d.qpos[7:], atol=0)
    assert d.time == pytest.approx(0.06)


def test_a_missing_policy_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no exported policy"):
        DeployPolicy(tmp_path / "missing.onnx")


def test_sim2sim_site_error_and_target_draw_agree_with_the_reach_env():
    """sim-to-sim's pose error (MuJoCo C, from policy.json's success rule) equals the env's,
    and its targets are drawn from the trained ranges."""
    from simrl.rl.export import deploy_metadata
    from simrl.rl.sim2sim import sample_target, site_error

    env = make("reach", 2, seed=4)
    env.step(0.5 * torch.ones(2, env.num_actions))
    env.sim.forward()  # kinematics of the present qpos (mj_step leaves them one substep behind)
    spec = deploy_metadata(env, ["policy"])["deploy"]
    from simrl.envs.manipulation.reach import ee_errors

    cmd = env.command_terms["ee_pose"]
    for w in range(2):
        target = np.concatenate([cmd.pos_b[w].numpy(), cmd.quat_b[w].numpy()])
        pos_err, ori_err = site_error(env.model, env.sim.get_mjdata(w), spec["success"], target)
        ours = ee_errors(env)
        assert pos_err == pytest.approx(float(ours[0][w]), abs=1e-5)
        assert ori_err == pytest.approx(float(ours[1][w]), abs=1e-4)
        assert pos_err > 0.02  # a random target, far from the arm: the test sees real errors
    rng = np.random.default_rng(0)
    draws = np.stack([sample_target(spec["target"], rng) for _ in range(200)])
    for i, k in enumerate("xyz"):
        lo, hi = spec["target"][k]
        assert lo <= draws[:, i].min() and draws[:, i].max() <= hi and draws[:, i].std() > 0.05
    np.testing.assert_allclose(np.linalg.norm(draws[:, 3:], axis=1), 1.0, atol=1e-9)


def test_sim2sim_runs_an_exported_reach_policy(reach_export):
    from simrl.rl.sim2sim import run_sim2sim

    _, report = reach_export
    r = run_sim2sim(report["onnx"], episodes=3, seed=0)
    assert r["mean_steps"] == 200 and r["fall_share"] == 0.0  # 4 s at 50 Hz, no terminations
    with pytest.raises(ValueError, match="pushes need a floating base"):  # an arm has no base to kick
        run_sim2sim(report["onnx"], episodes=1, push_vel=1.0)
    assert 0.0 <= r["success"] <= 1.0 and r["final_pos_error"] > 0.0 and np.isfinite(r["final_ori_error"])


def test_delta_mode_targets_follow_the_envs_ctrl(reach_export, tmp_path):
    """A delta-mode arm policy (policy.json action mode 'delta'): the runtime's joint targets,
    moved by each action from the default pose, equal the env's ctrl step after step (the
    runtime's actions fed to the env)."""
    import json
    import shutil

    _, report = reach_export
    onnx_path = Path(shutil.copy(report["onnx"], tmp_path / "policy.onnx"))
    meta = json.loads(Path(report["json"]).read_text())
    meta["action"].update(mode="delta", scale=0.05)
    (tmp_path / "policy.json").write_text(json.dumps(meta))
    deploy = DeployPolicy(onnx_path)
    assert deploy.mode == "delta"
    env = make("reach", 1, device="cpu", seed=0, cfg={"action_mode": "delta", "action_scale": 0.05})
    assert env.action_spec()["mode"] == "delta"
    env.reset()
    deploy.reset()
    readings = {"joint_pos": np.zeros(7), "joint_vel": np.zeros(7), "ee_pose": np.r_[0.5, 0, 0.5, 1, 0, 0, 0],
                "target_pose": np.r_[0.5, 0, 0.4, 1, 0, 0, 0]}
    for _ in range(5):
        targets, _, _ = deploy.act(readings)  # the runtime's own action, then the env takes it
        env.step(torch.from_numpy(deploy.last_action)[None])
        np.testing.assert_allclose(targets, env.sim.ctrl[0].numpy(), atol=1e-6)
    assert np.abs(targets - deploy.offset).max() > 1e-3  # the targets did move
    deploy.reset()
    np.testing.assert_allclose(deploy.targets, deploy.offset)
