"""The velocity task's env: the scene of one legged robot, its state read once per step (the
IMU's frame, feet contacts and timers), resets with randomization, and the terrain curriculum."""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping
from typing import Any

import mujoco
import numpy as np
import torch

import simrl.envs.locomotion.observations as obs
import simrl.envs.locomotion.rewards as rew
import simrl.mirror as mirror
from simrl.env import EnvBatch
from simrl.envs.locomotion.cfg import GRID_SCAN_SIZE, LocomotionCfg
from simrl.envs.locomotion.clock import (
    _check_clock_feet,
    _check_legged,
    _clocked,
    _with_gait_clock,
    _with_history,
    default_gait_offsets,
)
from simrl.envs.locomotion.gait_prior import ReferenceGait, ReferenceGaitFade
from simrl.envs.locomotion.randomize import foot_tips, lift, randomize_model, spawn_lifts
from simrl.envs.locomotion.terminations import base_height_below, base_tilt
from simrl.errors import ConfigError
from simrl.managers.terms import index_of
from simrl.math import quat_rotate, quat_rotate_inv, quat_yaw, yaw_quat, yaw_rotate
from simrl.mdp.observations import OBSERVATIONS
from simrl.scene import Scene, assemble
from simrl.terrain.curriculum import next_levels
from simrl.terrain.heights import HeightField, scan_points


