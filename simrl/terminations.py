"""Terminations: term functions `f(env, **params) -> bool (N,)` that end episodes, listed in a
task's config:

    terminations:
      tilt: {func: base_tilt, params: {max_tilt_cos: 0.5}}
      body_contact: {func: body_contact, params: {bodies: [trunk, ".*_thigh"]}}
      cart: {func: joint_pos_out_of_range, params: {joint: slider, limit: 2.4}}
      far: {func: ..., time_out: true}   # ends the episode as a truncation (bootstrapped)
      height: null                       # drops the task's own term of that name

A task builds its own entries from its fields (`EnvBatch.task_terminations`); the config's
replace those of the same name. An episode ended by a term is terminated (a terminal state)
unless the term says `time_out: true`. Params are bound once as reward terms' are
(`simrl.terms`). Each ending is logged per term as `Episode_Termination/<name>`: the share of
the ended episodes in which that term fired.

A term may carry the facts a robot-side check needs (`deploy_facts`): they go into
`policy.json`'s `deploy.termination`, which sim-to-sim and the rehearsal robot apply, so
neither needs to know the task.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import mujoco
import torch

from simrl.errors import ConfigError


class TerminationTerm(NamedTuple):
    """One entry of a task config's `terminations`."""

    name: str
    func: str
    time_out: bool
    params: dict[str, Any]


def termination_terms(entries: Mapping[str, Any] | None) -> list[TerminationTerm]:
    """The config's `terminations` (name -> {func, params, time_out}; null: none) as terms."""
    out = []
    for name, entry in (entries or {}).items():
        if entry is None:
            continue
        if not isinstance(entry, Mapping):
            raise ConfigError(f"termination '{name}': an entry is {{func, params, time_out}} (or null "
                              f"to drop the task's own), got {entry!r}")
        unknown = sorted(set(entry) - {"func", "params", "time_out"})
        if unknown:
            raise ConfigError(f"termination '{name}': an entry takes func, params and time_out; "
                              f"got {sorted(entry)}")
        time_out = entry.get("time_out", False)
        if not isinstance(time_out, bool):
            raise ConfigError(f"termination '{name}': time_out must be true or false, got {time_out!r}")
        out.append(TerminationTerm(str(name), str(entry.get("func") or name), time_out,
                                   dict(entry.get("params") or {})))
    return out


def deploy_facts(facts: Callable[..., dict[str, Any]]) -> Callable[[Callable], Callable]:
    """Attach `facts(env, **bound params) -> dict` to a term: its part of policy.json's
    `deploy.termination` (nested dicts merge)."""
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


# --- terms ------------------------------------------------------------------------------------
_QPOSADR: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # env -> {joint: qpos address}


def _qpos_adr(env: Any, joint: int) -> int:
    """The 1-dof `joint`'s qpos address, checked and looked up once per env and joint."""
    known = _QPOSADR.setdefault(env, {})
    if joint not in known:
        m = env.model
        if int(m.jnt_type[joint]) not in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)):
            raise ConfigError(f"joint_pos_out_of_range: joint '{m.joint(joint).name}' is not a hinge or a "
                              "slide (one qpos): name a 1-dof joint")
        known[joint] = int(m.jnt_qposadr[joint])
    return known[joint]


@deploy_facts(lambda env, joint, limit: {"max_abs_qpos": {str(_qpos_adr(env, joint)): float(limit)}})
def joint_pos_out_of_range(env: Any, joint: int, limit: float) -> torch.Tensor:
    """|qpos| of the 1-dof `joint` above `limit` (m or rad): a cart off its rail, a pole down."""
    return env.sim.qpos[:, _qpos_adr(env, joint)].abs() > limit


@deploy_facts(lambda env, bodies, threshold=1.0: {
    "contact_bodies": [env.model.body(int(b)).name for b in bodies.tolist()]})
def body_contact(env: Any, bodies: torch.Tensor, threshold: float = 1.0) -> torch.Tensor:
    """Any of `bodies` pressed by a contact force above `threshold` N (a trunk or a knee on the
    ground). Needs the model's contact forces (an acceleration-stage sensor, such as an IMU's
    accelerometer)."""
    return (env.sim.contact_force(bodies).norm(dim=-1) > threshold).any(dim=1)


TERMINATION_TERMS = {f.__name__: f for f in (joint_pos_out_of_range, body_contact)}
