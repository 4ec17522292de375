"""Terms with parameters: a term is `f(env, **params) -> Tensor`, bound to its params once.

    rewards:
      ee_pos: {weight: -0.2, params: {site: attachment_site}}
      ee_fine: {weight: 1.0, func: ee_pos_tanh, params: {site: attachment_site, std: 0.02}}

Params that name model objects (`body`, `bodies`, `joint`, `joints`, `site`, `sites`) take names
or regexes (full match), optionally entity-qualified (`robot/.*_foot`: among the robot's
bodies only; simrl.scene.entity), and are resolved at start-up: a singular one to one id (an int), a plural
one to a long tensor of ids on the env's device, in the order the patterns match. A name that
matches nothing ends the start-up with one line listing the valid names. Params whose name
ends in `_by_joint` take one value per policy joint as a robot config's per-joint settings do (a
number, a list in action order, or `{joint regex: value}`) and become a (joints,) float tensor.
Other params pass as they are. No name is looked up inside a step. A term declares what its
numeric params must be with `@param_rules(std=POSITIVE, ...)`; they are checked once, here.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import mujoco
import torch

from simrl.errors import ConfigError, UnknownNameError

OBJECT_PARAMS = {  # param name -> (MuJoCo object type, plural)
    "body": (mujoco.mjtObj.mjOBJ_BODY, False),
    "bodies": (mujoco.mjtObj.mjOBJ_BODY, True),
    "joint": (mujoco.mjtObj.mjOBJ_JOINT, False),
    "joints": (mujoco.mjtObj.mjOBJ_JOINT, True),
    "site": (mujoco.mjtObj.mjOBJ_SITE, False),
    "sites": (mujoco.mjtObj.mjOBJ_SITE, True),
}
_COUNT = {mujoco.mjtObj.mjOBJ_BODY: "nbody", mujoco.mjtObj.mjOBJ_JOINT: "njnt",
          mujoco.mjtObj.mjOBJ_SITE: "nsite"}


class RewardTerm(NamedTuple):
    """One reward entry of a task config: its name (the log's), function, weight and params."""

    name: str
    func: str
    weight: float
    params: dict[str, Any]


def reward_terms(rewards: Mapping[str, Any]) -> list[RewardTerm]:
    """The config's `rewards` (name -> {func, params, weight}, or name -> weight) as terms."""
    from simrl.managers.entries import func_entries

    entries = {k: {"weight": v} if isinstance(v, (int, float)) and not isinstance(v, bool) else v
               for k, v in rewards.items()}
    out = []
    for name, func, params, extra in func_entries(entries, "reward", required=("weight",)):
        weight = extra["weight"]
        if isinstance(weight, bool) or not isinstance(weight, (int, float)):
            raise ConfigError(f"reward term '{name}': weight must be a number, got {weight!r}")
        out.append(RewardTerm(name, func, float(weight), params))
    return out


def index_of(ids: Any, device: torch.device | str) -> slice | torch.Tensor:
    """Ids as an index: a slice where they are contiguous and ascending (indexing makes a view),
    else a long tensor on `device` (a Python list would be copied to the device on every use)."""
    ids = [int(i) for i in ids]
    if ids and ids == list(range(ids[0], ids[0] + len(ids))):
        return slice(ids[0], ids[0] + len(ids))
    return torch.as_tensor(ids, device=device, dtype=torch.long)


def names_of(model: mujoco.MjModel, objtype: mujoco.mjtObj) -> list[str]:
    """Every name of one kind of model object, in id order."""
    return [mujoco.mj_id2name(model, objtype, i) or "" for i in range(getattr(model, _COUNT[objtype]))]


def resolve(model: mujoco.MjModel, objtype: mujoco.mjtObj, patterns: str | list[str],
            where: str, entities: Mapping[str, Any] | None = None) -> list[int]:
    """Ids of the objects whose names fully match `patterns`, pattern by pattern, each id once.
    With the scene's `entities`, `<entity>/<regex>` matches among that entity's objects only
    (`robot/.*_foot`, `cube/.*`)."""
    names = names_of(model, objtype)
    kind = objtype.name.removeprefix("mjOBJ_").lower()
    ids: list[int] = []
    for p in [patterns] if isinstance(patterns, str) else list(patterns):
        p = str(p)
        pool: Any = range(len(names))
        head, sep, rest = p.partition("/")
        within = ""
        if sep and entities and head in entities:
            pool, p, within = entities[head].ids(objtype), rest, f" of entity '{head}'"
        elif sep and entities and not any(n and re.fullmatch(p, n) for n in names):
            raise UnknownNameError(f"{where}: '{head}' of {kind} '{p}' is not an entity of the scene; "
                                   f"entities: {sorted(entities)}")
        hits = [i for i in pool if names[i] and re.fullmatch(p, names[i])]
        if not hits:
            valid = [names[i] for i in pool if names[i]]
            raise UnknownNameError(f"{where}: {kind} '{p}'{within} matches nothing in the model; "
                                   f"valid: {valid[:60]}")
        ids += [i for i in hits if i not in ids]
    return ids


def _numbers(value: Any) -> torch.Tensor | None:
    try:
        return torch.as_tensor(value, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):
        return None


def _rule(test: Callable[[torch.Tensor], torch.Tensor], must: str) -> tuple[Callable[[Any], bool], str]:
    """A param rule on every number of a value (a number, a list, a per-joint tensor): finite and
    `test`; None passes (a term's "not set")."""
    def ok(value: Any) -> bool:
        if value is None:
            return True
        x = _numbers(value)
        return x is not None and x.numel() > 0 and bool((torch.isfinite(x) & test(x)).all())
    return ok, must


POSITIVE = _rule(lambda x: x > 0, "a finite number > 0")
NON_NEGATIVE = _rule(lambda x: x >= 0, "a finite number >= 0")
FINITE = _rule(lambda x: x == x, "a finite number")
UNIT_OPEN = _rule(lambda x: (x > 0) & (x < 1), "a share in (0, 1)")


def param_rules(*relations: tuple[Callable[..., bool], str],
                **rules: tuple[Callable[[Any], bool], str]) -> Callable:
    """Declare what a term's params must be (`name=(check, "what it must be")`, e.g. POSITIVE),
    and how they must relate (`(check(**params), "what must hold")`, e.g. floor <= cap): `bind`
    checks the given or default values once, so a zero std or a stance of 1 stops the start-up
    with one line instead of giving inf or NaN rewards at every step."""
    def mark(func: Callable) -> Callable:
        func.param_rules = rules
        func.param_relations = relations
        return func
    return mark


def bind(env: Any, func: Callable[..., torch.Tensor], params: Mapping[str, Any], where: str,
         call_args: int = 1) -> Callable[..., torch.Tensor]:
    """`func` with `params` bound (object names resolved to ids): a function of its first
    `call_args` arguments alone (the env; an event's env and mask)."""
    params = dict(params or {})
    accepted = inspect.signature(func).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
    unknown = sorted(k for k in params if k not in accepted and not takes_any)
    if unknown:
        valid = list(accepted)[call_args:]  # after `env` (and an event's `mask`)
        raise ConfigError(f"{where}: unknown params {unknown}; valid: {valid}")
    missing = [k for k, p in list(accepted.items())[call_args:] if p.default is inspect.Parameter.empty
               and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and k not in params]
    if missing:
        raise ConfigError(f"{where}: params {missing} are required (give them in the term's params)")
    bound = {}
    for key, value in params.items():
        if key.endswith("_by_joint"):
            from simrl.scene import per_joint

            joints = getattr(getattr(env, "robot", None), "joints", None)
            if not joints:
                raise ConfigError(f"{where}: {key} needs a robot with policy joints")
            values = per_joint(value, list(joints), f"{where}: {key}")
            if values is None:
                raise ConfigError(f"{where}: {key} needs a value: a number, a list in action order, "
                                  "or {joint regex: value}")
            bound[key] = torch.as_tensor(values, device=env.device, dtype=torch.float32)
        elif key in OBJECT_PARAMS:
            objtype, plural = OBJECT_PARAMS[key]
            entities = getattr(getattr(env, "scene", None), "entities", None)
            ids = resolve(env.model, objtype, value, where, entities)
            if plural:
                bound[key] = torch.as_tensor(ids, device=env.device, dtype=torch.long)
            elif len(ids) != 1:
                raise ConfigError(f"{where}: {key} '{value}' must name one object, matches {len(ids)}")
            else:
                bound[key] = ids[0]
        else:
            bound[key] = value
    for key, (ok, must) in getattr(func, "param_rules", {}).items():
        value = bound[key] if key in bound else accepted[key].default
        if not ok(value):
            raise ConfigError(f"{where}: param {key} must be {must}, got "
                              f"{params.get(key, value)!r}; set it in the term's params")
    relations = getattr(func, "param_relations", ())
    if relations:
        values = {k: bound.get(k, p.default) for k, p in list(accepted.items())[call_args:]
                  if k in bound or p.default is not inspect.Parameter.empty}
        for ok, must in relations:
            if not ok(**values):
                given = {k: params[k] for k in params if k in values}
                raise ConfigError(f"{where}: params must satisfy {must}, got {given}; set them in the "
                                  "term's params")
    return functools.partial(func, **bound) if bound else func
