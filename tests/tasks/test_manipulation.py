"""The reach task on a fixed-base arm (envs/manipulation/, Menagerie's Franka Panda)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

import simrl
from simrl.errors import ConfigError
from simrl.mdp.frames import body_pos_b, ee_site, site_pose_b
from simrl.rl.evaluate import evaluate
from simrl.scene import assemble


def test_panda_assembles_as_a_fixed_base_arm_without_feet_or_imu():
    scene = assemble("franka_panda")
    m = scene.model
    assert scene.fixed_base and scene.root_qpos is None and scene.root_dof is None
    assert m.nq == 7 and m.nu == 7 and m.nsensor == 0  # no free joint, no IMU sensors added
    robot = m.geom_bodyid != 0  # the world's geoms are the floor assembly added
    assert robot.sum() > 10 and (m.geom_contype[robot] == 0).all() and (m.geom_conaffinity[robot] == 0).all()
    assert scene.kp.tolist() == [4500, 4500, 3500, 3500, 2000, 2000, 2000]  # the MJCF's own gains


def test_velocity_task_refuses_an_arm_in_one_line():
    with pytest.raises(ConfigError, match="needs a legged robot, but robot 'franka_panda' lacks a floating "
                                          "base.*feet.*imu_site"):
        simrl.make("quadruped", 1, device="cpu", robot="franka_panda")


def test_reach_refuses_a_floating_base_robot():
    with pytest.raises(ConfigError, match="task 'reach' needs a fixed-base robot, but robot 'quadruped' "
                                          "has a free joint on root_body 'trunk': use robot=franka_panda"):
        simrl.make("reach", 1, device="cpu", cfg={"robot": "quadruped"})


def test_reach_observations_and_targets():
    env = simrl.make("reach", 8, device="cpu", seed=3)
    assert env.obs_dims == {"policy": 7 + 7 + 6 + 7, "critic": 27 + 4}
    target = env.command_terms["ee_pose"]
    t = target.pos_b
    cfg = env.cfg
    for i, k in enumerate(("target_x", "target_y", "target_z")):
        lo, hi = getattr(cfg, k)
        assert ((t[:, i] >= lo) & (t[:, i] <= hi)).all()
    assert t.std(dim=0).min() > 0.01  # drawn per env
    assert torch.allclose(target.quat_b.norm(dim=1), torch.ones(8), atol=1e-5)


def _hold(env, offset: float) -> dict:
    """Evaluate the policy that holds the default pose, with the target at the default pose's
    end-effector pose shifted by `offset` m along x."""
    env.reset()
    env.step(torch.zeros(env.num_envs, 7))  # forward kinematics at the default pose
    pos, quat = site_pose_b(env, ee_site(env))
    pos = pos[0] + torch.tensor([offset, 0.0, 0.0])

    def hold(obs):
        env.fix_command([*pos.tolist(), *quat[0].tolist()], "ee_pose")  # pinned again after every reset
        return torch.zeros(env.num_envs, 7)

    return evaluate(env, hold)


def test_success_metric_counts_episodes_that_hold_the_target():
    env = simrl.make("reach", 4, device="cpu", seed=0, cfg={"init_joint_noise": 0.0, "obs_noise": False})
    at = _hold(env, 0.0)
    off = _hold(env, 0.05)
    assert at["success"] == 1.0 and at["final_pos_error"] < 0.01 and at["final_ori_error"] < 0.02
    assert off["success"] == 0.0 and off["final_pos_error"] == pytest.approx(0.05, abs=0.01)
    assert at["fall_share"] == 0.0  # reach never terminates early


def test_first_observation_after_a_reset_sees_the_new_end_effector_pose():
    """Resets write new joints; the ee pose the first observation reads is theirs, not stale."""
    env = simrl.make("reach", 2, device="cpu", seed=1, cfg={"obs_noise": False})
    obs, _ = env.reset()
    sl = next(s.slice for s in env.obs_layout["policy"] if s.name == "pose_error")
    for w in range(2):
        d = env.sim.get_mjdata(w)  # forwarded
        site = env.model.site("attachment_site").id
        want = (env.command_terms["ee_pose"].pos_b[w].numpy() - d.site_xpos[site]) * 5.0  # the term's scale
        np.testing.assert_allclose(obs["policy"][w, sl][:3].numpy(), want, atol=1e-5)


def test_lift_spawns_the_cube_in_its_box_and_counts_a_carried_cube_as_success():
    env = simrl.make("lift", 4, device="cpu", seed=0)
    body = env.model.body("cube").id
    cube = body_pos_b(env, body)
    assert ((cube[:, 0] >= 0.4) & (cube[:, 0] <= 0.6) & (cube[:, 1].abs() <= 0.15)).all()
    assert cube[:, :2].std(dim=0).min() > 0.01
    q = env.scene.objects["cube"].qpos
    target = env.command_terms["object_target"].pos_b

    def carry(obs):  # the cube moved onto the target, held still, every step
        env.sim.qpos[:, q : q + 3] = target.to(env.sim.dtype)  # the base sits at the origin
        env.sim.qvel[:, env.scene.objects["cube"].dof :] = 0.0
        return torch.zeros(env.num_envs, env.num_actions)

    carried = evaluate(env, carry)
    untouched = evaluate(env, lambda obs: torch.zeros(env.num_envs, env.num_actions))
    assert carried["success"] == 1.0 and carried["lifted"] == 1.0 and carried["final_object_error"] < 0.03
    assert untouched["success"] == 0.0 and untouched["lifted"] == 0.0
    assert untouched["final_object_error"] > 0.15


def test_sim2sim_runs_an_exported_lift_policy_with_the_cube_as_a_reading(tmp_path):
    from simrl.rl.app import export, train
    from simrl.rl.sim2sim import run_sim2sim
    from tests.conftest import compose_config

    train(compose_config("train", "task=lift", "num_envs=16", "max_iterations=1", "progress=false",
                         "device=cpu", "agent.num_steps_per_env=4"), tmp_path)
    report = export(compose_config("export", f"checkpoint={tmp_path}", "num_envs=16"))
    meta = json.loads(Path(report["json"]).read_text())
    assert meta["readings"] == ["joint_pos", "joint_vel", "object_pos", "target_pos", "ee_pose"]
    assert "perception" in meta["reading_docs"]["object_pos"]
    r = run_sim2sim(report["onnx"], episodes=2, seed=0)
    assert r["mean_steps"] == 250 and set(r) >= {"success", "final_object_error", "lifted"}
    assert r["final_object_error"] > 0.03  # an untrained policy carries nothing


def test_ee_site_moves_the_target_every_term_and_the_success_metric_together():
    robot = {"source": "menagerie:franka_emika_panda/panda_nohand", "name": "panda_tool",
             "root_body": "link0", "joints": [f"joint{i}" for i in range(1, 8)], "default_pose": "home",
             "sites": {"tool": {"body": "link7", "pos": [0.0, 0.0, 0.2]}}}
    env = simrl.make("reach", 2, device="cpu", seed=0, robot=robot, cfg={"ee_site": "tool"})
    tool = env.model.site("tool").id
    assert ee_site(env) == tool
    env.step(torch.zeros(2, env.num_actions))
    pos, _ = site_pose_b(env, tool)
    target = env.command_terms["ee_pose"].pos_b
    err = (pos - target).norm(dim=1)
    assert torch.equal(env.reward_manager.term_fn("ee_pos_error")(env), err)  # the rewards' site
    assert torch.equal(env.metric_manager.metrics["final_pos_error"](env), err)  # the metric's
    layout = {s.name: s for s in env.obs_layout["policy"]}
    obs = env.compute_observations(commit=False)["policy"][:, layout["pose_error"].slice]
    assert torch.allclose(obs[:, :3], 5.0 * (target - pos))  # the observation's
