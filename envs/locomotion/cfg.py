"""The velocity task's configs: the fields (commands, rewards, randomization, terminations,
terrain) of `quadruped` and `humanoid`, their default observation groups and rewards, the terms
only the task uses, and the entries its fields imply (own_entries)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import simrl.envs.locomotion.entries as entries
import simrl.envs.locomotion.observations as obs
import simrl.envs.locomotion.rewards as rew
from simrl.env import EnvCfg, ObsTerm
from simrl.envs.locomotion.data import LeggedData
from simrl.envs.locomotion.events import EVENTS
from simrl.envs.locomotion.gait_prior import ReferenceGait, ReferenceGaitFade
from simrl.envs.locomotion.terminations import base_height_below, base_tilt
from simrl.envs.locomotion.terrain import GRID_SCAN_SIZE, TerrainData


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
    TERMS: ClassVar[dict[str, dict[str, Any]]] = {
        "observations": {f.__name__: f for f in (
            obs.base_lin_vel, obs.base_ang_vel, obs.projected_gravity, obs.command, obs.foot_contact,
            obs.ground_friction, obs.height_scan, obs.gait_clock)},
        "rewards": rew.REWARDS,
        "tracking": rew.TRACKING,
        "events": EVENTS,
        "terminations": {"base_tilt": base_tilt, "base_height_below": base_height_below},
        "actions": {"reference_gait": ReferenceGait},
        "curriculum": {"reference_gait_fade": ReferenceGaitFade},
    }
    # the ground under the robot (env.terrain), then the robot's state (env.legged), which reads it
    VIEWS: ClassVar[dict[str, type]] = {"terrain": TerrainData, "legged": LeggedData}
    # fields added after runs were saved, with the values those runs were trained with
    since: ClassVar[dict[str, Any]] = {
        "action_delay": (0, 0), "kp_scale": (1.0, 1.0), "kd_scale": (1.0, 1.0),
        "effort_scale": (1.0, 1.0), "joint_friction": (0.0, 0.0), "joint_damping": (0.0, 0.0),
        "joint_armature": (0.0, 0.0), "com_offset": 0.0, "gyro_bias": 0.0, "gravity_bias": 0.0,
        "ground_dampratio": (1.0, 1.0), "terrain": "flat", "history": 1, "heading_command": False,
        "spawn_clear": False, "height_scan_size": GRID_SCAN_SIZE, "command_curriculum": None,
        "gait_period_s": None, "reset_base_vel": 0.5, "min_base_height_share": None,
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
    min_base_height: float | None = None  # m; None: min_base_height_share's, or no height termination
    # the same as a share of the robot's default base height (its default pose's), so one recipe
    # fits a small and a tall humanoid; min_base_height wins where both are set
    min_base_height_share: float | None = None
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

    def bind_scene(self, scene: Any) -> LocomotionCfg:
        """Stacked history, the robot's gait offsets and the gait clock joined to the config;
        the checks that the robot can walk (simrl.envs.locomotion.entries)."""
        return entries.bind_scene(self, scene)

    def own_entries(self, scene: Any) -> dict[str, dict[str, Any]]:
        """Randomization and starts (events), pushes, terminations, the velocity command and its
        curriculum, from the fields and the robot's scene (simrl.envs.locomotion.entries)."""
        return entries.own_entries(self, scene)


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
    min_base_height: float | None = None
    min_base_height_share: float | None = 0.6  # of the default pose's base height (G1: 0.46 m)
    added_base_mass: tuple[float, float] = (-1.0, 3.0)
    joint_pos_scale: tuple[float, float] = (0.8, 1.2)
    push_vel: float = 0.5
    # at rest, as Isaac Lab's G1 and H1: legged_gym's 0.5 m/s and rad/s per axis at every reset
    # topples a biped in a quarter of the episodes it should be learning to walk in (docs/results.md)
    reset_base_vel: float = 0.0

