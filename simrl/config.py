"""Hydra configs: the task config nodes from the dataclasses, and composition as the apps do it.

Each task's config defaults live in one place, its dataclass (`envs/<task>.py`). The task
yamls pull them in through an `optional task_cfg@task.cfg: <task>` default, a node stored here
from `dataclasses.asdict(Cfg())`, so `task.cfg.push_vel=0.5` works without `+` and
`python train.py --cfg job` shows every field. The node is open (not struct): a field the
dataclass lacks gets past Hydra to `simrl.registry.task_cfg`, which refuses it listing the
valid fields (Hydra's own refusal would not list them).

Call `register_configs()` before Hydra composes (the apps, `simrl.rl.app` and `simrl.api` do).
Without it the task node is skipped and the dataclass defaults still apply, but
`task.cfg.<field>=...` then needs `+`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from omegaconf import DictConfig, OmegaConf

from simrl.paths import CONFIGS

GROUP = "task_cfg"  # task_cfg/<task>: a task's defaults; task_cfg/overrides: eval's open node


def _open_node(values: dict) -> DictConfig:
    node = OmegaConf.create(values)
    OmegaConf.set_struct(node, False)  # keys the dataclass lacks reach task_cfg's check
    return node


def register_configs() -> None:
    """Store task_cfg/<task> (every field of the task's config dataclass) with Hydra."""
    from hydra.core.config_store import ConfigStore

    from simrl.registry import TASKS, load_user_tasks, task_classes

    load_user_tasks()
    store = ConfigStore.instance()
    for task in TASKS:
        _, cfg_cls = task_classes(task)
        fields = dataclasses.asdict(cfg_cls())
        store.store(group=GROUP, name=task, node=_open_node(fields))
        if not (CONFIGS / "task" / f"{task}.yaml").is_file():  # a task registered from outside
            node = OmegaConf.create({"task": {"name": task, "num_envs": {"cpu": 256, "cuda": 4096},
                                              "max_iterations": {"cpu": 100, "cuda": 300}}})
            node.task.cfg = _open_node(fields)
            critic = "critic" if "critic" in (fields.get("observations") or {}) else "policy"
            node.agent = {"obs_groups": {"actor": ["policy"], "critic": [critic]}}
            store.store(group="task", name=task, node=node, package="_global_")
    store.store(group=GROUP, name="overrides", node=_open_node({}))


def robot_path_override(word: str) -> str:
    """`robot=<path to a yaml>` as `task.cfg.robot=<absolute path>`: Hydra reads `robot=` as an
    option of the configs/robot group, so a file anywhere else would not be found there."""
    key, sep, value = word.partition("=")
    text = value[1:-1] if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"" else value
    if not sep or key != "robot" or not (text.endswith((".yaml", ".yml")) or "/" in text or "\\" in text):
        return word
    from pathlib import Path

    path = str(Path(text).expanduser().resolve()).replace("\\", "\\\\").replace("'", "\\'")
    return f"task.cfg.robot='{path}'"


def cli_overrides(words: Sequence[str]) -> list[str]:
    """The apps' command-line overrides with the robot path rewrite applied."""
    return [robot_path_override(w) for w in words]


def compose(name: str, overrides: Sequence[str] = (), hydra: bool = False) -> DictConfig:
    """Config `name` (train, eval, export) with CLI-style `overrides`, as the app composes it.

    `hydra=True` keeps the `hydra` node (run dir pattern...). Works inside a running Hydra app
    or notebook session too: the global Hydra state is restored afterwards.
    """
    from hydra import compose as hydra_compose
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    register_configs()
    gh = GlobalHydra.instance()
    saved = gh.hydra
    gh.clear()
    try:
        with initialize_config_dir(config_dir=str(CONFIGS), version_base=None, job_name=name):
            return hydra_compose(name, overrides=cli_overrides(overrides), return_hydra_config=hydra)
    finally:
        gh.hydra = saved
