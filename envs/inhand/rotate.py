"""`inhand_rotate`: turn a cube about the vertical axis in a palm-up LEAP hand, without
dropping it (MuJoCo Playground's LeapCubeRotateZAxis, as simrl configuration).

The scene holds two entities: the hand (`robot: leap_hand`, 16 position-servoed joints on a
palm bolted to the world) and a free cube (`objects`). The policy reads its joint encoders,
their velocities, the cube's pose in the palm's frame (the stand-in for a perception system:
the reading `cube_pose`, declared in policy.json) and its last action; the critic also reads the
cube's velocities. Reward: the cube's angular velocity about world z (capped), less its linear
speed, the hand's drift from its cupped pose, action changes and a drop; a cube that falls
below the palm ends the episode. Evaluation and sim-to-sim report `turn_rate`, the cube's mean
angular velocity about z (rad/s), by the same declaration.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import mujoco
import numpy as np
import torch

from simrl.env import EnvCfg, ObsTerm
from simrl.managers.metric import metric
from simrl.managers.terms import POSITIVE, param_rules
from simrl.mdp.objects import object_ang_vel_w, object_below, object_lin_vel_w

CUBE = "cube"


def turn_rate_mj(m: mujoco.MjModel, d: mujoco.MjData) -> float:
    """The cube's angular velocity about world z (rad/s), from MuJoCo C's state."""
    body = m.body(CUBE)
    jnt = body.jntadr[0]
    q, v = m.jnt_qposadr[jnt], m.jnt_dofadr[jnt]
    world = np.zeros(3)
    mujoco.mju_rotVecQuat(world, d.qvel[v + 3 : v + 6], d.qpos[q + 3 : q + 7])  # body -> world
    return float(world[2])


@metric(sim=turn_rate_mj)
def turn_rate(env: Any) -> torch.Tensor:
    """The cube's angular velocity about world z (N,), rad/s: evaluation's mean over an episode."""
    return object_ang_vel_w(env, env.model.body(CUBE).id)[:, 2]


@param_rules(cap=POSITIVE)
def cube_turn(env: Any, body: int, cap: float = 2.0) -> torch.Tensor:
    """The object's angular velocity about world z, capped at `cap` rad/s (N,): a spin faster
    than the cap earns nothing more, so tossing the cube does not pay."""
    return object_ang_vel_w(env, body)[:, 2].clamp(max=cap)


def cube_speed(env: Any, body: int) -> torch.Tensor:
    """The object's linear speed (N,), m/s: a cost (turn it in place)."""
    return object_lin_vel_w(env, body).norm(dim=1)


def hand_pose(env: Any) -> torch.Tensor:
    """Squared distance of the joints from the cupped default pose (N,): a cost."""
    return (env.joint_pos - env.default_joint_pos).square().sum(dim=1)


def dropped(env: Any, body: int, min_height: float | None = None) -> torch.Tensor:
    """1 where the object fell below `min_height` (None: the task's `drop_height`, where the
    episode ends) this step: a cost, paid once per drop."""
    return object_below(env, body, env.cfg.drop_height if min_height is None else min_height).float()


def _policy_obs() -> list[ObsTerm]:
    """Encoders, joint velocities, the cube's pose in the palm's frame, the last action."""
    return [
        ObsTerm("joint_pos", noise=0.01),
        ObsTerm("joint_vel", scale=0.1, noise=0.05),
        ObsTerm("cube_pose", func="object_pose", scale=[10.0, 10.0, 10.0, 1.0, 1.0, 1.0, 1.0],
                noise=0.005, params={"body": CUBE}),
        ObsTerm("last_action"),
    ]


def _critic_obs() -> list[ObsTerm]:
    """The policy's, exact, and the cube's velocities."""
    return [
        *(ObsTerm(t.name, t.scale, func=t.func, params=t.params) for t in _policy_obs()),
        ObsTerm("cube_ang_vel", func="object_ang_vel_w", scale=0.2, params={"body": CUBE}),
        ObsTerm("cube_lin_vel", func="object_lin_vel_w", scale=2.0, params={"body": CUBE}),
    ]


