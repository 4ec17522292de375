"""Velocity tracking for legged robots, on flat ground or a terrain grid (legged_gym / mjlab).

One task for any robot config (configs/robot/*.yaml): quadrupeds and bipeds alike, every index
looked up by name from the robot config (simrl.scene). `quadruped` and `humanoid` are this task
with different defaults (robot, commands, reward weights, terminations).

Commands (forward, lateral, yaw rate) are sampled per env and resampled every few seconds, a
share of them standing still. Actions are joint position offsets around the default pose, held
by the assembled scene's PD position actuators after a random per-env delay; control at 50 Hz.

The policy observes only what a legged robot measures on board (IMU gyro and orientation, joint
encoders, its last action, the command); the critic also sees privileged state (base velocity,
contacts, ground friction, a height scan): asymmetric actor-critic. On a terrain grid
(`terrain=rough`, simrl.terrain) each env starts on a tile of its curriculum level. Sensor bias,
actuator gains and strength, joint friction/damping/armature, base mass and centre of mass,
ground friction and damping are randomized; pushes kick the base.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import mujoco
import numpy as np
import torch

import simrl.mirror as mirror
from simrl.env import EnvBatch, EnvCfg, ObsTerm
from simrl.envs.gait_prior import ReferenceGait, ReferenceGaitFade
from simrl.errors import ConfigError
from simrl.managers.observation import observation
from simrl.managers.termination import deploy_facts
from simrl.managers.terms import FINITE, NON_NEGATIVE, POSITIVE, UNIT_OPEN, index_of, param_rules
from simrl.math import quat_rotate, quat_rotate_inv, quat_yaw, yaw_quat, yaw_rotate
from simrl.scene import Scene, assemble
from simrl.terrain.curriculum import next_levels
from simrl.terrain.heights import HeightField, scan, scan_points


def _policy_obs() -> list[ObsTerm]:
    """What the robot measures on board (Go1/Go2: IMU and joint encoders), and the command."""
    return [
        ObsTerm("base_ang_vel", scale=0.25, noise=0.05),
        ObsTerm("projected_gravity", noise=0.05),
        ObsTerm("command", scale=[2.0, 2.0, 0.25]),
        ObsTerm("joint_pos", noise=0.01),
        ObsTerm("joint_vel", scale=0.05, noise=0.075),
        ObsTerm("last_action"),
    ]


def _critic_obs() -> list[ObsTerm]:
    """The policy's terms noise-free, plus privileged state the robot does not measure."""
    return [ObsTerm(t.name, t.scale) for t in _policy_obs()] + [
        ObsTerm("base_lin_vel", scale=2.0), ObsTerm("foot_contact"), ObsTerm("ground_friction"),
        ObsTerm("height_scan", scale=5.0),
    ]


GRID_SCAN_SIZE = (1.6, 1.0)  # m, x and y: the height scan on a terrain grid (height_scan_size None)

# legged_gym's flat-terrain weights (A1), multiplied by the control dt at run time
FLAT_REWARDS = {
    "track_lin_vel": 1.0,
    "track_yaw_rate": 0.5,
    "lin_vel_z": -2.0,
    "ang_vel_xy": -0.05,
    "orientation": -1.0,
    "torques": -2e-4,
    "joint_acc": -2.5e-7,
    "action_rate": -0.01,
    "joint_limits": -10.0,
    "non_foot_contact": -1.0,
    "feet_air_time": 1.0,
}


