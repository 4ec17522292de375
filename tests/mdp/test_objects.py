"""Terms over a free object (simrl.mdp.objects) and a task that is configuration alone: a robot
and an object in one scene, built by the library's env without a task class; what each term
declares for deploy (a reading, reset and termination facts, a metric's MuJoCo C twin) matches
what the env computes."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import mujoco
import numpy as np
import pytest
import torch

import simrl
from simrl.deploy.runtime import observation
from simrl.env import EnvBatch, EnvCfg, ObsTerm
from simrl.errors import ConfigError
from simrl.managers.metric import metric
from simrl.mdp.objects import object_ang_vel_w
from simrl.rehearse.scene import Readings, fell
from simrl.rl.export import deploy_metadata
from simrl.rl.sim2sim import Twins, start_episode


def box_spin_mj(m: mujoco.MjModel, d: mujoco.MjData) -> float:
    """The box's angular velocity about world z, from MuJoCo C's state."""
    jnt = m.body("box").jntadr[0]
    q, v = m.jnt_qposadr[jnt], m.jnt_dofadr[jnt]
    out = np.zeros(3)
    mujoco.mju_rotVecQuat(out, d.qvel[v + 3 : v + 6], d.qpos[q + 3 : q + 7])
    return float(out[2])


@metric(sim=box_spin_mj)
def box_spin(env: Any) -> torch.Tensor:
    return object_ang_vel_w(env, env.model.body("box").id)[:, 2]


BOX = {"x": [0.4, 0.6], "y": [-0.1, 0.1], "z": [0.3, 0.4], "yaw": [-1.0, 1.0]}


@dataclass
class ArmAndBoxCfg(EnvCfg):
    """A Panda and a box that falls in front of it: a task with no class of its own."""

    TERMS: ClassVar[dict[str, dict[str, Any]]] = {"tracking": {"box_spin": box_spin}}
    robot: Any = "franka_panda"
    objects: dict = field(default_factory=lambda: {"box": {"size": [0.03, 0.03, 0.03],
                                                            "pos": [0.5, 0.0, 0.0]}})
    keyframe: str | None = "home"
    decimation: int | None = 4
    action_scale: float | None = None
    obs_noise: bool = False
    observations: dict = field(default_factory=lambda: {"policy": [
        ObsTerm("joint_pos"), ObsTerm("box_pose", func="object_pose", params={"body": "box"}),
        ObsTerm("last_action")]})
    rewards: dict = field(default_factory=lambda: {"action_rate": -0.01})
    events: dict = field(default_factory=lambda: {
        "arm": {"func": "reset_joints_uniform", "mode": "reset", "params": {"noise": 0.1}},
        "box": {"func": "reset_object_pose", "mode": "reset", "params": {"body": "box", **BOX}}})
    terminations: dict = field(default_factory=lambda: {
        "box_low": {"func": "object_below", "params": {"body": "box", "min_height": 0.35}}})


def _env(n: int = 8, **changes) -> EnvBatch:
    cfg = ArmAndBoxCfg()
    for k, v in changes.items():
        setattr(cfg, k, v)
    return EnvBatch(cfg, n, device="cpu", seed=3)


def test_a_robot_and_an_object_from_configuration_alone():
    env = _env()
    sc = env.scene
    assert sorted(sc.entities) == ["box", "robot"] and sc.fixed_base
    # the robot's joints, default pose and action scale come from its config
    assert env.action_scale == pytest.approx(sc.robot.action_scale)
    torch.testing.assert_close(env.action_offset, torch.as_tensor(sc.default_joint_pos, dtype=torch.float32))
    torch.testing.assert_close(env.joint_pos, env.sim.qpos[:, sc.joint_qpos].float())
    # each episode starts with the box in its box and at rest, turned about z only
    q = sc.objects["box"].qpos
    pos, quat = env.sim.qpos[:, q : q + 3], env.sim.qpos[:, q + 3 : q + 7]
    for axis, key in enumerate("xyz"):
        assert ((pos[:, axis] >= BOX[key][0]) & (pos[:, axis] <= BOX[key][1])).all()
    yaw = 2 * torch.atan2(quat[:, 3], quat[:, 0])
    assert quat[:, 1:3].abs().max() == 0 and ((yaw >= -1.0) & (yaw <= 1.0)).all()
    assert pos[:, 0].std() > 0.02  # drawn per env
    # the policy sees that pose before any physics step: the base's is known from the model
    obs = env.obs_buf["policy"]
    layout = {s.name: s.slice for s in env.obs_layout["policy"]}
    d = mujoco.MjData(env.model)
    mujoco.mj_kinematics(env.model, d)
    base_pos = torch.as_tensor(d.xpos[sc.root_body], dtype=torch.float32)
    torch.testing.assert_close(obs[:, layout["box_pose"]][:, :3], pos.float() - base_pos)


def test_deploy_reads_and_facts_rebuild_the_envs_observation_and_episode():
    """policy.json names the box's pose as a reading and says how sim-to-sim makes it; the deploy
    runtime builds the env's observation from it; the reset and termination facts are the terms'."""
    env = _env(3)
    meta = deploy_metadata(env, ["policy"])
    assert meta["readings"] == ["joint_pos", "box_pose"]
    spec = meta["deploy"]
    assert spec["sim_readings"] == {"box_pose": {"body": "box", "frame_body": None, "quantity": "pose"}}
    assert spec["reset"] == {"joint_noise": 0.1, "object_poses": {"box": BOX}}
    assert spec["termination"] == {"min_body_height": {"box": 0.35}}
    assert spec["metrics"] == {"box_spin": {"sim": f"{__name__}:box_spin_mj", "reduce": "mean"}}
    read = Readings(env.model, meta)
    gen = torch.Generator().manual_seed(0)
    q, v = env.scene.objects["box"].qpos, env.scene.objects["box"].dof
    ended, spins = [], []
    for _ in range(4):
        # a box somewhere in its spawn box (some below the 0.35 m line), tumbling
        env.sim.qpos[:, q + 2] = torch.rand(3, generator=gen, dtype=torch.float64) * 0.1 + 0.3
        env.sim.qpos[:, q + 3 : q + 7] = torch.nn.functional.normalize(
            torch.randn(3, 4, generator=gen, dtype=torch.float64), dim=1)
        env.sim.qvel[:, v + 3 : v + 6] = torch.randn(3, 3, generator=gen, dtype=torch.float64)
        env.sim.forward()
        obs = env.compute_observations(commit=False)["policy"]
        low, spin = env.termination_manager.compute(env), box_spin(env)
        for w in range(3):
            d = env.sim.get_mjdata(w)
            r = read(d, None)
            r["last_action"] = env.actions[w].numpy()
            np.testing.assert_allclose(observation(meta, r), obs[w].numpy(), atol=1e-5)
            # sim-to-sim's drop rule and the metric's twin agree with the env's terms
            assert fell(env.model, d, r, spec["termination"], None, []) == bool(low[w])
            twin = Twins(spec["metrics"])
            twin.reset()
            twin.step(env.model, d, settled=True, ending=False)
            assert twin.values["box_spin"][0] == pytest.approx(float(spin[w]), abs=1e-5)
            ended.append(bool(low[w]))
            spins.append(abs(float(spin[w])))
        env.step(0.5 * torch.randn(3, env.num_actions, generator=gen))
    assert any(ended) and not all(ended) and min(spins) > 0  # both sides of the rule, real spins


def test_sim2sim_starts_episodes_as_the_reset_facts_say():
    env = _env(2)
    meta = deploy_metadata(env, ["policy"])
    m, read = env.model, Readings(env.model, meta)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(0)
    q = env.scene.objects["box"].qpos
    for _ in range(20):
        d.qvel[:] = 1.0
        start_episode(m, d, read, meta["deploy"]["reset"], rng, key=0)
        for axis, key in enumerate("xyz"):
            assert BOX[key][0] <= d.qpos[q + axis] <= BOX[key][1]
        yaw = 2 * math.atan2(d.qpos[q + 6], d.qpos[q + 3])
        assert -1.0 <= yaw <= 1.0 and d.qpos[q + 4] == d.qpos[q + 5] == 0.0
        assert not d.qvel[m.body("box").dofadr[0] :].any()


def test_object_terms_refuse_bodies_without_a_free_joint_and_bad_ranges():
    no_free = r"object_pose: body 'link3' has no free joint; free bodies: \['box'\]"
    with pytest.raises(ConfigError, match=no_free):
        _env(2, observations={"policy": [ObsTerm("p", func="object_pose", params={"body": "link3"})]})
    no_scene = r"object_pose needs a task over a robot scene \(a config with `robot`\); task 'cartpole'"
    with pytest.raises(ConfigError, match=no_scene):
        simrl.make("cartpole", 2, device="cpu", cfg={"observations": {"policy": {
            "p": {"func": "object_pose", "params": {"body": "pole"}}}}})
    bad = {"body": "box", **BOX, "z": [0.4, 0.3]}
    with pytest.raises(ConfigError, match=r"reset_object_pose: z must be \[min, max\] with min <= max"):
        _env(2, events={"box": {"func": "reset_object_pose", "mode": "reset", "params": bad}})
