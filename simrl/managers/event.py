"""The event manager: randomization and disturbances as event terms (simrl.mdp.events), by mode.

`startup` events run once for every env before the first reset (per-world model fields);
`spawn` events on the envs being reset, where each episode starts (the robot's joints, an
object's pose, forward kinematics), before the commands draw (a command may be drawn from
there); `reset` events on the envs being reset after the commands' draws; `interval` events
every `interval_s` of each env's episode, before the physics step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import torch

from simrl.errors import ConfigError
from simrl.managers.entries import func_entries, term_func
from simrl.managers.terms import bind

MODES = ("startup", "spawn", "reset", "interval")


class EventTerm(NamedTuple):
    """One entry of a task config's `events`."""

    name: str
    func: str
    mode: str
    interval_s: float | None
    params: dict[str, Any]


def event_terms(events: Mapping[str, Any] | None) -> list[EventTerm]:
    """The config's `events` (name -> {func, params, mode, interval_s}) as terms, validated."""
    out = []
    for name, func, params, extra in func_entries(events, "event", required=("mode",)):
        mode, interval = extra["mode"], extra.get("interval_s")
        if mode not in MODES:
            raise ConfigError(f"event '{name}': mode must be one of {list(MODES)}, got {mode!r}")
        if (mode == "interval") != (interval is not None):
            raise ConfigError(f"event '{name}': interval_s (s, > 0) goes with mode interval and only with it")
        if interval is not None and not float(interval) > 0:
            raise ConfigError(f"event '{name}': interval_s must be > 0 s, got {interval!r}")
        out.append(EventTerm(name, func, mode, None if interval is None else float(interval), params))
    return out


class EventManager:
    """The event entries of one env batch. Holds no state of its own."""

    not_state = frozenset({"fns", "facts"})

    def __init__(self, env: Any, entries: Mapping[str, Any], table: Mapping[str, Callable[..., None]]):
        from simrl.managers.termination import merge_facts

        self.fns: dict[str, list[tuple[Callable[..., None], int]]] = {mode: [] for mode in MODES}
        self.facts: dict[str, Any] = {}  # spawn and reset events' part of policy.json's deploy.reset
        for e in event_terms(entries):  # names: the env's check_terms
            steps = 0 if e.interval_s is None else max(1, round(e.interval_s / env.dt))
            func = term_func(table, e.func, f"event '{e.name}'")
            fn = bind(env, func, e.params, f"event '{e.name}'", call_args=2)
            self.fns[e.mode].append((fn, steps))
            facts = getattr(func, "deploy_facts", None)
            if facts is not None and e.mode in ("spawn", "reset"):
                merge_facts(self.facts, facts(env, **getattr(fn, "keywords", {})))

    def interval_steps(self) -> list[int]:
        """Control steps between the firings of each interval event."""
        return [steps for _, steps in self.fns["interval"]]

    def apply(self, env: Any, mode: str, mask: torch.Tensor | None = None) -> None:
        """Run the `mode` events on the envs where `mask` (None: every env); `interval` events
        on the envs whose episode reaches their period with the coming step."""
        for fn, steps in self.fns[mode]:
            if mode == "interval":
                fn(env, (env.episode_length_buf + 1) % steps == 0)
            elif mask is None:
                fn(env, torch.ones(env.num_envs, device=env.device, dtype=torch.bool))
            else:
                fn(env, mask)
