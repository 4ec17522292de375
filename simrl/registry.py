"""Task registry: name -> (env class, config class); also registered with gymnasium.

    env = simrl.registry.make("quadruped", num_envs=512, device="cpu")
    env = gymnasium.make_vec("simrl/Quadruped-v0", num_envs=512)
"""

from __future__ import annotations

import importlib
from typing import Any

import gymnasium as gym

from simrl.env import EnvBatch, cfg_from_dict

# name -> ("module:EnvClass", "module:CfgClass", gymnasium id)
TASKS: dict[str, tuple[str, str, str]] = {
    "quadruped": ("envs.quadruped:QuadrupedEnv", "envs.quadruped:QuadrupedCfg", "simrl/Quadruped-v0"),
    "cartpole": ("envs.cartpole:CartpoleEnv", "envs.cartpole:CartpoleCfg", "simrl/Cartpole-v0"),
}


def _load(ref: str):
    module, name = ref.split(":")
    return getattr(importlib.import_module(module), name)


def task_classes(task: str) -> tuple[type[EnvBatch], type]:
    if task not in TASKS:
        raise KeyError(f"unknown task '{task}'; valid: {sorted(TASKS)}")
    env_ref, cfg_ref, _ = TASKS[task]
    return _load(env_ref), _load(cfg_ref)


def make(
    task: str,
    num_envs: int,
    device: str = "auto",
    backend: str = "auto",
    seed: int = 0,
    cfg: dict[str, Any] | None = None,
    sim: dict[str, Any] | None = None,
    render_mode: str | None = None,
    max_episode_steps: int | None = None,
) -> EnvBatch:
    """Build task `task` with `num_envs` envs; `cfg` overrides fields of the task's config."""
    env_cls, cfg_cls = task_classes(task)
    task_cfg = cfg_from_dict(cfg_cls, cfg)
    env = env_cls(task_cfg, num_envs, device=device, backend=backend, seed=seed,
                  sim_kwargs=sim, render_mode=render_mode)
    if max_episode_steps is not None:  # gymnasium.make_vec passes this when registered with it
        env.max_episode_length = int(max_episode_steps)
    return env


def _gym_entry(task: str):
    def entry(num_envs: int = 1, **kwargs) -> EnvBatch:
        return make(task, num_envs=num_envs, **kwargs)

    return entry


def register_gymnasium() -> None:
    for task, (_, _, gym_id) in TASKS.items():
        if gym_id not in gym.registry:
            gym.register(gym_id, vector_entry_point=_gym_entry(task))


register_gymnasium()
