"""The metric manager: what evaluation reports, as terms `f(env) -> (N,)`.

Metric terms are read at each episode's end (success, final distance); tracking terms every
step, averaged by evaluation over each episode's settled steps (a velocity task's tracking
errors). They are computed only while `record` is on (evaluation), so training pays nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch

from simrl.managers.terms import bind


class MetricManager:
    """The metric and tracking terms of one env batch."""

    not_state = frozenset({"metrics", "tracking"})

    def __init__(self, env: Any, metrics: Mapping[str, Callable[..., torch.Tensor]],
                 tracking: Mapping[str, Callable[..., torch.Tensor]]):
        self.metrics = {k: bind(env, f, {}, f"metric '{k}'") for k, f in metrics.items()}
        self.tracking = {k: bind(env, f, {}, f"tracking metric '{k}'") for k, f in tracking.items()}
        self.record = False  # evaluation turns it on: metrics into the step's infos

    def compute(self, env: Any) -> dict[str, dict[str, torch.Tensor]]:
        """Every env's metrics and tracking values now, before the step's resets."""
        return {"metrics": {k: f(env).float() for k, f in self.metrics.items()},
                "tracking": {k: f(env).float() for k, f in self.tracking.items()}}


def metric(func: Callable[..., torch.Tensor] | None = None, *,
           sim: Callable[..., float] | None = None) -> Any:
    """Declare beside a metric or tracking term how sim-to-sim computes the same figure from
    MuJoCo C's state: `sim(m: MjModel, d: MjData) -> float`, a module-level function on numpy and
    MuJoCo alone. Export names it in policy.json (`deploy.metrics`), so sim-to-sim reports the
    figure for any task without knowing it: a tracking term's mean over each episode's settled
    steps, a metric term's value at the episode's end. Sim-to-sim imports the twin's module (the
    task's), so it runs where the task's code and what that imports are installed.

        @metric(sim=cube_turn_rate_mj)
        def cube_turn_rate(env): ..."""
    def mark(f: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
        f.sim = sim
        return f
    return mark if func is None else mark(func)


def sim_twins(metrics: Mapping[str, Callable], tracking: Mapping[str, Callable]) -> dict[str, dict[str, str]]:
    """policy.json's `deploy.metrics`: {name: {"sim": "module:function", "reduce": "final" |
    "mean"}} for every term that declares its MuJoCo C twin."""
    out = {}
    for table, reduce in ((metrics, "final"), (tracking, "mean")):
        for name, f in table.items():
            twin = getattr(f, "sim", None)
            if twin is not None:
                out[name] = {"sim": f"{twin.__module__}:{twin.__qualname__}", "reduce": reduce}
    return out
