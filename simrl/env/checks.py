"""Start-up checks of a task config against its env class's term tables, before anything is
built: every term a config names exists, and observation entries are well formed. Each failure
is one line naming the entry and the valid choices."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simrl.errors import ConfigError, UnknownNameError
from simrl.managers.terms import reward_terms

KINDS = {  # a config's TERMS kind -> the env's table of it
    "observations": "OBS_TERMS", "rewards": "REWARD_TERMS", "metrics": "METRIC_TERMS",
    "tracking": "TRACKING_TERMS", "events": "EVENT_TERMS", "terminations": "TERMINATION_TERMS",
    "commands": "COMMAND_TERMS", "actions": "ACTION_TERMS", "curriculum": "CURRICULUM_TERMS",
}


def term_tables(cls: type, cfg: Any) -> dict[str, dict[str, Any]]:
    """The env's term tables (attribute name -> {name: function}): the library's and the env
    class's, with the task config's own `TERMS` added."""
    own = getattr(type(cfg), "TERMS", {})
    unknown = sorted(set(own) - set(KINDS))
    if unknown:
        raise ConfigError(f"{type(cfg).__name__}.TERMS: unknown kinds {unknown}; valid: {sorted(KINDS)}")
    return {attr: {**getattr(cls, attr), **own.get(kind, {})} for kind, attr in KINDS.items()}


def check_terms(cls: type, cfg: Any) -> None:
    """Every reward, observation, event, termination, action, command and curriculum term that
    `cfg` names exists in `cls`'s tables (UnknownNameError otherwise)."""
    task = getattr(cfg, "task_name", "") or cls.task_name
    tables = term_tables(cls, cfg)

    for t in reward_terms(cfg.rewards):
        if t.func not in tables["REWARD_TERMS"]:
            raise UnknownNameError(
                f"unknown reward term '{t.func}' for task '{task}'; "
                f"valid: {sorted(tables['REWARD_TERMS'])}"
            )
    # the other kinds merge into the task's own entries when the env is built (an entry without
    # func may complete one of them); the funcs named here are checked now, the rest at binding
    for what, entries, table in (("event", cfg.events, tables["EVENT_TERMS"]),
                                 ("termination", cfg.terminations, tables["TERMINATION_TERMS"]),
                                 ("action", cfg.actions, tables["ACTION_TERMS"]),
                                 ("command", cfg.commands, tables["COMMAND_TERMS"]),
                                 ("curriculum", cfg.curriculum, tables["CURRICULUM_TERMS"])):
        for name, entry in (entries or {}).items():
            func = entry.get("func") if isinstance(entry, Mapping) else None
            if func is not None and func not in table:
                raise UnknownNameError(f"{what} '{name}': unknown func '{func}' for task '{task}'; "
                                       f"valid: {sorted(table)}")
    for group, terms in cfg.observations.items():
        names = [t.name for t in terms]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ConfigError(f"observation group '{group}' lists {twice} more than once: a term "
                              f"appears once per group (its params say what it reads)")
        for t in terms:
            if isinstance(t.history, bool) or not isinstance(t.history, int) or t.history < 1:
                raise ConfigError(f"observation term '{t.name}' in group '{group}': history "
                                  f"must be an int >= 1 (frames stacked), got {t.history!r}")
            if isinstance(t.delay, bool) or not isinstance(t.delay, int) or t.delay < 0:
                raise ConfigError(f"observation term '{t.name}' in group '{group}': delay must be "
                                  f"an int >= 0 (control steps), got {t.delay!r}")
            if t.clip is not None and (isinstance(t.clip, bool) or not isinstance(t.clip, (int, float))
                                       or not t.clip > 0):
                raise ConfigError(f"observation term '{t.name}' in group '{group}': clip must be a "
                                  f"number > 0 (or null), got {t.clip!r}")
            if (t.func or t.name) not in tables["OBS_TERMS"]:
                raise UnknownNameError(
                    f"unknown observation term '{t.func or t.name}' in group '{group}' for task "
                    f"'{task}'; valid: {sorted(tables['OBS_TERMS'])}"
                )