def _rewards() -> dict[str, Any]:
    """The turn, and a drop that costs what 5 s of turning at 1 rad/s earns (weights are per
    second: each step pays weight x value x control_dt); light costs on tossing the cube, leaving
    the cup and jerky fingers, so that they do not drown the turn while it is being found."""
    cube = {"body": CUBE}
    return {
        "cube_turn": {"weight": 1.0, "params": {**cube, "cap": 2.0}},
        "cube_speed": {"weight": -0.5, "params": cube},
        "hand_pose": -0.05,
        "action_rate": -0.01,
        "dropped": {"weight": -100.0, "params": cube},
    }


@dataclass
class InhandRotateCfg(EnvCfg):
    task_name: ClassVar[str] = "inhand_rotate"
    TERMS: ClassVar[dict[str, dict[str, Any]]] = {
        "rewards": {f.__name__: f for f in (cube_turn, cube_speed, hand_pose, dropped)},
        "tracking": {"turn_rate": turn_rate},
    }
    # the cupped hand and a cube in it: sized from its first state (48 contacts, 64 rows per
    # world) MuJoCo Warp drops rows on the first steps and resets the world as unstable
    MJWARP_BUFFERS: ClassVar[dict[str, int]] = {"nconmax": 64, "njmax": 320}

    robot: Any = "leap_hand"  # a fixed-base hand (configs/robot)
    objects: dict = field(default_factory=lambda: {CUBE: {
        # friction 0.3, as Playground's cube: a contact takes the larger of its two geoms'
        # (the hand's are 0.2, its tips 0.5), and at 1.0 the cube sticks to the palm (a
        # 0.02 N m twist turns it at 0.08 rad/s, against 1.1 rad/s for 0.01 N m at 0.3)
        "size": [0.0325, 0.0325, 0.0325], "mass": 0.1, "friction": [0.3, 0.005, 0.0001],
        "pos": [-0.02, 0.035, 0.135], "rgba": [0.9, 0.55, 0.1, 1.0]}})
    keyframe: str | None = "home"
    decimation: int | None = None
    control_dt: float = 0.05  # 20 Hz, as Playground's LEAP tasks
    episode_length_s: float = 20.0
    action_scale: float | None = None  # None: the robot config's
    action_clip: float = 5.0
    observations: dict = field(default_factory=lambda: {"policy": _policy_obs(), "critic": _critic_obs()})
    rewards: dict = field(default_factory=_rewards)
    # where each episode puts the cube (world, m: above the cupped palm) and the hand's spread
    spawn_x: tuple[float, float] = (-0.03, -0.01)
    spawn_y: tuple[float, float] = (0.025, 0.045)
    spawn_z: tuple[float, float] = (0.17, 0.175)
    init_joint_noise: float = 0.05  # rad, uniform +-
    drop_height: float = 0.12  # m: a cube centre below this has fallen off the hand

    def own_entries(self) -> dict[str, dict[str, Any]]:
        """Each episode: the hand cupped with a little noise, the cube above the palm at a random
        yaw; a cube below `drop_height` ends it."""
        cube = {"body": CUBE}
        return {
            "events": {
                "hand": {"func": "reset_joints_uniform", "mode": "spawn",
                         "params": {"noise": self.init_joint_noise}},
                "place_cube": {"func": "reset_object_pose", "mode": "spawn", "params": {
                    **cube, "x": list(self.spawn_x), "y": list(self.spawn_y), "z": list(self.spawn_z),
                    "yaw": [-math.pi, math.pi]}}},
            "terminations": {"cube_dropped": {"func": "object_below",
                                              "params": {**cube, "min_height": self.drop_height}}},
        }