@dataclass
class LocomotionCfg(EnvCfg):
    task_name: ClassVar[str] = "locomotion"
    # fields added after runs were saved, with the values those runs were trained with
    since: ClassVar[dict[str, Any]] = {
        "action_delay": (0, 0), "kp_scale": (1.0, 1.0), "kd_scale": (1.0, 1.0),
        "effort_scale": (1.0, 1.0), "joint_friction": (0.0, 0.0), "joint_damping": (0.0, 0.0),
        "joint_armature": (0.0, 0.0), "com_offset": 0.0, "gyro_bias": 0.0, "gravity_bias": 0.0,
        "ground_dampratio": (1.0, 1.0), "terrain": "flat", "history": 1, "heading_command": False,
        "spawn_clear": False, "height_scan_size": GRID_SCAN_SIZE, "command_curriculum": None,
        "gait_period_s": None, "reset_base_vel": 0.5,
    }
    robot: Any = "quadruped"  # a configs/robot name, a path to a robot yaml, or its fields
    keyframe: str | None = "home"  # the assembled scene's default pose
    action_scale: float | None = None  # None: the robot config's
    decimation: int | None = None  # None: control_dt / the robot's timestep
    control_dt: float = 0.02
    episode_length_s: float = 20.0
    only_positive_rewards: bool = True
    observations: dict = field(default_factory=lambda: {"policy": _policy_obs(), "critic": _critic_obs()})
    history: int = 1  # frames of each policy term but the command, stacked (deploy keeps them too)
    # a gait clock (unitree_rl_gym's): the policy and critic observe sin and cos of each foot's
    # phase, time since the episode began over `gait_period_s`, the feet shifted by
    # `gait_offsets` (fractions of the cycle, in the robot's feet order; a biped's half a cycle
    # apart). None: no clock. The robot keeps the same clock from its policy's start.
    gait_period_s: float | None = None
    gait_offsets: tuple[float, ...] | None = None  # None: a biped's [0.0, 0.5], a quadruped's trot
    rewards: dict = field(default_factory=lambda: dict(FLAT_REWARDS))
    # commands
    lin_vel_x: tuple[float, float] = (-0.6, 1.2)
    lin_vel_y: tuple[float, float] = (-0.4, 0.4)
    yaw_rate: tuple[float, float] = (-1.0, 1.0)
    standing_share: float = 0.1
    resample_s: float = 5.0
    # a command curriculum (legged_gym's): commands are drawn from the ranges above times a
    # level that starts at `start` and rises by `step` (up to 1) after each episode length in
    # which the episodes that ended earned at least `threshold` of track_lin_vel's best, e.g.
    # {start: 0.3, step: 0.1, threshold: 0.8}; None: the full ranges from the start
    command_curriculum: dict | None = None
    # heading commands (legged_gym's): a target heading is sampled instead of a yaw rate, and
    # the yaw-rate command steers towards it (0.5 x the heading error, clipped to yaw_rate), so
    # envs walk mostly straight; None: on where a terrain curriculum measures their progress
    heading_command: bool | None = None
    tracking_sigma: float = 0.25
    air_time_target_s: float = 0.5
    # `foot_clearance` reward (off unless weighted): how far short of this height above the
    # ground under it each foot tip peaked in its last swing, at landing (m)
    foot_clearance_target: float = 0.12
    # terminations: tilt, contact of the robot's terminate_contacts bodies, base too low
    max_tilt_cos: float = 0.5  # terminate when the base's up axis is tilted past 60 degrees
    min_base_height: float | None = None  # m; None: no height termination
    # randomization: friction per episode, base mass once per env at start-up (as legged_gym:
    # a mass edit needs set_const, hundreds of kernel launches over all worlds on mjwarp),
    # pushes during episodes
    friction: tuple[float, float] = (0.5, 1.25)
    added_base_mass: tuple[float, float] = (-1.0, 2.0)
    joint_pos_scale: tuple[float, float] = (0.5, 1.5)
    # lift each env's base so no robot geom starts inside the ground: a leg stretched by the
    # joint scale otherwise starts up to 14 cm deep (Go1) and the contact launches the robot
    spawn_clear: bool = True
    # each episode starts with a random base velocity, +- this per axis (m/s and rad/s: legged_gym's
    # 0.5); 0 starts it at rest
    reset_base_vel: float = 0.5
    push_interval_s: float = 8.0
    push_vel: float = 1.0
    action_delay: tuple[int, int] = (0, 1)  # control steps from action to actuators, per episode
    kp_scale: tuple[float, float] = (0.9, 1.1)  # per env and joint, at start-up
    kd_scale: tuple[float, float] = (0.9, 1.1)
    effort_scale: tuple[float, float] = (0.9, 1.1)  # motor strength: the effort limit's factor
    joint_friction: tuple[float, float] = (0.0, 0.05)  # N m of dry friction added per joint
    joint_damping: tuple[float, float] = (0.0, 0.05)  # N m s/rad added per joint
    joint_armature: tuple[float, float] = (0.0, 0.005)  # kg m^2 of rotor inertia added per joint
    com_offset: float = 0.02  # m, +- per axis of the base's centre of mass, at start-up
    gyro_bias: float = 0.02  # rad/s, +- per axis, per episode (with obs_noise)
    gravity_bias: float = 0.02  # +- per axis of the projected gravity, per episode (with obs_noise)
    # robot-ground contact damping ratio per episode: below 1 the ground gives back energy
    # (MuJoCo's contacts have no restitution coefficient). 0.75-1 is the range every figure up to
    # 978c90c trained with (then (0.5, 1) was drawn for the ground and mixed half and half with the
    # robot geoms' 1); drawn as is, the bouncier 0.5 end slowed learning (docs/results.md, the
    # learning benchmark over seeds)
    ground_dampratio: tuple[float, float] = (0.75, 1.0)
    # terrain: a configs/terrain name (flat, rough, stairs) or simrl.terrain.TerrainCfg fields
    terrain: Any = "flat"
    spawn_xy: float = 0.5  # m: on a terrain grid, envs start within +- this of their tile's centre
    # m along x and y, in the base's yaw frame. None: 1.6 x 1.0 on a terrain grid; on a plane one
    # point under the base, since every point of a scan there reads the same (the base's height):
    # 187 equal critic inputs cost a third of the PPO update's arithmetic and tell it nothing more
    height_scan_size: tuple[float, float] | None = None
    height_scan_spacing: float = 0.1  # m


