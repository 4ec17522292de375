"""The episode log: each ended episode's reward sums, length and ending, accumulated on the
device every step and read once per iteration (one host sync)."""

from __future__ import annotations

from typing import Any

import torch


def accumulate(env: Any, done: torch.Tensor, unstable: torch.Tensor) -> None:
    """Add the finished episodes' sums to the device-side log (read by `read`)."""
    per_env = torch.stack([done, env.terminated_buf, unstable], dim=1).to(torch.float32)
    length_s = env.episode_length_buf.to(torch.float32)[:, None] * env.dt
    sums = env.reward_manager.sums
    cols = torch.cat([per_env[:, :1], length_s, per_env[:, 1:], sums], dim=1)
    env.termination_manager.count_ended(done)
    env._log_acc += (cols * per_env[:, :1]).sum(dim=0)
    sums.mul_(~done[:, None])


def read(env: Any) -> dict[str, float]:
    """Means over the episodes that ended since the last call, and the count of unstable
    worlds reset; then clears. One host sync: call it once per iteration, not per step.

    Keys: `Episode_Reward/<term>` (sum over the episode / episode_length_s), `Episode/
    length_s`, `Episode/terminated` (share), `Episode_Termination/<term>` (share of the ended
    episodes in which that term fired), `sim/unstable_resets` (a count). Empty where no
    episode ended and no world was unstable. Also raises if the sim dropped contacts.
    """
    env.sim.raise_on_overflow()
    ended = env.termination_manager.ended
    count, length, term, unstable, *rest = torch.cat([env._log_acc, ended]).tolist()
    names = env.reward_manager.names
    rewards, ends = rest[:len(names)], rest[len(names):]
    env._log_acc.zero_()
    ended.zero_()
    env._unstable_total += int(unstable)
    log: dict[str, float] = {}
    if count:
        for name, value in zip(names, rewards, strict=True):
            log[f"Episode_Reward/{name}"] = value / count / env.cfg.episode_length_s
        for name, value in zip(env.termination_manager.names, ends, strict=True):
            log[f"Episode_Termination/{name}"] = value / count
        log["Episode/length_s"] = length / count
        log["Episode/terminated"] = term / count
    if count or unstable:
        log["sim/unstable_resets"] = unstable
    return log
