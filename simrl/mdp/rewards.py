"""Generic reward terms over a task's robot (weight them negative: they are costs)."""

from __future__ import annotations

from typing import Any

import torch


def action_rate(env: Any) -> torch.Tensor:
    """Squared change of the action since the last step, summed (N,)."""
    return (env.actions - env.last_actions).square().sum(dim=1)


def joint_vel_l2(env: Any) -> torch.Tensor:
    """Squared joint velocities, summed (N,)."""
    return env.joint_vel.square().sum(dim=1)


REWARDS = {f.__name__: f for f in (action_rate, joint_vel_l2)}
