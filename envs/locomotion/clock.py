"""The velocity task's config completed from its fields and the robot: stacked history, the gait
clock (observed, and the clocked rewards on it), a robot's default gait offsets, and the checks
that a robot can walk."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING

import mujoco
import numpy as np

from simrl.env import ObsTerm
from simrl.errors import ConfigError
from simrl.scene import Scene

if TYPE_CHECKING:
    from simrl.envs.locomotion.cfg import LocomotionCfg


def _with_history(cfg: LocomotionCfg) -> LocomotionCfg:
    """`history` H > 1: every policy term but the command stacks its last H frames."""
    if isinstance(cfg.history, bool) or not isinstance(cfg.history, int) or cfg.history < 1:
        raise ConfigError(f"history must be an int >= 1 (frames stacked per policy term), got "
                          f"{cfg.history!r}")
    if cfg.history == 1 or "policy" not in cfg.observations:
        return cfg
    terms = [t if t.name == "command" else dataclasses.replace(t, history=cfg.history)
             for t in cfg.observations["policy"]]
    return dataclasses.replace(cfg, observations={**cfg.observations, "policy": terms})


def _with_gait_clock(cfg: LocomotionCfg) -> LocomotionCfg:
    """`gait_period_s` set: the `gait_clock` term joins the policy and critic groups, and the
    clocked rewards follow it. Without a clock they keep their own period, with the robot's
    gait offsets (`gait_offsets`) where they give none."""
    if cfg.gait_period_s is None:
        if cfg.gait_offsets is None:
            return cfg
        offsets = {"offsets": [float(o) for o in cfg.gait_offsets]}
        return dataclasses.replace(cfg, rewards=_on_the_clock(cfg.rewards, offsets, observed=False))
    if not cfg.gait_period_s > 0:
        raise ConfigError(f"gait_period_s must be > 0 s (or null: no gait clock), got {cfg.gait_period_s!r}")
    params = {"period": float(cfg.gait_period_s), "offsets": [float(o) for o in cfg.gait_offsets]}
    groups = {g: [*terms, ObsTerm("gait_clock", params=params)] if g in ("policy", "critic") else terms
              for g, terms in cfg.observations.items()}
    return dataclasses.replace(cfg, observations=groups, rewards=_on_the_clock(cfg.rewards, params))


CLOCKED_REWARDS = ("gait_contact", "feet_height_phase")  # rewards that read a gait clock's phase


def _clocked(rewards: dict) -> list[tuple[str, dict]]:
    """The weighted clocked rewards, each as (name, {weight, func?, params})."""
    out = []
    for name, entry in rewards.items():
        func = (entry.get("func") or name) if isinstance(entry, Mapping) else name
        if func not in CLOCKED_REWARDS:
            continue
        if not isinstance(entry, Mapping):
            if isinstance(entry, bool) or not isinstance(entry, (int, float)) or entry == 0:
                continue  # off, or not a weight (reward_terms names the problem)
            entry = {"weight": entry}
        if entry.get("weight"):
            out.append((name, entry))
    return out


def _on_the_clock(rewards: dict, clock: dict, observed: bool = True) -> dict:
    """The clocked rewards on the clock the policy observes: a period or offsets they do not
    give are the clock's (so `gait_period_s=0.5` moves both), and ones they give must equal it
    (a reward paying another rhythm than the observed one trains nothing useful)."""
    out = dict(rewards)
    for name, entry in _clocked(rewards):
        params = dict(entry.get("params") or {})
        for key, value in clock.items():
            if key not in params:
                params[key] = value
            elif observed and not np.array_equal(np.atleast_1d(np.asarray(params[key], dtype=float)),
                                                 np.atleast_1d(np.asarray(value, dtype=float))):
                field_name = "gait_period_s" if key == "period" else "gait_offsets"
                raise ConfigError(f"reward term '{name}': param {key}={params[key]!r} differs from the gait "
                                  f"clock the policy observes ({field_name}={value!r}); drop the param "
                                  "(it then follows the clock) or set both to the same value")
        out[name] = {**entry, "params": params}
    return out


def default_gait_offsets(scene: Scene) -> list[float]:
    """`gait_offsets` null: two feet half a cycle apart (a walk), four in diagonal pairs half a
    cycle apart (a trot), the pairs found from where the feet stand at the robot's default pose
    in the base frame, so the robot's feet order does not matter."""
    feet = list(scene.robot.feet)
    if len(feet) == 2:
        return [0.0, 0.5]
    m = scene.model
    d = mujoco.MjData(m)
    d.qpos[scene.joint_qpos] = scene.default_joint_pos
    mujoco.mj_kinematics(m, d)
    rel = (d.xpos[scene.feet] - d.xpos[scene.root_body]) @ d.xmat[scene.root_body].reshape(3, 3)
    rel -= rel.mean(axis=0)
    diagonal = np.sign(rel[:, 0]) * np.sign(rel[:, 1])  # +1: front-left and rear-right, -1: the others
    if len(feet) != 4 or sorted(diagonal.tolist()) != [-1.0, -1.0, 1.0, 1.0]:
        raise ConfigError(f"gait_offsets null picks a gait for 2 feet (a walk) or 4 at the corners of the "
                          f"base (a trot); robot has feet {feet}: set gait_offsets, one per foot")
    return [0.0 if k == diagonal[0] else 0.5 for k in diagonal]


def _check_clock_feet(cfg: LocomotionCfg, feet: list[str]) -> None:
    """One gait offset per foot, for the observed clock and every clocked reward (after
    `_with_gait_clock`, which gives each of them offsets)."""
    uses = [("gait_offsets", list(cfg.gait_offsets))] if cfg.gait_period_s is not None else []
    uses += [(f"reward term '{name}': param offsets", list(entry["params"]["offsets"]))
             for name, entry in _clocked(cfg.rewards)]
    for where, offsets in uses:
        if len(offsets) != len(feet):
            raise ConfigError(f"{where} has {len(offsets)} values, but the robot has {len(feet)} feet "
                              f"{feet}: give one offset (a fraction of the cycle) per foot, in that order")


def _check_legged(scene: Scene, task: str) -> None:
    """The velocity task walks a floating base on feet and reads its IMU: refuse other robots."""
    r, lacks = scene.robot, []
    if scene.fixed_base:
        lacks.append(f"a floating base (root_body '{r.root_body}' has no free joint)")
    if not r.feet:
        lacks.append("feet (foot bodies)")
    if not r.imu_site:
        lacks.append("imu_site (a site on the base; add one with `sites:` where the MJCF has none)")
    if lacks:
        raise ConfigError(f"task '{task}' needs a legged robot, but robot '{r.name}' lacks "
                          f"{'; '.join(lacks)}: pick a legged robot (robot=quadruped, unitree_go1, "
                          "unitree_g1) or a task for this one (an arm: task=reach)")
