"""`lift`: pick up a cube with the Panda's gripper and carry it to a target position.

Isaac Lab's lift recipe as configuration: a fixed-base arm with a gripper (`robot:
franka_panda_hand`), a free cube on the floor (`objects`), a target position (the command
`object_target`) drawn in the air in front of the arm. The policy reads its joints, the cube's
position (perception's estimate: the reading `object_pos`), where the cube must go and where
the gripper is from it. An episode succeeds where the cube ends within `success_dist` of the
target, never dropped after it was lifted (metric `success`; also `final_object_error`,
`lifted`).
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch

from simrl.env import ObsTerm
from simrl.envs.manipulation.arm import EE_POSE_DOC, ArmCfg
from simrl.errors import ConfigError
from simrl.managers.metric import metric
from simrl.managers.observation import observation
from simrl.managers.terms import POSITIVE, param_rules
from simrl.mdp.frames import body_pos_b, ee_site, site_pose_b

CUBE = "cube"
GRIPPER = "gripper"  # Menagerie mjx_panda's site between the fingertips
TARGET = "object_target"  # the command entry the terms read


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
        "joint_vel": {"weight": -1e-4, "func": "joint_vel_l2"},
    }


# --- the object's state ---------------------------------------------------------------------------
_REST: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # env -> {body: rest height}


def object_height(env: Any, body: int) -> torch.Tensor:
    """Height (N,) of the object `body` above where it rests in the scene's keyframe."""
    rest = _REST.setdefault(env, {})
    if body not in rest:
        found = [o.rest_pos[2] for o in env.scene.objects.values() if o.body == body]
        if not found:
            raise ConfigError(f"body '{env.model.body(body).name}' is not an object of the scene; objects: "
                              f"{sorted(env.scene.objects)}")
        rest[body] = float(found[0])
    return env.sim.xpos[:, body, 2].float() - rest[body]


def target_pos_b(env: Any) -> torch.Tensor:
    """Where to carry the object (N, 3), base frame: the position command."""
    return env.required_command(TARGET, "position_command").pos_b


def object_error(env: Any) -> torch.Tensor:
    """Distance (N,) from the carried object (`cfg.object`) to the target (m)."""
    body = env.model.body(env.cfg.object).id
    return (body_pos_b(env, body) - target_pos_b(env)).norm(dim=1)


# --- observation terms: f(env, **params) -> (N, d), each with how a robot supplies it ----------
_POS = "position in the arm's base frame [x, y, z] (m)"


def _object_sim(params: dict[str, Any]) -> dict[str, Any]:
    return {"body": params["body"], "frame_body": None}


@observation(read=lambda params: {"reading": "object_pos", "sim": _object_sim(params),
                                  "doc": f"the object's {_POS}: perception's estimate"})
def object_pos(env: Any, body: int) -> torch.Tensor:
    """`body`'s position in the base frame (3)."""
    return body_pos_b(env, body)


@observation(read=lambda params: {"reading": ["object_pos", "target_pos"], "op": "difference",
                                  "doc": {"target_pos": f"where to carry the object: a {_POS}"},
                                  "sim": {"object_pos": _object_sim(params)}})
def object_to_target(env: Any, body: int) -> torch.Tensor:
    """Target minus `body`'s position, base frame (3)."""
    return target_pos_b(env) - body_pos_b(env, body)


@observation(read=lambda params: {"reading": ["ee_pose", "object_pos"], "op": "difference",
                                  "doc": {"ee_pose": EE_POSE_DOC},
                                  "sim": {"ee_pose": {"site": params.get("site"), "frame_body": None},
                                          "object_pos": _object_sim(params)}})
def gripper_to_object(env: Any, body: int, site: int | None = None) -> torch.Tensor:
    """`body`'s position minus `site`'s (None: the ee_site), base frame (3)."""
    return body_pos_b(env, body) - site_pose_b(env, ee_site(env, site))[0]


# --- reward terms: f(env, **params) -> (N,) ----------------------------------------------------
@param_rules(std=POSITIVE)
def gripper_object_tanh(env: Any, body: int, std: float, site: int | None = None) -> torch.Tensor:
    """1 with the gripper at the object, falling off over `std` metres."""
    return 1.0 - torch.tanh(gripper_to_object(env, body, site).norm(dim=1) / std)


def object_lifted(env: Any, body: int) -> torch.Tensor:
    """1 where `body` is higher than `lift_height` above its rest height."""
    return (object_height(env, body) > env.cfg.lift_height).float()


