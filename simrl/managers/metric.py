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
