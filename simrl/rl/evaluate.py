"""Evaluate a policy: return, share of falls, and the task's own metrics, which it declares:
TRACKING_TERMS (per-step errors averaged over each episode once it settles: a velocity task's
lin-vel and yaw-rate errors, on fixed commands) and METRIC_TERMS (read at each episode's end: a
reach task's success, a terrain run's crossing). Nothing here knows a task."""

from __future__ import annotations

from collections.abc import Callable

import torch
from tqdm.auto import tqdm

from simrl.env import EnvBatch


@torch.inference_mode()
def evaluate(
    env: EnvBatch,
    policy: Callable[[dict[str, torch.Tensor]], torch.Tensor],
    command: tuple[float, ...] | None = None,
    settle_s: float = 1.0,
    progress: bool = False,
) -> dict[str, float]:
    """Run one full episode in every env (`num_envs` episodes) and summarize it.

    `command`: pinned with `env.fix_command` (tasks with one command: a velocity) for the whole run.
    A fall is an episode that ended by termination before its time limit. Each of the task's
    TRACKING_TERMS is averaged over each episode's steps after the first `settle_s` seconds,
    then over the episodes that lasted that long (NaN where none did); each of its METRIC_TERMS
    is read at each episode's end and averaged. `mean_steps`: the episodes' mean length in
    control steps (sim-to-sim reports the same).
    """
    env.reset()
    recording, env.record_metrics = env.record_metrics, True
    try:
        return _evaluate(env, policy, command, settle_s, progress)
    finally:
        env.record_metrics = recording


def _evaluate(env, policy, command, settle_s, progress) -> dict[str, float]:
    n, dev = env.num_envs, env.device
    settle = int(settle_s / env.dt)
    if command is not None:
        env.fix_command(command)
    first = torch.ones(n, device=dev, dtype=torch.bool)  # still in its first episode
    ret = torch.zeros(n, device=dev)
    fell = torch.zeros(n, device=dev, dtype=torch.bool)
    metrics = {k: torch.zeros(n, device=dev) for k in env.METRIC_TERMS}
    tracked = {k: torch.zeros(n, device=dev) for k in env.TRACKING_TERMS}
    counted = torch.zeros(n, device=dev)
    steps = torch.zeros(n, device=dev)  # control steps of each env's first episode
    obs = env.compute_observations()
    for t in tqdm(range(env.max_episode_length), disable=not progress, desc="evaluate"):
        obs, rew, term, trunc, infos = env.step(policy(obs))
        ended = first & (term | trunc)
        if t >= settle:  # the step's last state of the envs still in their first episode
            live = first & ~ended
            for k, v in infos["tracking"].items():
                tracked[k] += torch.where(live, v, 0.0)
            counted += live.float()
        ret += torch.where(first, rew, 0.0)
        steps += first.float()
        fell |= ended & term
        for k, v in infos["metrics"].items():  # each env's value at its first episode's end
            metrics[k] = torch.where(ended, v, metrics[k])
        first &= ~ended
        if not first.any():
            break
        if command is not None:
            env.fix_command(command)  # resets resample commands: pin them again
    some = counted > 0  # episodes that lasted past the settling time; none: the figure is NaN
    per_episode = {k: v[some] / counted[some] for k, v in tracked.items()}
    return {
        **{k: float(v.mean()) for k, v in metrics.items()},
        **{k: float(v.mean()) if v.numel() else float("nan") for k, v in per_episode.items()},
        "episodes": n,
        "mean_steps": float(steps.mean()),  # as sim-to-sim reports it
        "mean_return": float(ret.mean()),
        "fall_share": float(fell.float().mean()),
    }