@dataclass
class QuadrupedCfg(LocomotionCfg):
    """A trot clock by default (docs/results.md, "A trot clock"): without one, the policies of
    seeds 1-3 stood still at 0.5 m/s at iteration 100 while they trotted at 1.0 m/s."""

    task_name: ClassVar[str] = "quadruped"
    robot: Any = "quadruped"
    # a 0.4 s trot: gait_offsets null puts diagonal pairs half a cycle apart, whatever the
    # robot's feet order ([0.0, 0.5, 0.5, 0.0] for FR, FL, RR, RL); gait_period_s null turns the
    # clock off: then set rewards.gait_contact to 0 and feet_air_time to 1.0 (legged_gym's
    # recipe, every run before the clock)
    gait_period_s: float | None = 0.4
    gait_offsets: tuple[float, ...] | None = None
    # feet in step with the clock (period and offsets: the clock's); legged_gym's step reward
    # (air time minus 0.5 s at each landing) off: a 0.4 s trot's 0.2 s swings would pay for it
    rewards: dict = field(default_factory=lambda: {
        **FLAT_REWARDS, "feet_air_time": 0.0, "gait_contact": {"weight": 0.5, "params": {"stance": 0.5}}})


@dataclass
class HumanoidCfg(LocomotionCfg):
    """Bipeds: slower commands, stricter posture, a height termination (feet-only contacts
    let a fallen body sink through the floor), shorter steps."""

    task_name: ClassVar[str] = "humanoid"
    robot: Any = "unitree_g1"
    # a biped falls in under a second at first: rewards clipped at 0 would teach it nothing,
    # so staying up earns its own reward and the penalties count from the start
    only_positive_rewards: bool = False
    rewards: dict = field(
        default_factory=lambda: {**FLAT_REWARDS, "alive": 2.0, "orientation": -5.0, "torques": -1e-5,
                                 "non_foot_contact": 0.0}
    )
    lin_vel_x: tuple[float, float] = (-0.5, 1.0)
    lin_vel_y: tuple[float, float] = (-0.3, 0.3)
    yaw_rate: tuple[float, float] = (-0.8, 0.8)
    air_time_target_s: float = 0.4
    max_tilt_cos: float = 0.7
    min_base_height: float | None = 0.45
    added_base_mass: tuple[float, float] = (-1.0, 3.0)
    joint_pos_scale: tuple[float, float] = (0.8, 1.2)
    push_vel: float = 0.5
    # at rest, as Isaac Lab's G1 and H1: legged_gym's 0.5 m/s and rad/s per axis at every reset
    # topples a biped in a quarter of the episodes it should be learning to walk in (docs/results.md)
    reset_base_vel: float = 0.0


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
        # foot velocities by finite differences of their positions, where a reward uses them
        funcs = {t.func for _, t in self.reward_manager.active}
        self.track_foot_vel = "foot_slip" in funcs
        self.foot_pos = torch.zeros(n, len(sc.feet), 3, **f32)
        self.foot_vel = torch.zeros(n, len(sc.feet), 3, **f32)
        self.foot_fresh = torch.ones(n, device=dev, dtype=torch.bool)  # foot_pos is pre-reset
        self.foot_tip = torch.as_tensor(self._foot_tips(), **f32)  # (feet, 3) in each foot body
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
        self._randomize_model()
        # the ground: a plane, or a terrain grid with a curriculum of levels
        self.field = HeightField(sc.terrain, dev)
        size = self.cfg.height_scan_size
        if size is None:
            size = GRID_SCAN_SIZE if sc.terrain is not None else (0.0, 0.0)
        self.height_scan_size = (float(size[0]), float(size[1]))
        self.scan_points = scan_points(size, self.cfg.height_scan_spacing, dev)
        self.base_z0 = float(m.key_qpos[0, self.root_qpos + 2])  # the default pose's base height
        self.grid = sc.terrain
        self.lift_table = torch.as_tensor(self._spawn_lifts(), **f32)
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
            self.METRIC_TERMS = {**type(self).METRIC_TERMS, "crossed_share": crossed_share}
            self.cmd_disp = torch.zeros(n, 2, **f32)  # where the commands would have taken it
        self.refresh()

    def _foot_tips(self) -> np.ndarray:
        """Each foot body's tip in its own frame: the centre of its colliding geom farthest
        from the body's origin (the foot sphere at the end of a calf; a toe geom of a biped's
        foot, as G1's), or the origin."""
        m, tips = self.model, []
        for b in self.scene.feet:
            geoms = np.flatnonzero((m.geom_bodyid == b) & self.colliding)
            far = max(geoms, key=lambda g: np.linalg.norm(m.geom_pos[g]), default=None)
            tips.append(np.zeros(3) if far is None else m.geom_pos[far])
        return np.array(tips, dtype=np.float64).reshape(-1, 3)

    def _spawn_lifts(self, k: int = 9) -> np.ndarray:
        """How far the base must rise above the default pose's height for no robot geom to
        start below a flat ground, at k joint scales spanning joint_pos_scale (MuJoCo C, once)."""
        if not self.cfg.spawn_clear:
            return np.zeros(k)
        flat = self.scene if self.grid is None else assemble(self.cfg.robot)
        m, d = flat.model, mujoco.MjData(flat.model)
        lifts = []
        for scale in np.linspace(*self.cfg.joint_pos_scale, k):
            mujoco.mj_resetDataKeyframe(m, d, 0)
            d.qpos[flat.joint_qpos] = flat.default_joint_pos * scale
            mujoco.mj_forward(m, d)
            depth = [-d.contact[i].dist for i in range(d.ncon)]
            lifts.append(max([0.0, *depth]))
        return np.array(lifts)

    def _lift(self, scale: torch.Tensor) -> torch.Tensor:
        """(N,) base lift for each env's joint scale (N, 1), interpolated in the table."""
        lo, hi = self.cfg.joint_pos_scale
        k = self.lift_table.numel()  # >= 2 entries (_spawn_lifts)
        x = ((scale[:, 0] - lo) / max(hi - lo, 1e-9) * (k - 1)).clamp(0, k - 1)
        i = x.floor().long().clamp(max=k - 2)
        t = x - i
        return self.lift_table[i] * (1 - t) + self.lift_table[i + 1] * t

    def _randomize_model(self) -> None:
        """Per env, once at start-up (legged_gym's way: mass and centre-of-mass edits need
        set_const, hundreds of launches over all worlds on mjwarp): PD gains, motor strength,
        joint friction, damping and armature, base mass and centre of mass."""
        cfg, sim, sc, n, nu = self.cfg, self.sim, self.scene, self.num_envs, self.num_actions

        def draw(span, shape):
            return self.uniform(shape, *span)

        if tuple(cfg.kp_scale) != (1.0, 1.0) or tuple(cfg.kd_scale) != (1.0, 1.0):
            gain, bias = sim.param("actuator_gainprm"), sim.param("actuator_biasprm")
            kp = torch.as_tensor(sc.kp, device=self.device) * draw(cfg.kp_scale, (n, nu))
            kd = torch.as_tensor(sc.kd, device=self.device) * draw(cfg.kd_scale, (n, nu))
            gain[:, :nu, 0] = kp.to(gain.dtype)  # the policy's servos; held joints keep theirs
            bias[:, :nu, 1] = -kp.to(bias.dtype)
            bias[:, :nu, 2] = -kd.to(bias.dtype)
        if tuple(cfg.effort_scale) != (1.0, 1.0):
            force = sim.param("actuator_forcerange")
            force[:, :nu].mul_(draw(cfg.effort_scale, (n, nu, 1)).to(force.dtype))
        for field_name, span in (("dof_frictionloss", cfg.joint_friction),
                                 ("dof_damping", cfg.joint_damping),
                                 ("dof_armature", cfg.joint_armature)):
            if tuple(span) != (0.0, 0.0):
                view = sim.param(field_name)
                view[:, self.joint_dof] += draw(span, (n, nu)).to(view.dtype)
        mass = sim.param("body_mass")
        mass[:, sc.root_body] += draw(cfg.added_base_mass, (n,)).to(mass.dtype)
        if cfg.com_offset:
            ipos = sim.param("body_ipos")
            ipos[:, sc.root_body] += draw((-cfg.com_offset, cfg.com_offset), (n, 3)).to(ipos.dtype)
        sim.set_const()

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
        if self.track_foot_vel:
            pos = self.sim.xpos[:, self.feet].float()
            vel = (pos - self.foot_pos) / self.dt
            self.foot_vel = vel.masked_fill(self.foot_fresh[:, None, None], 0.0)
            self.foot_pos = pos
            self.foot_fresh = torch.zeros_like(self.foot_fresh)
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
        if cfg.min_base_height is not None:
            out["base_height"] = {"func": "base_height_below", "params": {"min_height": cfg.min_base_height}}
        return out

    def reset_envs(self, mask: torch.Tensor) -> None:
        n, cfg, sim, dt = self.num_envs, self.cfg, self.sim, self.sim.dtype
        rows, rq, rd = mask[:, None], self.root_qpos, self.root_dof
        # random yaw, joints scaled around the default pose, a random base velocity (reset_base_vel);
        # drawn for every env and kept where mask (no host sync to count the resets)
        quat = yaw_quat(self.uniform((n,), -3.14159, 3.14159)).to(dt)
        scale = self.uniform((n, 1), *cfg.joint_pos_scale)
        joints = (self.default_joint_pos * scale).to(dt)
        self.spawn_lift = self._lift(scale)
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
        self.foot_fresh = self.foot_fresh | mask
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
        tensors (the rewards, observations and curriculum read them; one storage, so a
        checkpoint saved before the command terms restores into them)."""
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


def _with_history(cfg: LocomotionCfg) -> LocomotionCfg:
    """`history` H > 1: every policy term but the command stacks its last H frames."""
    if isinstance(cfg.history, bool) or not isinstance(cfg.history, int) or cfg.history < 1:
        raise ConfigError(f"history must be an int >= 1 (frames stacked per policy term), got "
                          f"{cfg.history!r}")
    if cfg.history == 1 or "policy" not in cfg.observations:
        return cfg
    terms = [t if t.name == "command" else dataclasses.replace(t, history=cfg.history)
             for t in cfg.observations["policy"]]
    return dataclasses.replace(cfg, observations={**cfg.observations, "policy": terms})


def _with_gait_clock(cfg: LocomotionCfg) -> LocomotionCfg:
    """`gait_period_s` set: the `gait_clock` term joins the policy and critic groups, and the
    clocked rewards follow it. Without a clock they keep their own period, with the robot's
    gait offsets (`gait_offsets`) where they give none."""
    if cfg.gait_period_s is None:
        if cfg.gait_offsets is None:
            return cfg
        offsets = {"offsets": [float(o) for o in cfg.gait_offsets]}
        return dataclasses.replace(cfg, rewards=_on_the_clock(cfg.rewards, offsets, observed=False))
    if not cfg.gait_period_s > 0:
        raise ConfigError(f"gait_period_s must be > 0 s (or null: no gait clock), got {cfg.gait_period_s!r}")
    params = {"period": float(cfg.gait_period_s), "offsets": [float(o) for o in cfg.gait_offsets]}
    groups = {g: [*terms, ObsTerm("gait_clock", params=params)] if g in ("policy", "critic") else terms
              for g, terms in cfg.observations.items()}
    return dataclasses.replace(cfg, observations=groups, rewards=_on_the_clock(cfg.rewards, params))


CLOCKED_REWARDS = ("gait_contact", "feet_height_phase")  # rewards that read a gait clock's phase


def _clocked(rewards: dict) -> list[tuple[str, dict]]:
    """The weighted clocked rewards, each as (name, {weight, func?, params})."""
    out = []
    for name, entry in rewards.items():
        func = (entry.get("func") or name) if isinstance(entry, Mapping) else name
        if func not in CLOCKED_REWARDS:
            continue
        if not isinstance(entry, Mapping):
            if isinstance(entry, bool) or not isinstance(entry, (int, float)) or entry == 0:
                continue  # off, or not a weight (reward_terms names the problem)
            entry = {"weight": entry}
        if entry.get("weight"):
            out.append((name, entry))
    return out


def _on_the_clock(rewards: dict, clock: dict, observed: bool = True) -> dict:
    """The clocked rewards on the clock the policy observes: a period or offsets they do not
    give are the clock's (so `gait_period_s=0.5` moves both), and ones they give must equal it
    (a reward paying another rhythm than the observed one trains nothing useful)."""
    out = dict(rewards)
    for name, entry in _clocked(rewards):
        params = dict(entry.get("params") or {})
        for key, value in clock.items():
            if key not in params:
                params[key] = value
            elif observed and not np.array_equal(np.atleast_1d(np.asarray(params[key], dtype=float)),
                                                 np.atleast_1d(np.asarray(value, dtype=float))):
                field_name = "gait_period_s" if key == "period" else "gait_offsets"
                raise ConfigError(f"reward term '{name}': param {key}={params[key]!r} differs from the gait "
                                  f"clock the policy observes ({field_name}={value!r}); drop the param "
                                  "(it then follows the clock) or set both to the same value")
        out[name] = {**entry, "params": params}
    return out


def default_gait_offsets(scene: Scene) -> list[float]:
    """`gait_offsets` null: two feet half a cycle apart (a walk), four in diagonal pairs half a
    cycle apart (a trot), the pairs found from where the feet stand at the robot's default pose
    in the base frame, so the robot's feet order does not matter."""
    feet = list(scene.robot.feet)
    if len(feet) == 2:
        return [0.0, 0.5]
    m = scene.model
    d = mujoco.MjData(m)
    d.qpos[scene.joint_qpos] = scene.default_joint_pos
    mujoco.mj_kinematics(m, d)
    rel = (d.xpos[scene.feet] - d.xpos[scene.root_body]) @ d.xmat[scene.root_body].reshape(3, 3)
    rel -= rel.mean(axis=0)
    diagonal = np.sign(rel[:, 0]) * np.sign(rel[:, 1])  # +1: front-left and rear-right, -1: the others
    if len(feet) != 4 or sorted(diagonal.tolist()) != [-1.0, -1.0, 1.0, 1.0]:
        raise ConfigError(f"gait_offsets null picks a gait for 2 feet (a walk) or 4 at the corners of the "
                          f"base (a trot); robot has feet {feet}: set gait_offsets, one per foot")
    return [0.0 if k == diagonal[0] else 0.5 for k in diagonal]


