"""Quadruped velocity tracking on flat ground (the legged_gym / mjlab flat task), top to bottom.

Commands (forward, lateral, yaw rate) are sampled per env and resampled every few seconds, a
share of them standing still. Actions are joint position offsets around the home pose, held by
the model's PD position actuators: physics at 200 Hz, control at 50 Hz (decimation 4).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from simrl.env import EnvBatch, EnvCfg, ObsTerm
from simrl.math import quat_rotate_inv, yaw_quat

LEGS = ("FR", "FL", "RR", "RL")


def _policy_obs() -> list[ObsTerm]:
    return [
        ObsTerm("base_lin_vel", scale=2.0, noise=0.2),
        ObsTerm("base_ang_vel", scale=0.25, noise=0.05),
        ObsTerm("projected_gravity", noise=0.05),
        ObsTerm("command", scale=[2.0, 2.0, 0.25]),
        ObsTerm("joint_pos", noise=0.01),
        ObsTerm("joint_vel", scale=0.05, noise=0.075),
        ObsTerm("last_action"),
    ]


def _critic_obs() -> list[ObsTerm]:
    return [ObsTerm(t.name, t.scale) for t in _policy_obs()] + [ObsTerm("foot_contact")]


@dataclass
class QuadrupedCfg(EnvCfg):
    model: str = "quadruped/quadruped.xml"
    keyframe: str | None = "home"
    decimation: int = 4
    episode_length_s: float = 20.0
    action_scale: float = 0.25  # rad of joint target per unit action
    only_positive_rewards: bool = True
    observations: dict = field(default_factory=lambda: {"policy": _policy_obs(), "critic": _critic_obs()})
    rewards: dict = field(
        default_factory=lambda: {
            # legged_gym's flat-terrain weights (A1), multiplied by the control dt at run time
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
    )
    # commands
    lin_vel_x: tuple[float, float] = (-0.6, 1.2)
    lin_vel_y: tuple[float, float] = (-0.4, 0.4)
    yaw_rate: tuple[float, float] = (-1.0, 1.0)
    standing_share: float = 0.1
    resample_s: float = 5.0
    tracking_sigma: float = 0.25
    air_time_target_s: float = 0.5
    # terminations
    max_tilt_cos: float = 0.5  # terminate when the trunk's up axis is tilted past 60 degrees
    # randomization: friction per episode, trunk mass once per env at start-up (as legged_gym:
    # a mass edit needs set_const, hundreds of kernel launches over all worlds on mjwarp),
    # pushes during episodes
    friction: tuple[float, float] = (0.5, 1.25)
    added_trunk_mass: tuple[float, float] = (-1.0, 2.0)
    joint_pos_scale: tuple[float, float] = (0.5, 1.5)
    push_interval_s: float = 8.0
    push_vel: float = 1.0


class QuadrupedEnv(EnvBatch):
    task_name = "quadruped"
    cfg: QuadrupedCfg

    def setup(self) -> None:
        m, n, dev = self.model, self.num_envs, self.device
        f32 = dict(device=dev, dtype=torch.float32)
        self.default_joint_pos = torch.as_tensor(self.sim.reset_state()["qpos"][7:], **f32)
        self.action_offset = self.default_joint_pos
        lo, hi = torch.as_tensor(m.jnt_range[1:], **f32).T
        mid, half = (lo + hi) / 2, (hi - lo) / 2
        self.soft_lo, self.soft_hi = mid - 0.9 * half, mid + 0.9 * half
        # body ids as device tensors: a Python-list index is a host copy on every use
        self.feet = self.sim.body_index([f"{leg}_calf" for leg in LEGS])
        self.thighs = self.sim.body_index([f"{leg}_thigh" for leg in LEGS])
        self.trunk_index = self.sim.body_index(["trunk"])
        self.trunk = self.sim.body_ids(["trunk"])[0]
        self.commands = torch.zeros(n, 3, **f32)
        self.air_time = torch.zeros(n, len(LEGS), **f32)
        self.last_joint_vel = torch.zeros(n, m.nu, **f32)
        self.gravity_w = torch.tensor([[0.0, 0.0, -1.0]], **f32).expand(n, 3)
        self.resample_steps = max(1, round(self.cfg.resample_s / self.dt))
        self.push_steps = max(1, round(self.cfg.push_interval_s / self.dt))
        mass = self.sim.param("body_mass")
        added = self.uniform((n,), *self.cfg.added_trunk_mass)
        mass[:, self.trunk] += added.to(mass.dtype)
        self.sim.set_const()
        self.refresh()

    # --- state, read once per step from the sim views (float32) ------------------------------
    def refresh(self) -> None:
        qpos, qvel = self.sim.qpos.float(), self.sim.qvel.float()
        self.base_quat = qpos[:, 3:7]
        self.base_lin_vel_b = quat_rotate_inv(self.base_quat, qvel[:, 0:3])
        self.base_ang_vel_b = qvel[:, 3:6]  # free joint angular velocity is in the body frame
        self.gravity_b = quat_rotate_inv(self.base_quat, self.gravity_w)
        self.joint_pos = qpos[:, 7:]
        self.joint_vel = qvel[:, 6:]
        self.foot_force = self.sim.contact_force(self.feet).float()
        # a reset env's contact forces are the last episode's until it steps: none yet
        self.contact = (self.foot_force.norm(dim=-1) > 1.0) & ~self.reset_buf[:, None]

    def apply_actions(self, actions: torch.Tensor) -> None:
        self.last_joint_vel.copy_(self.sim.qvel[:, 6:])
        super().apply_actions(actions)  # ctrl = home pose + action_scale * actions
        # pushes go into the state the physics starts from, so this step's observation shows them
        if self.cfg.push_vel > 0:  # by mask: no host sync to find who is pushed
            push = ((self.episode_length_buf + 1) % self.push_steps == 0)[:, None]
            v = self.cfg.push_vel
            kick = self.uniform((self.num_envs, 2), -v, v) * push
            self.sim.qvel[:, 0:2] += kick.to(self.sim.dtype)

    def update(self) -> None:
        self.refresh()
        first_contact = (self.air_time > 0) & self.contact
        self.first_contact = first_contact
        self.air_time_on_landing = self.air_time * first_contact
        self.air_time.add_(self.dt).mul_(~self.contact)  # in place: stays a normal tensor
        self._sample_commands(self.episode_length_buf % self.resample_steps == 0)

    def terminated(self) -> torch.Tensor:
        trunk_contact = self.sim.contact_force(self.trunk_index)[:, 0].norm(dim=-1) > 1.0
        tilted = self.gravity_b[:, 2] > -self.cfg.max_tilt_cos
        return trunk_contact | tilted

    def reset_envs(self, mask: torch.Tensor) -> None:
        n, cfg, sim, dt = self.num_envs, self.cfg, self.sim, self.sim.dtype
        rows = mask[:, None]
        # random yaw, joints scaled around the home pose, a small random base velocity; drawn
        # for every env and kept where mask (no host sync to count the resets)
        quat = yaw_quat(self.uniform((n,), -3.14159, 3.14159)).to(dt)
        joints = (self.default_joint_pos * self.uniform((n, 1), *cfg.joint_pos_scale)).to(dt)
        root_vel = self.uniform((n, 6), -0.5, 0.5).to(dt)
        sim.qpos[:, 3:7] = torch.where(rows, quat, sim.qpos[:, 3:7])
        sim.qpos[:, 7:] = torch.where(rows, joints, sim.qpos[:, 7:])
        sim.qvel[:, :6] = torch.where(rows, root_vel, sim.qvel[:, :6])
        sim.qvel[:, 6:] = sim.qvel[:, 6:].masked_fill(rows, 0.0)
        sim.ctrl[:] = torch.where(rows, self.default_joint_pos.to(dt), sim.ctrl)
        # ground contact friction per episode (contacts take the larger of the two geoms')
        friction = sim.param("geom_friction")
        mu = self.uniform((n, 1), *cfg.friction).to(friction.dtype)
        friction[:, :, 0] = torch.where(rows, mu, friction[:, :, 0])
        self.air_time.masked_fill_(rows, 0.0)
        self.last_joint_vel.masked_fill_(rows, 0.0)
        self._sample_commands(mask)

    def _sample_commands(self, mask: torch.Tensor) -> None:
        """New commands for the envs where `mask`; a share of them stand still."""
        n, cfg = self.num_envs, self.cfg
        cmd = torch.stack(
            [self.uniform((n,), *cfg.lin_vel_x), self.uniform((n,), *cfg.lin_vel_y),
             self.uniform((n,), *cfg.yaw_rate)], dim=1,
        )
        still = self.uniform((n, 1), 0.0, 1.0) < cfg.standing_share
        self.commands[:] = torch.where(mask[:, None], cmd * ~still, self.commands)

    def set_commands(self, lin_vel_x: float, lin_vel_y: float = 0.0, yaw_rate: float = 0.0) -> None:
        """Fix every env's command (evaluation); disables resampling."""
        self.commands[:] = torch.tensor([lin_vel_x, lin_vel_y, yaw_rate], device=self.device)
        self.resample_steps = 10**9


