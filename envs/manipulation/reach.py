"""Manipulation with a fixed-base arm: `reach`, the end-effector to a sampled pose.

Any robot config with a fixed base serves (configs/robot/franka_panda.yaml: Menagerie's Franka
Emika Panda, as its MJCF ships). Actions are joint position targets around the default pose,
held by the assembled scene's position actuators; control at 50 Hz. Each episode starts near
the default pose (uniform joint noise) with a target pose (the command `ee_pose`) sampled in a
box in front of the base, and an orientation turned from the default end-effector orientation;
the target holds for the episode. The policy observes its joints (encoders), the end-effector
pose (forward kinematics, as an arm's controller reports it), its last action and the target in
the base frame: nothing a real arm does not know.

An episode succeeds where the end-effector has stayed within `success_pos` (m) and `success_ori`
(rad) of the target for the last `success_hold_s` seconds of it (metric `success`; also
`final_pos_error`, `final_ori_error`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch

from simrl.env import ObsTerm
from simrl.envs.manipulation.arm import EE_POSE_DOC, ArmCfg, ee_pose
from simrl.managers.metric import metric
from simrl.managers.observation import observation
from simrl.managers.terms import POSITIVE, param_rules
from simrl.math import quat_angle, quat_conjugate, quat_mul, quat_to_rot6d, quat_to_rotvec
from simrl.mdp.frames import ee_site, site_pose_b

TARGET = "ee_pose"  # the command entry the terms read


def _policy_obs() -> list[ObsTerm]:
    """What the arm knows: encoders, the end-effector pose its controller computes from them
    (libfranka reports it as O_T_EE), the target, its last action."""
    return [
        ObsTerm("joint_pos", noise=0.005),
        ObsTerm("joint_vel", scale=0.2, noise=0.02),
        ObsTerm("pose_error", scale=[5.0, 5.0, 5.0, 1.0, 1.0, 1.0]),
        ObsTerm("last_action"),
    ]


def _critic_obs() -> list[ObsTerm]:
    """The policy's terms noise-free, plus the end-effector's error (forward kinematics the
    critic is spared from learning; the policy does not see it)."""
    return [ObsTerm(t.name, t.scale, params=t.params) for t in _policy_obs()] + [
        ObsTerm("ee_error")]


def _rewards() -> dict[str, Any]:
    """Distance penalties for the gradient far away, tanh kernels for precision close in."""
    return {  # every term on the task's `ee_site` unless its params name another `site`
        "ee_pos_error": -0.2,
        "ee_pos_near": {"weight": 0.5, "func": "ee_pos_tanh", "params": {"std": 0.1}},
        "ee_pos_fine": {"weight": 1.0, "func": "ee_pos_tanh", "params": {"std": 0.02}},
        "ee_ori_error": -0.2,
        "ee_ori_fine": {"weight": 1.0, "func": "ee_ori_tanh", "params": {"std": 0.1}},
        "action_rate": -0.01,
        "joint_vel": {"weight": -1e-3, "func": "joint_vel_l2"},
    }


# --- the target and the end-effector's errors to it ---------------------------------------------
def target(env: Any) -> Any:
    """The pose command the task's terms read (`pos_b`, `quat_b`: base frame)."""
    return env.required_command(TARGET, "pose_command")


