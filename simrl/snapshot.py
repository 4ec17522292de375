"""Snapshots of a task's state as plain data, so a checkpoint can hold an env batch bit for bit.

A task keeps its state in attributes: tensors (commands, delay queues, curriculum levels,
histories), numpy arrays, numbers, random generators, and small objects of its own (a terrain
grid, a manager). An object's `not_state` names the attributes derived from its config (bound
terms, layouts) that are rebuilt rather than saved. `capture` walks those attributes and copies
every such value into tensors, dicts, lists and numbers, which `torch.load(weights_only=True)`
reads back; `restore` writes them into a freshly built env of the same config, in place where
the value is an array (so views and captured graphs keep pointing at it). Functions, configs
and foreign objects are not state and are skipped. Nothing here is task-specific: a new task's
state is covered without code.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch

_OURS = ("simrl",)  # objects from simrl (its tasks are simrl.envs) are walked into; others are skipped
_GEN, _OBJ = "__generator__", "__object__"


def capture(value: Any) -> Any:
    """A copy of `value`'s state as plain data, or None where it holds none."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, np.ndarray):
        return None if value.dtype == object else torch.from_numpy(value.copy())
    if isinstance(value, torch.Generator):
        return {_GEN: value.get_state()}
    if isinstance(value, (bool, int, float)) and not isinstance(value, np.generic):
        return value
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return value.item()
    if isinstance(value, dict):
        out = {k: c for k, v in value.items() if isinstance(k, (str, int, tuple))
               and (c := capture(v)) is not None}
        return out or None
    if isinstance(value, (list, tuple)):
        items = [capture(v) for v in value]
        return items if any(i is not None for i in items) else None
    if (type(value).__module__.split(".")[0] in _OURS and hasattr(value, "__dict__")
            and not dataclasses.is_dataclass(value)):
        return capture_object(value)
    return None


def capture_object(value: Any) -> Any:
    """An object's state, whichever package it comes from: its attributes less its `not_state`
    (derived ones: bound terms, layouts), or None where it holds none. `restore` writes it back
    into the object in place."""
    skip = getattr(value, "not_state", ())
    inner = capture({k: v for k, v in vars(value).items() if k not in skip})
    return {_OBJ: inner} if inner else None


def restore(current: Any, saved: Any, where: str) -> Any:
    """`current` with `saved` written into it (in place where it is an array or object); the
    value to store back. Raises ValueError naming `where` if the shapes do not fit."""
    if isinstance(saved, torch.Tensor):
        if isinstance(current, np.ndarray):
            if current.shape != tuple(saved.shape):
                raise ValueError(f"{where}: saved shape {tuple(saved.shape)}, here {current.shape}")
            current[...] = saved.numpy()
            return current
        if not isinstance(current, torch.Tensor):
            return saved.to(getattr(current, "device", saved.device))
        if current.shape != saved.shape or current.dtype != saved.dtype:
            raise ValueError(f"{where}: saved {tuple(saved.shape)} {saved.dtype}, here "
                             f"{tuple(current.shape)} {current.dtype}")
        saved = saved.to(current.device)
        if not torch.equal(current, saved):  # equal constants (even broadcast views) stay as they are
            current.copy_(saved)
        return current
    if isinstance(saved, dict) and _GEN in saved:
        current.set_state(saved[_GEN])
        return current
    if isinstance(saved, dict) and _OBJ in saved:
        for k, v in saved[_OBJ].items():
            setattr(current, k, restore(getattr(current, k, None), v, f"{where}.{k}"))
        return current
    if isinstance(saved, dict):
        if not isinstance(current, dict):
            raise ValueError(f"{where}: saved a dict, here {type(current).__name__}")
        for k, v in saved.items():
            current[k] = restore(current.get(k), v, f"{where}[{k!r}]")
        return current
    if isinstance(saved, list):
        if not isinstance(current, (list, tuple)) or len(current) != len(saved):
            raise ValueError(f"{where}: saved {len(saved)} items, here {current!r:.60}")
        items = [c if s is None else restore(c, s, f"{where}[{i}]")
                 for i, (c, s) in enumerate(zip(current, saved, strict=True))]
        if isinstance(current, list):
            current[:] = items
            return current
        return type(current)(*items) if hasattr(current, "_fields") else tuple(items)
    return saved  # a number