# --- observation terms: f(env) -> (N, d) -------------------------------------------------------
OBS = {
    "base_lin_vel": lambda env: env.base_lin_vel_b,
    "base_ang_vel": lambda env: env.base_ang_vel_b,
    "projected_gravity": lambda env: env.gravity_b,
    "command": lambda env: env.commands,
    "joint_pos": lambda env: env.joint_pos - env.default_joint_pos,
    "joint_vel": lambda env: env.joint_vel,
    "last_action": lambda env: env.actions,
    "foot_contact": lambda env: env.contact.float(),
}


# --- reward terms: f(env) -> (N,), weighted by name from the config ----------------------------
def track_lin_vel(env: QuadrupedEnv) -> torch.Tensor:
    err = (env.commands[:, :2] - env.base_lin_vel_b[:, :2]).square().sum(dim=1)
    return torch.exp(-err / env.cfg.tracking_sigma)


def track_yaw_rate(env: QuadrupedEnv) -> torch.Tensor:
    err = (env.commands[:, 2] - env.base_ang_vel_b[:, 2]).square()
    return torch.exp(-err / env.cfg.tracking_sigma)


def lin_vel_z(env: QuadrupedEnv) -> torch.Tensor:
    return env.base_lin_vel_b[:, 2].square()


def ang_vel_xy(env: QuadrupedEnv) -> torch.Tensor:
    return env.base_ang_vel_b[:, :2].square().sum(dim=1)


