"""Commands: what each env's policy is asked to do (a body velocity, an end-effector pose, an
object's target), drawn per env at resets and, where `resample_s` is set, on a clock. Listed in
a task's config:

    commands:
      base_velocity: {func: velocity_command, resample_s: 5.0,
                      params: {lin_vel_x: [-0.6, 1.2], lin_vel_y: [-0.4, 0.4], yaw_rate: [-1, 1]}}
      ee_pose: {func: pose_command, params: {site: attachment_site, x: [0.35, 0.65], ...}}
      old_one: null          # drops the task's own command of that name

A task builds its own entries from its fields (its config's `own_entries`); a config entry of the
same name is merged over the task's (its params over the task's params, where it keeps the
func), so `commands: {base_velocity: {params: {lin_vel_x: [0, 1]}}}` changes one range.

A command term is a small class: `func(env, **params)` builds its state (tensors of shape
(N, ...)), `resample(env, mask)` draws new commands where bool `mask` (N,), `step(env)` runs
after each physics step (a heading's steering), `fix(env, values)` pins every env's command
(evaluation; resets still draw) and `deploy_facts(env)` says what `policy.json` needs to
rehearse it. Params are bound once as other terms' are (simrl.managers.terms: `site`, `body`...
become ids). A term keeps no reference to the env (its state is checkpointed by walking it).

Order within a step: physics, the task's views' update, then each command's clock resample and
`step`; within a reset: the spawn events, then each command's `resample`, then the reset
events. Every draw is for all envs, kept where the mask is: no host sync.
"""

from __future__ import annotations

from typing import Any

import mujoco
import torch

from simrl.errors import ConfigError
from simrl.math import quat_conjugate, quat_from_euler, quat_mul, quat_yaw


def _range(name: str, value: Any) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be [min, max], got {value!r}") from None
    if not lo <= hi:
        raise ConfigError(f"{name} must be [min, max] with min <= max, got {[lo, hi]}")
    return lo, hi


def _uniform_box(env: Any, ranges: list[tuple[float, float]]) -> torch.Tensor:
    """(N, len(ranges)) uniform draws, one column per range, drawn column after column."""
    return torch.stack([env.uniform((env.num_envs,), lo, hi) for lo, hi in ranges], dim=1)


# --- terms ------------------------------------------------------------------------------------
class VelocityCommand:
    """A base velocity (forward m/s, lateral m/s, yaw rate rad/s) in the base's yaw frame.

    A `standing_share` of the draws ask to stand still. `level` (a 0-d tensor, 1 by default)
    scales every draw: a command curriculum raises it. With `heading`, a target heading is drawn
    instead of a yaw rate and the yaw-rate command steers towards it each step
    (`heading_gain` x the heading error, clipped to `yaw_rate`), so envs walk mostly straight
    (legged_gym's heading commands); it reads the yaw of the robot's floating base."""

    def __init__(self, env: Any, lin_vel_x: Any, lin_vel_y: Any = (0.0, 0.0), yaw_rate: Any = (0.0, 0.0),
                 standing_share: float = 0.0, heading: bool = False, heading_gain: float = 0.5):
        n, f32 = env.num_envs, dict(device=env.device, dtype=torch.float32)
        self.ranges = [_range("velocity_command: lin_vel_x", lin_vel_x),
                       _range("velocity_command: lin_vel_y", lin_vel_y),
                       _range("velocity_command: yaw_rate", yaw_rate)]
        if not 0.0 <= standing_share <= 1.0:
            raise ConfigError(f"velocity_command: standing_share must be in [0, 1], got {standing_share!r}")
        scene = getattr(env, "scene", None)
        if heading and (scene is None or scene.root_qpos is None):
            raise ConfigError(f"velocity_command: heading steers by a floating base's yaw, which task "
                              f"'{env.task_name}' does not have: set heading: false")
        self.standing_share = float(standing_share)
        self.heading_mode = bool(heading)
        self.heading_gain = float(heading_gain)
        self.command = torch.zeros(n, 3, **f32)
        self.heading = torch.zeros(n, **f32)  # heading mode: the target yaw (world frame)
        self.moving = torch.zeros(n, device=env.device, dtype=torch.bool)
        self.level = torch.ones((), device=env.device)

    def resample(self, env: Any, mask: torch.Tensor) -> None:
        n = env.num_envs
        cmd = _uniform_box(env, self.ranges) * self.level
        still = env.uniform((n, 1), 0.0, 1.0) < self.standing_share
        self.command.copy_(torch.where(mask[:, None], cmd * ~still, self.command))
        if self.heading_mode:
            self.heading.copy_(torch.where(mask, env.uniform((n,), -torch.pi, torch.pi), self.heading))
            self.moving.copy_(torch.where(mask, ~still[:, 0], self.moving))

    def step(self, env: Any) -> None:
        if self.heading_mode:
            q = env.scene.root_qpos
            yaw = quat_yaw(env.sim.qpos[:, q + 3 : q + 7].float())
            err = torch.remainder(self.heading - yaw + torch.pi, 2 * torch.pi) - torch.pi
            lo, hi = self.ranges[2]
            self.command[:, 2] = (self.heading_gain * err).clamp(lo, hi) * self.moving

    tracked = True  # evaluation pins it and reports how well it is tracked

    def fix(self, env: Any, values: Any) -> None:
        """Every env's command set to `values` (vx[, vy[, yaw rate]]; missing ones 0); heading
        mode off."""
        v = torch.as_tensor(values, dtype=torch.float64).reshape(-1).tolist()
        if not 1 <= len(v) <= 3:
            raise ConfigError(f"velocity_command: a command is [vx, vy, yaw_rate] (missing ones 0), got {v}")
        self.command[:] = torch.tensor(v + [0.0] * (3 - len(v)), device=env.device)
        self.heading_mode = False

    def deploy_facts(self, env: Any) -> dict[str, Any]:
        """Tracked; the trained ranges (a viewer or joystick keeps commands inside them)."""
        return {"tracks_commands": True, "command_ranges": [[float(lo), float(hi)] for lo, hi in self.ranges]}


