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

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

import mujoco
import torch

from simrl.env import EnvBatch, EnvCfg, ObsTerm
from simrl.errors import ConfigError
from simrl.managers.observation import observation
from simrl.managers.terms import POSITIVE, param_rules
from simrl.math import (
    quat_angle,
    quat_conjugate,
    quat_mul,
    quat_rotate,
    quat_rotate_inv,
    quat_to_rot6d,
    quat_to_rotvec,
)
from simrl.scene import Scene, assemble

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


class ArmEnv(EnvBatch):
    """What every fixed-base arm task shares: the scene (the arm and the config's `objects`),
    joint state, site poses in the base frame, absolute or delta joint targets."""

    cfg: Any
    scene: Scene

    def build_model(self) -> mujoco.MjModel:
        self.scene = assemble(self.cfg.robot, objects=getattr(self.cfg, "objects", None))
        if not self.scene.fixed_base:
            r = self.scene.robot
            raise ConfigError(f"task '{self.task_name}' needs a fixed-base arm, but robot '{r.name}' has a "
                              f"free joint on root_body '{r.root_body}': use robot=franka_panda (or an "
                              "arm's yaml)")
        return self.scene.model

    def setup(self) -> None:
        m, dev, sc, cfg = self.model, self.device, self.scene, self.cfg
        f32 = dict(device=dev, dtype=torch.float32)
        if cfg.action_mode not in ("absolute", "delta"):
            raise ConfigError(f"action_mode must be 'absolute' or 'delta', got {cfg.action_mode!r}")
        for k in [f.name for f in dataclasses.fields(cfg) if f.name.startswith(("target_", "spawn_"))]:
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
        jnt = [m.joint(j).id for j in sc.robot.joints]  # reset noise stays inside the joint ranges
        lo, hi = torch.as_tensor(m.jnt_range[jnt], **f32).T
        limited_jnt = torch.as_tensor(m.jnt_limited[jnt], device=dev, dtype=torch.bool)
        self.joint_lo = torch.where(limited_jnt, lo, -torch.inf)
        self.joint_hi = torch.where(limited_jnt, hi, torch.inf)

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

    def body_pos_b(self, body: int) -> torch.Tensor:
        """Body `body`'s position (N, 3) in the base frame."""
        base_pos, base_quat = self.base_pose()
        return quat_rotate_inv(base_quat, self.sim.xpos[:, body].float() - base_pos)

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

    def reset_joints(self, mask: torch.Tensor, noise: float) -> None:
        """The arm at its default pose plus uniform joint noise, targets at the default pose."""
        rows = mask[:, None]
        q = self.default_joint_pos + self.uniform((self.num_envs, self.num_actions), -noise, noise)
        q = torch.maximum(torch.minimum(q, self.joint_hi), self.joint_lo)
        qpos = self.sim.qpos[:, self.joint_qpos]
        self.sim.qpos[:, self.joint_qpos] = torch.where(rows, q.to(self.sim.dtype), qpos)
        na, dt = self.num_actions, self.sim.dtype
        self.sim.ctrl[:, :na] = torch.where(rows, self.default_joint_pos.to(dt), self.sim.ctrl[:, :na])

    def task_actions(self) -> dict[str, dict[str, Any]]:
        """Every joint's target, absolute or delta (`action_mode`; delta: the runtime keeps and
        moves its targets)."""
        return {"joint_pos": {"func": "joint_position_action", "params": {"mode": self.cfg.action_mode}}}


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


def _site_id(m: mujoco.MjModel, name: str) -> int:
    sid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, name)
    if sid < 0:
        valid = [m.site(i).name for i in range(m.nsite)]
        raise ConfigError(f"ee_site '{name}' is not a site of the robot; valid: {valid} (add one on the "
                          "tool's body with the robot yaml's `sites:`)")
    return sid


# --- observation terms: f(env, **params) -> (N, d), each with how a robot supplies it -----------
_EE_POSE = ("the end-effector pose the arm's controller computes (forward kinematics; libfranka's "
            "O_T_EE), in its base frame: [x, y, z] m, then a quaternion wxyz")
_TARGET_POSE = "the target pose in the arm's base frame: [x, y, z] m, then a quaternion wxyz"


@observation(read={"reading": "ee_pose", "op": "pos_rot6d", "doc": _EE_POSE})
def ee_pose(env: ReachEnv, site: int) -> torch.Tensor:
    """`site`'s pose in the base frame: position (3) and orientation as two matrix columns (6)."""
    pos, quat = env.site_pose_b(site)
    return torch.cat([pos, quat_to_rot6d(quat)], dim=1)


