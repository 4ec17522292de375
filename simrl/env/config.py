"""A task's config: the fields every task has (`EnvCfg`), an observation term's entry
(`ObsTerm`), and how a config dict becomes one (`cfg_from_dict`, `merge_entries`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from simrl.managers.observation import ObsTerm


@dataclass
class EnvCfg:
    """What every task config has. Tasks subclass it with their own fields."""

    model: str = ""  # MJCF path, relative to assets/ or absolute
    keyframe: str | None = None
    decimation: int | None = 4  # physics substeps per control step; None: from control_dt
    control_dt: float = 0.02  # s per control step, where decimation is None
    episode_length_s: float = 20.0
    action_scale: float = 1.0
    action_clip: float = 100.0
    obs_clip: float = 100.0
    max_qvel: float = 1000.0  # a world faster than this (or non-finite) is reset as unstable
    obs_noise: bool = True  # add each term's configured noise (off for evaluation and parity)
    only_positive_rewards: bool = False  # clip each step's total at 0 (legged_gym): no incentive
    # to end an episode early just to stop paying penalties
    observations: dict[str, list[ObsTerm]] = field(default_factory=dict)
    # name -> weight, or name -> {weight, func (default: the name), params}: one term function
    # can serve under two names with different params (a coarse and a fine distance kernel)
    rewards: dict[str, float | dict[str, Any]] = field(default_factory=dict)
    # name -> {func, mode: startup | reset | interval, interval_s, params}: randomization and
    # pushes by configuration (simrl.mdp.events), after the task's own
    events: dict[str, dict[str, Any]] = field(default_factory=dict)
    # name -> {func, params, time_out} (null: drop the task's own term of that name): what ends
    # an episode (simrl.mdp.terminations), after the task's own entries
    terminations: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    # name -> {func, resample_s, params} (null: drop the task's own command of that name): what
    # each env is asked to do, drawn at resets and on a clock (simrl.mdp.commands)
    commands: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    # name -> {func, params} (null: drop the task's own): how action columns drive the policy's
    # actuators (simrl.mdp.actions); none: the task's one joint_position_action over all of them
    actions: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    # name -> {func, params} (null: drop the task's own): what raises the difficulty as the
    # policy earns it (simrl.mdp.curriculum), merged over the task's own entries
    curriculum: dict[str, dict[str, Any] | None] = field(default_factory=dict)


def merge_entries(task: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    """A task's term entries with the config's merged over them: a new name is added, `null`
    drops one, and an entry for a task's name replaces its keys, its params merged over the
    task's where it keeps the func."""
    out = dict(task)
    for name, entry in config.items():
        own = task.get(name)
        if entry is None or not isinstance(entry, Mapping) or not isinstance(own, Mapping):
            out[name] = entry
            continue
        merged = {**own, **entry}
        if merged.get("func") == own.get("func"):
            merged["params"] = {**(own.get("params") or {}), **(entry.get("params") or {})}
        out[name] = merged
    return out


def cfg_from_dict(cls: type, values: dict[str, Any] | None) -> Any:
    """Build config dataclass `cls` from a (Hydra) dict; unknown keys list the valid ones."""
    values = dict(values or {})
    for old, new in getattr(cls, "renamed", {}).items():  # runs saved under an older name
        if old in values and new not in values:
            values[new] = values.pop(old)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise KeyError(f"unknown {cls.__name__} keys {unknown}; valid: {sorted(names)}")
    if "observations" in values and values["observations"] is not None:
        values["observations"] = {
            g: [t if isinstance(t, ObsTerm) else ObsTerm(**t) for t in terms]
            for g, terms in values["observations"].items()
        }
    base = cls()
    for k in ("rewards",):  # dict fields merge over the defaults, so an override can be partial
        if k in values and values[k] is not None:
            merged = dict(getattr(base, k))
            merged.update(values[k])
            values[k] = merged
    return dataclasses.replace(base, **values)