@param_rules(std=POSITIVE)
def object_goal_tanh(env: Any, body: int, std: float) -> torch.Tensor:
    """1 with the lifted object at the target, falling off over `std` metres; 0 unlifted."""
    dist = object_to_target(env, body).norm(dim=1)
    return object_lifted(env, body) * (1.0 - torch.tanh(dist / std))


# --- metrics at each episode's end -------------------------------------------------------------
class Lifted:
    """1 where the object (`cfg.object`) was lifted `lift_height` above its rest at some point."""

    def __init__(self, env: Any):
        self.body = env.model.body(env.cfg.object).id
        self.grasped = torch.zeros(env.num_envs, device=env.device, dtype=torch.bool)

    def update(self, env: Any) -> None:
        self.grasped |= object_height(env, self.body) > env.cfg.lift_height

    def reset(self, env: Any, mask: torch.Tensor) -> None:
        self.grasped.masked_fill_(mask, False)

    def __call__(self, env: Any) -> torch.Tensor:
        return self.grasped.float()


def _carried_rule(env: Any) -> dict[str, Any]:
    cfg = env.cfg
    rest = float(env.scene.objects[cfg.object].rest_pos[2])
    return {"kind": "object_at_target", "body": cfg.object, "frame_body": env.scene.robot.root_body,
            "dist": cfg.success_dist, "lift_height": cfg.lift_height, "rest_z": rest}


@metric(success=_carried_rule)
class Carried(Lifted):
    """1 where the object ends within `success_dist` of the target and was not dropped (back
    on the floor) after it was lifted."""

    def __init__(self, env: Any):
        super().__init__(env)
        self.dropped = torch.zeros_like(self.grasped)

    def update(self, env: Any) -> None:
        super().update(env)
        self.dropped |= self.grasped & (object_height(env, self.body) < 0.005)

    def reset(self, env: Any, mask: torch.Tensor) -> None:
        super().reset(env, mask)
        self.dropped.masked_fill_(mask, False)

    def __call__(self, env: Any) -> torch.Tensor:
        return ((object_error(env) < env.cfg.success_dist) & ~self.dropped).float()


@dataclass
class LiftCfg(ArmCfg):
    task_name: ClassVar[str] = "lift"
    TERMS: ClassVar[dict[str, dict[str, Any]]] = {
        "observations": {f.__name__: f for f in (object_pos, object_to_target, gripper_to_object)},
        "rewards": {f.__name__: f for f in (gripper_object_tanh, object_lifted, object_goal_tanh)},
        "metrics": {"success": Carried, "final_object_error": object_error, "lifted": Lifted},
    }
    robot: Any = "franka_panda_hand"  # an arm with a gripper among its joints
    # the gripper's joint: one binary action column (open where the action is > 0, else closed;
    # Isaac Lab's lift recipe), the arm's joints targets as in reach; None: the gripper's joint
    # takes a target like the arm's (default pose + scale x action)
    gripper: str | None = "finger_joint1"
    objects: dict = field(default_factory=lambda: {CUBE: {"size": [0.02, 0.02, 0.02], "mass": 0.05,
                                                          "pos": [0.5, 0.0, 0.0]}})
    episode_length_s: float = 5.0
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

    def spawn_events(self) -> dict[str, dict[str, Any]]:
        """The arm's, then the object on the floor in its spawn box."""
        if self.object not in (self.objects or {}):
            raise ConfigError(f"object '{self.object}' is not in the scene; objects: "
                              f"{sorted(self.objects or {})}")
        return {**super().spawn_events(), "place_object": {"func": "reset_object_pose", "mode": "spawn",
                "params": {"body": self.object, "x": list(self.spawn_x), "y": list(self.spawn_y)}}}

    def own_entries(self) -> dict[str, dict[str, Any]]:
        """The arm's entries; the arm's joint targets and, where `gripper` names a joint, the
        binary gripper on it (`gripper`); where to carry the object (`object_target`), drawn at
        each reset from the target_* fields."""
        out = super().own_entries()
        if self.gripper is not None:
            from simrl.scene import load_robot

            joints = load_robot(self.robot).joints
            if self.gripper not in joints:
                raise ConfigError(f"gripper '{self.gripper}' is not one of the robot's policy joints "
                                  f"{list(joints)}: name one, or gripper: null")
            arm = [re.escape(j) for j in joints if j != self.gripper]
            mode = self.action_mode
            out["actions"] = {
                "joint_pos": {"func": "joint_position_action", "params": {"joints": arm, "mode": mode}},
                "gripper": {"func": "binary_gripper_action", "params": {"joint": re.escape(self.gripper)}}}
        out["commands"] = {TARGET: {"func": "position_command", "params": {
            k: list(getattr(self, f"target_{k}")) for k in ("x", "y", "z")}}}
        return out
