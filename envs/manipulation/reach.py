"""Manipulation with a fixed-base arm: `reach`, the end-effector to a sampled pose.

Any robot config with a fixed base serves (configs/robot/franka_panda.yaml: Menagerie's Franka
Emika Panda, as its MJCF ships). Actions are joint position targets around the default pose,
held by the assembled scene's position actuators; control at 50 Hz. Each episode starts near
the default pose (uniform joint noise) with a target pose sampled in a box in front of the
base, and an orientation turned from the default end-effector orientation; the target holds
for the episode. The policy observes its joints (encoders), the end-effector pose (forward
kinematics, as an arm's controller reports it), its last action and the target in the base
frame: nothing a real arm does not know.

Terms are functions `f(env, **params)`; the end-effector is the task's `ee_site` (a site of the
arm's yaml, or one its `sites:` adds on the tool), or a term's own `site` param, resolved to its
id once: setting `ee_site` moves the target, every term and the success metric together.

An episode succeeds where the end-effector has stayed within `success_pos` (m) and `success_ori`
(rad) of the target for the last `success_hold_s` seconds of it (metric `success`; also
`final_pos_error`, `final_ori_error`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch

from simrl.env import EnvCfg, ObsTerm
from simrl.envs.manipulation.arm import ArmEnv
from simrl.managers.observation import observation
from simrl.managers.terms import POSITIVE, param_rules
from simrl.math import (
    quat_angle,
    quat_conjugate,
    quat_mul,
    quat_to_rot6d,
    quat_to_rotvec,
)
from simrl.mdp.observations import joint_pos, joint_vel, last_action
from simrl.mdp.rewards import action_rate, joint_vel_l2

EE = "attachment_site"  # the Panda's flange site (Menagerie's panda_nohand.xml)


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
        "joint_vel": -1e-3,
    }


@dataclass
class ReachCfg(EnvCfg):
    task_name: ClassVar[str] = "reach"
    robot: Any = "franka_panda"  # a configs/robot name (a fixed-base arm), a yaml path, or fields
    keyframe: str | None = "home"
    decimation: int | None = None  # None: control_dt / the robot's timestep
    control_dt: float = 0.02
    episode_length_s: float = 4.0
    # absolute: joint targets = default pose + scale * action (the robot config's scale);
    # delta: joint targets move by scale * action each control step from where they are (a
    # policy that holds still outputs 0, wherever the arm is)
    action_mode: str = "absolute"
    action_scale: float | None = None  # rad per unit action (per step in delta mode); None: robot's
    action_clip: float = 10.0
    observations: dict = field(default_factory=lambda: {"policy": _policy_obs(), "critic": _critic_obs()})
    rewards: dict = field(default_factory=_rewards)
    ee_site: str = EE  # the end-effector site the target and the success metric refer to
    # the target, in the base frame: a position box, and an orientation turned from the
    # default pose's end-effector orientation (roll, pitch, yaw about the base's axes)
    target_x: tuple[float, float] = (0.35, 0.65)
    target_y: tuple[float, float] = (-0.25, 0.25)
    target_z: tuple[float, float] = (0.2, 0.6)
    target_roll: tuple[float, float] = (-0.2, 0.2)
    target_pitch: tuple[float, float] = (-0.2, 0.2)
    target_yaw: tuple[float, float] = (-0.785, 0.785)
    init_joint_noise: float = 0.2  # rad, uniform +- on every joint at reset
    success_pos: float = 0.02  # m
    success_ori: float = 0.1  # rad
    success_hold_s: float = 1.0


class ReachEnv(ArmEnv):
    task_name = "reach"
    cfg: ReachCfg

    def setup(self) -> None:
        super().setup()
        n, dev, cfg = self.num_envs, self.device, self.cfg
        self.held = torch.zeros(n, device=dev, dtype=torch.long)  # steps in a row within tolerance
        self.hold_steps = max(1, round(cfg.success_hold_s / self.dt))

    # --- state ----------------------------------------------------------------------------------

    def ee_errors(self, site: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Position (m) and orientation (rad) errors (N,) of `site` (default: the ee) to the target."""
        pos, quat = self.site_pose_b(self.ee if site is None else site)
        return (pos - self.target_pos_b).norm(dim=1), quat_angle(quat, self.target_quat_b)

    # --- hooks ----------------------------------------------------------------------------------
    def update(self) -> None:
        pos_err, ori_err = self.ee_errors()
        inside = (pos_err < self.cfg.success_pos) & (ori_err < self.cfg.success_ori)
        self.held.add_(1).mul_(inside)  # in place: evaluation's inference mode must not swap it

    def task_commands(self) -> dict[str, dict[str, Any]]:
        """The end-effector pose target (`ee_pose`), drawn at each reset from the target_* fields."""
        cfg = self.cfg
        ranges = {k: list(getattr(cfg, f"target_{k}")) for k in ("x", "y", "z", "roll", "pitch", "yaw")}
        return {"ee_pose": {"func": "pose_command", "params": {"site": cfg.ee_site, **ranges}}}

    def link_terms(self) -> None:
        """`target_pos_b`, `target_quat_b` and `home_quat_b` are the ee_pose command's tensors."""
        target = self.required_command("ee_pose", "pose_command")
        self.target_pos_b, self.target_quat_b = target.pos_b, target.quat_b
        self.home_quat_b = target.home_quat_b

    def reset_envs(self, mask: torch.Tensor) -> None:
        self.reset_joints(mask, self.cfg.init_joint_noise)
        self.held.masked_fill_(mask, 0)
        # the first observation reads the end-effector pose: kinematics of the new joints
        # (on mjwarp a pass over every world, which only brings the others' up to date)
        self.sim.forward(mask)

    def set_target(self, pos_b: list[float], quat_b: list[float]) -> None:
        """Fix every env's target (a pose in the base frame); resets draw new ones."""
        self.fix_command([*pos_b, *quat_b], "ee_pose")

    def deploy_spec(self) -> dict:
        spec = super().deploy_spec()
        cfg, base = self.cfg, self.scene.robot.root_body
        spec["scene"] = {"robot": self.scene.robot.to_dict()}
        spec["reset"] = {"joint_noise": cfg.init_joint_noise}
        # the pose target (`target`) comes from the ee_pose command's facts; the success rule:
        # readings a robot computes that sim-to-sim must make: a site's pose in the base frame
        spec["sim_readings"] = {"ee_pose": {"site": self.model.site(self.ee).name, "frame_body": base}}
        spec["success"] = {"site": cfg.ee_site, "frame_body": base, "pos": cfg.success_pos,
                           "ori": cfg.success_ori, "hold_s": cfg.success_hold_s}
        return spec


