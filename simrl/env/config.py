"""A task's config: the fields every task has (`EnvCfg`), an observation term's entry
(`ObsTerm`), and how a config dict becomes one (`cfg_from_dict`: the task's defaults with the
config's entries merged over them by simrl.managers.entries' one rule)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from simrl.errors import ConfigError
from simrl.managers.entries import merge_entries
from simrl.managers.observation import ObsTerm


@dataclass
class EnvCfg:
    """What every task config has. A task is configuration: its config class adds the task's
    fields (knobs), the term functions only it uses (`TERMS`: kind -> {name: function}) and the
    term entries its fields imply (`own_entries`), over which the config's own entries merge."""

    task_name: ClassVar[str] = ""
    # kind (observations, rewards, metrics, tracking, events, terminations, commands, actions,
    # curriculum) -> {name: term function or class}: the task's terms beside the library's
    TERMS: ClassVar[dict[str, dict[str, Any]]] = {}
    # MuJoCo Warp's per-world buffers (nconmax, njmax) where the sim config leaves them unset:
    # a contact-rich task (a cube in a hand) needs more than the sizes drawn from its first state
    MJWARP_BUFFERS: ClassVar[dict[str, int]] = {}
    # data views over a robot's scene (a config with `robot`), computed once per step, that the
    # task's terms read as `env.<name>` (a legged robot's base and feet, a terrain's levels): name -> a class
    # built as cls(env) after the robot's joints are read, with `refresh(env)` (after physics and
    # after resets), `update(env)` (after physics) and `reset(env, mask)`; optional `log(env)`
    # (per iteration), `deploy_facts(env)` (into policy.json's deploy section), `metrics()` (metric
    # terms that exist with it) and `resolved_cfg()`. Their tensors are saved with the env.
    VIEWS: ClassVar[dict[str, type]] = {}

    model: str = ""  # MJCF path, relative to assets/ or absolute
    keyframe: str | None = None
    decimation: int | None = 4  # physics substeps per control step; None: from control_dt
    control_dt: float = 0.02  # s per control step, where decimation is None
    episode_length_s: float = 20.0
    action_scale: float = 1.0
    action_clip: float = 100.0
    obs_clip: float = 100.0
    max_qvel: float = 1000.0  # a world faster than this (or non-finite) is reset as unstable
    obs_noise: bool = True  # add each term's configured noise (off for evaluation and parity)
    only_positive_rewards: bool = False  # clip each step's total at 0 (legged_gym): no incentive
    # to end an episode early just to stop paying penalties
    # Term entries, one grammar for every kind: {name: {func (default: the name), params, and the
    # kind's own key}}; a config's entries merge over the task's own (simrl.managers.entries).
    # group -> {term: {func, params, scale, noise, history, clip, delay}} (here as ObsTerm lists)
    observations: dict[str, list[ObsTerm]] = field(default_factory=dict)
    # {weight} (a bare number: the weight): one function can serve under two names
    rewards: dict[str, float | dict[str, Any]] = field(default_factory=dict)
    # {mode: startup | reset | interval, interval_s}: randomization and pushes (simrl.mdp.events)
    events: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    # {time_out}: what ends an episode (simrl.mdp.terminations)
    terminations: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    # {resample_s}: what each env is asked to do, drawn at resets and on a clock (simrl.mdp.commands)
    commands: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    # how action columns drive the policy's actuators (simrl.mdp.actions)
    actions: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    # what raises the difficulty as the policy earns it (simrl.mdp.curriculum)
    curriculum: dict[str, dict[str, Any] | None] = field(default_factory=dict)


    def bind_scene(self, scene: Any) -> EnvCfg:
        """The config completed from the assembled scene (a robot's gait offsets, stacked
        history) and checked against it; may adjust `scene.model` before the sim copies it. The
        env is built from what it returns."""
        return self


def own_entries(cfg: Any, scene: Any = None) -> dict[str, dict[str, Any]]:
    """The entries a task config's fields imply, per kind (`cfg.own_entries()` where its class
    defines it, `cfg.own_entries(scene)` where it reads the scene: a robot's contact bodies, a
    terrain; every task drives every policy actuator with one joint_position_action unless it
    says otherwise)."""
    joint_pos = {"func": "joint_position_action", "params": {}}
    out: dict[str, dict[str, Any]] = {"actions": {"joint_pos": joint_pos}}
    own = getattr(cfg, "own_entries", None)
    if own is not None:
        import inspect

        out.update(own(scene) if inspect.signature(own).parameters else own())
    return out


def merge_observations(base: Mapping[str, list[ObsTerm]],
                       over: Mapping[str, Any] | None) -> dict[str, list[ObsTerm]]:
    """Observation groups `over` merged into `base`'s: a group given as a mapping merges term by
    term (simrl.managers.entries: keys replace, params deep-merge, null drops a term, a new name
    is appended); a list replaces the whole group, in its order; null drops the group."""
    out = {g: list(terms) for g, terms in base.items()}
    for group, terms in (over or {}).items():
        if terms is None:
            if group not in out:
                raise ConfigError(f"observation group '{group}': null drops a group, but there is none of "
                                  f"that name; groups: {sorted(out)}")
            del out[group]
        elif isinstance(terms, Mapping):
            own = {t.name: {k: v for k, v in dataclasses.asdict(t).items() if k != "name"}
                   for t in out.get(group, [])}
            out[group] = [_obs_term(group, name, entry) for name, entry in
                          merge_entries(own, terms, "observation").items()]
        else:
            out[group] = [t if isinstance(t, ObsTerm) else _obs_term(group, None, t) for t in terms]
    return out


def _obs_term(group: str, name: str | None, entry: Any) -> ObsTerm:
    valid = [f.name for f in dataclasses.fields(ObsTerm) if name is None or f.name != "name"]
    if not isinstance(entry, Mapping):
        raise ConfigError(f"observation group '{group}': a term is a mapping of {valid}, got {entry!r}")
    unknown = sorted(set(entry) - set(valid))
    if unknown:
        raise ConfigError(f"observation term '{name or entry.get('name')}' in group '{group}': unknown keys "
                          f"{unknown}; valid: {valid}")
    if name is None and "name" not in entry:
        raise ConfigError(f"observation group '{group}': a term in a list needs its name, got {dict(entry)}")
    return ObsTerm(**entry) if name is None else ObsTerm(name=name, **entry)


def cfg_from_dict(cls: type, values: dict[str, Any] | None) -> Any:
    """Build config dataclass `cls` from a (Hydra) dict; unknown keys list the valid ones."""
    values = dict(values or {})
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise KeyError(f"unknown {cls.__name__} keys {unknown}; valid: {sorted(names)}")
    base = cls()
    # term entries merge over the task's defaults by the one rule (simrl.managers.entries); the
    # kinds a task builds from its fields (events, terminations, ...) merge when the env is built
    if "rewards" in values:
        values["rewards"] = merge_entries(base.rewards, values["rewards"], "reward")
    if "observations" in values:
        values["observations"] = merge_observations(base.observations, values["observations"])
    return dataclasses.replace(base, **values)
