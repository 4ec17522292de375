"""Evaluate a policy: return, share of falls, velocity tracking error (tasks that track velocity
commands, on fixed commands) and the task's own episode-end metrics (its METRIC_TERMS: a reach
task's success and final distance)."""

from __future__ import annotations

from collections.abc import Callable

import torch
from tqdm.auto import tqdm

from simrl.env import EnvBatch


@torch.inference_mode()
def evaluate(
    env: EnvBatch,
    policy: Callable[[dict[str, torch.Tensor]], torch.Tensor],
    command: tuple[float, float, float] | None = None,
    settle_s: float = 1.0,
    progress: bool = False,
) -> dict[str, float]:
    """Run one full episode in every env (`num_envs` episodes) and summarize it.

    Tracking errors are |v_xy - cmd_xy| (m/s) and |w_z - cmd_yaw| (rad/s) in the base frame,
    averaged over each episode's steps after the first `settle_s` seconds. A fall is an episode
    that ended by termination before its time limit. On a terrain grid, `crossed_share` is the
    share of episodes that got past half a tile from their start without a fall. Each of the
    task's METRIC_TERMS is averaged over the episodes, read at each one's end.
    """
    env.reset()
    metrics = {k: torch.zeros(env.num_envs, device=env.device) for k in env.METRIC_TERMS}
    recording, env.record_metrics = env.record_metrics, bool(metrics)
    try:
        return _evaluate(env, policy, command, settle_s, progress, metrics)
    finally:
        env.record_metrics = recording


def _evaluate(env, policy, command, settle_s, progress, metrics) -> dict[str, float]:
    n, dev = env.num_envs, env.device
    settle = int(settle_s / env.dt)
    if command is not None:
        env.set_commands(*command)
    first = torch.ones(n, device=dev, dtype=torch.bool)  # still in its first episode
    ret = torch.zeros(n, device=dev)
    fell = torch.zeros(n, device=dev, dtype=torch.bool)
    lin_err = torch.zeros(n, device=dev)
    yaw_err = torch.zeros(n, device=dev)
    counted = torch.zeros(n, device=dev)
    grid = getattr(env, "grid", None)  # on a terrain grid: who got past half a tile
    crossed = torch.zeros(n, device=dev, dtype=torch.bool)
    obs = env.compute_observations()
    tracks = env.deploy_spec()["tracks_commands"]  # the task tracks velocity commands
    for t in tqdm(range(env.max_episode_length), disable=not progress, desc="evaluate"):
        obs, rew, term, trunc, infos = env.step(policy(obs))
        if tracks and t >= settle:
            # envs that ended this step were already reset inside step: count only live ones
            live = first & ~(term | trunc)
            cmd = env.commands
            lin = (env.base_lin_vel_b[:, :2] - cmd[:, :2]).norm(dim=1)
            yaw = (env.base_ang_vel_b[:, 2] - cmd[:, 2]).abs()
            lin_err += torch.where(live, lin, 0.0)
            yaw_err += torch.where(live, yaw, 0.0)
            counted += live.float()
        if grid is not None:  # `walked` of an env reset this step is already 0: no false crossing
            crossed |= first & ~(term | trunc) & (env.walked > grid.cfg.tile_size / 2)
        ret += torch.where(first, rew, 0.0)
        ended = first & (term | trunc)
        fell |= ended & term
        for k, v in infos.get("metrics", {}).items():  # each env's value at its first episode's end
            metrics[k] = torch.where(ended, v, metrics[k])
        first &= ~ended
        if not first.any():
            break
        if command is not None:
            env.set_commands(*command)  # resets resample commands: pin them again
    c = counted.clamp(min=1)
    return {
        **{k: float(v.mean()) for k, v in metrics.items()},
        "episodes": n,
        "mean_return": float(ret.mean()),
        "lin_vel_error": float((lin_err / c).mean()),
        "yaw_rate_error": float((yaw_err / c).mean()),
        "fall_share": float(fell.float().mean()),
        "crossed_share": float((crossed & ~fell).float().mean()) if grid is not None else float("nan"),
    }
