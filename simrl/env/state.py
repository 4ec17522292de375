"""An env batch's state for checkpoints: every world's physics, the task's and the managers'
tensors, numbers and generators, as plain data that `torch.load(weights_only=True)` reads.

The state carries a format number. Restoring a state of another format is refused in one line
(its attributes would not land where this version keeps them); restoring one of another config
names the fields that differ.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from simrl.env.checks import KINDS
from simrl.snapshot import capture, capture_object, restore

FORMAT = 3  # 1: simrl 0.1.0 (state on the env); 2: the managers own their state; 3: and the views
_FORMATS = {1: "simrl 0.1.0, the state on the env", 2: "a simrl before data views, tasks with env classes"}

# env attributes rebuilt from the config, not saved: these and the term tables
NOT_STATE = frozenset({"sim", "model", "cfg", "_mirror_maps", "robot_mirror", "task_name", "views",
                       *KINDS.values()})


def config_key(env: Any) -> str:
    """What an env state depends on besides itself: the task config, world count, backend."""
    cfg = json.dumps(dataclasses.asdict(env.cfg), sort_keys=True, default=str)
    return f"{env.task_name}|{env.num_envs}|{env.sim.backend}|{cfg}"


def state_dict(env: Any) -> dict[str, Any]:
    """Everything the next step depends on. `load_state_dict` on an env of the same config
    continues bit for bit (on the same backend and device)."""
    views = getattr(env, "views", {})
    task = capture({k: v for k, v in vars(env).items() if k not in NOT_STATE and k not in views}) or {}
    # the data views, whichever package a view comes from (restored into `env.views` in place)
    saved_views = {name: c for name, view in views.items() if (c := capture_object(view)) is not None}
    if saved_views:
        task["views"] = saved_views
    return {"format": FORMAT, "config": config_key(env), "sim": env.sim.get_state(), "task": task}


def load_state_dict(env: Any, state: dict[str, Any]) -> None:
    """Restore `state_dict()`'s output. Raises ValueError for another format or config."""
    found = state.get("format", 1)
    if found != FORMAT:
        raise ValueError(f"env state format {found} ({_FORMATS.get(found, 'another simrl')}); this "
                         f"simrl reads format {FORMAT}: train anew, or use the simrl that saved it")
    if state["config"] != config_key(env):
        raise ValueError(_config_difference(state["config"], config_key(env)))
    env.sim.set_state(state["sim"])
    for k, v in state["task"].items():
        setattr(env, k, restore(getattr(env, k, None), v, k))


def _config_difference(saved: str, here: str) -> str:
    """One line naming how two `config_key`s differ (the first differing task fields)."""
    (*a, ca), (*b, cb) = saved.split("|", 3), here.split("|", 3)
    names = ("task", "num_envs", "backend")
    diffs = [f"{n} {x} -> {y}" for n, x, y in zip(names, a, b, strict=True) if x != y]
    if not diffs:
        da, db = json.loads(ca), json.loads(cb)
        diffs = [f"task.cfg.{k}" for k in sorted(da.keys() | db.keys()) if da.get(k) != db.get(k)]
    return "saved with another config: " + ", ".join(diffs[:5])
