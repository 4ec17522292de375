"""The simulated robot's scene and readings, from an export's policy.json: what sim-to-sim
(`simrl.rl.sim2sim`), the in-process robot (`mujoco_robot`) and the robot server
(`robot_server`) share. The scene is rebuilt as training assembled it; readings are taken by
name, as a robot reports them; `fell` is the export's termination rule in MuJoCo C.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from simrl.deploy.controller import held_joints
from simrl.deploy.runtime import projected_gravity
from simrl.paths import ASSETS

IMU_READINGS = {"gyro": "imu_gyro", "quat": "imu_quat", "base_lin_vel": "imu_vel"}


def scene_model(meta: dict[str, Any], terrain: Any = None):
    """The model the policy was trained on, rebuilt from its export metadata, and its terrain
    grid (None on a plane). `terrain` (a configs/terrain name or fields) replaces the trained
    ground, e.g. "stairs" to test on steps."""
    scene = meta["deploy"]["scene"]
    if "robot" in scene:
        from simrl.scene import assemble

        built = assemble(scene["robot"], terrain=terrain or meta["deploy"].get("terrain"),
                         objects=scene.get("objects"))
        return built.model, built.terrain
    path = Path(scene["mjcf"])
    return mujoco.MjModel.from_xml_path(str(path if path.is_absolute() else ASSETS / path)), None


class Readings:
    """What the robot reports, read from an MjData by name: encoders of the policy's joints (in
    action order), the IMU sensors, the command and target, and the site poses the export's
    `deploy.sim_readings` names (what an arm's controller computes by forward kinematics)."""

    def __init__(self, m: mujoco.MjModel, meta: dict[str, Any]):
        self.m = m
        deploy = meta.get("deploy", {})
        root = ((meta.get("robot") or {}).get("config") or {}).get("root_body")
        # each rule's frame: its frame_body, or the robot's base where it names none
        self.site_poses = {name: {**rule, "frame_body": rule.get("frame_body") or root}
                           for name, rule in deploy.get("sim_readings", {}).items()}
        self.target_name = (deploy.get("target") or {}).get("reading", "target_pose")
        robot = meta.get("robot")
        self.held_qpos = np.array([m.joint(j).qposadr[0] for j in held_joints(meta).names], dtype=np.int64)
        if robot:  # the policy's joints, by name
            joints = [m.joint(j) for j in robot["joint_names"]]
            self.qpos = np.array([j.qposadr[0] for j in joints])
            self.dof = np.array([j.dofadr[0] for j in joints])
        else:  # a task over the whole model (cartpole): every coordinate
            self.qpos, self.dof = np.arange(m.nq), np.arange(m.nv)
        self.sensors = {}
        for key, name in IMU_READINGS.items():
            i = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SENSOR, name)
            if i >= 0:
                self.sensors[key] = slice(m.sensor_adr[i], m.sensor_adr[i] + m.sensor_dim[i])

    def __call__(self, d: mujoco.MjData, command, target: np.ndarray | None = None) -> dict[str, np.ndarray]:
        r = {"joint_pos": d.qpos[self.qpos].copy(), "joint_vel": d.qvel[self.dof].copy(),
             "command": np.asarray(command, dtype=np.float64)}
        if target is not None:
            r[self.target_name] = target
        if self.held_qpos.size:  # encoders of the held joints (the controller's stand reads them)
            r["held_joint_pos"] = d.qpos[self.held_qpos].copy()
        for name, rule in self.site_poses.items():
            if "site" in rule:
                r[name] = site_pose(self.m, d, rule)
            elif rule.get("quantity") == "pose":
                r[name] = body_pose(self.m, d, rule)
            else:
                r[name] = body_pos(self.m, d, rule)
        for key, sl in self.sensors.items():
            r[key] = d.sensordata[sl].copy()
        return r


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros(4)
    mujoco.mju_mulQuat(out, np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    return out


def site_pose(m: mujoco.MjModel, d: mujoco.MjData, rule: dict[str, Any]) -> np.ndarray:
    """The rule's site pose in its frame body: [x, y, z, qw, qx, qy, qz]."""
    base, site = m.body(rule["frame_body"]).id, m.site(rule["site"]).id
    pos = d.xmat[base].reshape(3, 3).T @ (d.site_xpos[site] - d.xpos[base])
    q_site, q_base_inv = np.zeros(4), np.zeros(4)
    mujoco.mju_mat2Quat(q_site, d.site_xmat[site])
    mujoco.mju_negQuat(q_base_inv, d.xquat[base])
    return np.concatenate([pos, quat_mul(q_base_inv, q_site)])


def body_pos(m: mujoco.MjModel, d: mujoco.MjData, rule: dict[str, Any]) -> np.ndarray:
    """The rule's body position in its frame body: [x, y, z]."""
    base, body = m.body(rule["frame_body"]).id, m.body(rule["body"]).id
    return d.xmat[base].reshape(3, 3).T @ (d.xpos[body] - d.xpos[base])


def body_pose(m: mujoco.MjModel, d: mujoco.MjData, rule: dict[str, Any]) -> np.ndarray:
    """The rule's body pose in its frame body: [x, y, z, qw, qx, qy, qz]."""
    base = m.body(rule["frame_body"]).id
    q_base_inv = np.zeros(4)
    mujoco.mju_negQuat(q_base_inv, d.xquat[base])
    pos = body_pos(m, d, rule)
    return np.concatenate([pos, quat_mul(q_base_inv, d.xquat[m.body(rule["body"]).id])])


def fell(m: mujoco.MjModel, d: mujoco.MjData, r: dict, termination: dict, root_qpos: int | None,
         bodies: list[int], ground: float = 0.0) -> bool:
    """Whether the export's termination rule ends the episode in this state."""
    if not np.isfinite(d.qpos).all():
        return True
    for index, limit in termination.get("max_abs_qpos", {}).items():
        if abs(d.qpos[int(index)]) > limit:
            return True
    if "quat" in r and termination.get("max_tilt_cos") is not None:
        if projected_gravity(r["quat"])[2] > -termination["max_tilt_cos"]:
            return True
    for body, limit in termination.get("min_body_height", {}).items():  # an object dropped
        if d.xpos[m.body(body).id, 2] < limit:
            return True
    height = termination.get("min_base_height")
    if height is not None and root_qpos is not None and d.qpos[root_qpos + 2] - ground < height:
        return True
    return any(np.linalg.norm(d.cfrc_ext[b, 3:]) > 1.0 for b in bodies)
