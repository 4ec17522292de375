"""The velocity task's reward terms (legged_gym's, and the biped and gait-clock terms) and its
evaluation terms (tracking errors per step)."""

from __future__ import annotations

from typing import Any

import torch

from simrl.envs.locomotion.observations import asked_to_move, commanded, gait_phase
from simrl.managers.terms import FINITE, NON_NEGATIVE, POSITIVE, UNIT_OPEN, param_rules
from simrl.mdp.rewards import action_rate


# --- reward terms: f(env) -> (N,), weighted by name from the config ----------------------------
def alive(env: Any) -> torch.Tensor:
    """1 each step (N,): staying up earns it (weight it positive)."""
    return torch.ones(env.num_envs, device=env.device)


def track_lin_vel(env: Any) -> torch.Tensor:
    """exp(-|command_xy - v_xy|^2 / `tracking_sigma`): the base's planar velocity (IMU frame)
    tracking the command, in (0, 1]."""
    err = (commanded(env)[:, :2] - env.legged.base_lin_vel_b[:, :2]).square().sum(dim=1)
    return torch.exp(-err / env.cfg.tracking_sigma)


def track_yaw_rate(env: Any) -> torch.Tensor:
    """exp(-(command_yaw - w_z)^2 / `tracking_sigma`): the base's yaw rate tracking the command,
    in (0, 1]."""
    err = (commanded(env)[:, 2] - env.legged.base_ang_vel_b[:, 2]).square()
    return torch.exp(-err / env.cfg.tracking_sigma)


def lin_vel_z(env: Any) -> torch.Tensor:
    """Squared vertical velocity of the base (IMU frame), (m/s)^2 (weight it negative)."""
    return env.legged.base_lin_vel_b[:, 2].square()


def ang_vel_xy(env: Any) -> torch.Tensor:
    """Squared roll and pitch rates of the base (IMU frame), summed (weight it negative)."""
    return env.legged.base_ang_vel_b[:, :2].square().sum(dim=1)


def orientation(env: Any) -> torch.Tensor:
    """Squared horizontal components of gravity in the IMU frame, summed: 0 level, more as the
    base tilts (weight it negative)."""
    return env.legged.gravity_b[:, :2].square().sum(dim=1)


def torques(env: Any) -> torch.Tensor:
    """Squared actuator forces, summed (weight it negative)."""
    return env.sim.actuator_force.float().square().sum(dim=1)


class joint_acc:  # noqa: N801  (a term's name, as the config says it)
    """Squared joint accelerations (the velocity change over one control step), summed (weight
    it negative). Keeps the joints' last velocities; an env's first step after a reset starts
    from rest (a reset stops the joints)."""

    def __init__(self, env: Any):
        self.last = torch.zeros(env.num_envs, env.num_actions, device=env.device, dtype=torch.float32)

    def __call__(self, env: Any) -> torch.Tensor:
        acc = ((env.joint_vel - self.last) / env.dt).square().sum(dim=1)
        self.last = env.joint_vel.clone()  # a copy: on mjwarp joint_vel views the sim's qvel
        return acc

    def reset(self, env: Any, mask: torch.Tensor) -> None:
        self.last = self.last.masked_fill(mask[:, None], 0.0)


def joint_limits(env: Any) -> torch.Tensor:
    """How far the joints are outside the middle 90% of their ranges (rad), summed: 0 inside
    (weight it negative)."""
    q = env.joint_pos
    return ((env.legged.soft_lo - q).clamp(min=0) + (q - env.legged.soft_hi).clamp(min=0)).sum(dim=1)


def non_foot_contact(env: Any) -> torch.Tensor:
    """How many of the robot config's `penalize_contacts` bodies touch something (force
    above 0.1 N) (weight it negative)."""
    if not env.legged.penalized.numel():
        return torch.zeros(env.num_envs, device=env.device)
    return (env.sim.contact_force(env.legged.penalized).norm(dim=-1) > 0.1).float().sum(dim=1)


@param_rules((lambda floor=None, cap=None, **_: floor is None or cap is None or floor <= cap, "floor <= cap"),
             target=NON_NEGATIVE, floor=FINITE, cap=FINITE)
def feet_air_time(env: Any, target: float | None = None, floor: float | None = None,
                  cap: float | None = None) -> torch.Tensor:
    """legged_gym's step reward: at each landing, the swing's air time minus `target` s (None:
    the task's `air_time_target_s`), so long swings earn and short ones cost; only while asked to
    move. `floor` and `cap` clamp each landing's value (floor 0: a short step costs nothing;
    target 0 with a cap: every step earns its air time, up to the cap)."""
    target = env.cfg.air_time_target_s if target is None else target
    landed = env.legged.air_time_on_landing - target
    if floor is not None or cap is not None:
        landed = landed.clamp(min=floor, max=cap)
    return (landed * env.legged.first_contact).sum(dim=1) * asked_to_move(env)


def foot_clearance(env: Any) -> torch.Tensor:
    """At each landing, how far short of `foot_clearance_target` the foot's swing peaked, as
    a share of it (0 at or above it); only while asked to move. A blind robot that lifts its
    feet this high steps onto risers it cannot see (weight it negative)."""
    target = env.cfg.foot_clearance_target
    short = (1.0 - env.legged.swing_peak_on_landing.clamp(max=target) / target) * env.legged.first_contact
    return short.sum(dim=1) * asked_to_move(env)