class LocomotionEnv(EnvBatch):
    task_name = "locomotion"
    cfg: LocomotionCfg
    scene: Scene

    def __init__(self, cfg: LocomotionCfg, *args, **kwargs):
        self.task_name = cfg.task_name
        cfg = _with_history(cfg)  # the gait clock joins in build_model: its offsets may need the robot
        lo, hi = cfg.action_delay
        if not 0 <= lo <= hi:
            raise ConfigError(f"action_delay must be (min, max) control steps with 0 <= min <= max, "
                              f"got {tuple(cfg.action_delay)}")
        if not 0.0 <= cfg.reset_base_vel < float("inf"):  # NaN fails too
            raise ConfigError(f"reset_base_vel must be a finite speed >= 0 (m/s and rad/s per axis; 0: at "
                              f"rest), got {cfg.reset_base_vel}")
        super().__init__(cfg, *args, **kwargs)

    def build_model(self) -> mujoco.MjModel:
        self.scene = assemble(self.cfg.robot, terrain=self.cfg.terrain)
        _check_legged(self.scene, self.task_name)
        clocked = self.cfg.gait_period_s is not None or any(
            "offsets" not in (e.get("params") or {}) for _, e in _clocked(self.cfg.rewards))
        if clocked and self.cfg.gait_offsets is None:  # the robot's own: a walk or a trot
            offsets = default_gait_offsets(self.scene)
            self.cfg = dataclasses.replace(self.cfg, gait_offsets=offsets)
        self.cfg = _with_gait_clock(self.cfg)
        _check_clock_feet(self.cfg, self.scene.robot.feet)
        m = self.scene.model
        self.colliding = (m.geom_contype > 0) | (m.geom_conaffinity > 0)
        ground = self.colliding & (m.geom_bodyid == 0)
        m.geom_friction[ground, 0] = 1e-5  # mjMINMU, ~0: episode friction and damping are the robot's (setup)
        m.geom_solmix[ground] = 0.0
        return m

    def setup(self) -> None:
        m, n, dev, sc = self.model, self.num_envs, self.device, self.scene
        f32 = dict(device=dev, dtype=torch.float32)
        self.robot = sc.robot
        self.default_joint_pos = torch.as_tensor(sc.default_joint_pos, **f32)
        self.action_offset = self.default_joint_pos
        scale = self.cfg.action_scale
        self.action_scale = float(sc.robot.action_scale if scale is None else scale)
        self.root_qpos, self.root_dof = sc.root_qpos, sc.root_dof
        # the IMU on the base: its offset, and its rotation where it is not the base's own
        self.imu_pos = torch.as_tensor(sc.imu_pos, **f32)
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, sc.imu_quat)
        rot = rot.reshape(3, 3)
        self.imu_rot = None if np.allclose(rot, np.eye(3)) else torch.as_tensor(rot, **f32)
        self.joint_qpos = index_of(sc.joint_qpos, dev)  # a slice where contiguous (a view)
        self.joint_dof = index_of(sc.joint_dof, dev)
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
        funcs = {t.func for _, t in self.reward_manager.active}
        self.foot_tip = torch.as_tensor(foot_tips(self), **f32)  # (feet, 3) in each foot body
        self.swing_peak = torch.zeros(n, len(sc.feet), **f32)  # max tip height over ground, this swing
        self.swing_peak_on_landing = torch.zeros_like(self.swing_peak)
        self.track_swing = "foot_clearance" in funcs
        # each foot tip's height over the ground, where a reward uses it
        self.track_foot_height = self.track_swing or "feet_height_phase" in funcs
        self.foot_height = torch.zeros(n, len(sc.feet), **f32)
        if self.track_swing and not self.cfg.foot_clearance_target > 0:
            raise ConfigError(f"foot_clearance_target must be > 0 m (the swing height the foot_clearance "
                              f"reward asks for), got {self.cfg.foot_clearance_target}")
        self.last_joint_vel = torch.zeros(n, self.num_actions, **f32)
        self.gravity_w = torch.tensor([[0.0, 0.0, -1.0]], **f32).expand(n, 3)
        # sensor biases and ground friction (per episode), delayed actions (a queue, newest first)
        self.gyro_bias = torch.zeros(n, 3, **f32)
        self.gravity_bias = torch.zeros(n, 3, **f32)
        self.mu = torch.ones(n, 1, **f32)
        self.delay = torch.zeros(n, 1, 1, device=dev, dtype=torch.long)
        self.action_queue = torch.zeros(n, self.cfg.action_delay[1] + 1, self.num_actions, **f32)
        # per-episode contact friction and damping live on the robot's colliding geoms: the
        # ground's slide friction is ~0 (a contact takes the larger of the two) and its solmix 0
        # (a contact takes the robot geom's solref), so a terrain of many geoms costs nothing
        self.touching = index_of(np.flatnonzero(self.colliding & (m.geom_bodyid != 0)).tolist(), dev)
        randomize_model(self)
        # the ground: a plane, or a terrain grid with a curriculum of levels
        self.field = HeightField(sc.terrain, dev)
        size = self.cfg.height_scan_size
        if size is None:
            size = GRID_SCAN_SIZE if sc.terrain is not None else (0.0, 0.0)
        self.height_scan_size = (float(size[0]), float(size[1]))
        self.scan_points = scan_points(size, self.cfg.height_scan_spacing, dev)
        self.base_z0 = float(m.key_qpos[0, self.root_qpos + 2])  # the default pose's base height
        self.grid = sc.terrain
        self.lift_table = torch.as_tensor(spawn_lifts(self), **f32)
        if self.grid is not None:
            tcfg = self.grid.cfg
            self.origins = torch.as_tensor(self.grid.origins, **f32)  # (levels, types, 3)
            top = min(tcfg.max_init_level, self.grid.num_levels - 1)
            self.levels = torch.randint(0, top + 1, (n,), generator=self.gen, device=dev)
            self.types = torch.arange(n, device=dev) % self.grid.num_types
            self.curriculum = tcfg.curriculum
            self.spawn = torch.zeros(n, 2, **f32)
            self.walked = torch.zeros(n, **f32)
            self.farthest = torch.zeros(n, **f32)  # this episode's largest `walked`
            # evaluation on a grid also reports who crossed half a tile without a fall
            self.METRIC_TERMS = {**self.METRIC_TERMS, "crossed_share": rew.crossed_share}
            self.cmd_disp = torch.zeros(n, 2, **f32)  # where the commands would have taken it
        self.refresh()

    # --- state, read once per step from the sim views (float32) ------------------------------
    def refresh(self) -> None:
        """Base quantities are the IMU's (what its gyro, velocimeter and orientation report,
        in its frame), computed from qpos/qvel: the robot-side runtime reads the same sensors."""
        qpos, qvel = self.sim.qpos.float(), self.sim.qvel.float()
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
        self.joint_pos = qpos[:, self.joint_qpos]
        self.joint_vel = qvel[:, self.joint_dof]
        self.base_height = self.base_pos[:, 2] - self.field(self.base_pos[:, 0], self.base_pos[:, 1])
        self.foot_force = self.sim.contact_force(self.feet).float()
        # a reset env's contact forces are the last episode's until it steps: none yet
        self.contact = (self.foot_force.norm(dim=-1) > 1.0) & ~self.reset_buf[:, None]

    def apply_actions(self, actions: torch.Tensor) -> None:
        self.last_joint_vel.copy_(self.sim.qvel[:, self.joint_dof])
        if self.action_queue.shape[1] > 1:  # the action `delay` control steps old reaches the motors
            self.action_queue = torch.cat([actions[:, None], self.action_queue[:, :-1]], dim=1)
            idx = self.delay.expand(-1, 1, actions.shape[1])
            actions = self.action_queue.gather(1, idx).squeeze(1)
        super().apply_actions(actions)  # the action terms (by default: default pose + scale * actions)

    def task_events(self) -> dict[str, dict[str, Any]]:
        """Pushes (push_vel, push_interval_s): an interval event on the base, so they go into
        the state the physics starts from and this step's observation shows them."""
        if not self.cfg.push_vel > 0:
            return {}
        return {"push": {"func": "push_body", "mode": "interval", "interval_s": self.cfg.push_interval_s,
                         "params": {"body": self.robot.root_body, "max_vel": self.cfg.push_vel}}}

    def update(self) -> None:
        self.refresh()
        first_contact = (self.air_time > 0) & self.contact
        self.first_contact = first_contact
        self.air_time_on_landing = self.air_time * first_contact
        self.air_time.add_(self.dt).mul_(~self.contact)  # in place: stays a normal tensor
        self.contact_time.add_(self.dt).mul_(self.contact)
        if self.track_foot_height:
            self.foot_height = self.foot_heights()
        if self.track_swing:  # swing peaks: only where a reward uses them
            self.swing_peak_on_landing = self.swing_peak * first_contact
            torch.maximum(self.swing_peak, self.foot_height, out=self.swing_peak)
            self.swing_peak.masked_fill_(self.contact, 0.0)  # in place: stays a normal tensor
        if self.grid is not None:  # for the curriculum: how far it went, how far it was asked to
            self.walked = (self.base_pos[:, :2] - self.spawn).norm(dim=1)
            self.farthest = torch.maximum(self.farthest, self.walked)
            # the commanded base-frame velocity, in the world frame
            vx, vy = yaw_rotate(self.base_yaw, self.commands[:, 0], self.commands[:, 1])
            self.cmd_disp = self.cmd_disp + torch.stack([vx, vy], dim=1) * self.dt

    def foot_heights(self) -> torch.Tensor:
        """(N, feet) height of each foot tip above the ground under it."""
        n, nf = self.num_envs, self.feet.numel()
        pos = self.sim.xpos[:, self.feet].float().reshape(-1, 3)
        quat = self.sim.xquat[:, self.feet].float().reshape(-1, 4)
        tip = (pos + quat_rotate(quat, self.foot_tip.repeat(n, 1))).reshape(n, nf, 3)
        return tip[..., 2] - self.field(tip[..., 0], tip[..., 1])

    def task_terminations(self) -> dict[str, dict[str, Any]]:
        """Tilt past `max_tilt_cos`, a `terminate_contacts` body touching, and (where set) the
        base below `min_base_height` over the ground under it."""
        cfg, m = self.cfg, self.model
        out = {"base_tilt": {"func": "base_tilt", "params": {"max_tilt_cos": cfg.max_tilt_cos}}}
        if len(self.scene.terminate_contacts):
            names = [re.escape(m.body(int(b)).name) for b in self.scene.terminate_contacts]
            out["body_contact"] = {"func": "body_contact", "params": {"bodies": names, "threshold": 1.0}}
        height, share = cfg.min_base_height, cfg.min_base_height_share
        if height is None and share is not None:  # an absolute height, where given, wins
            if not 0.0 < share < 1.0:
                raise ConfigError(f"min_base_height_share must be in (0, 1) (a share of the default base "
                                  f"height, {self.base_z0:.3f} m here), got {share!r}")
            height = share * self.base_z0
        if height is not None:
            out["base_height"] = {"func": "base_height_below", "params": {"min_height": height}}
        return out

    def reset_envs(self, mask: torch.Tensor) -> None:
        n, cfg, sim, dt = self.num_envs, self.cfg, self.sim, self.sim.dtype
        rows, rq, rd = mask[:, None], self.root_qpos, self.root_dof
        # random yaw, joints scaled around the default pose, a random base velocity (reset_base_vel);
        # drawn for every env and kept where mask (no host sync to count the resets)
        quat = yaw_quat(self.uniform((n,), -3.14159, 3.14159)).to(dt)
        scale = self.uniform((n, 1), *cfg.joint_pos_scale)
        joints = (self.default_joint_pos * scale).to(dt)
        self.spawn_lift = lift(self, scale)
        root_vel = self.uniform((n, 6), -cfg.reset_base_vel, cfg.reset_base_vel).to(dt)
        sim.qpos[:, rq + 3 : rq + 7] = torch.where(rows, quat, sim.qpos[:, rq + 3 : rq + 7])
        sim.qpos[:, self.joint_qpos] = torch.where(rows, joints, sim.qpos[:, self.joint_qpos])
        sim.qvel[:, rd : rd + 6] = torch.where(rows, root_vel, sim.qvel[:, rd : rd + 6])
        sim.qvel[:, self.joint_dof] = sim.qvel[:, self.joint_dof].masked_fill(rows, 0.0)
        na = self.num_actions  # held joints' targets never change (the keyframe's)
        sim.ctrl[:, :na] = torch.where(rows, self.default_joint_pos.to(dt), sim.ctrl[:, :na])
        if self.grid is not None:
            self._place_on_terrain(mask)
        else:
            z = (self.base_z0 + self.spawn_lift).to(dt)
            sim.qpos[:, rq + 2] = torch.where(mask, z, sim.qpos[:, rq + 2])
        # ground contact friction per episode (contacts take the larger of the two geoms')
        friction = sim.param("geom_friction")
        mu = self.uniform((n, 1), *cfg.friction)
        touching = friction[:, self.touching, 0]
        friction[:, self.touching, 0] = torch.where(rows, mu.to(friction.dtype), touching)
        self.mu = torch.where(rows, mu, self.mu)
        if tuple(cfg.ground_dampratio) != (1.0, 1.0):
            solref = sim.param("geom_solref")
            ratio = self.uniform((n, 1), *cfg.ground_dampratio).to(solref.dtype)
            solref[:, self.touching, 1] = torch.where(rows, ratio, solref[:, self.touching, 1])
        if cfg.obs_noise:  # sensor biases, constant over an episode
            g, b = cfg.gyro_bias, cfg.gravity_bias
            self.gyro_bias = torch.where(rows, self.uniform((n, 3), -g, g), self.gyro_bias)
            self.gravity_bias = torch.where(rows, self.uniform((n, 3), -b, b), self.gravity_bias)
        lo, hi = cfg.action_delay
        delay = torch.randint(lo, hi + 1, (n, 1, 1), generator=self.gen, device=self.device)
        self.delay = torch.where(mask[:, None, None], delay, self.delay)
        self.action_queue = self.action_queue.masked_fill(mask[:, None, None], 0.0)
        self.air_time.masked_fill_(rows, 0.0)
        self.contact_time.masked_fill_(rows, 0.0)
        self.swing_peak.masked_fill_(rows, 0.0)
        self.last_joint_vel.masked_fill_(rows, 0.0)

    def _place_on_terrain(self, mask: torch.Tensor) -> None:
        """Curriculum step for the envs that ended, then a start on their tile's platform."""
        n, rows, rq, sim = self.num_envs, mask[:, None], self.root_qpos, self.sim
        if self.curriculum:
            top = self.grid.num_levels
            self.levels = next_levels(
                self.levels, self.walked, self.cmd_disp.norm(dim=1), self.terminated_buf, mask,
                self.grid.cfg.tile_size, top,
                torch.randint(0, top, (n,), generator=self.gen, device=self.device),
            )
        origin = self.origins[self.levels, self.types]
        s = self.cfg.spawn_xy
        xy = origin[:, :2] + self.uniform((n, 2), -s, s)
        z = self.field(xy[:, 0], xy[:, 1]) + self.base_z0 + self.spawn_lift
        pos = torch.cat([xy, z[:, None]], dim=1).to(sim.dtype)
        sim.qpos[:, rq : rq + 3] = torch.where(rows, pos, sim.qpos[:, rq : rq + 3])
        self.spawn = torch.where(rows, xy, self.spawn)
        self.walked = self.walked.masked_fill(mask, 0.0)
        self.farthest = self.farthest.masked_fill(mask, 0.0)
        self.cmd_disp = self.cmd_disp.masked_fill(mask[:, None], 0.0)

    def set_tiles(self, level: int | None = None, kind: str | None = None) -> None:
        """Pin every env to one level and/or terrain type (evaluation); stops the curriculum."""
        if self.grid is None:
            raise ConfigError("set_tiles needs a terrain grid (terrain=rough or stairs), not a plane")
        types = self.grid.cfg.types
        if level is not None:
            if not 0 <= level < self.grid.num_levels:
                raise ConfigError(f"terrain level {level} out of range 0..{self.grid.num_levels - 1}")
            self.levels.fill_(level)
        if kind is not None:
            if kind not in types:
                raise ConfigError(f"terrain type '{kind}' not in this grid's types {types}")
            self.types.fill_(types.index(kind))
        self.curriculum = False

    def resolved_cfg(self) -> dict[str, Any]:
        return {"height_scan_size": list(self.height_scan_size)}  # the critic's width

    def episode_log(self) -> dict[str, float]:
        log = super().episode_log()
        if self.grid is not None:  # one more read per iteration, not per step
            types = self.grid.cfg.types
            counts = torch.bincount(self.types, minlength=len(types)).clamp(min=1)
            sums = torch.zeros(len(types), device=self.device).index_add_(0, self.types, self.levels.float())
            means = torch.cat([self.levels.float().mean()[None], sums / counts]).tolist()
            log["Curriculum/terrain_level"] = means[0]
            log.update({f"Curriculum/level_{kind}": v for kind, v in zip(types, means[1:], strict=True)})
        return log

    def deploy_spec(self) -> dict:
        spec = super().deploy_spec()
        cfg, robot = self.cfg, self.robot
        spec["scene"] = {"robot": robot.to_dict()}
        spec["reset"] = {"joint_scale": [0.9, 1.1]}
        spec["action_delay"] = list(cfg.action_delay)  # documented: on the robot it is its own
        spec["terrain"] = self.grid.cfg.to_dict() if self.grid is not None else None
        return spec

    def task_commands(self) -> dict[str, dict[str, Any]]:
        """The base velocity command (`base_velocity`) from the task's ranges; heading commands
        where `heading_command` says so (None: on a terrain grid with a curriculum)."""
        cfg = self.cfg
        heading = cfg.heading_command
        if heading is None:
            heading = self.grid is not None and bool(self.grid.cfg.curriculum)
        return {"base_velocity": {"func": "velocity_command", "resample_s": cfg.resample_s, "params": {
            "lin_vel_x": list(cfg.lin_vel_x), "lin_vel_y": list(cfg.lin_vel_y),
            "yaw_rate": list(cfg.yaw_rate), "standing_share": cfg.standing_share, "heading": bool(heading)}}}

    def link_terms(self) -> None:
        """`commands`, `heading`, `moving` and `command_level` are the base_velocity command's
        tensors, which the rewards, observations and curriculum read (one storage)."""
        vel = self.required_command("base_velocity", "velocity_command")
        self.commands, self.heading, self.moving = vel.command, vel.heading, vel.moving
        self.command_level = vel.level  # scales every draw: the command curriculum's level

    @property
    def heading_mode(self) -> bool:
        """Whether the yaw-rate command steers towards a drawn heading (the base_velocity command's)."""
        return self.command_terms["base_velocity"].heading_mode

    def task_curriculum(self) -> dict[str, dict[str, Any]]:
        """`command_curriculum` ({start, step, threshold}) as the command_level term on
        base_velocity, raised when track_lin_vel is earned (simrl.mdp.curriculum)."""
        cc = self.cfg.command_curriculum
        if cc is None:
            return {}
        if not isinstance(cc, Mapping) or set(cc) - {"start", "step", "threshold"}:
            raise ConfigError(f"command_curriculum takes start, step and threshold, each in (0, 1] (e.g. "
                              f"{{start: 0.3, step: 0.1, threshold: 0.8}}), got {cc!r}")
        return {"command_level": {"func": "command_level", "params": {"command": "base_velocity", **cc}}}

    @functools.cached_property
    def robot_mirror(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(joint index, joint sign, foot index): the robot's mirror (simrl.mirror.robot_mirror),
        derived once."""
        return mirror.robot_mirror(self.scene)

    def action_mirror(self) -> tuple[np.ndarray, np.ndarray]:
        index, sign, _ = self.robot_mirror
        return index, sign

    def set_commands(self, lin_vel_x: float, lin_vel_y: float = 0.0, yaw_rate: float = 0.0) -> None:
        """Fix every env's velocity command (evaluation): `fix_command` on base_velocity."""
        self.fix_command([lin_vel_x, lin_vel_y, yaw_rate], "base_velocity")


LocomotionEnv.OBS_TERMS = {**OBSERVATIONS, **{f.__name__: f for f in (
    obs.base_lin_vel, obs.base_ang_vel, obs.projected_gravity, obs.command, obs.foot_contact,
    obs.ground_friction, obs.height_scan, obs.gait_clock)}}
LocomotionEnv.TERMINATION_TERMS = {**EnvBatch.TERMINATION_TERMS, "base_tilt": base_tilt,
                                   "base_height_below": base_height_below}
LocomotionEnv.TRACKING_TERMS = rew.TRACKING
LocomotionEnv.REWARD_TERMS = rew.REWARDS
LocomotionEnv.ACTION_TERMS = {**EnvBatch.ACTION_TERMS, "reference_gait": ReferenceGait}
LocomotionEnv.CURRICULUM_TERMS = {**EnvBatch.CURRICULUM_TERMS, "reference_gait_fade": ReferenceGaitFade}