def _check_clock_feet(cfg: LocomotionCfg, feet: list[str]) -> None:
    """One gait offset per foot, for the observed clock and every clocked reward (after
    `_with_gait_clock`, which gives each of them offsets)."""
    uses = [("gait_offsets", list(cfg.gait_offsets))] if cfg.gait_period_s is not None else []
    uses += [(f"reward term '{name}': param offsets", list(entry["params"]["offsets"]))
             for name, entry in _clocked(cfg.rewards)]
    for where, offsets in uses:
        if len(offsets) != len(feet):
            raise ConfigError(f"{where} has {len(offsets)} values, but the robot has {len(feet)} feet "
                              f"{feet}: give one offset (a fraction of the cycle) per foot, in that order")


def _check_legged(scene: Scene, task: str) -> None:
    """The velocity task walks a floating base on feet and reads its IMU: refuse other robots."""
    r, lacks = scene.robot, []
    if scene.fixed_base:
        lacks.append(f"a floating base (root_body '{r.root_body}' has no free joint)")
    if not r.feet:
        lacks.append("feet (foot bodies)")
    if not r.imu_site:
        lacks.append("imu_site (a site on the base; add one with `sites:` where the MJCF has none)")
    if lacks:
        raise ConfigError(f"task '{task}' needs a legged robot, but robot '{r.name}' lacks "
                          f"{'; '.join(lacks)}: pick a legged robot (robot=quadruped, unitree_go1, "
                          "unitree_g1) or a task for this one (an arm: task=reach)")