@observation(read={"reading": ["ee_pose", "target_pose"], "op": "pose_error",
                   "doc": {"ee_pose": _EE_POSE, "target_pose": _TARGET_POSE}})
def pose_error(env: ReachEnv, site: int) -> torch.Tensor:
    """From `site` to the target, in the base frame: the position difference (3) and the
    rotation vector (3) of target * site^-1."""
    pos, quat = env.site_pose_b(site)
    turn = quat_mul(env.target_quat_b, quat_conjugate(quat))
    return torch.cat([env.target_pos_b - pos, quat_to_rotvec(turn)], dim=1)


@observation(read={"reading": "target_pose", "op": "pos_rot6d", "doc": _TARGET_POSE})
def target_pose(env: ReachEnv) -> torch.Tensor:
    """The target in the base frame: position (3) and orientation as two matrix columns (6)."""
    return torch.cat([env.target_pos_b, quat_to_rot6d(env.target_quat_b)], dim=1)


@observation  # privileged (its angle has no robot-side op): the critic's
def ee_error(env: ReachEnv, site: int) -> torch.Tensor:
    """Target minus `site` position in the base frame (3) and the orientation error angle (1)."""
    pos, quat = env.site_pose_b(site)
    return torch.cat([env.target_pos_b - pos, quat_angle(quat, env.target_quat_b)[:, None]], dim=1)


@observation(read={"reading": "joint_pos", "minus": "default_joint_pos",
                   "doc": "joint encoder angles (rad), in the policy's action order"})
def joint_pos(env: ArmEnv) -> torch.Tensor:
    return env.joint_pos - env.default_joint_pos


@observation(read={"reading": "joint_vel", "doc": "joint velocities (rad/s), in the policy's action order"})
def joint_vel(env: ArmEnv) -> torch.Tensor:
    return env.joint_vel


@observation(read={"reading": "last_action"})
def last_action(env: ArmEnv) -> torch.Tensor:
    return env.actions


OBS = {f.__name__: f for f in (ee_error, ee_pose, pose_error, joint_pos, joint_vel, target_pose, last_action)}


# --- reward terms: f(env, **params) -> (N,) ----------------------------------------------------
def ee_pos_error(env: ReachEnv, site: int) -> torch.Tensor:
    """Distance (m) from `site` to the target position."""
    pos, _ = env.site_pose_b(site)
    return (pos - env.target_pos_b).norm(dim=1)


@param_rules(std=POSITIVE)
def ee_pos_tanh(env: ReachEnv, site: int, std: float) -> torch.Tensor:
    """1 at the target position, falling off over `std` metres."""
    return 1.0 - torch.tanh(ee_pos_error(env, site) / std)


def ee_ori_error(env: ReachEnv, site: int) -> torch.Tensor:
    """Angle (rad) from `site`'s orientation to the target's."""
    _, quat = env.site_pose_b(site)
    return quat_angle(quat, env.target_quat_b)


@param_rules(std=POSITIVE)
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


# --- lift: pick up a cube and carry it to a target position --------------------------------------
CUBE = "cube"
GRIPPER = "gripper"  # Menagerie mjx_panda's site between the fingertips


def _lift_policy_obs() -> list[ObsTerm]:
    """Encoders, the cube's position (perception's estimate), where it must go, where the
    gripper is from it (forward kinematics), the last action."""
    return [
        ObsTerm("joint_pos", noise=0.005),
        ObsTerm("joint_vel", scale=0.2, noise=0.02),
        ObsTerm("object_pos", params={"body": CUBE}),
        ObsTerm("object_to_target", scale=2.0, params={"body": CUBE}),
        ObsTerm("gripper_to_object", scale=5.0, params={"site": GRIPPER, "body": CUBE}),
        ObsTerm("last_action"),
    ]


def _lift_rewards() -> dict[str, Any]:
    """Isaac Lab's lift recipe, as terms: reach the cube, lift it, carry it (coarse and fine)."""
    cube, grip = {"body": CUBE}, {"site": GRIPPER, "body": CUBE}
    return {
        "reaching_object": {"weight": 1.0, "func": "gripper_object_tanh", "params": {**grip, "std": 0.1}},
        "lifting_object": {"weight": 15.0, "func": "object_lifted", "params": cube},
        "object_goal": {"weight": 16.0, "func": "object_goal_tanh", "params": {**cube, "std": 0.3}},
        "object_goal_fine": {"weight": 5.0, "func": "object_goal_tanh", "params": {**cube, "std": 0.05}},
        "action_rate": -1e-4,
        "joint_vel": -1e-4,
    }


