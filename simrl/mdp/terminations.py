"""Terminations: term functions `f(env, **params) -> bool (N,)` that end episodes, listed in a
task's config:

    terminations:
      tilt: {func: base_tilt, params: {max_tilt_cos: 0.5}}
      body_contact: {func: body_contact, params: {bodies: [trunk, ".*_thigh"]}}
      cart: {func: joint_pos_out_of_range, params: {joint: slider, limit: 2.4}}
      far: {func: ..., time_out: true}   # ends the episode as a truncation (bootstrapped)
      height: null                       # drops the task's own term of that name

A task builds its own entries from its fields (its config's `own_entries`); the config's
merge into those of the same name. An episode ended by a term is terminated (a terminal state)
unless the term says `time_out: true`. Params are bound once as reward terms' are
(`simrl.managers.terms`). Each ending is logged per term as `Episode_Termination/<name>`: the share of
the ended episodes in which that term fired.

A term may carry the facts a robot-side check needs (`deploy_facts`): they go into
`policy.json`'s `deploy.termination`, which sim-to-sim and the rehearsal robot apply, so
neither needs to know the task.
"""

from __future__ import annotations

import weakref
from typing import Any

import mujoco
import torch

from simrl.errors import ConfigError
from simrl.managers.termination import deploy_facts

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
