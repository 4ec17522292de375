"""Task registry: name -> (env class, config class, gymnasium id); validation of user input.

    env = simrl.make("quadruped", num_envs=512, device="cpu")
    env = gymnasium.make_vec("simrl/Quadruped-v0", num_envs=512)      # after `import simrl`

Importing this module is cheap (no torch, mujoco or task code): `import simrl` registers the
gymnasium ids through it with a string entry point, and the task modules load on first use.
`make` is where user input meets the env, so its bad values raise `simrl.errors` types that the
apps print as one line.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from simrl.errors import ConfigError, UnknownNameError

if TYPE_CHECKING:
    from simrl.env import EnvBatch

from simrl.envs import TASKS  # the tasks' own table (name -> env, config, gymnasium id), found by name


def _load(ref: str):
    module, name = ref.split(":")
    return getattr(importlib.import_module(module), name)


def register_task(name: str, cfg: str, env: str = "simrl.env:EnvBatch", gym_id: str | None = None) -> None:
    """Add a task defined outside simrl: `cfg` and `env` as "module:Class" (the env defaults to
    the library's EnvBatch, so a task can be its config class alone). The apps find it by name
    once its module is imported: `SIMRL_TASKS=my_module simrl-train task=<name>`."""
    if name in TASKS and TASKS[name][1] != cfg:
        raise ConfigError(f"task '{name}' already exists ({TASKS[name][1]}): pick another name")
    TASKS[name] = (env, cfg, gym_id or f"simrl/{name.title().replace('_', '')}-v0")


def load_user_tasks() -> list[str]:
    """Import the modules named in SIMRL_TASKS (comma-separated; the working directory is on the
    path), which call `register_task`; their names, for the apps' config composition."""
    import os
    import sys

    names = [m.strip() for m in os.environ.get("SIMRL_TASKS", "").split(",") if m.strip()]
    if names and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    for module in names:
        try:
            importlib.import_module(module)
        except ImportError as e:
            raise ConfigError(f"SIMRL_TASKS names '{module}', which does not import ({e}): give a "
                              "module on the path or in the working directory, without .py") from e
    return names


def task_classes(task: str) -> tuple[type[EnvBatch], type]:
    """(env class, config class) of `task`; an unknown name lists the valid ones."""
    if task not in TASKS:
        raise UnknownNameError(f"unknown task '{task}'; valid: {sorted(TASKS)}")
    env_ref, cfg_ref, _ = TASKS[task]
    return _load(env_ref), _load(cfg_ref)


def task_cfg(task: str, values: dict[str, Any] | None = None) -> Any:
    """`task`'s config dataclass with `values` over its defaults, every name checked."""
    from simrl.env import cfg_from_dict

    env_cls, cfg_cls = task_classes(task)
    try:
        cfg = cfg_from_dict(cfg_cls, values)
    except KeyError as e:  # cfg_from_dict's unknown-field error, which lists the valid fields
        raise UnknownNameError(f"task.cfg: {e.args[0]}") from e
    except TypeError as e:  # an observation term with a field ObsTerm lacks
        raise ConfigError(f"task.cfg.observations: {e}; a term takes name, "
                          "scale, noise, history, params") from e
    env_cls.check_terms(cfg)  # term names, before anything is built
    return cfg


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
    robot: Any = None,
) -> EnvBatch:
    """Build task `task` with `num_envs` envs; `cfg` overrides fields of the task's config.

    `robot`: for tasks over a robot config (quadruped, humanoid), a configs/robot name, a path
    to a robot yaml, or its fields as a dict; None keeps the task's default robot.
    """
    from simrl.sim import resolve_backend, resolve_device

    env_cls, _ = task_classes(task)
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise ConfigError(f"num_envs must be an int >= 1, got {num_envs!r}: pass num_envs=N "
                          "(or null for the task's default on the device)")
    try:  # both only check the user's strings, so a ValueError here is always a bad value
        dev = resolve_device(device)
        resolve_backend(backend, dev)
    except ValueError as e:
        raise ConfigError(str(e)) from e
    if robot is not None:
        cfg = {**(cfg or {}), "robot": robot}
    env = env_cls(task_cfg(task, cfg), num_envs, device=str(dev), backend=backend, seed=seed,
                  sim_kwargs=sim, render_mode=render_mode)
    if max_episode_steps is not None:  # gymnasium.make_vec passes this when registered with it
        env.max_episode_length = int(max_episode_steps)
    return env


def register_gymnasium() -> None:
    """Register every task's id with gymnasium: a string entry point, so nothing loads yet."""
    import gymnasium as gym

    for task, (_, _, gym_id) in TASKS.items():
        if gym_id not in gym.registry:
            gym.register(gym_id, vector_entry_point="simrl.registry:make", kwargs={"task": task})
