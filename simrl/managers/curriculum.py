"""The curriculum manager: terms that raise a task's difficulty as the policy earns it
(simrl.mdp.curriculum), updated on the episodes that end, logged once per iteration."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from simrl.managers.entries import func_entries, term_func
from simrl.managers.terms import bind


def curriculum_entries(entries: Mapping[str, Any] | None) -> list[tuple[str, str, dict[str, Any]]]:
    """The config's `curriculum` (name -> {func, params}; null: none) as (name, func, params)."""
    return [(name, func, params) for name, func, params, _ in func_entries(entries, "curriculum")]


class CurriculumManager:
    """The curriculum entries of one env batch. State: each term's (its level)."""

    def __init__(self, env: Any, entries: Mapping[str, Any], table: Mapping[str, type]):
        self.terms: dict[str, Any] = {}
        for name, func, params in curriculum_entries(entries):
            where = f"curriculum '{name}'"
            self.terms[name] = bind(env, term_func(table, func, where), params, where)(env)

    def update(self, env: Any, done: torch.Tensor) -> None:
        """After the rewards, on the episodes where `done` (their sums still in the env's log)."""
        for term in self.terms.values():
            term.update(env, done)

    def log(self, env: Any) -> dict[str, float]:
        """Every term's figures for the episode log (reads the device: once per iteration)."""
        out: dict[str, float] = {}
        for term in self.terms.values():
            out.update({k: float(v) for k, v in term.log(env).items()})
        return out