# --- observation terms: f(env) -> (N, d), each with how a robot supplies it and its mirror -------
def _imu_frame(env: LocomotionEnv):
    return None if env.imu_rot is None else env.imu_rot.double().cpu().numpy()


_JOINT_POS_READ = {"reading": "joint_pos", "minus": "default_joint_pos",
                   "doc": "joint encoder angles (rad), in the policy's action order"}
_JOINT_VEL_READ = {"reading": "joint_vel", "doc": "joint velocities (rad/s), in the policy's action order"}


@observation(read={"reading": "base_lin_vel",
                   "doc": "base linear velocity (m/s) in the IMU frame: a state estimator's output"},
             mirror=lambda env: mirror.vector(_imu_frame(env)))
def base_lin_vel(env: LocomotionEnv) -> torch.Tensor:
    return env.base_lin_vel_b


@observation(read={"reading": "gyro", "doc": "IMU angular velocity (rad/s), in the IMU frame"},
             mirror=lambda env: mirror.axial(_imu_frame(env)))
def base_ang_vel(env: LocomotionEnv) -> torch.Tensor:
    return env.base_ang_vel_b + env.gyro_bias


@observation(read={"reading": "quat", "op": "gravity",
                   "doc": "IMU orientation, quaternion wxyz (or 'gravity': unit gravity in the IMU frame)"},
             mirror=lambda env: mirror.vector(_imu_frame(env)))
