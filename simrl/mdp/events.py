"""Events: term functions `f(env, mask, **params)` that act on the envs where bool `mask` (N,)
at a point of their episodes, listed in a task's config:

    events:
      push: {func: push_body, mode: interval, interval_s: 4.0, params: {body: trunk, max_vel: 0.5}}
      mass: {func: scale_field, mode: startup, params: {field: body_mass, bodies: trunk, range: [0.9, 1.2]}}

Modes: `startup` (once, every env, before the first reset: per-world model randomization),
`spawn` (the envs being reset, where their episodes start: joints, objects, then
`forward_kinematics`; before the commands draw), `reset` (the envs being reset, after the
commands' draws), `interval` (every `interval_s` of each env's episode, before the physics step,
so that step's observation shows it). Params are bound
once as reward terms' are (simrl.managers.terms: `body`/`bodies`/`joint`/`joints`/`site`/`sites` name model
objects and become ids). Every draw is for all envs, kept where `mask`: no host sync. An env's
own hard-coded randomization (a task's fields) runs before its events, so adding an event leaves
the random stream of everything before it as it was.
"""

from __future__ import annotations

import weakref
from typing import Any

import mujoco
import torch

from simrl.errors import ConfigError

_DOFADR: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # env -> jnt_dofadr on its device


def _dof_addresses(env: Any) -> torch.Tensor:
    """The model's joint -> first dof address, on the env's device, built once per env (a
    tensor made from host data on every call would be a host sync on a GPU)."""
    adr = _DOFADR.get(env)
    if adr is None:
        adr = _DOFADR[env] = torch.as_tensor(env.model.jnt_dofadr, device=env.device, dtype=torch.long)
    return adr


# --- terms ------------------------------------------------------------------------------------
def push_body(env: Any, mask: torch.Tensor, body: int, max_vel: float) -> None:
    """Kick the free body `body` (a floating base) by a uniform horizontal velocity of up to
    `max_vel` m/s per axis."""
    m = env.model
    jnt = int(m.body_jntadr[body])
    if jnt < 0 or m.jnt_type[jnt] != mujoco.mjtJoint.mjJNT_FREE:
        raise ConfigError(f"push_body: body '{m.body(body).name}' has no free joint (a fixed base "
                          "or a child link): name a floating base")
    dof = int(m.jnt_dofadr[jnt])
    kick = env.uniform((env.num_envs, 2), -max_vel, max_vel) * mask[:, None]
    env.sim.qvel[:, dof : dof + 2] += kick.to(env.sim.dtype)


def scale_field(env: Any, mask: torch.Tensor, field: str, range: tuple[float, float],  # noqa: A002
                bodies: torch.Tensor | None = None, joints: torch.Tensor | None = None) -> None:
    """Multiply a per-world model field by a uniform factor in `range`, one per env and object:
    a `body_*` field (mass, inertia, centre of mass) of `bodies`, or a `dof_*` field (damping,
    armature, friction loss) of `joints`. Mass and inertia changes re-derive the model's
    constants (`set_const`): use it at startup."""
    if field.startswith("body_"):
        if bodies is None:
            raise ConfigError(f"scale_field: {field} is per body: give bodies")
        ids = bodies
    elif field.startswith("dof_"):
        if joints is None:
            raise ConfigError(f"scale_field: {field} is per dof: give joints")
        ids = _dof_addresses(env)[joints]
    else:
        raise ConfigError(f"scale_field: field '{field}' is neither body_* (with bodies) nor dof_* (with "
                          "joints)")
    try:
        view = env.sim.param(field)
    except (AttributeError, KeyError, ValueError) as e:
        raise ConfigError(f"scale_field: '{field}' is not a per-world model field of this sim: {e}") from None
    old = view[:, ids]
    factor = env.uniform((env.num_envs, len(ids)) + (1,) * (old.dim() - 2), *range).to(view.dtype)
    keep = mask.reshape((-1,) + (1,) * (old.dim() - 1))
    view[:, ids] = torch.where(keep, old * factor, old)
    if field.startswith("body_"):
        env.sim.set_const()


def forward_kinematics(env: Any, mask: torch.Tensor) -> None:
    """Recompute positions and orientations of the envs in `mask` from their qpos (a spawn
    event, after the events that set joints and objects): the first observation of an episode
    then reads the new end-effector and object poses, not the last episode's. On mjwarp one
    pass covers every world, bringing the others' kinematics up to date as well."""
    env.sim.forward(mask)


EVENT_TERMS = {f.__name__: f for f in (push_body, scale_field, forward_kinematics)}
