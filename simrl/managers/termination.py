"""The termination manager: what ends an episode, as terms (simrl.mdp.terminations).

Every term is evaluated each step into one (N, terms) bool tensor of hits. A term without
`time_out` ends its episode in a terminal state; one with `time_out` truncates it (the learner
bootstraps). The hits of the ended episodes are counted per term on the device for the episode
log. The terms' `deploy_facts` (a robot-side check's limits) are merged for `policy.json`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import torch

from simrl.errors import ConfigError
from simrl.managers.entries import func_entries, term_func
from simrl.managers.terms import bind


class TerminationTerm(NamedTuple):
    """One entry of a task config's `terminations`."""

    name: str
    func: str
    time_out: bool
    params: dict[str, Any]


def termination_terms(entries: Mapping[str, Any] | None) -> list[TerminationTerm]:
    """The config's `terminations` (name -> {func, params, time_out}; null: none) as terms."""
    out = []
    for name, func, params, extra in func_entries(entries, "termination"):
        time_out = extra.get("time_out", False)
        if not isinstance(time_out, bool):
            raise ConfigError(f"termination '{name}': time_out must be true or false, got {time_out!r}")
        out.append(TerminationTerm(name, func, time_out, params))
    return out


def deploy_facts(facts: Callable[..., dict[str, Any]]) -> Callable[[Callable], Callable]:
    """Attach `facts(env, **bound params) -> dict` to a term: its part of policy.json's
    `deploy.termination` (a termination) or `deploy.reset` (a reset event); nested dicts merge."""
    def attach(func: Callable) -> Callable:
        func.deploy_facts = facts
        return func
    return attach


def merge_facts(into: dict[str, Any], facts: Mapping[str, Any]) -> dict[str, Any]:
    """`facts` merged into `into`: nested dicts merge key by key, other values replace."""
    for k, v in facts.items():
        if isinstance(v, Mapping) and isinstance(into.get(k), dict):
            merge_facts(into[k], v)
        else:
            into[k] = dict(v) if isinstance(v, Mapping) else v
    return into


class TerminationManager:
    """The termination entries of one env batch. State: the per-term counts of ended episodes."""

    not_state = frozenset({"terms", "fns", "facts", "terminal_cols", "time_out_cols", "hits"})

    def __init__(self, env: Any, entries: Mapping[str, Any],
                 table: Mapping[str, Callable[..., torch.Tensor]]):
        dev = env.device
        self.terms: list[TerminationTerm] = termination_terms(entries)
        self.fns: list[Callable[..., torch.Tensor]] = []
        self.facts: dict[str, Any] = {}
        for t in self.terms:  # names: the env's check_terms
            func = term_func(table, t.func, f"termination '{t.name}'")
            fn = bind(env, func, t.params, f"termination '{t.name}'")
            self.fns.append(fn)
            facts = getattr(func, "deploy_facts", None)
            if facts is not None and not t.time_out:
                merge_facts(self.facts, facts(env, **getattr(fn, "keywords", {})))
        self.terminal_cols = torch.tensor([i for i, t in enumerate(self.terms) if not t.time_out],
                                          device=dev, dtype=torch.long)
        self.time_out_cols = torch.tensor([i for i, t in enumerate(self.terms) if t.time_out],
                                          device=dev, dtype=torch.long)
        self.ended = torch.zeros(len(self.terms), device=dev, dtype=torch.float64)  # per term
        self.hits: torch.Tensor | None = None  # (N, terms) bool, this step's

    @property
    def names(self) -> list[str]:
        return [t.name for t in self.terms]

    def compute(self, env: Any) -> torch.Tensor:
        """Bool (N,): episodes in a terminal state now. Keeps every term's hits for the step's
        time-outs and the log."""
        none = torch.zeros(env.num_envs, device=env.device, dtype=torch.bool)
        if not self.fns:
            self.hits = None
            return none
        self.hits = torch.stack([f(env) for f in self.fns], dim=1)
        if not self.terminal_cols.numel():
            return none
        return self.hits[:, self.terminal_cols].any(dim=1)

    def time_outs(self, timed: torch.Tensor) -> torch.Tensor:
        """`timed` (the episode-length time-outs) or any `time_out` term's hit."""
        if self.time_out_cols.numel() and self.hits is not None:
            return timed | self.hits[:, self.time_out_cols].any(dim=1)
        return timed

    def count_ended(self, done: torch.Tensor) -> None:
        """Count, per term, the episodes ending now in which it fired (no host sync)."""
        if self.hits is not None:
            self.ended += (self.hits & done[:, None]).sum(dim=0)
