"""Symmetry augmentation for rsl-rl's PPO (`symmetry_cfg`): every mini-batch also trains on its
left-right mirror image (Mittal et al., ICRA 2024), built from the env's mirror maps
(simrl.mirror: the robot config's side markers, the task's term mirrors).

    python train.py task=humanoid symmetry=true

rsl-rl calls `augment(env=<its VecEnv>, obs=..., actions=...)` and expects the originals first,
then their mirror images, along the batch dim.
"""

from __future__ import annotations

from typing import Any

import torch
from tensordict import TensorDict

import simrl.mirror as mirror


def maps(env: Any) -> dict[str, Any]:
    """The mirror maps of the env batch under rsl-rl's VecEnv (simrl.rl.vecenv); the env builds
    them once."""
    return env.env.mirror_maps()


def augment(env: Any, obs: TensorDict | None = None, actions: torch.Tensor | None = None):
    """(obs, actions) with their mirror images appended (either may be None)."""
    m = maps(env)
    if obs is not None:
        groups = {g: torch.cat([v, mirror.apply(v, m["obs"][g])]) for g, v in obs.items()}
        obs = TensorDict(groups, batch_size=[2 * obs.batch_size[0]], device=obs.device)
    if actions is not None:
        actions = torch.cat([actions, mirror.apply(actions, m["actions"])])
    return obs, actions


def symmetry_cfg(loss_coef: float = 0.0) -> dict[str, Any]:
    """rsl-rl's `algorithm.symmetry_cfg` for augmentation (and, with `loss_coef` > 0, the mirror
    loss too)."""
    return {"data_augmentation_func": "simrl.rl.symmetry:augment", "use_data_augmentation": True,
            "use_mirror_loss": loss_coef > 0, "mirror_loss_coeff": float(loss_coef)}
