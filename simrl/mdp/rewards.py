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


def terminated(env: Any) -> torch.Tensor:
    """1 where the episode ends this step in a terminal state (a fall, a forbidden contact), 0
    elsewhere and at a time-out (N,). Weighted negative it makes a fall cost weight x dt, as
    peers' termination penalties do, rather than only the rewards it forgoes (with
    `only_positive_rewards` the clip at 0 can absorb it)."""
    return env.terminated_buf.float()


REWARDS = {f.__name__: f for f in (action_rate, joint_vel_l2, terminated)}