def projected_gravity(env: LocomotionEnv) -> torch.Tensor:
    return env.gravity_b + env.gravity_bias


@observation(read={"reading": "command", "doc": "[forward m/s, lateral m/s, yaw rate rad/s]"},
             mirror=lambda env: mirror.velocity_command())
def command(env: LocomotionEnv) -> torch.Tensor:
    return env.commands


@observation(read=_JOINT_POS_READ, mirror=lambda env: env.action_mirror())  # joint order and signs
def joint_pos(env: LocomotionEnv) -> torch.Tensor:
    return env.joint_pos - env.default_joint_pos


@observation(read=_JOINT_VEL_READ, mirror=lambda env: env.action_mirror())
def joint_vel(env: LocomotionEnv) -> torch.Tensor:
    return env.joint_vel


@observation(read={"reading": "last_action"}, mirror=lambda env: env.action_mirror())
def last_action(env: LocomotionEnv) -> torch.Tensor:
    return env.actions


@observation(read={"reading": "foot_contact", "doc": "foot contact flags, in the robot config's feet order"},
             mirror=lambda env: (env.robot_mirror[2], np.ones(env.feet.numel())))
def foot_contact(env: LocomotionEnv) -> torch.Tensor:
    return env.contact.float()


@observation(mirror=lambda env: mirror.same(1))  # privileged: the critic's
def ground_friction(env: LocomotionEnv) -> torch.Tensor:
    return env.mu


@observation(mirror=lambda env: mirror.points_y(env.scan_points.double().cpu().numpy()))
def height_scan(env: LocomotionEnv) -> torch.Tensor:
    """Base height over the ground at the scan points, minus the default pose's: 0 standing on
    flat ground, clipped to +-1 m."""
    heights = scan(env.field, env.base_pos, env.base_yaw, env.scan_points)
    return (env.base_pos[:, 2:3] - heights - env.base_z0).clamp(-1.0, 1.0)


def gait_phase(env: LocomotionEnv, period: float, offsets) -> torch.Tensor:
    """Each foot's phase in [0, 1) (N, feet): control steps since the episode began times dt,
    over `period`, plus the foot's offset."""
    t = env.episode_length_buf.float()[:, None] * (env.dt / period)
    return torch.remainder(torch.cat([t + float(o) for o in offsets], dim=1), 1.0)


def _gait_clock_mirror(env: LocomotionEnv):
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
def gait_clock(env: LocomotionEnv, period: float = 0.8, offsets=(0.0, 0.5)) -> torch.Tensor:
    """sin and cos of each foot's gait phase, [sin, cos] per foot (N, 2 * feet)."""
    angle = (2 * torch.pi) * gait_phase(env, period, offsets)
    return torch.stack([torch.sin(angle), torch.cos(angle)], dim=-1).flatten(1)


