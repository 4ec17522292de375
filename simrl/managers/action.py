"""The action manager: how the policy's action columns drive the actuators, as action terms
(simrl.mdp.actions), and the same facts as plain data for export and deploy (`spec`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import mujoco
import numpy as np
import torch

from simrl.errors import ConfigError
from simrl.managers.entries import func_entries, term_func
from simrl.managers.terms import bind


def action_entries(entries: Mapping[str, Any] | None) -> list[tuple[str, str, dict[str, Any]]]:
    """The config's `actions` (name -> {func, params}; null: none) as (name, func, params)."""
    return [(name, func, params) for name, func, params, _ in func_entries(entries, "action")]


def parse_action_delay(delay: Any) -> tuple[int, int]:
    """`action_delay` as (min, max) whole control steps, 0 <= min <= max; a one-line error otherwise."""
    try:
        lo, hi = delay
        ok = all(float(v).is_integer() for v in (lo, hi)) and 0 <= lo <= hi
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ConfigError(f"action_delay must be (min, max) control steps with 0 <= min <= max, got "
                          f"{tuple(delay) if isinstance(delay, (list, tuple)) else delay!r}")
    return int(lo), int(hi)


def check_cover(env: Any, terms: Mapping[str, Any]) -> None:
    """Every policy actuator claimed by exactly one term, and one mode for all (the runtime's)."""
    m, na = env.model, env.num_actions
    owner: dict[int, str] = {}
    for name, term in terms.items():
        for c in term.cols:
            if c in owner:
                raise ConfigError(f"action terms '{owner[c]}' and '{name}' both drive actuator "
                                  f"'{m.actuator(c).name}': each policy actuator belongs to one term")
            owner[c] = name
    free = [m.joint(int(m.actuator_trnid[i, 0])).name for i in range(na) if i not in owner]
    if free:
        raise ConfigError(f"joints {free} are in no action term: add them to one (a joint_position_action's "
                          f"joints) or hold them (the robot's held_joints)")
    modes = {t.mode for t in terms.values() if hasattr(t, "mode")}
    if len(modes) > 1:
        raise ConfigError(f"action terms mix modes {sorted(modes)}: a policy's joint targets are all "
                          "absolute or all delta")


def _torque_limits(m: mujoco.MjModel, na: int) -> list[float]:
    """Each policy actuator's torque limit as the simulation applies it: its forcerange where
    limited, and its joint's actuatorfrcrange where limited (inf where neither is)."""
    out = []
    for i in range(na):
        lim = float(np.abs(m.actuator_forcerange[i]).max()) if m.actuator_forcelimited[i] else np.inf
        jnt = int(m.actuator_trnid[i, 0])
        if m.jnt_actfrclimited[jnt]:
            lim = min(lim, float(np.abs(m.jnt_actfrcrange[jnt]).max()))
        out.append(lim)
    return out


class ActionManager:
    """The action entries of one env batch: terms that claim actuators (together every policy
    actuator once) and priors that add to the actions first (`prior = True`: a reference gait).

    With `delay` (min, max) control steps, the actions reach the terms that many steps late, the
    delay drawn per env at each reset (a robot's actuation latency); state: the delays and the
    queue of recent actions."""

    not_state = frozenset({"priors", "claims", "delay_range"})

    def __init__(self, env: Any, entries: Mapping[str, Any], table: Mapping[str, type],
                 delay: Any = None):
        self.delay_range = None if delay is None else parse_action_delay(delay)
        if self.delay_range is not None:
            n, na = env.num_envs, env.num_actions
            self.delay = torch.zeros(n, 1, 1, device=env.device, dtype=torch.long)
            self.queue = torch.zeros(n, self.delay_range[1] + 1, na, device=env.device, dtype=torch.float32)
        self.terms: dict[str, Any] = {}
        for name, func, params in action_entries(entries):
            where = f"action '{name}'"
            self.terms[name] = bind(env, term_func(table, func, where), params, where)(env)
        # priors add to the actions (a reference gait); the other terms claim actuators
        self.priors = [t for t in self.terms.values() if getattr(t, "prior", False)]
        claims = {k: t for k, t in self.terms.items() if not getattr(t, "prior", False)}
        check_cover(env, claims)
        for t in self.priors:
            t.link(env, claims)
        self.claims = list(claims.values())

    def reset(self, env: Any, mask: torch.Tensor) -> None:
        """Each env in bool `mask` (N,) draws its delay; its queue empties."""
        if self.delay_range is None:
            return
        lo, hi = self.delay_range
        delay = torch.randint(lo, hi + 1, (env.num_envs, 1, 1), generator=env.gen, device=env.device)
        self.delay = torch.where(mask[:, None, None], delay, self.delay)
        self.queue = self.queue.masked_fill(mask[:, None, None], 0.0)

    def apply(self, env: Any, actions: torch.Tensor) -> None:
        """Write `actions` (N, num_actions) into `sim.ctrl`: delayed where a delay is set, the
        priors' additions, then every claiming term."""
        if self.delay_range is not None and self.queue.shape[1] > 1:  # `delay` steps old
            self.queue = torch.cat([actions[:, None], self.queue[:, :-1]], dim=1)
            actions = self.queue.gather(1, self.delay.expand(-1, 1, actions.shape[1])).squeeze(1)
        for term in self.priors:
            actions = term.add(env, actions)
        for term in self.claims:
            term.apply(env, actions)

    def spec(self, env: Any) -> dict[str, Any]:
        """How actions become actuator commands, as plain data (export and deploy read it):
        `scale` (one number, or one per actuator), `offset`, `mode`, and `binary` columns."""
        m, na = env.model, env.num_actions
        joint = mujoco.mjtObj.mjOBJ_JOINT
        specs = [t.spec(env) for t in self.claims]
        scale: Any = np.zeros(na)
        for sp in specs:
            scale[sp["cols"]] = sp["scale"]
        scales = {sp["scale"] for sp in specs if isinstance(sp["scale"], float) and "binary" not in sp}
        if len(scales) == 1 and all("binary" not in sp and isinstance(sp["scale"], float) for sp in specs):
            scale = scales.pop()  # one number where every actuator shares it
        else:
            scale = scale.tolist()
        binary = [{"index": sp["cols"][0], **sp["binary"]} for sp in specs if "binary" in sp]
        return {
            "scale": scale,
            "mode": next((sp["mode"] for sp in specs if "mode" in sp), "absolute"),
            **({"binary": binary} if binary else {}),
            # what the runtime adds to the policy's actions before they become targets
            **({"priors": [t.spec(env)["prior"] for t in self.priors]} if self.priors else {}),
            "offset": env.action_offset.tolist(),
            "clip": float(env.cfg.action_clip),
            "actuator_names": [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, i) for i in range(na)],
            "joint_names": [mujoco.mj_id2name(m, joint, int(m.actuator_trnid[i, 0])) for i in range(na)],
            "kp": m.actuator_gainprm[:na, 0].tolist(),
            "kd": (-m.actuator_biasprm[:na, 2]).tolist(),
            "torque_limit": _torque_limits(m, na),
            "ctrl_range": m.actuator_ctrlrange[:na].tolist(),
        }