@dataclass
class LiftCfg(EnvCfg):
    task_name: ClassVar[str] = "lift"
    # fields added after runs were saved, with the values those runs were trained with
    since: ClassVar[dict[str, Any]] = {"gripper": None}
    robot: Any = "franka_panda_hand"  # an arm with a gripper among its joints
    # the gripper's joint: one binary action column (open where the action is > 0, else closed;
    # Isaac Lab's lift recipe), the arm's joints targets as in reach; None: the gripper's joint
    # takes a target like the arm's (default pose + scale x action)
    gripper: str | None = "finger_joint1"
    objects: dict = field(default_factory=lambda: {CUBE: {"size": [0.02, 0.02, 0.02], "mass": 0.05,
                                                          "pos": [0.5, 0.0, 0.0]}})
    keyframe: str | None = "home"
    decimation: int | None = None
    control_dt: float = 0.02
    episode_length_s: float = 5.0
    action_mode: str = "absolute"  # see ReachCfg
    action_scale: float | None = None  # None: the robot config's
    action_clip: float = 10.0
    observations: dict = field(default_factory=lambda: {
        "policy": _lift_policy_obs(),
        "critic": [ObsTerm(t.name, t.scale, params=t.params) for t in _lift_policy_obs()]})
    rewards: dict = field(default_factory=_lift_rewards)
    ee_site: str = GRIPPER
    object: str = CUBE  # the object to carry
    spawn_x: tuple[float, float] = (0.4, 0.6)  # the cube's start on the floor, base frame (m)
    spawn_y: tuple[float, float] = (-0.15, 0.15)
    target_x: tuple[float, float] = (0.4, 0.6)  # where it must go
    target_y: tuple[float, float] = (-0.2, 0.2)
    target_z: tuple[float, float] = (0.2, 0.4)
    init_joint_noise: float = 0.1  # rad (m on the finger), uniform +-
    lift_height: float = 0.04  # m above its rest height: lifted
    success_dist: float = 0.03  # m from the target at the episode's end


class LiftEnv(ArmEnv):
    task_name = "lift"
    cfg: LiftCfg

    def setup(self) -> None:
        super().setup()
        n, dev, cfg = self.num_envs, self.device, self.cfg
        if cfg.object not in self.scene.objects:
            raise ConfigError(f"object '{cfg.object}' is not in the scene; objects: "
                              f"{sorted(self.scene.objects)}")
        ids = self.scene.objects[cfg.object]
        self.obj_body, self.obj_qpos = ids.body, ids.qpos
        self.obj_rest_z = float(ids.rest_pos[2])
        self.grasped = torch.zeros(n, device=dev, dtype=torch.bool)  # lifted at some point
        self.dropped = torch.zeros(n, device=dev, dtype=torch.bool)  # back down after that

    def task_actions(self) -> dict[str, dict[str, Any]]:
        """The arm's joint targets (`joint_pos`) and, where `gripper` names a joint, the binary
        gripper on it (`gripper`)."""
        cfg = self.cfg
        if cfg.gripper is None:
            return super().task_actions()
        if cfg.gripper not in self.robot.joints:
            raise ConfigError(f"gripper '{cfg.gripper}' is not one of the robot's policy joints "
                              f"{list(self.robot.joints)}: name one, or gripper: null")
        arm = [re.escape(j) for j in self.robot.joints if j != cfg.gripper]
        return {"joint_pos": {"func": "joint_position_action",
                              "params": {"joints": arm, "mode": cfg.action_mode}},
                "gripper": {"func": "binary_gripper_action", "params": {"joint": re.escape(cfg.gripper)}}}

    def task_commands(self) -> dict[str, dict[str, Any]]:
        """Where to carry the object (`object_target`), drawn at each reset from the target_* fields."""
        cfg = self.cfg
        return {"object_target": {"func": "position_command", "params": {
            k: list(getattr(cfg, f"target_{k}")) for k in ("x", "y", "z")}}}

    def link_terms(self) -> None:
        """`target_pos_b` is the object_target command's tensor."""
        self.target_pos_b = self.required_command("object_target", "position_command").pos_b

    def object_height(self, body: int) -> torch.Tensor:
        """Height (N,) of `body` above its rest height."""
        return self.sim.xpos[:, body, 2].float() - self.obj_rest_z

    def update(self) -> None:
        h = self.object_height(self.obj_body)
        self.grasped |= h > self.cfg.lift_height
        self.dropped |= self.grasped & (h < 0.005)

    def reset_envs(self, mask: torch.Tensor) -> None:
        n, cfg, rows = self.num_envs, self.cfg, mask[:, None]
        self.reset_joints(mask, cfg.init_joint_noise)
        q = self.obj_qpos
        xy = torch.stack([self.uniform((n,), *cfg.spawn_x), self.uniform((n,), *cfg.spawn_y)], dim=1)
        self.sim.qpos[:, q : q + 2] = torch.where(rows, xy.to(self.sim.dtype), self.sim.qpos[:, q : q + 2])
        self.grasped.masked_fill_(mask, False)
        self.dropped.masked_fill_(mask, False)
        self.sim.forward(mask)  # the first observation reads the gripper's and the cube's poses

    def deploy_spec(self) -> dict:
        spec = super().deploy_spec()
        cfg, base = self.cfg, self.scene.robot.root_body
        spec["scene"] = {"robot": self.scene.robot.to_dict(), "objects": dict(cfg.objects)}
        spec["reset"] = {"joint_noise": cfg.init_joint_noise,
                         "objects": [{"body": cfg.object, "x": list(cfg.spawn_x), "y": list(cfg.spawn_y)}]}
        # what a robot's controller and its perception give, made by sim-to-sim from the state
        spec["sim_readings"] = {"ee_pose": {"site": cfg.ee_site, "frame_body": base},
                                "object_pos": {"body": cfg.object, "frame_body": base}}
        spec["success"] = {"kind": "object_at_target", "body": cfg.object, "frame_body": base,
                           "dist": cfg.success_dist, "lift_height": cfg.lift_height,
                           "rest_z": self.obj_rest_z}
        return spec

    def object_error(self) -> torch.Tensor:
        """Distance (N,) from the carried object to the target (m)."""
        return (self.body_pos_b(self.obj_body) - self.target_pos_b).norm(dim=1)