def asked_to_move(env: LocomotionEnv) -> torch.Tensor:
    """(N,) bool: a planar velocity of more than 0.1 m/s is commanded (the gait terms pay only then)."""
    return env.commands[:, :2].norm(dim=1) > 0.1


# --- reward terms: f(env) -> (N,), weighted by name from the config ----------------------------
def alive(env: LocomotionEnv) -> torch.Tensor:
    return torch.ones(env.num_envs, device=env.device)


def track_lin_vel(env: LocomotionEnv) -> torch.Tensor:
    err = (env.commands[:, :2] - env.base_lin_vel_b[:, :2]).square().sum(dim=1)
    return torch.exp(-err / env.cfg.tracking_sigma)


def track_yaw_rate(env: LocomotionEnv) -> torch.Tensor:
    err = (env.commands[:, 2] - env.base_ang_vel_b[:, 2]).square()
    return torch.exp(-err / env.cfg.tracking_sigma)


def lin_vel_z(env: LocomotionEnv) -> torch.Tensor:
    return env.base_lin_vel_b[:, 2].square()


def ang_vel_xy(env: LocomotionEnv) -> torch.Tensor:
    return env.base_ang_vel_b[:, :2].square().sum(dim=1)


def orientation(env: LocomotionEnv) -> torch.Tensor:
    return env.gravity_b[:, :2].square().sum(dim=1)


def torques(env: LocomotionEnv) -> torch.Tensor:
    return env.sim.actuator_force.float().square().sum(dim=1)


def joint_acc(env: LocomotionEnv) -> torch.Tensor:
    return ((env.joint_vel - env.last_joint_vel) / env.dt).square().sum(dim=1)


def action_rate(env: LocomotionEnv) -> torch.Tensor:
    return (env.actions - env.last_actions).square().sum(dim=1)


def joint_limits(env: LocomotionEnv) -> torch.Tensor:
    q = env.joint_pos
    return ((env.soft_lo - q).clamp(min=0) + (q - env.soft_hi).clamp(min=0)).sum(dim=1)


def non_foot_contact(env: LocomotionEnv) -> torch.Tensor:
    if not env.penalized.numel():
        return torch.zeros(env.num_envs, device=env.device)
    return (env.sim.contact_force(env.penalized).norm(dim=-1) > 0.1).float().sum(dim=1)


@param_rules((lambda floor=None, cap=None, **_: floor is None or cap is None or floor <= cap, "floor <= cap"),
             target=NON_NEGATIVE, floor=FINITE, cap=FINITE)
def feet_air_time(env: LocomotionEnv, target: float | None = None, floor: float | None = None,
                  cap: float | None = None) -> torch.Tensor:
    """legged_gym's step reward: at each landing, the swing's air time minus `target` s (None:
    the task's `air_time_target_s`), so long swings earn and short ones cost; only while asked to
    move. `floor` and `cap` clamp each landing's value (floor 0: a short step costs nothing;
    target 0 with a cap: every step earns its air time, up to the cap)."""
    target = env.cfg.air_time_target_s if target is None else target
    landed = env.air_time_on_landing - target
    if floor is not None or cap is not None:
        landed = landed.clamp(min=floor, max=cap)
    return (landed * env.first_contact).sum(dim=1) * asked_to_move(env)


def foot_clearance(env: LocomotionEnv) -> torch.Tensor:
    """At each landing, how far short of `foot_clearance_target` the foot's swing peaked, as
    a share of it (0 at or above it); only while asked to move. A blind robot that lifts its
    feet this high steps onto risers it cannot see (weight it negative)."""
    target = env.cfg.foot_clearance_target
    short = (1.0 - env.swing_peak_on_landing.clamp(max=target) / target) * env.first_contact
    return short.sum(dim=1) * asked_to_move(env)


# --- evaluation terms: tracking errors per step (averaged once an episode settles), and the
# terrain crossing at an episode's end (on a grid) -------------------------------------------
def lin_vel_error(env: LocomotionEnv) -> torch.Tensor:
    """|v_xy - command_xy| (m/s) in the base frame."""
    return (env.base_lin_vel_b[:, :2] - env.commands[:, :2]).norm(dim=1)


def yaw_rate_error(env: LocomotionEnv) -> torch.Tensor:
    """|w_z - command_yaw| (rad/s)."""
    return (env.base_ang_vel_b[:, 2] - env.commands[:, 2]).abs()


def crossed_share(env: LocomotionEnv) -> torch.Tensor:
    """1 where the episode got past half a tile from its start without a fall."""
    return (env.farthest > env.grid.cfg.tile_size / 2) & ~env.terminated_buf


