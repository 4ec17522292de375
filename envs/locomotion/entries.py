"""The velocity task's config completed from the robot's scene, and the entries its fields imply:
randomization and starts as events (in the order of their draws), pushes, terminations, the
velocity command and its curriculum."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from simrl.envs.locomotion.clock import (
    _check_clock_feet,
    _check_legged,
    _clocked,
    _with_gait_clock,
    _with_history,
    default_gait_offsets,
)
from simrl.errors import ConfigError

if TYPE_CHECKING:
    from simrl.envs.locomotion.cfg import LocomotionCfg


def bind_scene(cfg: LocomotionCfg, scene: Any) -> LocomotionCfg:
    """Stacked history, the robot's gait offsets and the gait clock joined to the config; the
    checks that the robot can walk; the ground's friction and damping left to the robot's geoms."""
    cfg = _with_history(cfg)  # the gait clock joins after it: its offsets may need the robot
    if not 0.0 <= cfg.reset_base_vel < float("inf"):  # NaN fails too
        raise ConfigError(f"reset_base_vel must be a finite speed >= 0 (m/s and rad/s per axis; 0: at "
                          f"rest), got {cfg.reset_base_vel}")
    _check_legged(scene, cfg.task_name)
    clocked = cfg.gait_period_s is not None or any(
        "offsets" not in (e.get("params") or {}) for _, e in _clocked(cfg.rewards))
    if clocked and cfg.gait_offsets is None:  # the robot's own: a walk or a trot
        cfg = dataclasses.replace(cfg, gait_offsets=default_gait_offsets(scene))
    cfg = _with_gait_clock(cfg)
    _check_clock_feet(cfg, scene.robot.feet)
    m = scene.model
    ground = ((m.geom_contype > 0) | (m.geom_conaffinity > 0)) & (m.geom_bodyid == 0)
    m.geom_friction[ground, 0] = 1e-5  # mjMINMU, ~0: episode friction and damping are the robot's
    m.geom_solmix[ground] = 0.0
    return cfg


def own_entries(cfg: LocomotionCfg, scene: Any) -> dict[str, dict[str, Any]]:
    """The entries the velocity task's fields imply, over the robot's scene."""
    spans = ("kp_scale", "kd_scale", "effort_scale", "joint_friction", "joint_damping", "joint_armature",
             "added_base_mass")
    events: dict[str, Any] = {
        "model": {"func": "randomize_legged_model", "mode": "startup",
                  "params": {**{k: list(getattr(cfg, k)) for k in spans}, "com_offset": cfg.com_offset}}}
    if scene.terrain is not None:
        events["levels"] = {"func": "start_terrain_levels", "mode": "startup"}
    events["pose"] = {"func": "reset_legged_pose", "mode": "spawn",
                      "params": {"joint_scale": list(cfg.joint_pos_scale), "base_vel": cfg.reset_base_vel}}
    events["ground"] = {"func": "place_on_terrain", "mode": "spawn", "params": {"spawn_xy": cfg.spawn_xy}}
    events["friction"] = {"func": "ground_friction", "mode": "spawn", "params": {"range": list(cfg.friction)}}
    if tuple(cfg.ground_dampratio) != (1.0, 1.0):
        events["dampratio"] = {"func": "ground_dampratio", "mode": "spawn",
                               "params": {"range": list(cfg.ground_dampratio)}}
    if cfg.obs_noise:  # sensor biases, constant over an episode
        events["imu_bias"] = {"func": "imu_bias", "mode": "spawn",
                              "params": {"gyro": cfg.gyro_bias, "gravity": cfg.gravity_bias}}
    if cfg.push_vel > 0:  # into the state the physics starts from: this step's observation shows it
        events["push"] = {"func": "push_body", "mode": "interval", "interval_s": cfg.push_interval_s,
                          "params": {"body": scene.robot.root_body, "max_vel": cfg.push_vel}}
    heading = cfg.heading_command
    if heading is None:  # heading commands where a terrain curriculum measures progress
        heading = scene.terrain is not None and bool(scene.terrain.cfg.curriculum)
    velocity = {"func": "velocity_command", "resample_s": cfg.resample_s, "params": {
        "lin_vel_x": list(cfg.lin_vel_x), "lin_vel_y": list(cfg.lin_vel_y), "yaw_rate": list(cfg.yaw_rate),
        "standing_share": cfg.standing_share, "heading": bool(heading)}}
    return {"events": events, "terminations": _terminations(cfg, scene),
            "commands": {"base_velocity": velocity}, "curriculum": _curriculum(cfg)}


def _terminations(cfg: LocomotionCfg, scene: Any) -> dict[str, Any]:
    """Tilt past `max_tilt_cos`, a `terminate_contacts` body touching, and (where set) the
    base below `min_base_height` over the ground under it."""
    m = scene.model
    out: dict[str, Any] = {"base_tilt": {"func": "base_tilt", "params": {"max_tilt_cos": cfg.max_tilt_cos}}}
    if len(scene.terminate_contacts):
        names = [re.escape(m.body(int(b)).name) for b in scene.terminate_contacts]
        out["body_contact"] = {"func": "body_contact", "params": {"bodies": names, "threshold": 1.0}}
    height, share = cfg.min_base_height, cfg.min_base_height_share
    if height is None and share is not None:  # an absolute height, where given, wins
        base_z0 = float(m.key_qpos[0, scene.root_qpos + 2])
        if not 0.0 < share < 1.0:
            raise ConfigError(f"min_base_height_share must be in (0, 1) (a share of the default base "
                              f"height, {base_z0:.3f} m here), got {share!r}")
        height = share * base_z0
    if height is not None:
        out["base_height"] = {"func": "base_height_below", "params": {"min_height": height}}
    return out


def _curriculum(cfg: LocomotionCfg) -> dict[str, Any]:
    """`command_curriculum` ({start, step, threshold}) as the command_level term on
    base_velocity, raised when track_lin_vel is earned (simrl.mdp.curriculum)."""
    cc = cfg.command_curriculum
    if cc is None:
        return {}
    if not isinstance(cc, Mapping) or set(cc) - {"start", "step", "threshold"}:
        raise ConfigError(f"command_curriculum takes start, step and threshold, each in (0, 1] (e.g. "
                          f"{{start: 0.3, step: 0.1, threshold: 0.8}}), got {cc!r}")
    return {"command_level": {"func": "command_level", "params": {"command": "base_velocity", **cc}}}
