"""`lift`: pick up a cube with the Panda's gripper and carry it to a target position."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch

from simrl.env import EnvCfg, ObsTerm
from simrl.envs.manipulation.arm import ArmEnv
from simrl.envs.manipulation.reach import OBS, REWARDS
from simrl.errors import ConfigError
from simrl.managers.observation import observation
from simrl.managers.terms import POSITIVE, param_rules

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
        ObsTerm("gripper_to_object", scale=5.0, params={"body": CUBE}),
        ObsTerm("last_action"),
    ]


def _lift_rewards() -> dict[str, Any]:
    """Isaac Lab's lift recipe, as terms: reach the cube, lift it, carry it (coarse and fine)."""
    cube, grip = {"body": CUBE}, {"body": CUBE}  # the gripper: the task's ee_site
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
def gripper_to_object(env: LiftEnv, body: int, site: int | None = None) -> torch.Tensor:
    """`body`'s position minus `site`'s, base frame (3)."""
    return env.body_pos_b(body) - env.site_pose_b(env.ee if site is None else site)[0]


@param_rules(std=POSITIVE)
def gripper_object_tanh(env: LiftEnv, body: int, std: float, site: int | None = None) -> torch.Tensor:
    """1 with the gripper at the object, falling off over `std` metres."""
    return 1.0 - torch.tanh(gripper_to_object(env, body, site).norm(dim=1) / std)


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
