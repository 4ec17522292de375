"""A legged robot's state as the velocity task's terms read it, computed once per step: the base
as its IMU reports it (angular velocity, the velocity a state estimator gives, gravity in the
IMU's frame), its height over the ground, each foot's contact, air and contact time, tip height
and swing peak; and the episode's sensor biases and ground friction."""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np
import torch

from simrl.envs.locomotion.events import foot_tips, spawn_lifts
from simrl.errors import ConfigError
from simrl.managers.terms import index_of
from simrl.math import quat_rotate, quat_rotate_inv, quat_yaw


class LeggedData:
    """`env.legged`: built once; `refresh` after physics and resets, `update` after physics."""

    not_state = frozenset({"imu_pos", "imu_rot", "soft_lo", "soft_hi", "feet", "penalized", "foot_tip",
                           "gravity_w", "touching", "colliding", "lift_table", "track_swing",
                           "track_foot_height", "root_qpos", "root_dof", "base_z0"})

    def __init__(self, env: Any):
        m, n, dev, sc, cfg = env.model, env.num_envs, env.device, env.scene, env.cfg
        f32 = dict(device=dev, dtype=torch.float32)
        self.root_qpos, self.root_dof = sc.root_qpos, sc.root_dof
        # the IMU on the base: its offset, and its rotation where it is not the base's own
        self.imu_pos = torch.as_tensor(sc.imu_pos, **f32)
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, sc.imu_quat)
        rot = rot.reshape(3, 3)
        self.imu_rot = None if np.allclose(rot, np.eye(3)) else torch.as_tensor(rot, **f32)
        jnt = [m.joint(j).id for j in sc.robot.joints]
        lo, hi = torch.as_tensor(m.jnt_range[jnt], **f32).T
        mid, half = (lo + hi) / 2, (hi - lo) / 2
        limited = torch.as_tensor(m.jnt_limited[jnt], device=dev, dtype=torch.bool)
        inf = torch.full_like(lo, float("inf"))  # an unlimited joint is never out of its range
        self.soft_lo = torch.where(limited, mid - 0.9 * half, -inf)
        self.soft_hi = torch.where(limited, mid + 0.9 * half, inf)
        # body ids as device tensors: a Python-list index is a host copy on every use
        self.feet = torch.as_tensor(sc.feet, device=dev)
        self.penalized = torch.as_tensor(sc.penalize_contacts, device=dev)
        self.air_time = torch.zeros(n, len(sc.feet), **f32)
        self.contact_time = torch.zeros(n, len(sc.feet), **f32)  # time since each foot's touchdown
        self.colliding = (m.geom_contype > 0) | (m.geom_conaffinity > 0)
        self.foot_tip = torch.as_tensor(foot_tips(m, sc.feet, self.colliding), **f32)  # (feet, 3)
        self.swing_peak = torch.zeros(n, len(sc.feet), **f32)  # max tip height over ground, this swing
        self.swing_peak_on_landing = torch.zeros_like(self.swing_peak)
        funcs = {t.func for _, t in env.reward_manager.active}
        self.track_swing = "foot_clearance" in funcs
        # each foot tip's height over the ground, where a reward uses it
        self.track_foot_height = self.track_swing or "feet_height_phase" in funcs
        self.foot_height = torch.zeros(n, len(sc.feet), **f32)
        if self.track_swing and not cfg.foot_clearance_target > 0:
            raise ConfigError(f"foot_clearance_target must be > 0 m (the swing height the foot_clearance "
                              f"reward asks for), got {cfg.foot_clearance_target}")
        self.gravity_w = torch.tensor([[0.0, 0.0, -1.0]], **f32).expand(n, 3)
        # sensor biases and ground friction, per episode (the spawn events draw them)
        self.gyro_bias = torch.zeros(n, 3, **f32)
        self.gravity_bias = torch.zeros(n, 3, **f32)
        self.mu = torch.ones(n, 1, **f32)
        # per-episode contact friction and damping live on the robot's colliding geoms: the
        # ground's slide friction is ~0 (a contact takes the larger of the two) and its solmix 0
        # (a contact takes the robot geom's solref), so a terrain of many geoms costs nothing
        self.touching = index_of(np.flatnonzero(self.colliding & (m.geom_bodyid != 0)).tolist(), dev)
        self.base_z0 = float(m.key_qpos[0, self.root_qpos + 2])  # the default pose's base height
        self.lift_table = torch.as_tensor(spawn_lifts(sc, env.terrain.grid, cfg), **f32)
        self.spawn_lift = torch.zeros(n, **f32)

    def refresh(self, env: Any) -> None:
        """Base quantities are the IMU's (what its gyro, velocimeter and orientation report,
        in its frame), computed from qpos/qvel: the robot-side runtime reads the same sensors."""
        qpos, qvel = env.sim.qpos.float(), env.sim.qvel.float()
        rq, rd = self.root_qpos, self.root_dof
        self.base_pos = qpos[:, rq : rq + 3]
        self.base_quat = qpos[:, rq + 3 : rq + 7]
        self.base_yaw = quat_yaw(self.base_quat)  # heading: curriculum, steering, height scan
        ang = qvel[:, rd + 3 : rd + 6]  # free joint angular velocity: in the base frame
        lin = quat_rotate_inv(self.base_quat, qvel[:, rd : rd + 3])  # the base origin's
        lin = lin + torch.cross(ang, self.imu_pos.expand_as(ang), dim=1)  # the IMU's
        gravity = quat_rotate_inv(self.base_quat, self.gravity_w)
        if self.imu_rot is not None:  # into the IMU's own axes (row vectors: v @ R = R^T v)
            ang, lin, gravity = ang @ self.imu_rot, lin @ self.imu_rot, gravity @ self.imu_rot
        self.base_lin_vel_b, self.base_ang_vel_b, self.gravity_b = lin, ang, gravity
        self.base_height = self.base_pos[:, 2] - env.terrain.field(self.base_pos[:, 0], self.base_pos[:, 1])
        self.foot_force = env.sim.contact_force(self.feet).float()
        # a reset env's contact forces are the last episode's until it steps: none yet
        self.contact = (self.foot_force.norm(dim=-1) > 1.0) & ~env.reset_buf[:, None]

    def update(self, env: Any) -> None:
        """Contact timers, landings, foot heights and swing peaks after a physics step."""
        first_contact = (self.air_time > 0) & self.contact
        self.first_contact = first_contact
        self.air_time_on_landing = self.air_time * first_contact
        self.air_time.add_(env.dt).mul_(~self.contact)  # in place: stays a normal tensor
        self.contact_time.add_(env.dt).mul_(self.contact)
        if self.track_foot_height:
            self.foot_height = self.foot_heights(env)
        if self.track_swing:  # swing peaks: only where a reward uses them
            self.swing_peak_on_landing = self.swing_peak * first_contact
            torch.maximum(self.swing_peak, self.foot_height, out=self.swing_peak)
            self.swing_peak.masked_fill_(self.contact, 0.0)  # in place: stays a normal tensor

    def reset(self, env: Any, mask: torch.Tensor) -> None:
        rows = mask[:, None]
        self.air_time.masked_fill_(rows, 0.0)
        self.contact_time.masked_fill_(rows, 0.0)
        self.swing_peak.masked_fill_(rows, 0.0)

    def foot_heights(self, env: Any) -> torch.Tensor:
        """(N, feet) height of each foot tip above the ground under it."""
        n, nf = env.num_envs, self.feet.numel()
        pos = env.sim.xpos[:, self.feet].float().reshape(-1, 3)
        quat = env.sim.xquat[:, self.feet].float().reshape(-1, 4)
        tip = (pos + quat_rotate(quat, self.foot_tip.repeat(n, 1))).reshape(n, nf, 3)
        return tip[..., 2] - env.terrain.field(tip[..., 0], tip[..., 1])
