"""The command manager: what each env is asked to do, as command terms (simrl.mdp.commands), drawn
at resets and, where `resample_s` is set, on each env's own clock."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

import torch

from simrl.errors import ConfigError, UnknownNameError
from simrl.managers.entries import func_entries, term_func
from simrl.managers.terms import bind


class CommandEntry(NamedTuple):
    """One entry of a task config's `commands`."""

    name: str
    func: str
    resample_s: float | None
    params: dict[str, Any]


def command_entries(entries: Mapping[str, Any] | None) -> list[CommandEntry]:
    """The config's `commands` (name -> {func, resample_s, params}; null: none), validated."""
    out = []
    for name, func, params, extra in func_entries(entries, "command"):
        every = extra.get("resample_s")
        if every is not None and (isinstance(every, bool) or not isinstance(every, (int, float))
                                  or not every > 0):
            raise ConfigError(f"command '{name}': resample_s must be > 0 s (or null: only at resets), "
                              f"got {every!r}")
        out.append(CommandEntry(name, func, None if every is None else float(every), params))
    return out


class CommandManager:
    """The command entries of one env batch. State: each term's tensors and its clock (control
    steps between draws; 0: only at resets, as after `fix`)."""

    def __init__(self, env: Any, entries: Mapping[str, Any], table: Mapping[str, type]):
        self.terms: dict[str, Any] = {}
        self.clock: dict[str, int] = {}
        for c in command_entries(entries):  # names: the env's check_terms
            make = bind(env, term_func(table, c.func, f"command '{c.name}'"), c.params, f"command '{c.name}'")
            self.terms[c.name] = make(env)
            self.clock[c.name] = 0 if c.resample_s is None else max(1, round(c.resample_s / env.dt))

    def resample(self, env: Any, mask: torch.Tensor) -> None:
        """New draws for the envs where `mask` (a reset)."""
        for term in self.terms.values():
            term.resample(env, mask)

    def step(self, env: Any) -> None:
        """After the physics: each clock's draws, then each term's own step (a heading's steering)."""
        for name, term in self.terms.items():
            if self.clock[name]:
                term.resample(env, env.episode_length_buf % self.clock[name] == 0)
            term.step(env)

    def get(self, name: str | None, task: str) -> Any:
        """Term `name`; None: the only command, or the only tracked one (a velocity)."""
        if name is None:
            terms = list(self.terms.values())
            if len(terms) != 1:
                terms = [t for t in terms if getattr(t, "tracked", False)]
            if len(terms) != 1:
                raise ConfigError(f"task '{task}' has {len(self.terms)} commands {sorted(self.terms)}: "
                                  "name one")
            return terms[0]
        if name not in self.terms:
            raise UnknownNameError(f"no command '{name}' in task '{task}'; valid: {sorted(self.terms)}")
        return self.terms[name]

    def fix(self, env: Any, values: Any, name: str | None, task: str) -> None:
        """Pin every env's command `name` to `values` and stop its clock (evaluation)."""
        term = self.get(name, task)
        term.fix(env, values)
        self.clock[next(k for k, t in self.terms.items() if t is term)] = 0

    def deploy_facts(self, env: Any) -> dict[str, Any]:
        """The terms' facts for policy.json (tracks_commands, a target's draw)."""
        return {k: v for t in self.terms.values() for k, v in t.deploy_facts(env).items()}
