"""The env batch: `num_envs` worlds of one task, a gymnasium `VectorEnv` over a `Sim`.

One step: actions -> `ctrl` -> `sim.step(decimation)` -> task update -> terminations ->
weighted reward terms -> reset of the finished envs (inside `step`, gymnasium's SAME_STEP
autoreset) -> observation groups. Everything is batched torch on the sim device; nothing loops
over envs in Python.

rsl-rl's `VecEnv.step` returns 4 values where gymnasium's returns 5, so one object cannot be
both under the name `step`: `simrl.rl.vecenv.RslRlVecEnv(env)` is the rsl-rl view, which
shares every buffer with the env (no copies) and only reshapes what `advance` returns. This
layer imports no RL library and nothing above it.

No step waits on the device: resets run by mask (on mjwarp every step, whether or not an
episode ended), episode statistics accumulate on the device and `episode_log()` reads them once
per iteration.

A task subclasses `EnvBatch` and fills in the hooks (`apply_actions`, `update`, `reset_envs`,
and the entries it builds from its fields: `task_events`, `task_terminations`) plus tables of
small term functions `f(env, **params) -> Tensor`: `OBS_TERMS` (name -> (N, d)),
`REWARD_TERMS` (name -> (N,)), weighted by the config, `TERMINATION_TERMS` (name -> bool (N,);
simrl.terminations), `EVENT_TERMS` (simrl.events), and `METRIC_TERMS`
(name -> (N,), read at each episode's end by evaluation: success, final distance...) and
`TRACKING_TERMS` (name -> (N,) per step, averaged by evaluation over each episode's steps once
it settles: a velocity task's tracking errors). A term's
params come from its config entry; those that name bodies, joints or sites (`body`, `bodies`,
`joint`, `joints`, `site`, `sites`; names or regexes) are resolved to indices once, at start-up
(simrl.terms), so the step indexes with tensors and never looks a name up.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, NamedTuple

import gymnasium as gym
import mujoco
import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space
from tensordict import TensorDict

from simrl.actions import ACTION_TERMS, action_entries, check_cover
from simrl.commands import COMMAND_TERMS, command_entries
from simrl.curriculum import CURRICULUM_TERMS, curriculum_entries
from simrl.errors import ConfigError, UnknownNameError
from simrl.events import EVENT_TERMS, MODES, event_terms
from simrl.paths import ASSETS
from simrl.sim import Sim, SimError, make_sim, resolve_device
from simrl.snapshot import capture, restore
from simrl.terminations import TERMINATION_TERMS, merge_facts, termination_terms
from simrl.terms import RewardTerm, bind, reward_terms


@dataclass
class ObsTerm:
    """One observation term: `fn(env)` scaled, noised (uniform ±noise, after scaling), clipped
    to ±`clip` (None: only the group's `obs_clip`); with `delay` D > 0 the frame of D control
    steps ago (a sensor's lag); with `history` H > 1 the last H frames (of those delayed ones)
    are stacked, oldest first. A fresh episode starts with its first frame in every slot."""

    name: str
    scale: float | list[float] = 1.0  # one factor, or one per column of the term
    noise: float = 0.0
    history: int = 1
    params: dict[str, Any] = field(default_factory=dict)  # keyword arguments of the term
    clip: float | None = None
    delay: int = 0  # control steps


OBS_TERM_DEFAULTS = {"clip": None, "delay": 0}  # fields added since runs were saved: their values then


class ObsSlot(NamedTuple):
    """Where a term sits in its group's vector: `width` values per frame, `history` frames."""

    name: str
    slice: slice
    scale: float | list[float]
    noise: float
    history: int
    width: int
    params: Mapping[str, Any] = MappingProxyType({})  # the term's keyword arguments (export reads them)
    clip: float | None = None
    delay: int = 0

    def added_fields(self) -> dict[str, Any]:
        """The fields added since runs were saved (OBS_TERM_DEFAULTS) where they differ from their
        values then: written only then, so a layout that leaves them reads as it always did."""
        return {k: getattr(self, k) for k, old in OBS_TERM_DEFAULTS.items() if getattr(self, k) != old}


@dataclass
class EnvCfg:
    """What every task config has. Tasks subclass it with their own fields."""

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
    observations: dict[str, list[ObsTerm]] = field(default_factory=dict)
    # name -> weight, or name -> {weight, func (default: the name), params}: one term function
    # can serve under two names with different params (a coarse and a fine distance kernel)
    rewards: dict[str, float | dict[str, Any]] = field(default_factory=dict)
    # name -> {func, mode: startup | reset | interval, interval_s, params}: randomization and
    # pushes by configuration (simrl.events), after the task's own
    events: dict[str, dict[str, Any]] = field(default_factory=dict)
    # name -> {func, params, time_out} (null: drop the task's own term of that name): what ends
    # an episode (simrl.terminations), after the task's own entries
    terminations: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    # name -> {func, resample_s, params} (null: drop the task's own command of that name): what
    # each env is asked to do, drawn at resets and on a clock (simrl.commands)
    commands: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    # name -> {func, params} (null: drop the task's own): how action columns drive the policy's
    # actuators (simrl.actions); none: the task's one joint_position_action over all of them
    actions: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    # name -> {func, params} (null: drop the task's own): what raises the difficulty as the
    # policy earns it (simrl.curriculum), merged over the task's own entries
    curriculum: dict[str, dict[str, Any] | None] = field(default_factory=dict)


def merge_entries(task: Mapping[str, Any], config: Mapping[str, Any]) -> dict[str, Any]:
    """A task's term entries with the config's merged over them: a new name is added, `null`
    drops one, and an entry for a task's name replaces its keys, its params merged over the
    task's where it keeps the func."""
    out = dict(task)
    for name, entry in config.items():
        own = task.get(name)
        if entry is None or not isinstance(entry, Mapping) or not isinstance(own, Mapping):
            out[name] = entry
            continue
        merged = {**own, **entry}
        if merged.get("func") == own.get("func"):
            merged["params"] = {**(own.get("params") or {}), **(entry.get("params") or {})}
        out[name] = merged
    return out


def cfg_from_dict(cls: type, values: dict[str, Any] | None) -> Any:
    """Build config dataclass `cls` from a (Hydra) dict; unknown keys list the valid ones."""
    values = dict(values or {})
    for old, new in getattr(cls, "renamed", {}).items():  # runs saved under an older name
        if old in values and new not in values:
            values[new] = values.pop(old)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise KeyError(f"unknown {cls.__name__} keys {unknown}; valid: {sorted(names)}")
    if "observations" in values and values["observations"] is not None:
        values["observations"] = {
            g: [t if isinstance(t, ObsTerm) else ObsTerm(**t) for t in terms]
            for g, terms in values["observations"].items()
        }
    base = cls()
    for k in ("rewards",):  # dict fields merge over the defaults, so an override can be partial
        if k in values and values[k] is not None:
            merged = dict(getattr(base, k))
            merged.update(values[k])
            values[k] = merged
    return dataclasses.replace(base, **values)


class EnvBatch(gym.vector.VectorEnv):
    """Base env batch. See the module docstring; tasks subclass and fill the hooks."""

    metadata: ClassVar[dict] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": ["rgb_array"]}
    OBS_TERMS: ClassVar[dict[str, Callable[..., torch.Tensor]]] = {}
    REWARD_TERMS: ClassVar[dict[str, Callable[..., torch.Tensor]]] = {}
    METRIC_TERMS: ClassVar[dict[str, Callable[..., torch.Tensor]]] = {}
    EVENT_TERMS: ClassVar[dict[str, Callable[..., None]]] = dict(EVENT_TERMS)  # simrl.events
    TERMINATION_TERMS: ClassVar[dict[str, Callable[..., torch.Tensor]]] = dict(TERMINATION_TERMS)
    COMMAND_TERMS: ClassVar[dict[str, type]] = dict(COMMAND_TERMS)  # simrl.commands
    ACTION_TERMS: ClassVar[dict[str, type]] = dict(ACTION_TERMS)  # simrl.actions
    CURRICULUM_TERMS: ClassVar[dict[str, type]] = dict(CURRICULUM_TERMS)  # simrl.curriculum
    TRACKING_TERMS: ClassVar[dict[str, Callable[..., torch.Tensor]]] = {}
    # observation term -> f(env) -> the mirror image of one frame of it, (perm, sign) (simrl.mirror):
    # symmetry augmentation needs one for every observed term, and the task's action_mirror
    OBS_MIRROR: ClassVar[dict[str, Callable[..., tuple[np.ndarray, np.ndarray]]]] = {}
    # observation term -> how a robot supplies it: {"reading": name, "doc": what the reading
    # is, "op": value | gravity | pos_rot6d, "columns": [...], "minus": a policy.json key};
    # export writes it per term, so deploy builds observations knowing no task (simrl.deploy)
    OBS_READS: ClassVar[dict[str, dict[str, Any]]] = {}
    task_name: ClassVar[str] = ""

    def __init__(
        self,
        cfg: EnvCfg,
        num_envs: int,
        device: str = "auto",
        backend: str = "auto",
        seed: int = 0,
        sim_kwargs: dict | None = None,
        render_mode: str | None = None,
    ):
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.cfg = cfg
        self.render_mode = render_mode
        self.check_terms(cfg)
        dev = resolve_device(device)
        model = self.build_model()
        cfg = self.cfg  # build_model may complete the config from the model (a robot's gait offsets)
        self.sim: Sim = make_sim(
            model, num_envs, device=dev, backend=backend, keyframe=cfg.keyframe,
            **(sim_kwargs or {}),
        )
        self.num_envs = num_envs
        self.device = self.sim.device
        self.model = self.sim.model
        timestep = float(self.model.opt.timestep)
        self.decimation = int(cfg.decimation or max(1, round(cfg.control_dt / timestep)))
        self.dt = self.decimation * timestep
        self.max_episode_length = math.ceil(cfg.episode_length_s / self.dt)
        self.gen = torch.Generator(device=self.device)
        self.gen.manual_seed(seed)
        self.spare_gen = torch.Generator(device=self.device)  # resets of blown-up worlds only
        self.spare_gen.manual_seed(seed + 0x5EED)

        n, f32 = num_envs, dict(device=self.device, dtype=torch.float32)
        self.episode_length_buf = torch.zeros(n, device=self.device, dtype=torch.long)
        self.actions = torch.zeros(n, self.num_actions, **f32)
        self.last_actions = torch.zeros_like(self.actions)
        self.reward_buf = torch.zeros(n, **f32)
        self.terminated_buf = torch.zeros(n, device=self.device, dtype=torch.bool)
        self.time_out_buf = torch.zeros_like(self.terminated_buf)
        self.reset_buf = torch.zeros(n, device=self.device, dtype=torch.bool)  # reset this step
        self._episode_sums = torch.zeros(n, len(cfg.rewards), **f32)  # one column per reward term
        self.episode_sums = {k: self._episode_sums[:, i] for i, k in enumerate(cfg.rewards)}
        terms: list[RewardTerm] = reward_terms(cfg.rewards)
        active = [(i, t) for i, t in enumerate(terms) if t.weight != 0.0]
        self._reward_plan = (  # the terms computed each step, their columns, weight * dt
            [t.name for _, t in active],
            torch.tensor([i for i, _ in active], device=self.device, dtype=torch.long),
            torch.tensor([t.weight * self.dt for _, t in active], **f32),
        )
        self._reward_terms = active  # bound to their params in `_bind_terms`, after `setup`
        self._log_acc = torch.zeros(4 + len(cfg.rewards), device=self.device, dtype=torch.float64)
        self._term_hits: torch.Tensor | None = None  # (N, terminations) bool, this step's
        self._unstable_total = 0
        # resets by mask every step where the state lives on the device (no host sync to ask
        # whether any env ended); see _step_impl
        self.masked_resets = self.sim.backend == "mjwarp"
        self.sim.check_overflow = False  # read once per iteration by episode_log instead
        if hasattr(self.sim, "reset_row_overflow"):  # mjwarp: a world short of constraint rows
            self.sim.reset_row_overflow = True       # is reset and counted, as a blow-up is
        self._warned_sim_error = False
        self.action_offset = torch.zeros(self.num_actions, **f32)  # ctrl = offset + scale * a
        self.action_scale = float(cfg.action_scale or 1.0)  # tasks over a robot: the robot's
        self.setup()
        self._bind_terms()
        for fn, _ in self._event_fns["startup"]:  # per-world model randomization, once
            fn(self, torch.ones(n, device=self.device, dtype=torch.bool))

        # observation layout: computed once from the terms; export/deploy read the same data
        self.obs_layout: dict[str, list[ObsSlot]] = {}
        self._obs_buf: dict[str, torch.Tensor] = {}
        self._history: dict[tuple[str, str], torch.Tensor] = {}  # (N, H, width), oldest first
        self.reset_all()
        spaces = {}
        for group, terms in cfg.observations.items():
            start = 0
            layout = []
            for t in terms:
                d = int(self._obs_fns[(group, t.name)](self).shape[1])
                scale = t.scale if isinstance(t.scale, (int, float)) else list(t.scale)
                if isinstance(scale, list) and len(scale) != d:
                    raise ValueError(f"obs term '{t.name}' has {d} columns but {len(scale)} scales")
                h, lag = int(t.history), int(t.delay)
                clip_t = None if t.clip is None else float(t.clip)
                layout.append(ObsSlot(t.name, slice(start, start + d * h), scale, t.noise, h, d,
                                      MappingProxyType(dict(t.params)), clip_t, lag))
                if h + lag > 1:  # the last H + D frames; the first H of them are observed
                    self._history[(group, t.name)] = torch.zeros(n, h + lag, d, **f32)
                start += d * h
            self.obs_layout[group] = layout
            self._obs_buf[group] = torch.zeros(n, start, **f32)
            spaces[group] = gym.spaces.Box(-cfg.obs_clip, cfg.obs_clip, (start,), np.float32)
        self.compute_observations()

        self.single_observation_space = gym.spaces.Dict(spaces)
        self.observation_space = batch_space(self.single_observation_space, n)
        clip = cfg.action_clip
        self.single_action_space = gym.spaces.Box(-clip, clip, (self.num_actions,), np.float32)
        self.action_space = batch_space(self.single_action_space, n)

    def _bind_terms(self) -> None:
        """Each configured term as `f(env)`: its params bound, names resolved to indices."""
        self._reward_fns = [bind(self, self.REWARD_TERMS[t.func], t.params, f"reward term '{t.name}'")
                            for _, t in self._reward_terms]
        self._obs_fns = {
            (group, t.name): bind(self, self.OBS_TERMS[t.name], t.params,
                                  f"observation term '{t.name}' in group '{group}'")
            for group, terms in self.cfg.observations.items() for t in terms
        }
        self._metric_fns = {k: bind(self, f, {}, f"metric '{k}'") for k, f in self.METRIC_TERMS.items()}
        self._event_fns: dict[str, list[tuple[Callable, int]]] = {mode: [] for mode in MODES}
        for e in event_terms({**self.task_events(), **self.cfg.events}):  # names: check_terms
            steps = 0 if e.interval_s is None else max(1, round(e.interval_s / self.dt))
            fn = bind(self, self.EVENT_TERMS[e.func], e.params, f"event '{e.name}'", call_args=2)
            self._event_fns[e.mode].append((fn, steps))
        self._tracking_fns = {k: bind(self, f, {}, f"tracking metric '{k}'")
                              for k, f in self.TRACKING_TERMS.items()}
        entries = {**self.task_terminations(), **self.cfg.terminations}  # null drops a task's
        self._terminations = termination_terms(entries)
        self._termination_fns, self._termination_facts = [], {}
        for t in self._terminations:  # names: check_terms
            func = self.TERMINATION_TERMS[t.func]
            fn = bind(self, func, t.params, f"termination '{t.name}'")
            self._termination_fns.append(fn)
            facts = getattr(func, "deploy_facts", None)
            if facts is not None and not t.time_out:
                merge_facts(self._termination_facts, facts(self, **getattr(fn, "keywords", {})))
        self._terminal_cols = torch.tensor([i for i, t in enumerate(self._terminations) if not t.time_out],
                                           device=self.device, dtype=torch.long)
        self._time_out_cols = torch.tensor([i for i, t in enumerate(self._terminations) if t.time_out],
                                           device=self.device, dtype=torch.long)
        # the ended episodes each term fired in (beside _log_acc: a state saved before these
        # terms existed still loads)
        self._term_acc = torch.zeros(len(self._terminations), device=self.device, dtype=torch.float64)
        self.record_metrics = False  # evaluation turns it on: metrics into infos
        # commands: each term with its clock (control steps between draws; 0: only at resets)
        self.command_terms: dict[str, Any] = {}
        self._command_clock: dict[str, int] = {}
        entries = merge_entries(self.task_commands(), self.cfg.commands)
        for c in command_entries(entries):  # names: check_terms
            make = bind(self, self.COMMAND_TERMS[c.func], c.params, f"command '{c.name}'")
            self.command_terms[c.name] = make(self)
            self._command_clock[c.name] = 0 if c.resample_s is None else max(1, round(c.resample_s / self.dt))
        self.action_terms: dict[str, Any] = {}
        for name, func, params in action_entries({**self.task_actions(), **self.cfg.actions}):
            self.action_terms[name] = bind(self, self.ACTION_TERMS[func], params, f"action '{name}'")(self)
        check_cover(self, self.action_terms)
        self.curriculum_terms: dict[str, Any] = {}  # after the commands: a level scales one
        curricula = merge_entries(self.task_curriculum(), self.cfg.curriculum)
        for name, func, params in curriculum_entries(curricula):
            make = bind(self, self.CURRICULUM_TERMS[func], params, f"curriculum '{name}'")
            self.curriculum_terms[name] = make(self)
        self.link_terms()

    # --- task hooks ---------------------------------------------------------------------------
    @property
    def num_actions(self) -> int:
        """The policy's actuators: the model's first `num_actions`; any after them hold a
        robot's held joints (RobotCfg.held_joints) at their keyframe targets."""
        scene = getattr(self, "scene", None)
        return int(self.model.nu) - (len(scene.robot.held_joints) if scene is not None else 0)

    def build_model(self) -> str | mujoco.MjModel:
        """The model to simulate: `cfg.model` (an MJCF path, relative to assets/) by default;
        tasks over a robot config assemble their scene here."""
        return self.cfg.model if self.cfg.model.startswith("/") else str(ASSETS / self.cfg.model)

    def setup(self) -> None:
        """Allocate task buffers (called once, before the first reset)."""

    def apply_actions(self, actions: torch.Tensor) -> None:
        """Write `actions` (N, num_actions), clipped, into `sim.ctrl`: each action term drives
        its actuators (simrl.actions; by default ctrl = offset + scale * action)."""
        for term in self.action_terms.values():
            term.apply(self, actions)

    def task_actions(self) -> dict[str, dict[str, Any]]:
        """The task's own action entries: one joint_position_action over every policy actuator
        (the task's `action_scale` and `action_offset`); the config's `actions` replace them."""
        return {"joint_pos": {"func": "joint_position_action", "params": {}}}

    def action_spec(self) -> dict[str, Any]:
        """How actions become actuator commands, as plain data (export and deploy read it):
        `scale` (one number, or one per actuator), `offset`, `mode`, and `binary` columns."""
        m, na = self.model, self.num_actions
        joint = mujoco.mjtObj.mjOBJ_JOINT
        specs = [t.spec(self) for t in self.action_terms.values()]
        scale: Any = np.zeros(na)
        for sp in specs:
            scale[sp["cols"]] = sp["scale"]
        scales = {sp["scale"] for sp in specs if isinstance(sp["scale"], float) and "binary" not in sp}
        if len(scales) == 1 and all("binary" not in sp and isinstance(sp["scale"], float) for sp in specs):
            scale = scales.pop()  # one number, as every policy before the action terms had
        else:
            scale = scale.tolist()
        binary = [{"index": sp["cols"][0], **sp["binary"]} for sp in specs if "binary" in sp]
        return {
            "scale": scale,
            "mode": next((sp["mode"] for sp in specs if "mode" in sp), "absolute"),
            **({"binary": binary} if binary else {}),
            "offset": self.action_offset.tolist(),
            "clip": float(self.cfg.action_clip),
            "actuator_names": [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, i) for i in range(na)],
            "joint_names": [mujoco.mj_id2name(m, joint, int(m.actuator_trnid[i, 0])) for i in range(na)],
            "kp": m.actuator_gainprm[:na, 0].tolist(),
            "kd": (-m.actuator_biasprm[:na, 2]).tolist(),
            "torque_limit": np.abs(m.actuator_forcerange[:na]).max(axis=1).tolist(),
            "ctrl_range": m.actuator_ctrlrange[:na].tolist(),
        }

    def deploy_spec(self) -> dict[str, Any]:
        """What sim-to-sim needs to rehearse this task in plain MuJoCo C, as data (export writes
        it into policy.json): how to rebuild the scene, where episodes start, how long they
        last, what ends them, whether the policy tracks velocity commands. Tasks extend it."""
        return {
            "scene": {"mjcf": self.cfg.model},
            "keyframe": self.cfg.keyframe,
            "episode_length_s": float(self.cfg.episode_length_s),
            "tracks_commands": False,
            # the termination terms' facts: max_abs_qpos {qpos index: limit}, max_tilt_cos, ...
            "termination": merge_facts({}, self._termination_facts),
            "reset": {},  # qpos_noise: uniform +- on every qpos; joint_scale: [lo, hi]
            "limits": self.joint_limits(),
            # the commands' facts: tracks_commands (a velocity), target (a pose's or position's draw)
            **{k: v for t in self.command_terms.values() for k, v in t.deploy_facts(self).items()},
        }

    def joint_limits(self) -> dict[str, Any]:
        """The actuated joints' position ranges, in action order (None where a joint is
        unlimited): the deploy controller's safety envelope (simrl.deploy.controller)."""
        from simrl.robot import joint_ranges, per_joint

        m = self.model
        joints = [int(m.actuator_trnid[i, 0]) for i in range(self.num_actions)]
        limits: dict[str, Any] = {"joint_pos": joint_ranges(m, joints)}
        robot = getattr(self, "robot", None)
        if robot is not None and robot.velocity_limit is not None:

            limits["joint_vel"] = per_joint(robot.velocity_limit, robot.joints, "velocity_limit").tolist()
        return limits

    def refresh(self) -> None:
        """Re-read task state from the sim views (after physics and after resets)."""

    def update(self) -> None:
        """Task state after the physics (commands, contact timers...); calls `refresh`."""
        self.refresh()

    def terminated(self) -> torch.Tensor:
        """Bool (N,): episodes in a terminal state now (not a time-out): any termination term
        without `time_out`. Evaluates every term and keeps their hits for the step's time-outs
        and the log (an override that skips this drops both)."""
        if not self._termination_fns:
            self._term_hits = None
            return torch.zeros(self.num_envs, device=self.device, dtype=torch.bool)
        self._term_hits = torch.stack([f(self) for f in self._termination_fns], dim=1)
        if not self._terminal_cols.numel():
            return torch.zeros(self.num_envs, device=self.device, dtype=torch.bool)
        return self._term_hits[:, self._terminal_cols].any(dim=1)

    def task_terminations(self) -> dict[str, dict[str, Any]]:
        """The task's own termination entries, built from its fields (a legged task's tilt
        limit); the config's `terminations` replace those of the same name."""
        return {}

    def task_commands(self) -> dict[str, dict[str, Any]]:
        """The task's own command entries, built from its fields (a legged task's velocity
        ranges); the config's `commands` replace those of the same name."""
        return {}

    def task_curriculum(self) -> dict[str, dict[str, Any]]:
        """The task's own curriculum entries, built from its fields (a velocity task's
        command_curriculum); the config's `curriculum` entries are merged over them."""
        return {}

    def link_terms(self) -> None:
        """Keep references into the bound terms as task attributes (a command's tensors), once,
        after the terms are bound and before the first reset."""

    def command(self, name: str | None = None) -> torch.Tensor:
        """Command `name`'s current values (N, d); None: the env's only command."""
        return self._command_term(name).command

    def fix_command(self, values: Any, name: str | None = None) -> None:
        """Pin every env's command `name` (None: the env's only command, or its only tracked
        one: a velocity) to `values` and stop its clock (evaluation); a reset still draws a new
        one for the env it resets."""
        term = self._command_term(name)
        term.fix(self, values)
        self._command_clock[next(k for k, t in self.command_terms.items() if t is term)] = 0

    def required_command(self, name: str, func: str) -> Any:
        """The command term `name`, which the task's own terms read (in `link_terms`): it must be
        a `func` term, else a one-line error saying to replace its params, not drop or retype it."""
        term = self.command_terms.get(name)
        if not isinstance(term, self.COMMAND_TERMS[func]):
            raise ConfigError(f"task '{self.task_name}': its rewards and observations read the command "
                              f"'{name}', a {func}; replace its params, do not drop or retype it "
                              f"(commands: {sorted(self.command_terms)})")
        return term

    def _command_term(self, name: str | None) -> Any:
        if name is None:
            terms = list(self.command_terms.values())
            if len(terms) != 1:
                terms = [t for t in terms if getattr(t, "tracked", False)]
            if len(terms) != 1:
                raise ConfigError(f"task '{self.task_name}' has {len(self.command_terms)} commands "
                                  f"{sorted(self.command_terms)}: name one")
            return terms[0]
        if name not in self.command_terms:
            raise UnknownNameError(f"no command '{name}' in task '{self.task_name}'; valid: "
                                   f"{sorted(self.command_terms)}")
        return self.command_terms[name]

    def task_events(self) -> dict[str, dict[str, Any]]:
        """The task's own event entries, built from its fields (a legged task's pushes); they
        run before the config's `events`, and a config event of the same name replaces one."""
        return {}

    def end_episodes(self, done: torch.Tensor) -> None:
        """The episodes where bool `done` (N,) end this step, their reward sums still in
        `episode_sums` (they are cleared next): a curriculum reads them here. No host sync."""

    def reset_envs(self, mask: torch.Tensor) -> None:
        """Task part of resetting the envs where bool `mask` (N,) is True; the sim is already at
        its keyframe for them. Write with `torch.where(mask, new, old)` (or `masked_fill_`),
        never `x[mask] = ...`: boolean indexing waits on the device for the count."""

    # --- the loop -----------------------------------------------------------------------------
    def step(self, actions: torch.Tensor):
        """gymnasium step: (obs, reward, terminated, truncated, infos), SAME_STEP autoreset."""
        obs, rew, term, trunc, infos = self.advance(actions, final_obs=True)
        return obs, rew, term, trunc, infos

    def advance(self, actions: torch.Tensor, final_obs: bool = False):
        """One control step: (obs buffers, reward, terminated, truncated, infos), the live
        buffers themselves (no copies). `final_obs` also computes the ended episodes' last
        observations into infos (gymnasium's `step`); a learner that bootstraps from
        `time_outs` skips that work."""
        return self._step_impl(actions, final_obs)

    def _step_impl(self, actions: torch.Tensor, final_obs: bool):
        actions = torch.as_tensor(actions, device=self.device, dtype=torch.float32)
        actions = torch.nan_to_num(actions).clamp(-self.cfg.action_clip, self.cfg.action_clip)
        self.reset_buf.zero_()
        self.last_actions.copy_(self.actions)
        self.actions.copy_(actions)
        self.apply_actions(self.actions)
        for fn, steps in self._event_fns["interval"]:  # into the state this step starts from
            fn(self, (self.episode_length_buf + 1) % steps == 0)
        failed = self._sim_step()
        self.episode_length_buf += 1

        unstable = self.sim.unstable(self.cfg.max_qvel)
        if failed is not None:
            unstable[failed.to(self.device)] = True
        self.update()
        for name, term in self.command_terms.items():  # after the task's update (its base_yaw)
            if self._command_clock[name]:
                term.resample(self, self.episode_length_buf % self._command_clock[name] == 0)
            term.step(self)
        self.terminated_buf = self.terminated() | unstable  # also the terms' hits: _term_hits
        timed = self.episode_length_buf >= self.max_episode_length
        if self._time_out_cols.numel() and self._term_hits is not None:
            timed = timed | self._term_hits[:, self._time_out_cols].any(dim=1)
        self.time_out_buf = timed & ~self.terminated_buf
        self.compute_rewards(unstable)

        done = self.terminated_buf | self.time_out_buf
        self.end_episodes(done)
        for term in self.curriculum_terms.values():
            term.update(self, done)
        self._accumulate_log(done, unstable)
        infos: dict[str, Any] = {}
        if self.record_metrics:  # every env's metrics now, before resets (evaluation keeps the
            # episode-end ones of `done` and averages the tracking ones of the others)
            infos["metrics"] = {k: f(self).float() for k, f in self._metric_fns.items()}
            infos["tracking"] = {k: f(self).float() for k, f in self._tracking_fns.items()}
        # On the device (mjwarp) every step resets by mask, whether or not an episode ended:
        # asking would be a host sync. In host memory (MuJoCo C) asking is free, so idle
        # steps skip the reset work.
        if self.masked_resets or bool(done.any()):
            if final_obs:  # the last frame of the ended episodes: not pushed into histories
                self.compute_observations(commit=False)
                infos["final_obs"] = {g: v.clone() for g, v in self._obs_buf.items()}
                infos["_final_obs"] = done.clone()
            if self.masked_resets or bool((done & ~unstable).any()):
                self._reset(done)
            else:  # only blown-up worlds end here: their new episodes draw from a spare
                # generator, so every other world's random stream is the one of a run without
                # blow-ups (a reset draws for all worlds and keeps the rows of `done`)
                self.gen, self.spare_gen = self.spare_gen, self.gen
                try:
                    self._reset(done)
                finally:
                    self.gen, self.spare_gen = self.spare_gen, self.gen
        self.compute_observations()
        infos["time_outs"] = self.time_out_buf
        return self._obs_buf, self.reward_buf, self.terminated_buf, self.time_out_buf, infos

    def _accumulate_log(self, done: torch.Tensor, unstable: torch.Tensor) -> None:
        """Add the finished episodes' sums to the device-side log (read by `episode_log`)."""
        # columns: [count, length_s, terminated, unstable, reward terms...] (unstable => done)
        per_env = torch.stack([done, self.terminated_buf, unstable], dim=1).to(torch.float32)
        length_s = self.episode_length_buf.to(torch.float32)[:, None] * self.dt
        cols = torch.cat([per_env[:, :1], length_s, per_env[:, 1:], self._episode_sums], dim=1)
        if self._term_hits is not None:
            self._term_acc += (self._term_hits & done[:, None]).sum(dim=0)
        self._log_acc += (cols * per_env[:, :1]).sum(dim=0)
        self._episode_sums.mul_(~done[:, None])

    def episode_log(self) -> dict[str, float]:
        """Means over the episodes that ended since the last call, and the count of unstable
        worlds reset; then clears. One host sync: call it once per iteration, not per step.

        Keys: `Episode_Reward/<term>` (sum over the episode / episode_length_s), `Episode/
        length_s`, `Episode/terminated` (share), `Episode_Termination/<term>` (share of the ended
        episodes in which that term fired), `sim/unstable_resets` (a count). Empty where no
        episode ended and no world was unstable. Also raises if the sim dropped contacts.
        """
        self.sim.raise_on_overflow()
        count, length, term, unstable, *rest = torch.cat([self._log_acc, self._term_acc]).tolist()
        rewards, ends = rest[:len(self.cfg.rewards)], rest[len(self.cfg.rewards):]
        self._log_acc.zero_()
        self._term_acc.zero_()
        self._unstable_total += int(unstable)
        log: dict[str, float] = {}
        if count:
            for name, value in zip(self.cfg.rewards, rewards, strict=True):
                log[f"Episode_Reward/{name}"] = value / count / self.cfg.episode_length_s
            for t, value in zip(self._terminations, ends, strict=True):
                log[f"Episode_Termination/{t.name}"] = value / count
            log["Episode/length_s"] = length / count
            log["Episode/terminated"] = term / count
        if count or unstable:
            log["sim/unstable_resets"] = unstable
        for term in self.curriculum_terms.values():
            log.update({k: float(v) for k, v in term.log(self).items()})
        return log

    @property
    def unstable_count(self) -> int:
        """Unstable worlds reset since the env was built (reads the device: not per step)."""
        return self._unstable_total + int(self._log_acc[3])

    def _sim_step(self) -> torch.Tensor | None:
        """Step the physics; ids of worlds the engine failed on (they are reset as unstable)."""
        try:
            self.sim.step(self.decimation)
        except SimError as e:
            if e.worlds is None:  # a failure of the whole batch (e.g. buffer overflow): stop
                raise
            if not self._warned_sim_error:  # once: the count is logged as sim/unstable_resets
                warnings.warn(f"{e} (resetting them; warned once)", RuntimeWarning, stacklevel=3)
                self._warned_sim_error = True
            return e.worlds
        return None

    def compute_rewards(self, unstable: torch.Tensor | None = None) -> None:
        """Weighted reward terms (all at once: a few ops whatever the number of terms)."""
        names, columns, weights = self._reward_plan
        if not names:
            self.reward_buf = torch.zeros_like(self.reward_buf)  # fresh: the last one was returned
            return
        values = torch.stack([f(self).to(torch.float32) for f in self._reward_fns], 1)
        values = torch.nan_to_num(values) * weights  # (N, terms): weight * dt folded in
        if unstable is not None:  # a diverged world earns nothing, poisons nothing
            values = values.masked_fill(unstable[:, None], 0.0)
        self.reward_buf = values.sum(dim=1)  # a fresh tensor: the last one was returned
        self._episode_sums.index_add_(1, columns, values)
        if self.cfg.only_positive_rewards:
            self.reward_buf.clamp_(min=0.0)

    def compute_observations(self, commit: bool = True) -> dict[str, torch.Tensor]:
        """Every observation group from the current state. `commit`: push this frame into the
        histories (False for a look at the state that does not advance time)."""
        clip = self.cfg.obs_clip
        fresh: dict[str, torch.Tensor] = {}  # a new dict too: callers may keep the last one
        for group, layout in self.obs_layout.items():
            # a fresh buffer each step: rsl-rl keeps a reference to the observation it acted on
            # until the transition is stored after the next env step, so writing in place would
            # silently record o_{t+1} as o_t
            buf = torch.empty_like(self._obs_buf[group])
            fresh[group] = buf
            for name, sl, scale, noise, history, _, _, term_clip, delay in layout:
                value = self._obs_fns[(group, name)](self)
                if isinstance(scale, list):
                    value = value * self._scale_tensor(scale)
                elif scale != 1.0:
                    value = value * scale
                if noise and self.cfg.obs_noise:
                    u = torch.rand(value.shape, generator=self.gen, device=self.device)
                    value = value + (2 * u - 1) * noise
                if term_clip is not None:
                    value = value.clamp(-term_clip, term_clip)
                if history + delay > 1:  # a fresh episode starts with its first frame in every slot
                    past = self._history[(group, name)]
                    frames = torch.cat([past[:, 1:], value[:, None]], dim=1)
                    first = value[:, None].expand_as(frames)
                    frames = torch.where(self.reset_buf[:, None, None], first, frames)
                    if commit:
                        self._history[(group, name)] = frames
                    value = frames[:, :history].reshape(self.num_envs, -1)
                buf[:, sl] = value
            torch.nan_to_num_(buf, nan=0.0, posinf=clip, neginf=-clip).clamp_(-clip, clip)
        self._obs_buf = fresh
        return self._obs_buf

    def _scale_tensor(self, scale: list[float]) -> torch.Tensor:
        key = tuple(scale)
        cache = self.__dict__.setdefault("_scales", {})
        if key not in cache:
            cache[key] = torch.tensor(scale, device=self.device, dtype=torch.float32)
        return cache[key]

    def _reset(self, mask: torch.Tensor) -> None:
        """Reset the envs where bool `mask` (N,) is True: sim to the keyframe, then the task.

        No forward pass afterwards: the next observation reads qpos/qvel, which the reset set;
        derived quantities (contacts, xpos) of a reset env are stale until its next step, and
        tasks mask what they read from them with `reset_buf`.
        """
        self.sim.reset(mask, forward=False)
        self.reset_buf |= mask
        self.episode_length_buf.masked_fill_(mask, 0)
        self.actions.masked_fill_(mask[:, None], 0.0)
        self.last_actions.masked_fill_(mask[:, None], 0.0)
        self.reset_envs(mask)
        for term in self.command_terms.values():
            term.resample(self, mask)
        for fn, _ in self._event_fns["reset"]:
            fn(self, mask)
        self.refresh()

    def reset_all(self) -> None:
        self._reset(torch.ones(self.num_envs, device=self.device, dtype=torch.bool))

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """gymnasium reset: every env to a fresh episode; `seed` reseeds the env's generator."""
        if seed is not None:
            self.gen.manual_seed(seed)
            self.spare_gen.manual_seed(seed + 0x5EED)
        self.sim.raise_on_overflow()
        self.reset_all()
        self._episode_sums.zero_()
        return self.compute_observations(), {}

    def get_observations(self) -> TensorDict:
        return TensorDict(dict(self._obs_buf), batch_size=[self.num_envs], device=self.device)

    @property
    def obs_dims(self) -> dict[str, int]:
        """Columns of each observation group."""
        return {g: int(b.shape[1]) for g, b in self._obs_buf.items()}

    def resolved_cfg(self) -> dict[str, Any]:
        """Config fields whose value this env chose at build time (a None default resolved), as
        plain data: a run's saved config records them, so replaying it under other overrides
        (play on another terrain) builds the same network inputs. Tasks with such fields extend it."""
        return {}

    # --- left-right mirror (symmetry augmentation) ---------------------------------------------
    def action_mirror(self) -> tuple[np.ndarray, np.ndarray]:
        """The mirror image of an action vector as (perm, sign); tasks with a mirror override it."""
        raise ConfigError(f"task '{self.task_name}' defines no mirror image of its actions, so symmetry "
                          "is not available for it: train without symmetry")

    def mirror_maps(self) -> dict[str, Any]:
        """{"obs": {group: (perm, sign)}, "actions": (perm, sign)} as device tensors: the mirror
        image of every observation group and of the actions (simrl.mirror.apply). Built on the
        first call and kept (not state: a checkpoint does not hold it)."""
        import simrl.mirror as mirror

        if "_mirror_maps" in self.__dict__:
            return self._mirror_maps
        perm, sign = self.action_mirror()
        used = {slot.name for layout in self.obs_layout.values() for slot in layout}
        terms = {name: f(self) for name, f in self.OBS_MIRROR.items() if name in used}
        self._mirror_maps = {
            "obs": {g: mirror.group_map(layout, terms, self.device, g)
                    for g, layout in self.obs_layout.items()},
            "actions": (torch.as_tensor(perm, device=self.device, dtype=torch.long),
                        torch.as_tensor(sign, device=self.device, dtype=torch.float32)),
        }
        return self._mirror_maps

    # --- rendering ----------------------------------------------------------------------------
    def render(self, world: int = 0, width: int = 640, height: int = 480, camera: str | int | None = None):
        """rgb_array frame (height, width, 3) of env `world`, from the model's tracking camera."""
        from simrl.render import Renderer, default_camera

        if getattr(self, "_renderer", None) is None or self._renderer_size != (width, height):
            self._renderer = Renderer(self.sim, width, height)
            self._renderer_size = (width, height)
        return self._renderer.frame(world, default_camera(self.sim) if camera is None else camera)

    # --- checkpoints --------------------------------------------------------------------------
    _NOT_STATE: ClassVar[frozenset[str]] = frozenset({
        "sim", "model", "cfg", "obs_layout", "_event_fns", "_terminations", "_termination_fns",
        "_termination_facts", "_terminal_cols", "_time_out_cols", "_term_hits", "_mirror_maps",
        "robot_mirror"})

    def config_key(self) -> str:
        """What an env state depends on besides itself: the task config, world count, backend."""
        import json

        fields = dataclasses.asdict(self.cfg)
        for terms in fields.get("observations", {}).values():  # a term's new fields at their
            for t in terms:  # old values are left out: states saved before them still load
                for k, v in OBS_TERM_DEFAULTS.items():
                    if isinstance(t, dict) and k in t and t[k] == v:
                        del t[k]
        cfg = json.dumps(fields, sort_keys=True, default=str)
        return f"{self.task_name}|{self.num_envs}|{self.sim.backend}|{cfg}"

    def state_dict(self) -> dict[str, Any]:
        """Everything the next step depends on, as tensors and plain data: every world's
        physics (`Sim.get_state`), the task's own state (every tensor, array, number and
        generator it keeps: commands, delays, histories, curriculum levels, episode sums) and
        the env's random generator. `load_state_dict` on an env of the same config continues
        bit for bit (on the same backend and device)."""
        task = {k: v for k, v in vars(self).items() if k not in self._NOT_STATE}
        return {"config": self.config_key(), "sim": self.sim.get_state(), "task": capture(task)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore `state_dict()`'s output. Raises ValueError if it was saved from another
        config (task fields, env count or backend), naming the difference; a field added since
        the state was saved matches where it has the value such runs had (the config's
        `since`, else the field's default)."""
        if not _same_config(state["config"], self.config_key(), self.cfg):
            raise ValueError(_config_difference(state["config"], self.config_key()))
        self.sim.set_state(state["sim"])
        for k, v in state["task"].items():
            setattr(self, k, restore(getattr(self, k, None), v, k))

    def close(self, **kwargs) -> None:
        pass

    @classmethod
    def check_terms(cls, cfg: EnvCfg) -> None:
        """Every reward, observation and event term `cfg` names exists (UnknownNameError otherwise)."""
        task = getattr(cfg, "task_name", cls.task_name)

        for t in reward_terms(cfg.rewards):
            if t.func not in cls.REWARD_TERMS:
                raise UnknownNameError(
                    f"unknown reward term '{t.func}' for task '{task}'; "
                    f"valid: {sorted(cls.REWARD_TERMS)}"
                )
        for e in event_terms(cfg.events):
            if e.func not in cls.EVENT_TERMS:
                raise UnknownNameError(f"event '{e.name}': unknown func '{e.func}' for task '{task}'; "
                                       f"valid: {sorted(cls.EVENT_TERMS)}")
        for t in termination_terms(cfg.terminations):
            if t.func not in cls.TERMINATION_TERMS:
                raise UnknownNameError(f"termination '{t.name}': unknown func '{t.func}' for task "
                                       f"'{task}'; valid: {sorted(cls.TERMINATION_TERMS)}")
        for name, func, _ in action_entries(cfg.actions):
            if func not in cls.ACTION_TERMS:
                raise UnknownNameError(f"action '{name}': unknown func '{func}' for task '{task}'; "
                                       f"valid: {sorted(cls.ACTION_TERMS)}")
        for what, entries, table in (("command", cfg.commands, cls.COMMAND_TERMS),
                                     ("curriculum", cfg.curriculum, cls.CURRICULUM_TERMS)):
            for name, c in entries.items():  # an entry without func merges into the task's own
                func = c.get("func") if isinstance(c, Mapping) else None
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
                if t.name not in cls.OBS_TERMS:
                    raise UnknownNameError(
                        f"unknown observation term '{t.name}' in group '{group}' for task "
                        f"'{task}'; valid: {sorted(cls.OBS_TERMS)}"
                    )

    def uniform(self, shape, lo: float, hi: float) -> torch.Tensor:
        """Uniform samples from the env's seeded generator, on the env device."""
        return torch.rand(shape, generator=self.gen, device=self.device) * (hi - lo) + lo


def _same_config(saved: str, here: str, cfg: Any) -> bool:
    """Whether two `config_key`s agree, fields missing from `saved` taken at the values runs
    saved before them had."""
    import json

    if saved == here:
        return True
    (*a, ca), (*b, cb) = saved.split("|", 3), here.split("|", 3)
    if a != b:
        return False
    old, new = json.loads(ca), json.loads(cb)
    since = getattr(type(cfg), "since", {})
    defaults = {f.name: f for f in dataclasses.fields(cfg)}
    for k in new.keys() - old.keys():
        f = defaults.get(k)
        if k in since:
            was = since[k]
        elif f is not None and f.default is not dataclasses.MISSING:
            was = f.default
        elif f is not None and f.default_factory is not dataclasses.MISSING:
            was = f.default_factory()
        else:
            return False
        if json.loads(json.dumps(was, default=str)) != new[k]:
            return False
    return all(old[k] == new.get(k) for k in old)


def _config_difference(saved: str, here: str) -> str:
    """One line naming how two `config_key`s differ (the first differing task fields)."""
    import json

    (*a, ca), (*b, cb) = saved.split("|", 3), here.split("|", 3)
    names = ("task", "num_envs", "backend")
    diffs = [f"{n} {x} -> {y}" for n, x, y in zip(names, a, b, strict=True) if x != y]
    if not diffs:
        da, db = json.loads(ca), json.loads(cb)
        diffs = [f"task.cfg.{k}" for k in sorted(da.keys() | db.keys()) if da.get(k) != db.get(k)]
    return "saved with another config: " + ", ".join(diffs[:5])
