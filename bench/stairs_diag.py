"""Why a policy does or does not climb stairs: its feet's swing peaks, and how far it gets.

    python bench/stairs_diag.py <run>/model_<N>.pt

Prints, for a quadruped checkpoint in its training sim (32 envs, no pushes):
- on the plane at 0.5 and 1.0 m/s: each landing's swing peak, the foot tip's highest point over
  the ground during the swing that just ended (median, 10th and 90th percentile; a foot resting
  on the ground reads its sphere's radius);
- in the 0.10 m box pit of `terrain=stairs` at 0.5 m/s: each env's farthest distance from its
  start while upright, falls, and crossings (past half a tile, no fall).
Figures in docs/results.md ("Quadruped (primitive), rough terrain").
"""

from __future__ import annotations

import sys

import numpy as np
import torch
from omegaconf import OmegaConf

from simrl import CONFIGS
from simrl.rl.app import _env_for_checkpoint, policy_from_checkpoint


def rollout(checkpoint: str, task_cfg: dict, command: float, steps: int, tile=None):
    env, run_cfg = _env_for_checkpoint(checkpoint, num_envs=32, task_cfg={"push_vel": 0.0, **task_cfg})
    if tile is not None:
        env.terrain.set_tiles(*tile)
    policy, _ = policy_from_checkpoint(env, checkpoint, OmegaConf.to_container(run_cfg.agent))
    env.reset()
    env.fix_command(command, "base_velocity")
    obs = env.compute_observations()
    with torch.inference_mode():
        for t in range(steps):
            obs, _, term, trunc, _ = env.step(policy(obs))
            env.fix_command(command, "base_velocity")
            yield t, env, term, trunc


def main(checkpoint: str) -> None:
    plane = {"terrain": "flat", "rewards": {"foot_clearance": -1.0}}  # weighted: peaks tracked
    for command in (0.5, 1.0):
        peaks = [env.legged.swing_peak_on_landing[env.legged.first_contact].clone()
                 for t, env, *_ in rollout(checkpoint, plane, command, 300) if t >= 50]
        p = torch.cat(peaks).numpy()
        print(f"plane, {command} m/s: {p.size} landings, swing peak median {np.median(p):.3f} m, "
              f"p10 {np.percentile(p, 10):.3f}, p90 {np.percentile(p, 90):.3f}")
    stairs = OmegaConf.to_container(OmegaConf.load(CONFIGS / "terrain" / "stairs.yaml"))
    farthest, alive = torch.zeros(32), torch.ones(32, dtype=torch.bool)
    fell = torch.zeros(32, dtype=torch.bool)
    for _, env, term, trunc in rollout(checkpoint, {"terrain": stairs}, 0.5, 1000, tile=(0, "stairs_down")):
        live = alive & ~(term | trunc)  # an env that ended this step was already reset
        farthest = torch.where(live, torch.maximum(farthest, env.terrain.walked), farthest)
        fell |= alive & term
        alive = live
    half = stairs["tile_size"] / 2
    far = " ".join(f"{d:.2f}" for d in sorted(farthest.tolist()))
    print(f"box pit, 0.5 m/s: farthest from start (m) {far}")
    print(f"box pit: {int(fell.sum())} of 32 fell, {int(((farthest > half) & ~fell).sum())} crossed")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
