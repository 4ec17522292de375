"""What every fixed-base arm task shares: its config fields and entries (joint targets, the
joints' reset), and the end-effector's observation terms with the readings a robot supplies.

Terms read the scene through simrl.mdp.frames (a site's or body's pose in the base frame); a
`site` param of None is the task's end-effector (`ee_site`), so setting `ee_site` moves every
term, the target and the success metric together. Targets are commands (simrl.mdp.commands),
read by their entry's name: `ee_pose` (a pose) for reach, `object_target` (a position) for lift.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from simrl.env import EnvCfg
from simrl.managers.observation import observation
from simrl.math import quat_to_rot6d
from simrl.mdp.frames import ee_site, site_pose_b


@dataclass
class ArmCfg(EnvCfg):
    """A fixed-base arm's task: joint targets around the default pose, each episode from the
    default pose plus uniform joint noise."""

    ROBOT_BASE: ClassVar[str] = "fixed"

    robot: Any = "franka_panda"  # a configs/robot name (a fixed-base arm), a yaml path, or fields
    keyframe: str | None = "home"
    decimation: int | None = None  # None: control_dt / the robot's timestep
    control_dt: float = 0.02
    # absolute: joint targets = default pose + scale * action (the robot config's scale);
    # delta: joint targets move by scale * action each control step from where they are (a
    # policy that holds still outputs 0, wherever the arm is)
    action_mode: str = "absolute"
    action_scale: float | None = None  # rad per unit action (per step in delta mode); None: robot's
    action_clip: float = 10.0
    ee_site: str = "attachment_site"  # the end-effector site targets and metrics refer to
    init_joint_noise: float = 0.2  # rad, uniform +- on every joint at reset

    def spawn_events(self) -> dict[str, dict[str, Any]]:
        """The arm at its default pose plus joint noise (targets there too)."""
        return {"arm": {"func": "reset_joints_uniform", "mode": "spawn",
                        "params": {"noise": self.init_joint_noise}}}

    def own_entries(self) -> dict[str, dict[str, Any]]:
        """Every joint's target, absolute or delta; the spawn events, then forward kinematics
        (the first observation reads the end-effector's new pose)."""
        return {
            "actions": {"joint_pos": {"func": "joint_position_action", "params": {"mode": self.action_mode}}},
            "events": {**self.spawn_events(),
                       "kinematics": {"func": "forward_kinematics", "mode": "spawn"}},
        }


# --- observation terms, each with how a robot supplies it ---------------------------------------
EE_POSE_DOC = ("the end-effector pose the arm's controller computes (forward kinematics; libfranka's "
               "O_T_EE), in its base frame: [x, y, z] m, then a quaternion wxyz")


def ee_pose_read(params: dict[str, Any]) -> dict[str, Any]:
    """The reading `ee_pose` and how sim-to-sim makes it (the site's pose in the base frame)."""
    return {"reading": "ee_pose", "op": "pos_rot6d", "doc": EE_POSE_DOC,
            "sim": {"site": params.get("site"), "frame_body": None}}


@observation(read=ee_pose_read)
def ee_pose(env: Any, site: int | None = None) -> torch.Tensor:
    """`site`'s pose in the base frame: position (3) and orientation as two matrix columns (6)."""
    pos, quat = site_pose_b(env, ee_site(env, site))
    return torch.cat([pos, quat_to_rot6d(quat)], dim=1)
