"""The reward manager: the weighted reward terms, summed in one pass.

Every active term (weight != 0) is evaluated each step and stacked into one (N, terms) tensor,
multiplied by `weight * dt` and summed: a few tensor ops whatever the number of terms. Each
configured term (active or not) keeps a column of per-episode sums for the episode log and the
curricula that read them.

A term is a function `f(env, **params) -> (N,)`, or a class that keeps state between steps (a
foot's last position, to difference): built once as `cls(env, **params)`, called as `term(env)`
every step, and told of resets by `term.reset(env, mask)`. Its tensors are the manager's state,
so a checkpoint holds them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

import torch

from simrl.errors import ConfigError
from simrl.managers.entries import term_func
from simrl.managers.terms import RewardTerm, bind, reward_terms


class RewardManager:
    """The config's `rewards` of one env batch. State: the running episodes' sums and the
    stateful terms' attributes."""

    not_state = frozenset({"names", "terms", "active", "fns", "columns", "weights", "episode_sums",
                           "stateful"})

    def __init__(self, rewards: Mapping[str, Any], dt: float, num_envs: int, device: torch.device,
                 only_positive: bool = False):
        f32 = dict(device=device, dtype=torch.float32)
        self.names = list(rewards)  # every configured term: one log column each
        self.terms: list[RewardTerm] = reward_terms(rewards)
        self.active = [(i, t) for i, t in enumerate(self.terms) if t.weight != 0.0]
        self.columns = torch.tensor([i for i, _ in self.active], device=device, dtype=torch.long)
        self.weights = torch.tensor([t.weight * dt for _, t in self.active], **f32)  # weight * dt
        self.only_positive = only_positive
        self.sums = torch.zeros(num_envs, len(self.names), **f32)  # one column per term
        self.episode_sums = {k: self.sums[:, i] for i, k in enumerate(self.names)}
        self.fns: list[Callable[..., torch.Tensor]] = []
        self.stateful: dict[str, Any] = {}  # name -> a class term's instance
        # name -> that instance's attributes (its own __dict__): saved with the env, restored in
        # place, whichever package the term comes from
        self.term_state: dict[str, dict[str, Any]] = {}

    def bind(self, env: Any, table: Mapping[str, Callable[..., torch.Tensor]]) -> None:
        """The active terms as `f(env)`, params bound (names checked by the env's check_terms)."""
        self.fns, self.stateful, self.term_state = [], {}, {}
        for _, t in self.active:
            where = f"reward term '{t.name}'"
            func = term_func(table, t.func, where)
            if inspect.isclass(func) and not callable(getattr(func, "reset", None)):
                raise ConfigError(f"{where}: {func.__name__} is a class, so it keeps state between steps; it "
                                  "needs a reset(env, mask) method that clears the envs being reset")
            fn = bind(env, func, t.params, where)
            if inspect.isclass(func):  # a stateful term: built once, then called every step
                fn = self.stateful[t.name] = fn(env)
                self.term_state[t.name] = vars(fn)
            self.fns.append(fn)

    def reset(self, env: Any, mask: torch.Tensor) -> None:
        """Tell the stateful terms which envs are being reset (bool `mask`, (N,))."""
        for term in self.stateful.values():
            term.reset(env, mask)

    def term_fn(self, name: str) -> Callable[..., torch.Tensor]:
        """The bound function of active term `name` (tests and tools evaluate one term)."""
        return self.fns[[t.name for _, t in self.active].index(name)]

    def compute(self, env: Any, unstable: torch.Tensor | None = None) -> torch.Tensor:
        """This step's reward (N,), a fresh tensor (the last one was returned to the learner);
        adds each term's weighted value to the episode sums. A diverged world earns nothing."""
        if not self.fns:
            return torch.zeros(env.num_envs, device=env.device, dtype=torch.float32)
        values = torch.stack([f(env).to(torch.float32) for f in self.fns], 1)
        values = torch.nan_to_num(values) * self.weights  # (N, terms): weight * dt folded in
        if unstable is not None:
            values = values.masked_fill(unstable[:, None], 0.0)
        reward = values.sum(dim=1)
        self.sums.index_add_(1, self.columns, values)
        if self.only_positive:
            reward.clamp_(min=0.0)
        return reward
