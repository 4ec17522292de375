"""One grammar and one merge rule for every kind of term entry in a task config.

    rewards:       {name: {func, params, weight}}          (a bare number: the weight)
    events:        {name: {func, params, mode, interval_s}}
    terminations:  {name: {func, params, time_out}}
    commands:      {name: {func, params, resample_s}}
    actions:       {name: {func, params}}
    curriculum:    {name: {func, params}}
    observations:  {group: {name: {func, params, scale, noise, history, clip, delay}}}

`func` defaults to the entry's name. An entry given over one of the same name merges into it:
its keys replace the old ones, and its params deep-merge over the old params where it keeps the
func (a new func starts from its own params). `null` drops an entry; a `null` for a name that
is not there is refused, naming the entries that are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from simrl.errors import ConfigError

KEYS = {  # kind -> the keys its entries take besides func and params
    "reward": ("weight",),
    "event": ("mode", "interval_s"),
    "termination": ("time_out",),
    "command": ("resample_s",),
    "action": (),
    "curriculum": (),
    "observation": ("scale", "noise", "history", "clip", "delay"),
}


def deep_merge(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """`new` over `old`, nested mappings merged key by key."""
    out = dict(old)
    for k, v in new.items():
        out[k] = deep_merge(out[k], v) if isinstance(v, Mapping) and isinstance(out.get(k), Mapping) else v
    return out


def _as_entry(value: Any, kind: str) -> Any:
    """A reward's bare weight as `{weight: w}`; other values as they are."""
    if kind == "reward" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return {"weight": value}
    return value


def merge_entries(base: Mapping[str, Any], over: Mapping[str, Any] | None, kind: str) -> dict[str, Any]:
    """`over`'s entries merged into `base`'s by the rule above (the module docstring)."""
    out = dict(base)
    for name, entry in (over or {}).items():
        if entry is None:
            if name not in out:
                raise ConfigError(f"{kind} '{name}': null drops an entry, but there is none of that name; "
                                  f"entries: {sorted(out)}")
            del out[name]
            continue
        own = out.get(name)
        if own is None or not (isinstance(own, Mapping) or isinstance(entry, Mapping)):
            out[name] = entry  # a new entry, or a bare weight over a bare weight
            continue
        own, entry = _as_entry(own, kind), _as_entry(entry, kind)
        if not (isinstance(own, Mapping) and isinstance(entry, Mapping)):
            out[name] = entry  # not an entry: its kind's parser names what is wrong
            continue
        merged = {**own, **entry}
        if (merged.get("func") or name) == (own.get("func") or name):
            merged["params"] = deep_merge(own.get("params") or {}, entry.get("params") or {})
        out[name] = merged
    return out


def func_entries(entries: Mapping[str, Any] | None, kind: str,
                 required: tuple[str, ...] = ()) -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """A merged config's entries of one kind as (name, func, params, {kind's key: value given}),
    validated: no keys but func, params and the kind's own (`required` among them)."""
    out = []
    extra = KEYS[kind]
    keys = {"func", "params", *extra}
    shape = ", ".join(["func", "params", *(f"{k} (required)" if k in required else k for k in extra)])
    for name, entry in (entries or {}).items():
        if entry is None:
            continue
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{kind} '{name}': an entry is {{{shape}}} (null drops it), got {entry!r}")
        unknown = sorted(set(entry) - keys)
        if unknown:
            raise ConfigError(f"{kind} '{name}': unknown keys {unknown}; an entry takes {shape}")
        missing = [k for k in required if k not in entry]
        if missing:
            raise ConfigError(f"{kind} '{name}': {missing[0]} is required; an entry takes {shape}")
        params = entry.get("params") or {}
        if not isinstance(params, Mapping):
            raise ConfigError(f"{kind} '{name}': params must be a mapping of keyword arguments, got "
                              f"{params!r}")
        out.append((str(name), str(entry.get("func") or name), dict(params),
                    {k: entry[k] for k in extra if k in entry}))
    return out


def term_func(table: Mapping[str, Any], func: str, where: str) -> Any:
    """`table[func]`, or a one-line error naming the valid funcs."""
    if func not in table:
        from simrl.errors import UnknownNameError

        raise UnknownNameError(f"{where}: unknown func '{func}'; valid: {sorted(table)}")
    return table[func]