def orientation(env: QuadrupedEnv) -> torch.Tensor:
    return env.gravity_b[:, :2].square().sum(dim=1)


def torques(env: QuadrupedEnv) -> torch.Tensor:
    return env.sim.actuator_force.float().square().sum(dim=1)


def joint_acc(env: QuadrupedEnv) -> torch.Tensor:
    return ((env.joint_vel - env.last_joint_vel) / env.dt).square().sum(dim=1)


def action_rate(env: QuadrupedEnv) -> torch.Tensor:
    return (env.actions - env.last_actions).square().sum(dim=1)


def joint_limits(env: QuadrupedEnv) -> torch.Tensor:
    q = env.joint_pos
    return ((env.soft_lo - q).clamp(min=0) + (q - env.soft_hi).clamp(min=0)).sum(dim=1)


def non_foot_contact(env: QuadrupedEnv) -> torch.Tensor:
    return (env.sim.contact_force(env.thighs).norm(dim=-1) > 0.1).float().sum(dim=1)


def feet_air_time(env: QuadrupedEnv) -> torch.Tensor:
    """Reward steps that land after a long enough swing; only while asked to move."""
    landed = ((env.air_time_on_landing - env.cfg.air_time_target_s) * env.first_contact).sum(dim=1)
    return landed * (env.commands[:, :2].norm(dim=1) > 0.1)


QuadrupedEnv.OBS_TERMS = OBS
QuadrupedEnv.REWARD_TERMS = {
    f.__name__: f
    for f in (track_lin_vel, track_yaw_rate, lin_vel_z, ang_vel_xy, orientation, torques,
              joint_acc, action_rate, joint_limits, non_foot_contact, feet_air_time)
}
