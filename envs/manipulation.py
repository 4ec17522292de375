"""Manipulation with a fixed-base arm: `reach`, the end-effector to a sampled pose.

Any robot config with a fixed base serves (configs/robot/franka_panda.yaml: Menagerie's Franka
Emika Panda, as its MJCF ships). Actions are joint position targets around the default pose,
held by the assembled scene's position actuators; control at 50 Hz. Each episode starts near
the default pose (uniform joint noise) with a target pose sampled in a box in front of the
base, and an orientation turned from the default end-effector orientation; the target holds
for the episode. The policy observes its joints (encoders), the end-effector pose (forward
kinematics, as an arm's controller reports it), its last action and the target in the base
frame: nothing a real arm does not know.

Terms are functions `f(env, **params)`; the end-effector is a `site` param (resolved to its id
once), so the same terms serve any arm whose yaml names a site on its tool.

An episode succeeds where the end-effector has stayed within `success_pos` (m) and `success_ori`
(rad) of the target for the last `success_hold_s` seconds of it (metric `success`; also
`final_pos_error`, `final_ori_error`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import mujoco
import torch

from simrl.env import EnvBatch, EnvCfg, ObsTerm
from simrl.errors import ConfigError
from simrl.math import (
    quat_angle,
    quat_conjugate,
    quat_from_euler,
    quat_mul,
    quat_rotate,
    quat_rotate_inv,
    quat_to_rot6d,
    quat_to_rotvec,
)
from simrl.robot import Scene, assemble

EE = "attachment_site"  # the Panda's flange site (Menagerie's panda_nohand.xml)


def _policy_obs() -> list[ObsTerm]:
    """What the arm knows: encoders, the end-effector pose its controller computes from them
    (libfranka reports it as O_T_EE), the target, its last action."""
    return [
        ObsTerm("joint_pos", noise=0.005),
        ObsTerm("joint_vel", scale=0.2, noise=0.02),
        ObsTerm("pose_error", scale=[5.0, 5.0, 5.0, 1.0, 1.0, 1.0], params={"site": EE}),
        ObsTerm("last_action"),
    ]


def _critic_obs() -> list[ObsTerm]:
    """The policy's terms noise-free, plus the end-effector's error (forward kinematics the
    critic is spared from learning; the policy does not see it)."""
    return [ObsTerm(t.name, t.scale, params=t.params) for t in _policy_obs()] + [
        ObsTerm("ee_error", params={"site": EE})]


def _rewards() -> dict[str, Any]:
    """Distance penalties for the gradient far away, tanh kernels for precision close in."""
    site = {"site": EE}
    return {
        "ee_pos_error": {"weight": -0.2, "params": site},
        "ee_pos_near": {"weight": 0.5, "func": "ee_pos_tanh", "params": {**site, "std": 0.1}},
        "ee_pos_fine": {"weight": 1.0, "func": "ee_pos_tanh", "params": {**site, "std": 0.02}},
        "ee_ori_error": {"weight": -0.2, "params": site},
        "ee_ori_fine": {"weight": 1.0, "func": "ee_ori_tanh", "params": {**site, "std": 0.1}},
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


class ReachEnv(EnvBatch):
    task_name = "reach"
    cfg: ReachCfg
    scene: Scene

    def build_model(self) -> mujoco.MjModel:
        self.scene = assemble(self.cfg.robot)
        if not self.scene.fixed_base:
            r = self.scene.robot
            raise ConfigError(f"task 'reach' needs a fixed-base arm, but robot '{r.name}' has a free joint "
                              f"on root_body '{r.root_body}': use robot=franka_panda (or an arm's yaml)")
        return self.scene.model

    def setup(self) -> None:
        m, n, dev, sc, cfg = self.model, self.num_envs, self.device, self.scene, self.cfg
        f32 = dict(device=dev, dtype=torch.float32)
        if cfg.action_mode not in ("absolute", "delta"):
            raise ConfigError(f"action_mode must be 'absolute' or 'delta', got {cfg.action_mode!r}")
        for k in ("target_x", "target_y", "target_z", "target_roll", "target_pitch", "target_yaw"):
            lo, hi = getattr(cfg, k)
            if not lo <= hi:
                raise ConfigError(f"{k} must be (min, max) with min <= max, got {tuple(getattr(cfg, k))}")
        self.robot = sc.robot
        self.default_joint_pos = torch.as_tensor(sc.default_joint_pos, **f32)
        self.action_offset = self.default_joint_pos
        self.action_scale = float(sc.robot.action_scale if cfg.action_scale is None else cfg.action_scale)
        self.joint_qpos = torch.as_tensor(sc.joint_qpos, device=dev)
        self.joint_dof = torch.as_tensor(sc.joint_dof, device=dev)
        self.root_body = sc.root_body
        # every site's body and pose in it: a `site` term param indexes these (sites are fixed)
        self.site_body = [int(b) for b in m.site_bodyid]  # host ints: indexing reads no device
        self.site_local_pos = torch.as_tensor(m.site_pos, **f32)
        self.site_local_quat = torch.as_tensor(m.site_quat, **f32)
        self.ee = _site_id(m, cfg.ee_site)
        # the default end-effector orientation in the base frame (targets turn from it)
        data = mujoco.MjData(m)
        mujoco.mj_resetDataKeyframe(m, data, 0)
        mujoco.mj_kinematics(m, data)
        q_site, q_base = torch.zeros(4, dtype=torch.float64), torch.as_tensor(data.xquat[self.root_body])
        mujoco.mju_mat2Quat(q_site.numpy(), data.site_xmat[self.ee])
        self.home_quat_b = quat_mul(quat_conjugate(q_base), q_site).to(**f32)
        self.target_pos_b = torch.zeros(n, 3, **f32)
        self.target_quat_b = torch.zeros(n, 4, **f32)
        self.target_quat_b[:, 0] = 1.0
        self.held = torch.zeros(n, device=dev, dtype=torch.long)  # steps in a row within tolerance
        self.hold_steps = max(1, round(cfg.success_hold_s / self.dt))
        self.ctrl_lo, self.ctrl_hi = torch.as_tensor(m.actuator_ctrlrange, **f32).T
        limited = torch.as_tensor(m.actuator_ctrllimited, device=dev, dtype=torch.bool)
        self.ctrl_lo = torch.where(limited, self.ctrl_lo, -torch.inf)
        self.ctrl_hi = torch.where(limited, self.ctrl_hi, torch.inf)

    # --- state ----------------------------------------------------------------------------------
    @property
    def joint_pos(self) -> torch.Tensor:
        return self.sim.qpos[:, self.joint_qpos].float()

    @property
    def joint_vel(self) -> torch.Tensor:
        return self.sim.qvel[:, self.joint_dof].float()

    def base_pose(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The base's world position (N, 3) and orientation (N, 4)."""
        return self.sim.xpos[:, self.root_body].float(), self.sim.xquat[:, self.root_body].float()

    def site_pose_b(self, site: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Site `site`'s position (N, 3) and orientation (N, 4) in the base frame."""
        body = self.site_body[site]
        pos_w = self.sim.xpos[:, body].float()
        quat_w = self.sim.xquat[:, body].float()
        local = self.site_local_pos[site].expand_as(pos_w)
        pos_w = pos_w + quat_rotate(quat_w, local)
        quat_w = quat_mul(quat_w, self.site_local_quat[site].expand_as(quat_w))
        base_pos, base_quat = self.base_pose()
        return quat_rotate_inv(base_quat, pos_w - base_pos), quat_mul(quat_conjugate(base_quat), quat_w)

    def ee_errors(self, site: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Position (m) and orientation (rad) errors (N,) of `site` (default: the ee) to the target."""
        pos, quat = self.site_pose_b(self.ee if site is None else site)
        return (pos - self.target_pos_b).norm(dim=1), quat_angle(quat, self.target_quat_b)

    # --- hooks ----------------------------------------------------------------------------------
    def apply_actions(self, actions: torch.Tensor) -> None:
        if self.cfg.action_mode == "absolute":
            return super().apply_actions(actions)
        ctrl = self.sim.ctrl.float() + self.action_scale * actions
        self.sim.ctrl[:] = torch.maximum(torch.minimum(ctrl, self.ctrl_hi), self.ctrl_lo)

    def action_spec(self) -> dict:
        spec = super().action_spec()
        spec["mode"] = self.cfg.action_mode  # delta: the runtime keeps and moves its targets
        return spec

    def update(self) -> None:
        pos_err, ori_err = self.ee_errors()
        inside = (pos_err < self.cfg.success_pos) & (ori_err < self.cfg.success_ori)
        self.held.add_(1).mul_(inside)  # in place: evaluation's inference mode must not swap it

    def reset_envs(self, mask: torch.Tensor) -> None:
        n, cfg, rows = self.num_envs, self.cfg, mask[:, None]
        s = cfg.init_joint_noise
        q = self.default_joint_pos + self.uniform((n, self.num_actions), -s, s)
        qpos = self.sim.qpos[:, self.joint_qpos]
        self.sim.qpos[:, self.joint_qpos] = torch.where(rows, q.to(self.sim.dtype), qpos)
        self.sim.ctrl[:] = torch.where(rows, self.default_joint_pos.to(self.sim.dtype), self.sim.ctrl)
        pos = torch.stack([self.uniform((n,), *cfg.target_x), self.uniform((n,), *cfg.target_y),
                           self.uniform((n,), *cfg.target_z)], dim=1)
        turn = quat_from_euler(self.uniform((n,), *cfg.target_roll), self.uniform((n,), *cfg.target_pitch),
                               self.uniform((n,), *cfg.target_yaw))
        quat = quat_mul(turn, self.home_quat_b.expand(n, 4))
        self.target_pos_b[:] = torch.where(rows, pos, self.target_pos_b)
        self.target_quat_b[:] = torch.where(rows, quat, self.target_quat_b)
        self.held.masked_fill_(mask, 0)
        # the first observation reads the end-effector pose: kinematics of the new joints
        # (on mjwarp a pass over every world, which only brings the others' up to date)
        self.sim.forward(mask)

    def set_target(self, pos_b: list[float], quat_b: list[float]) -> None:
        """Fix every env's target (a pose in the base frame); resets draw new ones."""
        self.target_pos_b[:] = torch.as_tensor(pos_b, device=self.device, dtype=torch.float32)
        self.target_quat_b[:] = torch.as_tensor(quat_b, device=self.device, dtype=torch.float32)

    def deploy_spec(self) -> dict:
        spec = super().deploy_spec()
        cfg, base = self.cfg, self.scene.robot.root_body
        spec["scene"] = {"robot": self.scene.robot.to_dict()}
        spec["reset"] = {"joint_noise": cfg.init_joint_noise}
        # a pose target per episode, given to the policy as the reading `target_pose` (on a
        # robot: from the operator or perception), and the success rule of the metrics
        spec["target"] = {
            "reading": "target_pose", "frame_body": base,
            **{k: list(getattr(cfg, f"target_{k}")) for k in ("x", "y", "z", "roll", "pitch", "yaw")},
            "about_quat": self.home_quat_b.tolist(),  # roll, pitch, yaw turn this orientation
        }
        # readings a robot computes that sim-to-sim must make: a site's pose in the base frame
        spec["sim_readings"] = {"ee_pose": {"site": self.model.site(self.ee).name, "frame_body": base}}
        spec["success"] = {"site": cfg.ee_site, "frame_body": base, "pos": cfg.success_pos,
                           "ori": cfg.success_ori, "hold_s": cfg.success_hold_s}
        return spec


def _site_id(m: mujoco.MjModel, name: str) -> int:
    sid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, name)
    if sid < 0:
        valid = [m.site(i).name for i in range(m.nsite)]
        raise ConfigError(f"ee_site '{name}' is not a site of the robot; valid: {valid} (add one on the "
                          "tool's body with the robot yaml's `sites:`)")
    return sid


# --- observation terms: f(env, **params) -> (N, d) ---------------------------------------------
def ee_pose(env: ReachEnv, site: int) -> torch.Tensor:
    """`site`'s pose in the base frame: position (3) and orientation as two matrix columns (6)."""
    pos, quat = env.site_pose_b(site)
    return torch.cat([pos, quat_to_rot6d(quat)], dim=1)


def pose_error(env: ReachEnv, site: int) -> torch.Tensor:
    """From `site` to the target, in the base frame: the position difference (3) and the
    rotation vector (3) of target * site^-1."""
    pos, quat = env.site_pose_b(site)
    turn = quat_mul(env.target_quat_b, quat_conjugate(quat))
    return torch.cat([env.target_pos_b - pos, quat_to_rotvec(turn)], dim=1)


def target_pose(env: ReachEnv) -> torch.Tensor:
    """The target in the base frame: position (3) and orientation as two matrix columns (6)."""
    return torch.cat([env.target_pos_b, quat_to_rot6d(env.target_quat_b)], dim=1)


def ee_error(env: ReachEnv, site: int) -> torch.Tensor:
    """Target minus `site` position in the base frame (3) and the orientation error angle (1)."""
    pos, quat = env.site_pose_b(site)
    return torch.cat([env.target_pos_b - pos, quat_angle(quat, env.target_quat_b)[:, None]], dim=1)


OBS = {
    "ee_error": ee_error,
    "ee_pose": ee_pose,
    "pose_error": pose_error,
    "joint_pos": lambda env: env.joint_pos - env.default_joint_pos,
    "joint_vel": lambda env: env.joint_vel,
    "target_pose": target_pose,
    "last_action": lambda env: env.actions,
}


# --- reward terms: f(env, **params) -> (N,) ----------------------------------------------------
def ee_pos_error(env: ReachEnv, site: int) -> torch.Tensor:
    """Distance (m) from `site` to the target position."""
    pos, _ = env.site_pose_b(site)
    return (pos - env.target_pos_b).norm(dim=1)


def ee_pos_tanh(env: ReachEnv, site: int, std: float) -> torch.Tensor:
    """1 at the target position, falling off over `std` metres."""
    return 1.0 - torch.tanh(ee_pos_error(env, site) / std)


def ee_ori_error(env: ReachEnv, site: int) -> torch.Tensor:
    """Angle (rad) from `site`'s orientation to the target's."""
    _, quat = env.site_pose_b(site)
    return quat_angle(quat, env.target_quat_b)


def ee_ori_tanh(env: ReachEnv, site: int, std: float) -> torch.Tensor:
    """1 at the target orientation, falling off over `std` radians."""
    return 1.0 - torch.tanh(ee_ori_error(env, site) / std)


REWARDS = {
    "ee_pos_error": ee_pos_error,
    "ee_pos_tanh": ee_pos_tanh,
    "ee_ori_error": ee_ori_error,
    "ee_ori_tanh": ee_ori_tanh,
    "action_rate": lambda env: (env.actions - env.last_actions).square().sum(dim=1),
    "joint_vel": lambda env: env.joint_vel.square().sum(dim=1),
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
ReachEnv.OBS_READS = {  # how a robot supplies each policy term (export writes it into policy.json)
    "joint_pos": {"reading": "joint_pos", "minus": "default_joint_pos",
                  "doc": "joint encoder angles (rad), in the policy's action order"},
    "joint_vel": {"reading": "joint_vel", "doc": "joint velocities (rad/s), in the policy's action order"},
    "ee_pose": {"reading": "ee_pose", "op": "pos_rot6d",
                "doc": "the end-effector pose the arm's controller computes (forward kinematics; "
                       "libfranka's O_T_EE), in its base frame: [x, y, z] m, then a quaternion wxyz"},
    "pose_error": {"reading": ["ee_pose", "target_pose"], "op": "pose_error", "doc": {
        "ee_pose": "the end-effector pose the arm's controller computes (forward kinematics; "
                   "libfranka's O_T_EE), in its base frame: [x, y, z] m, then a quaternion wxyz",
        "target_pose": "the target pose in the arm's base frame: [x, y, z] m, then a quaternion wxyz"}},
    "target_pose": {"reading": "target_pose", "op": "pos_rot6d",
                    "doc": "the target pose in the arm's base frame: [x, y, z] m, then a quaternion wxyz"},
    "last_action": {"reading": "last_action"},
}