# --- biped gait terms (Isaac Lab's and mjlab's recipes, written for this env) -------------------
@param_rules(threshold=POSITIVE)
def feet_air_time_biped(env: LocomotionEnv, threshold: float = 0.4) -> torch.Tensor:
    """Single stance, rewarded: while exactly one foot is down, the shorter of the stance foot's
    contact time and the swing foot's air time, capped at `threshold` s; only while asked to
    move. Walking (one foot at a time, long enough) earns it; hopping and shuffling do not."""
    in_mode = torch.where(env.contact, env.contact_time, env.air_time)
    single = env.contact.sum(dim=1) == 1
    reward = torch.where(single[:, None], in_mode, 0.0).min(dim=1).values.clamp(max=threshold)
    return reward * asked_to_move(env)


def foot_slip(env: LocomotionEnv) -> torch.Tensor:
    """Squared horizontal speed (m/s)^2 of the feet that touch the ground, summed (weight it
    negative): a planted foot should not slide."""
    return (env.foot_vel[..., :2].square().sum(dim=-1) * env.contact).sum(dim=1)


@param_rules(period=POSITIVE, offsets=FINITE, stance=UNIT_OPEN)
def gait_contact(env: LocomotionEnv, period: float = 0.8, offsets=(0.0, 0.5),
                 stance: float = 0.55) -> torch.Tensor:
    """The share of feet whose contact matches the gait clock (in contact in the first `stance`
    of each foot's cycle, in the air after): a gait in step with the clock the policy observes
    (`gait_period_s`; the params must match its period and offsets). In [0, 1], positive weight."""
    planted = gait_phase(env, period, offsets) < stance
    return (env.contact == planted).float().mean(dim=1)


@param_rules(period=POSITIVE, offsets=FINITE, stance=UNIT_OPEN, height=NON_NEGATIVE, std=POSITIVE)
def feet_height_phase(env: LocomotionEnv, period: float = 0.8, offsets=(0.0, 0.5), stance: float = 0.55,
                      height: float = 0.08, std: float = 0.05) -> torch.Tensor:
    """exp(-sum over feet of ((h - h_ref) / std)^2), each foot's tip height h tracking a swing
    drawn from the gait clock: on the ground for the first `stance` of its cycle, then a half
    sine peaking at `height` m (Playground's feet phase). Unlike gait_contact it pays for a foot
    lifted part way, so stepping is found early. Only while asked to move. In [0, 1]."""
    swing = ((gait_phase(env, period, offsets) - stance) / (1.0 - stance)).clamp(min=0.0)
    ref = height * torch.sin(torch.pi * swing)
    err = ((env.foot_height - ref) / std).square().sum(dim=1)
    return torch.exp(-err) * asked_to_move(env)


@param_rules(std_by_joint=POSITIVE)
def posture(env: LocomotionEnv, std_by_joint: Any = 0.5) -> torch.Tensor:
    """exp(-mean(((q - q_default) / std)^2)): stay near the default pose, each joint with its own
    tolerance (`std_by_joint`: one number, a list in action order, or {joint regex: rad}; e.g. a
    loose hip pitch and knee, a tight hip roll and yaw). In (0, 1], positive weight."""
    std = torch.as_tensor(std_by_joint, device=env.device, dtype=torch.float32)
    z = (env.joint_pos - env.default_joint_pos) / std
    return torch.exp(-z.square().mean(dim=1))


LocomotionEnv.OBS_TERMS = {f.__name__: f for f in (
    base_lin_vel, base_ang_vel, projected_gravity, command, joint_pos, joint_vel, last_action, foot_contact,
    ground_friction, height_scan, gait_clock)}


# --- terminations (simrl.mdp.terminations; body_contact and the others there apply too) -----------
@deploy_facts(lambda env, max_tilt_cos: {"max_tilt_cos": float(max_tilt_cos)})
def base_tilt(env: LocomotionEnv, max_tilt_cos: float) -> torch.Tensor:
    """The base's up axis tilted past acos(`max_tilt_cos`) from the vertical (in the IMU frame)."""
    return env.gravity_b[:, 2] > -max_tilt_cos


@deploy_facts(lambda env, min_height: {"min_base_height": float(min_height)})
def base_height_below(env: LocomotionEnv, min_height: float) -> torch.Tensor:
    """The base below `min_height` m over the ground under it (a sat-down or fallen humanoid)."""
    return env.base_height < min_height


LocomotionEnv.TERMINATION_TERMS = {**LocomotionEnv.TERMINATION_TERMS, "base_tilt": base_tilt,
                                   "base_height_below": base_height_below}


LocomotionEnv.TRACKING_TERMS = {f.__name__: f for f in (lin_vel_error, yaw_rate_error)}
LocomotionEnv.REWARD_TERMS = {
    f.__name__: f
    for f in (alive, track_lin_vel, track_yaw_rate, lin_vel_z, ang_vel_xy, orientation, torques,
              joint_acc, action_rate, joint_limits, non_foot_contact, feet_air_time, foot_clearance,
              feet_air_time_biped, foot_slip, posture, gait_contact, feet_height_phase)
}
LocomotionEnv.ACTION_TERMS = {**EnvBatch.ACTION_TERMS, "reference_gait": ReferenceGait}
LocomotionEnv.CURRICULUM_TERMS = {**EnvBatch.CURRICULUM_TERMS, "reference_gait_fade": ReferenceGaitFade}
