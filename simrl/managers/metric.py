"""The metric manager: what evaluation reports, as terms `f(env) -> (N,)`.

Metric terms are read at each episode's end (success, final distance); tracking terms every
step, averaged by evaluation over each episode's settled steps (a velocity task's tracking
errors). They are computed only while `record` is on (evaluation), so training pays nothing.

A metric that needs the episode's history (a target held for the last second, an object
lifted at some point) is a class: built once with the env, `update(env)` after every physics
step, `reset(env, mask)` for the envs being reset, called for its value at an episode's end. Its
attributes are saved with the env, as a stateful reward term's are.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

import torch

from simrl.errors import ConfigError
from simrl.managers.terms import bind

SIGNATURES = {"update": "update(env)", "reset": "reset(env, mask)"}


class MetricManager:
    """The metric and tracking terms of one env batch; state: the stateful terms' attributes."""

    not_state = frozenset({"metrics", "tracking", "stateful"})

    def __init__(self, env: Any, metrics: Mapping[str, Callable[..., torch.Tensor]],
                 tracking: Mapping[str, Callable[..., torch.Tensor]]):
        self.stateful: dict[str, Any] = {}  # name -> a class term's instance
        self.term_state: dict[str, dict[str, Any]] = {}  # name -> its attributes (saved)
        self.metrics = {k: self._bind(env, k, f, "metric") for k, f in metrics.items()}
        self.tracking = {k: self._bind(env, k, f, "tracking metric") for k, f in tracking.items()}
        self.record = False  # evaluation turns it on: metrics into the step's infos

    def _bind(self, env: Any, name: str, func: Any, kind: str) -> Callable[..., torch.Tensor]:
        where = f"{kind} '{name}'"
        fn = bind(env, func, {}, where)
        if not inspect.isclass(func):
            return fn
        missing = [m for m in ("update", "reset") if not callable(getattr(func, m, None))]
        if missing:
            raise ConfigError(f"{where}: {func.__name__} is a class, so it keeps state over an episode; it "
                              f"needs {' and '.join(SIGNATURES[m] for m in missing)}")
        term = self.stateful[name] = fn(env)
        self.term_state[name] = vars(term)
        return term

    def update(self, env: Any) -> None:
        """The stateful terms' update after a physics step (every step: an episode's history
        does not wait for evaluation to ask)."""
        for term in self.stateful.values():
            term.update(env)

    def reset(self, env: Any, mask: torch.Tensor) -> None:
        """Tell the stateful terms which envs are being reset (bool `mask`, (N,))."""
        for term in self.stateful.values():
            term.reset(env, mask)

    def compute(self, env: Any) -> dict[str, dict[str, torch.Tensor]]:
        """Every env's metrics and tracking values now, before the step's resets."""
        return {"metrics": {k: f(env).float() for k, f in self.metrics.items()},
                "tracking": {k: f(env).float() for k, f in self.tracking.items()}}


def metric(func: Callable[..., torch.Tensor] | None = None, *,
           sim: Callable[..., float] | None = None,
           success: Callable[..., dict[str, Any]] | None = None) -> Any:
    """Declare beside a metric or tracking term how sim-to-sim computes the same figure from
    MuJoCo C's state: `sim(m: MjModel, d: MjData) -> float`, a module-level function on numpy and
    MuJoCo alone. Export names it in policy.json (`deploy.metrics`), so sim-to-sim reports the
    figure for any task without knowing it: a tracking term's mean over each episode's settled
    steps, a metric term's value at the episode's end. Sim-to-sim imports the twin's module (the
    task's), so it runs where the task's code and what that imports are installed.

        @metric(sim=cube_turn_rate_mj)
        def cube_turn_rate(env): ...

    A success metric instead declares `success(env) -> dict`, the rule sim-to-sim applies to
    each episode (policy.json `deploy.success`: simrl.rl.sim2sim.Success's kinds)."""
    def mark(f: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
        f.sim = sim
        f.success_rule = success
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


def success_rule(env: Any, metrics: Mapping[str, Callable]) -> dict[str, Any] | None:
    """policy.json's `deploy.success`: the rule a metric term declares (at most one may)."""
    rules = {k: f.success_rule for k, f in metrics.items() if getattr(f, "success_rule", None)}
    if len(rules) > 1:
        raise ConfigError(f"metrics {sorted(rules)} each declare a success rule; sim-to-sim applies one: "
                          "keep it on one metric")
    return next((rule(env) for rule in rules.values()), None)
