"""What every fixed-base arm task shares: the scene (the arm and the config's objects), joint
state, site and body poses in the base frame, the joints' reset, and the generic arm terms."""

from __future__ import annotations

import dataclasses
from typing import Any

import mujoco
import torch

from simrl.env import EnvBatch
from simrl.errors import ConfigError
from simrl.math import (
    quat_conjugate,
    quat_mul,
    quat_rotate,
    quat_rotate_inv,
)
from simrl.scene import Scene, assemble


class ArmEnv(EnvBatch):
    """What every fixed-base arm task shares: the scene (the arm and the config's `objects`),
    joint state, site poses in the base frame, absolute or delta joint targets."""

    cfg: Any
    scene: Scene

    def build_model(self) -> mujoco.MjModel:
        self.scene = assemble(self.cfg.robot, objects=getattr(self.cfg, "objects", None))
        if not self.scene.fixed_base:
            r = self.scene.robot
            raise ConfigError(f"task '{self.task_name}' needs a fixed-base arm, but robot '{r.name}' has a "
                              f"free joint on root_body '{r.root_body}': use robot=franka_panda (or an "
                              "arm's yaml)")
        return self.scene.model

    def setup(self) -> None:
        m, dev, sc, cfg = self.model, self.device, self.scene, self.cfg
        f32 = dict(device=dev, dtype=torch.float32)
        if cfg.action_mode not in ("absolute", "delta"):
            raise ConfigError(f"action_mode must be 'absolute' or 'delta', got {cfg.action_mode!r}")
        for k in [f.name for f in dataclasses.fields(cfg) if f.name.startswith(("target_", "spawn_"))]:
            lo, hi = getattr(cfg, k)
            if not lo <= hi:
                raise ConfigError(f"{k} must be (min, max) with min <= max, got {tuple(getattr(cfg, k))}")
        self.robot = sc.robot
        self.default_joint_pos = torch.as_tensor(sc.default_joint_pos, **f32)
        self.action_offset = self.default_joint_pos
        self.action_scale = float(sc.robot.action_scale if cfg.action_scale is None else cfg.action_scale)
        self.joint_qpos = torch.as_tensor(sc.joint_qpos, device=dev)
        self.joint_dof = torch.as_tensor(sc.joint_dof, device=dev)
        self.root_body = sc.root_body
        # every site's body and pose in it: a `site` term param indexes these (sites are fixed)
        self.site_body = [int(b) for b in m.site_bodyid]  # host ints: indexing reads no device
        self.site_local_pos = torch.as_tensor(m.site_pos, **f32)
        self.site_local_quat = torch.as_tensor(m.site_quat, **f32)
        self.ee = _site_id(m, cfg.ee_site)
        jnt = [m.joint(j).id for j in sc.robot.joints]  # reset noise stays inside the joint ranges
        lo, hi = torch.as_tensor(m.jnt_range[jnt], **f32).T
        limited_jnt = torch.as_tensor(m.jnt_limited[jnt], device=dev, dtype=torch.bool)
        self.joint_lo = torch.where(limited_jnt, lo, -torch.inf)
        self.joint_hi = torch.where(limited_jnt, hi, torch.inf)

    # --- state ----------------------------------------------------------------------------------
    @property
    def joint_pos(self) -> torch.Tensor:
        return self.sim.qpos[:, self.joint_qpos].float()

    @property
    def joint_vel(self) -> torch.Tensor:
        return self.sim.qvel[:, self.joint_dof].float()

    def base_pose(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The base's world position (N, 3) and orientation (N, 4)."""
        return self.sim.xpos[:, self.root_body].float(), self.sim.xquat[:, self.root_body].float()

    def body_pos_b(self, body: int) -> torch.Tensor:
        """Body `body`'s position (N, 3) in the base frame."""
        base_pos, base_quat = self.base_pose()
        return quat_rotate_inv(base_quat, self.sim.xpos[:, body].float() - base_pos)

    def site_pose_b(self, site: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Site `site`'s position (N, 3) and orientation (N, 4) in the base frame."""
        body = self.site_body[site]
        pos_w = self.sim.xpos[:, body].float()
        quat_w = self.sim.xquat[:, body].float()
        local = self.site_local_pos[site].expand_as(pos_w)
        pos_w = pos_w + quat_rotate(quat_w, local)
        quat_w = quat_mul(quat_w, self.site_local_quat[site].expand_as(quat_w))
        base_pos, base_quat = self.base_pose()
        return quat_rotate_inv(base_quat, pos_w - base_pos), quat_mul(quat_conjugate(base_quat), quat_w)

    def reset_joints(self, mask: torch.Tensor, noise: float) -> None:
        """The arm at its default pose plus uniform joint noise, targets at the default pose."""
        rows = mask[:, None]
        q = self.default_joint_pos + self.uniform((self.num_envs, self.num_actions), -noise, noise)
        q = torch.maximum(torch.minimum(q, self.joint_hi), self.joint_lo)
        qpos = self.sim.qpos[:, self.joint_qpos]
        self.sim.qpos[:, self.joint_qpos] = torch.where(rows, q.to(self.sim.dtype), qpos)
        na, dt = self.num_actions, self.sim.dtype
        self.sim.ctrl[:, :na] = torch.where(rows, self.default_joint_pos.to(dt), self.sim.ctrl[:, :na])

    def task_actions(self) -> dict[str, dict[str, Any]]:
        """Every joint's target, absolute or delta (`action_mode`; delta: the runtime keeps and
        moves its targets)."""
        return {"joint_pos": {"func": "joint_position_action", "params": {"mode": self.cfg.action_mode}}}


def _site_id(m: mujoco.MjModel, name: str) -> int:
    sid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, name)
    if sid < 0:
        valid = [m.site(i).name for i in range(m.nsite)]
        raise ConfigError(f"ee_site '{name}' is not a site of the robot; valid: {valid} (add one on the "
                          "tool's body with the robot yaml's `sites:`)")
    return sid
