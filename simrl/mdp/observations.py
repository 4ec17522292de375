"""Generic observation terms over a task's robot: its joints around the default pose, their
velocities and the last action, each with how a robot supplies it and its mirror (a task whose
robot has none refuses symmetry through `env.action_mirror()`). A task reads them from its
`joint_pos`, `joint_vel`, `default_joint_pos` and `actions`."""

from __future__ import annotations

from typing import Any

import torch

from simrl.managers.observation import observation


@observation(read={"reading": "joint_pos", "minus": "default_joint_pos",
                   "doc": "joint encoder angles (rad), in the policy's action order"},
             mirror=lambda env: env.action_mirror())  # joint order and signs, as the actions
def joint_pos(env: Any) -> torch.Tensor:
    """The policy joints' angles minus the default pose (N, joints)."""
    return env.joint_pos - env.default_joint_pos


@observation(read={"reading": "joint_vel", "doc": "joint velocities (rad/s), in the policy's action order"},
             mirror=lambda env: env.action_mirror())
def joint_vel(env: Any) -> torch.Tensor:
    """The policy joints' velocities (N, joints)."""
    return env.joint_vel


@observation(read={"reading": "last_action"}, mirror=lambda env: env.action_mirror())
def last_action(env: Any) -> torch.Tensor:
    """The action the policy took last (N, actions), as the robot-side runtime remembers it."""
    return env.actions


OBSERVATIONS = {f.__name__: f for f in (joint_pos, joint_vel, last_action)}