class PoseCommand:
    """A pose for `site` in the base frame (the robot's root body): a position drawn in the box `x`,
    `y`, `z` (m) and the site's orientation in the default pose turned by roll, pitch, yaw
    (rad, about the base's axes) drawn in `roll`, `pitch`, `yaw`. The policy reads it as the
    reading `reading` (on a robot: from the operator or perception)."""

    def __init__(self, env: Any, site: int, x: Any, y: Any, z: Any, roll: Any = (0.0, 0.0),
                 pitch: Any = (0.0, 0.0), yaw: Any = (0.0, 0.0), reading: str = "target_pose"):
        m, n, f32 = env.model, env.num_envs, dict(device=env.device, dtype=torch.float32)
        self.pos_ranges = [_range(f"pose_command: {k}", v) for k, v in (("x", x), ("y", y), ("z", z))]
        self.turn_ranges = [_range(f"pose_command: {k}", v)
                            for k, v in (("roll", roll), ("pitch", pitch), ("yaw", yaw))]
        self.reading = str(reading)
        base = int(env.scene.root_body)
        data = mujoco.MjData(m)  # the site's orientation in the task's start pose, in the base frame
        key = getattr(env.cfg, "keyframe", None)
        if m.nkey:
            mujoco.mj_resetDataKeyframe(m, data, m.key(key).id if key else 0)
        mujoco.mj_kinematics(m, data)
        q_site = torch.zeros(4, dtype=torch.float64)
        mujoco.mju_mat2Quat(q_site.numpy(), data.site_xmat[site])
        self.home_quat_b = quat_mul(quat_conjugate(torch.as_tensor(data.xquat[base])), q_site).to(**f32)
        self.pos_b = torch.zeros(n, 3, **f32)
        self.quat_b = torch.zeros(n, 4, **f32)
        self.quat_b[:, 0] = 1.0

    @property
    def command(self) -> torch.Tensor:
        """(N, 7): position, then the quaternion (wxyz); a copy (pos_b and quat_b are the state)."""
        return torch.cat([self.pos_b, self.quat_b], dim=1)

    def resample(self, env: Any, mask: torch.Tensor) -> None:
        n, rows = env.num_envs, mask[:, None]
        pos = _uniform_box(env, self.pos_ranges)
        turn = quat_from_euler(*(env.uniform((n,), lo, hi) for lo, hi in self.turn_ranges))
        quat = quat_mul(turn, self.home_quat_b.expand(n, 4))
        self.pos_b.copy_(torch.where(rows, pos, self.pos_b))
        self.quat_b.copy_(torch.where(rows, quat, self.quat_b))

    def step(self, env: Any) -> None:
        pass

    def fix(self, env: Any, values: Any) -> None:
        """Every env's target set to `values`: [x, y, z] m, then a quaternion wxyz."""
        v = torch.as_tensor(values, device=env.device, dtype=torch.float32).reshape(-1)
        if v.numel() != 7:
            raise ConfigError(f"pose_command: a pose is [x, y, z, qw, qx, qy, qz], got {v.numel()} values")
        self.pos_b[:] = v[:3]
        self.quat_b[:] = v[3:]

    def deploy_facts(self, env: Any) -> dict[str, Any]:
        names, ranges = ("x", "y", "z", "roll", "pitch", "yaw"), self.pos_ranges + self.turn_ranges
        return {"target": {"reading": self.reading, "frame_body": env.scene.robot.root_body,
                           **{k: list(r) for k, r in zip(names, ranges, strict=True)},
                           "about_quat": self.home_quat_b.tolist()}}  # roll, pitch, yaw turn this


class PositionCommand:
    """A position in the base frame (the robot's root body) drawn in the box `x`, `y`, `z` (m): where
    to carry an object. The policy reads it as the reading `reading`."""

    def __init__(self, env: Any, x: Any, y: Any, z: Any, reading: str = "target_pos"):
        self.ranges = [_range(f"position_command: {k}", v) for k, v in (("x", x), ("y", y), ("z", z))]
        self.reading = str(reading)
        self.pos_b = torch.zeros(env.num_envs, 3, device=env.device, dtype=torch.float32)

    @property
    def command(self) -> torch.Tensor:
        return self.pos_b

    def resample(self, env: Any, mask: torch.Tensor) -> None:
        self.pos_b.copy_(torch.where(mask[:, None], _uniform_box(env, self.ranges), self.pos_b))

    def step(self, env: Any) -> None:
        pass

    def fix(self, env: Any, values: Any) -> None:
        """Every env's target set to `values` ([x, y, z] m, base frame)."""
        v = torch.as_tensor(values, device=env.device, dtype=torch.float32).reshape(-1)
        if v.numel() != 3:
            raise ConfigError(f"position_command: a target is [x, y, z], got {v.numel()} values")
        self.pos_b[:] = v

    def deploy_facts(self, env: Any) -> dict[str, Any]:
        return {"target": {"reading": self.reading, "frame_body": env.scene.robot.root_body,
                           **{k: list(r) for k, r in zip("xyz", self.ranges, strict=True)}}}


COMMAND_TERMS = {"velocity_command": VelocityCommand, "pose_command": PoseCommand,
                 "position_command": PositionCommand}

__all__ = ["COMMAND_TERMS", "PoseCommand", "PositionCommand", "VelocityCommand"]