_POS = "position in the arm's base frame [x, y, z] (m)"


# the cube's position is perception's estimate; the target the operator's
@observation(read={"reading": "object_pos", "doc": f"the object's {_POS}: perception's estimate"})
def object_pos(env: LiftEnv, body: int) -> torch.Tensor:
    """`body`'s position in the base frame (3)."""
    return env.body_pos_b(body)


@observation(read={"reading": ["object_pos", "target_pos"], "op": "difference",
                   "doc": {"target_pos": f"where to carry the object: a {_POS}"}})
def object_to_target(env: LiftEnv, body: int) -> torch.Tensor:
    """Target minus `body`'s position, base frame (3)."""
    return env.target_pos_b - env.body_pos_b(body)


@observation(read={"reading": ["ee_pose", "object_pos"], "op": "difference",
                   "doc": {"ee_pose": "the gripper site's pose the arm's controller computes (forward "
                                      "kinematics), in its base frame: [x, y, z] m, quaternion wxyz"}})
def gripper_to_object(env: LiftEnv, site: int, body: int) -> torch.Tensor:
    """`body`'s position minus `site`'s, base frame (3)."""
    return env.body_pos_b(body) - env.site_pose_b(site)[0]


@param_rules(std=POSITIVE)
def gripper_object_tanh(env: LiftEnv, site: int, body: int, std: float) -> torch.Tensor:
    """1 with the gripper at the object, falling off over `std` metres."""
    return 1.0 - torch.tanh(gripper_to_object(env, site, body).norm(dim=1) / std)


def object_lifted(env: LiftEnv, body: int) -> torch.Tensor:
    """1 where `body` is higher than `lift_height` above its rest height."""
    return (env.object_height(body) > env.cfg.lift_height).float()


@param_rules(std=POSITIVE)
def object_goal_tanh(env: LiftEnv, body: int, std: float) -> torch.Tensor:
    """1 with the lifted object at the target, falling off over `std` metres; 0 unlifted."""
    dist = object_to_target(env, body).norm(dim=1)
    return object_lifted(env, body) * (1.0 - torch.tanh(dist / std))


LiftEnv.OBS_TERMS = {
    "joint_pos": OBS["joint_pos"], "joint_vel": OBS["joint_vel"], "last_action": OBS["last_action"],
    "object_pos": object_pos, "object_to_target": object_to_target, "gripper_to_object": gripper_to_object,
}
LiftEnv.REWARD_TERMS = {
    "gripper_object_tanh": gripper_object_tanh, "object_lifted": object_lifted,
    "object_goal_tanh": object_goal_tanh, "action_rate": REWARDS["action_rate"],
    "joint_vel": REWARDS["joint_vel"],
}
LiftEnv.METRIC_TERMS = {
    "success": lambda env: ((env.object_error() < env.cfg.success_dist) & ~env.dropped).float(),
    "final_object_error": lambda env: env.object_error(),
    "lifted": lambda env: env.grasped.float(),
}
