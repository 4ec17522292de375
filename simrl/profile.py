"""Counters for what a GPU step pays for beyond its kernels: host syncs, torch ops, Warp launches.

    with count_syncs() as syncs, count_launches() as launches:
        env.step(actions)
    syncs.total, syncs.by_op, syncs.ops, launches.total

They work on the CPU too (that is their point: the tests keep the GPU path's sync count down on
a machine without one). A host sync is any op that needs a device value on the host or host data
on the device: `.item()`/`float()`/`bool()` (`_local_scalar_dense`), `nonzero`, indexing with a
bool mask or a Python list (`lift_fresh` builds a tensor from host data), `unique`,
`masked_select`, `tolist`. Warp launches are counted at `wp.launch`/`wp.launch_tiled` (a
captured graph replay counts as one `capture_launch`).
"""

from __future__ import annotations

import collections
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten

# ops that wait on the device (or copy host data to it) whatever their arguments
_SYNC_OPS = {
    aten._local_scalar_dense.default: "item/float/bool",
    aten.nonzero.default: "nonzero",
    aten.lift_fresh.default: "tensor from host data (list index, torch.tensor)",
    aten.masked_select.default: "masked_select",
    aten._unique2.default: "unique",
    aten.unique_dim.default: "unique",
    aten.unique_consecutive.default: "unique",
    aten.equal.default: "equal",
}
_INDEX_OPS = (aten.index.Tensor, aten.index_put.default, aten.index_put_.default)


@dataclass
class SyncCount:
    """Host syncs seen (by kind) and the number of torch ops dispatched."""

    by_op: collections.Counter = field(default_factory=collections.Counter)
    ops: int = 0

    @property
    def total(self) -> int:
        return sum(self.by_op.values())


class _SyncMode(TorchDispatchMode):
    def __init__(self, count: SyncCount):
        super().__init__()
        self.count = count
        self.in_method = False  # inside a patched Tensor method, which counted itself

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.count.ops += 1
        kind = None if self.in_method else _SYNC_OPS.get(func)
        if kind is None and func in _INDEX_OPS:
            indices = args[1] if len(args) > 1 else ()
            if any(isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in indices):
                kind = "bool-mask index"
        if kind is not None:
            self.count.by_op[kind] += 1
        return func(*args, **(kwargs or {}))


@contextlib.contextmanager
def count_syncs() -> Iterator[SyncCount]:
    """Count host syncs and torch ops inside the block (see the module docstring)."""
    count = SyncCount()
    mode = _SyncMode(count)
    # Tensor -> Python conversions: counted here, since under inference_mode they do not reach
    # the dispatch mode as `_local_scalar_dense`
    saved = {name: getattr(torch.Tensor, name)
             for name in ("tolist", "item", "__bool__", "__float__", "__int__")}

    def wrap(name, fn):
        def counted(self, *args):
            count.by_op["tolist" if name == "tolist" else "item/float/bool"] += 1
            mode.in_method = True
            try:
                return fn(self, *args)
            finally:
                mode.in_method = False

        return counted

    for name, fn in saved.items():
        setattr(torch.Tensor, name, wrap(name, fn))
    try:
        with mode:
            yield count
    finally:
        for name, fn in saved.items():
            setattr(torch.Tensor, name, fn)


@dataclass
class LaunchCount:
    by_kind: collections.Counter = field(default_factory=collections.Counter)

    @property
    def total(self) -> int:
        return sum(self.by_kind.values())


@contextlib.contextmanager
def count_launches() -> Iterator[LaunchCount]:
    """Count Warp kernel launches (and graph replays) inside the block."""
    import warp as wp

    count = LaunchCount()
    saved = {name: getattr(wp, name) for name in ("launch", "launch_tiled", "capture_launch")}

    def wrap(name, fn):
        def counted(*args, **kwargs):
            count.by_kind[name] += 1
            return fn(*args, **kwargs)

        return counted

    for name, fn in saved.items():
        setattr(wp, name, wrap(name, fn))
    try:
        yield count
    finally:
        for name, fn in saved.items():
            setattr(wp, name, fn)
