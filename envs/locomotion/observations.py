"""The velocity task's observation terms, each with how a robot supplies it (its deploy read)
and its left-right mirror, declared beside it; the gait clock's phase."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

import simrl.mirror as mirror
from simrl.errors import ConfigError
from simrl.managers.observation import observation
from simrl.managers.terms import FINITE, POSITIVE, param_rules
from simrl.terrain.heights import scan


def commanded(env: Any) -> torch.Tensor:
    """The velocity command (N, 3), the `base_velocity` entry's: forward m/s, lateral m/s, yaw
    rate rad/s (every velocity term reads it; it must be a velocity_command)."""
    return env.required_command("base_velocity", "velocity_command").command


# --- observation terms: f(env) -> (N, d), each with how a robot supplies it and its mirror -------
def _imu_frame(env: Any):
    return None if env.legged.imu_rot is None else env.legged.imu_rot.double().cpu().numpy()


@observation(read={"reading": "base_lin_vel",
                   "doc": "base linear velocity (m/s) in the IMU frame: a state estimator's output"},
             mirror=lambda env: mirror.vector(_imu_frame(env)))
def base_lin_vel(env: Any) -> torch.Tensor:
    """The base's linear velocity in the IMU frame (N, 3), m/s."""
    return env.legged.base_lin_vel_b


@observation(read={"reading": "gyro", "doc": "IMU angular velocity (rad/s), in the IMU frame"},
             mirror=lambda env: mirror.axial(_imu_frame(env)))
def base_ang_vel(env: Any) -> torch.Tensor:
    """The base's angular velocity in the IMU frame (N, 3), rad/s, plus the episode's gyro bias."""
    return env.legged.base_ang_vel_b + env.legged.gyro_bias


@observation(read={"reading": "quat", "op": "gravity",
                   "doc": "IMU orientation, quaternion wxyz (or 'gravity': unit gravity in the IMU frame)"},
             mirror=lambda env: mirror.vector(_imu_frame(env)))
def projected_gravity(env: Any) -> torch.Tensor:
    """Unit gravity in the IMU frame (N, 3), plus the episode's gravity bias."""
    return env.legged.gravity_b + env.legged.gravity_bias


@observation(read={"reading": "command", "doc": "[forward m/s, lateral m/s, yaw rate rad/s]"},
             mirror=lambda env: mirror.velocity_command())
def command(env: Any) -> torch.Tensor:
    """The velocity command (N, 3): forward m/s, lateral m/s, yaw rate rad/s."""
    return commanded(env)


@observation(read={"reading": "foot_contact", "doc": "foot contact flags, in the robot config's feet order"},
             mirror=lambda env: (env.robot_mirror[2], np.ones(env.legged.feet.numel())))
def foot_contact(env: Any) -> torch.Tensor:
    """1 where a foot touches the ground, 0 where not (N, feet), in the robot config's feet order."""
    return env.legged.contact.float()


@observation(mirror=lambda env: mirror.same(1))  # privileged: the critic's
def ground_friction(env: Any) -> torch.Tensor:
    """The episode's ground friction coefficient (N, 1)."""
    return env.legged.mu


@observation(mirror=lambda env: mirror.points_y(env.terrain.scan_points.double().cpu().numpy()))
def height_scan(env: Any) -> torch.Tensor:
    """Base height over the ground at the scan points, minus the default pose's: 0 standing on
    flat ground, clipped to +-1 m."""
    heights = scan(env.terrain.field, env.legged.base_pos, env.legged.base_yaw, env.terrain.scan_points)
    return (env.legged.base_pos[:, 2:3] - heights - env.legged.base_z0).clamp(-1.0, 1.0)


def gait_phase(env: Any, period: float, offsets) -> torch.Tensor:
    """Each foot's phase in [0, 1) (N, feet): control steps since the episode began times dt,
    over `period`, plus the foot's offset."""
    t = env.episode_length_buf.float()[:, None] * (env.dt / period)
    return torch.remainder(torch.cat([t + float(o) for o in offsets], dim=1), 1.0)


def _gait_clock_mirror(env: Any):
    """The mirror image swaps each foot's [sin, cos] with its mirror foot's. That is a state of
    the same clock only where the swap shifts every offset by one amount (a biped's feet half a
    cycle apart, a trot's or a pace's pairs): then it is the clock at another time."""
    feet = env.robot_mirror[2]
    offsets = np.asarray(env.cfg.gait_offsets, dtype=float)
    shift = np.remainder(offsets[feet] - offsets, 1.0)
    if np.abs(np.remainder(shift - shift[0] + 0.5, 1.0) - 0.5).max() > 1e-9:
        raise ConfigError(f"symmetry with a gait clock needs offsets that the left-right mirror shifts "
                          f"by one amount (a trot [0.0, 0.5, 0.5, 0.0], a biped's [0.0, 0.5]), got "
                          f"{offsets.tolist()} for feet {list(env.robot.feet)}")
    return np.stack([2 * feet, 2 * feet + 1], axis=1).reshape(-1), np.ones(2 * len(feet))


# the runtime keeps this clock itself: time since the policy state began (its steps x dt)
@observation(read=lambda params: {"reading": "policy_time", "op": "phase_sincos",
                                  "args": {"period": params["period"], "offsets": params["offsets"]}},
             mirror=_gait_clock_mirror)
@param_rules(period=POSITIVE, offsets=FINITE)
def gait_clock(env: Any, period: float = 0.8, offsets=(0.0, 0.5)) -> torch.Tensor:
    """sin and cos of each foot's gait phase, [sin, cos] per foot (N, 2 * feet)."""
    angle = (2 * torch.pi) * gait_phase(env, period, offsets)
    return torch.stack([torch.sin(angle), torch.cos(angle)], dim=-1).flatten(1)


def asked_to_move(env: Any) -> torch.Tensor:
    """(N,) bool: a planar velocity of more than 0.1 m/s is commanded (the gait terms pay only then)."""
    return commanded(env)[:, :2].norm(dim=1) > 0.1