def ee_errors(env: Any, site: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Position (m) and orientation (rad) errors (N,) of `site` (None: the ee) to the target."""
    pos, quat = site_pose_b(env, ee_site(env, site))
    t = target(env)
    return (pos - t.pos_b).norm(dim=1), quat_angle(quat, t.quat_b)


# --- observation terms: f(env, **params) -> (N, d), each with how a robot supplies it -----------
_TARGET_POSE = "the target pose in the arm's base frame: [x, y, z] m, then a quaternion wxyz"


@observation(read=lambda params: {"reading": ["ee_pose", "target_pose"], "op": "pose_error",
                                  "doc": {"ee_pose": EE_POSE_DOC, "target_pose": _TARGET_POSE},
                                  "sim": {"ee_pose": {"site": params.get("site"), "frame_body": None}}})
def pose_error(env: Any, site: int | None = None) -> torch.Tensor:
    """From `site` to the target, in the base frame: the position difference (3) and the
    rotation vector (3) of target * site^-1."""
    pos, quat = site_pose_b(env, ee_site(env, site))
    t = target(env)
    return torch.cat([t.pos_b - pos, quat_to_rotvec(quat_mul(t.quat_b, quat_conjugate(quat)))], dim=1)


@observation(read={"reading": "target_pose", "op": "pos_rot6d", "doc": _TARGET_POSE})
def target_pose(env: Any) -> torch.Tensor:
    """The target in the base frame: position (3) and orientation as two matrix columns (6)."""
    t = target(env)
    return torch.cat([t.pos_b, quat_to_rot6d(t.quat_b)], dim=1)


@observation  # privileged (its angle has no robot-side op): the critic's
def ee_error(env: Any, site: int | None = None) -> torch.Tensor:
    """Target minus `site` position in the base frame (3) and the orientation error angle (1)."""
    pos, quat = site_pose_b(env, ee_site(env, site))
    t = target(env)
    return torch.cat([t.pos_b - pos, quat_angle(quat, t.quat_b)[:, None]], dim=1)


# --- reward terms: f(env, **params) -> (N,) ----------------------------------------------------
def ee_pos_error(env: Any, site: int | None = None) -> torch.Tensor:
    """Distance (m) from `site` to the target position."""
    pos, _ = site_pose_b(env, ee_site(env, site))
    return (pos - target(env).pos_b).norm(dim=1)


@param_rules(std=POSITIVE)
def ee_pos_tanh(env: Any, std: float, site: int | None = None) -> torch.Tensor:
    """1 at the target position, falling off over `std` metres."""
    return 1.0 - torch.tanh(ee_pos_error(env, site) / std)


def ee_ori_error(env: Any, site: int | None = None) -> torch.Tensor:
    """Angle (rad) from `site`'s orientation to the target's."""
    _, quat = site_pose_b(env, ee_site(env, site))
    return quat_angle(quat, target(env).quat_b)


@param_rules(std=POSITIVE)
def ee_ori_tanh(env: Any, std: float, site: int | None = None) -> torch.Tensor:
    """1 at the target orientation, falling off over `std` radians."""
    return 1.0 - torch.tanh(ee_ori_error(env, site) / std)


# --- metrics at each episode's end: f(env) -> (N,) ----------------------------------------------
def final_pos_error(env: Any) -> torch.Tensor:
    """The end-effector's distance (m) to the target position."""
    return ee_errors(env)[0]


def final_ori_error(env: Any) -> torch.Tensor:
    """The end-effector's angle (rad) to the target orientation."""
    return ee_errors(env)[1]


def _held_rule(env: Any) -> dict[str, Any]:
    cfg = env.cfg
    return {"site": cfg.ee_site, "frame_body": env.scene.robot.root_body, "pos": cfg.success_pos,
            "ori": cfg.success_ori, "hold_s": cfg.success_hold_s}


@metric(success=_held_rule)
class HeldAtTarget:
    """1 where the end-effector stayed within `success_pos` m and `success_ori` rad of the
    target for the last `success_hold_s` of the episode."""

    def __init__(self, env: Any):
        self.held = torch.zeros(env.num_envs, device=env.device, dtype=torch.long)  # steps in a row
        self.hold_steps = max(1, round(env.cfg.success_hold_s / env.dt))

    def update(self, env: Any) -> None:
        pos_err, ori_err = ee_errors(env)
        inside = (pos_err < env.cfg.success_pos) & (ori_err < env.cfg.success_ori)
        self.held.add_(1).mul_(inside)  # in place: evaluation's inference mode must not swap it

    def reset(self, env: Any, mask: torch.Tensor) -> None:
        self.held.masked_fill_(mask, 0)

    def __call__(self, env: Any) -> torch.Tensor:
        return (self.held >= self.hold_steps).float()


@dataclass
class ReachCfg(ArmCfg):
    task_name: ClassVar[str] = "reach"
    TERMS: ClassVar[dict[str, dict[str, Any]]] = {
        "observations": {f.__name__: f for f in (ee_error, ee_pose, pose_error, target_pose)},
        "rewards": {f.__name__: f for f in (ee_pos_error, ee_pos_tanh, ee_ori_error, ee_ori_tanh)},
        "metrics": {"success": HeldAtTarget, "final_pos_error": final_pos_error,
                    "final_ori_error": final_ori_error},
    }
    episode_length_s: float = 4.0
    observations: dict = field(default_factory=lambda: {"policy": _policy_obs(), "critic": _critic_obs()})
    rewards: dict = field(default_factory=_rewards)
    # the target, in the base frame: a position box, and an orientation turned from the
    # default pose's end-effector orientation (roll, pitch, yaw about the base's axes)
    target_x: tuple[float, float] = (0.35, 0.65)
    target_y: tuple[float, float] = (-0.25, 0.25)
    target_z: tuple[float, float] = (0.2, 0.6)
    target_roll: tuple[float, float] = (-0.2, 0.2)
    target_pitch: tuple[float, float] = (-0.2, 0.2)
    target_yaw: tuple[float, float] = (-0.785, 0.785)
    success_pos: float = 0.02  # m
    success_ori: float = 0.1  # rad
    success_hold_s: float = 1.0

    def own_entries(self) -> dict[str, dict[str, Any]]:
        """The arm's actions and spawn, and the end-effector pose target (`ee_pose`), drawn at
        each reset from the target_* fields."""
        ranges = {k: list(getattr(self, f"target_{k}")) for k in ("x", "y", "z", "roll", "pitch", "yaw")}
        return {**super().own_entries(),
                "commands": {TARGET: {"func": "pose_command", "params": {"site": self.ee_site, **ranges}}}}