# --- observation terms: f(env, **params) -> (N, d), each with how a robot supplies it -----------
_EE_POSE = ("the end-effector pose the arm's controller computes (forward kinematics; libfranka's "
            "O_T_EE), in its base frame: [x, y, z] m, then a quaternion wxyz")
_TARGET_POSE = "the target pose in the arm's base frame: [x, y, z] m, then a quaternion wxyz"


@observation(read={"reading": "ee_pose", "op": "pos_rot6d", "doc": _EE_POSE})
def ee_pose(env: ReachEnv, site: int | None = None) -> torch.Tensor:
    """`site`'s pose in the base frame: position (3) and orientation as two matrix columns (6)."""
    pos, quat = env.site_pose_b(env.ee if site is None else site)
    return torch.cat([pos, quat_to_rot6d(quat)], dim=1)


@observation(read={"reading": ["ee_pose", "target_pose"], "op": "pose_error",
                   "doc": {"ee_pose": _EE_POSE, "target_pose": _TARGET_POSE}})
def pose_error(env: ReachEnv, site: int | None = None) -> torch.Tensor:
    """From `site` to the target, in the base frame: the position difference (3) and the
    rotation vector (3) of target * site^-1."""
    pos, quat = env.site_pose_b(env.ee if site is None else site)
    turn = quat_mul(env.target_quat_b, quat_conjugate(quat))
    return torch.cat([env.target_pos_b - pos, quat_to_rotvec(turn)], dim=1)


@observation(read={"reading": "target_pose", "op": "pos_rot6d", "doc": _TARGET_POSE})
def target_pose(env: ReachEnv) -> torch.Tensor:
    """The target in the base frame: position (3) and orientation as two matrix columns (6)."""
    return torch.cat([env.target_pos_b, quat_to_rot6d(env.target_quat_b)], dim=1)


@observation  # privileged (its angle has no robot-side op): the critic's
def ee_error(env: ReachEnv, site: int | None = None) -> torch.Tensor:
    """Target minus `site` position in the base frame (3) and the orientation error angle (1)."""
    pos, quat = env.site_pose_b(env.ee if site is None else site)
    return torch.cat([env.target_pos_b - pos, quat_angle(quat, env.target_quat_b)[:, None]], dim=1)


OBS = {f.__name__: f for f in (ee_error, ee_pose, pose_error, joint_pos, joint_vel, target_pose, last_action)}


# --- reward terms: f(env, **params) -> (N,) ----------------------------------------------------
def ee_pos_error(env: ReachEnv, site: int | None = None) -> torch.Tensor:
    """Distance (m) from `site` to the target position."""
    pos, _ = env.site_pose_b(env.ee if site is None else site)
    return (pos - env.target_pos_b).norm(dim=1)


@param_rules(std=POSITIVE)
def ee_pos_tanh(env: ReachEnv, std: float, site: int | None = None) -> torch.Tensor:
    """1 at the target position, falling off over `std` metres."""
    return 1.0 - torch.tanh(ee_pos_error(env, site) / std)


def ee_ori_error(env: ReachEnv, site: int | None = None) -> torch.Tensor:
    """Angle (rad) from `site`'s orientation to the target's."""
    _, quat = env.site_pose_b(env.ee if site is None else site)
    return quat_angle(quat, env.target_quat_b)


@param_rules(std=POSITIVE)
def ee_ori_tanh(env: ReachEnv, std: float, site: int | None = None) -> torch.Tensor:
    """1 at the target orientation, falling off over `std` radians."""
    return 1.0 - torch.tanh(ee_ori_error(env, site) / std)


REWARDS = {
    "ee_pos_error": ee_pos_error,
    "ee_pos_tanh": ee_pos_tanh,
    "ee_ori_error": ee_ori_error,
    "ee_ori_tanh": ee_ori_tanh,
    "action_rate": action_rate,
    "joint_vel": joint_vel_l2,
}

# --- metrics at each episode's end: f(env) -> (N,) ----------------------------------------------
METRICS = {
    "success": lambda env: (env.held >= env.hold_steps).float(),
    "final_pos_error": lambda env: env.ee_errors()[0],
    "final_ori_error": lambda env: env.ee_errors()[1],
}

ReachEnv.OBS_TERMS = OBS
ReachEnv.REWARD_TERMS = REWARDS
ReachEnv.METRIC_TERMS = METRICS