# --- evaluation terms: tracking errors per step (averaged once an episode settles); the terrain
# crossing at an episode's end is the terrain view's (simrl.envs.locomotion.terrain) ---------
def lin_vel_error(env: Any) -> torch.Tensor:
    """|v_xy - command_xy| (m/s) in the base frame."""
    return (env.legged.base_lin_vel_b[:, :2] - commanded(env)[:, :2]).norm(dim=1)


def yaw_rate_error(env: Any) -> torch.Tensor:
    """|w_z - command_yaw| (rad/s)."""
    return (env.legged.base_ang_vel_b[:, 2] - commanded(env)[:, 2]).abs()



# --- biped gait terms (Isaac Lab's and mjlab's recipes, written for this env) -------------------
@param_rules(threshold=POSITIVE)
def feet_air_time_biped(env: Any, threshold: float = 0.4) -> torch.Tensor:
    """Single stance, rewarded: while exactly one foot is down, the shorter of the stance foot's
    contact time and the swing foot's air time, capped at `threshold` s; only while asked to
    move. Walking (one foot at a time, long enough) earns it; hopping and shuffling do not."""
    in_mode = torch.where(env.legged.contact, env.legged.contact_time, env.legged.air_time)
    single = env.legged.contact.sum(dim=1) == 1
    reward = torch.where(single[:, None], in_mode, 0.0).min(dim=1).values.clamp(max=threshold)
    return reward * asked_to_move(env)


class foot_slip:  # noqa: N801  (a term's name, as the config says it)
    """Squared horizontal speed (m/s)^2 of the feet that touch the ground, summed (weight it
    negative): a planted foot should not slide. Foot velocities are finite differences of the
    feet's positions, so the term keeps the last ones; an env's first step after a reset has
    none (its velocity counts as 0)."""

    def __init__(self, env: Any):
        n, feet = env.num_envs, env.legged.feet.numel()
        self.pos = torch.zeros(n, feet, 3, device=env.device, dtype=torch.float32)
        self.fresh = torch.ones(n, device=env.device, dtype=torch.bool)  # pos is from before a reset

    def __call__(self, env: Any) -> torch.Tensor:
        pos = env.sim.xpos[:, env.legged.feet].float()
        vel = ((pos - self.pos) / env.dt).masked_fill(self.fresh[:, None, None], 0.0)
        self.pos, self.fresh = pos, torch.zeros_like(self.fresh)
        return (vel[..., :2].square().sum(dim=-1) * env.legged.contact).sum(dim=1)

    def reset(self, env: Any, mask: torch.Tensor) -> None:
        self.fresh = self.fresh | mask


@param_rules(period=POSITIVE, offsets=FINITE, stance=UNIT_OPEN)
def gait_contact(env: Any, period: float = 0.8, offsets=(0.0, 0.5),
                 stance: float = 0.55, still_when_standing: bool = False) -> torch.Tensor:
    """The share of feet whose contact matches the gait clock (in contact in the first `stance`
    of each foot's cycle, in the air after): a gait in step with the clock the policy observes
    (`gait_period_s`; the params must match its period and offsets). With `still_when_standing`,
    while standing is commanded every foot should be down instead. In [0, 1], positive weight."""
    planted = gait_phase(env, period, offsets) < stance
    if still_when_standing:
        planted = planted | ~asked_to_move(env)[:, None]
    return (env.legged.contact == planted).float().mean(dim=1)


@param_rules(period=POSITIVE, offsets=FINITE, stance=UNIT_OPEN, height=NON_NEGATIVE, std=POSITIVE)
def feet_height_phase(env: Any, period: float = 0.8, offsets=(0.0, 0.5), stance: float = 0.55,
                      height: float = 0.08, std: float = 0.05) -> torch.Tensor:
    """exp(-sum over feet of ((h - h_ref) / std)^2), each foot's tip height h tracking a swing
    drawn from the gait clock: on the ground for the first `stance` of its cycle, then a half
    sine peaking at `height` m (Playground's feet phase). Unlike gait_contact it pays for a foot
    lifted part way, so stepping is found early. Only while asked to move. In [0, 1]."""
    swing = ((gait_phase(env, period, offsets) - stance) / (1.0 - stance)).clamp(min=0.0)
    ref = height * torch.sin(torch.pi * swing)
    err = ((env.legged.foot_height - ref) / std).square().sum(dim=1)
    return torch.exp(-err) * asked_to_move(env)


@param_rules(std_by_joint=POSITIVE)
def posture(env: Any, std_by_joint: Any = 0.5) -> torch.Tensor:
    """exp(-mean(((q - q_default) / std)^2)): stay near the default pose, each joint with its own
    tolerance (`std_by_joint`: one number, a list in action order, or {joint regex: rad}; e.g. a
    loose hip pitch and knee, a tight hip roll and yaw). In (0, 1], positive weight."""
    std = torch.as_tensor(std_by_joint, device=env.device, dtype=torch.float32)
    z = (env.joint_pos - env.default_joint_pos) / std
    return torch.exp(-z.square().mean(dim=1))


# the velocity task's reward and tracking terms by name (a new term is added here, beside itself)
REWARDS = {
    f.__name__: f
    for f in (alive, track_lin_vel, track_yaw_rate, lin_vel_z, ang_vel_xy, orientation, torques, joint_acc,
              action_rate, joint_limits, non_foot_contact, feet_air_time, foot_clearance, feet_air_time_biped,
              foot_slip, posture, gait_contact, feet_height_phase)
}
TRACKING = {f.__name__: f for f in (lin_vel_error, yaw_rate_error)}
