"""The env batch: `num_envs` worlds of one task, a gymnasium `VectorEnv` over a `Sim`.

A step is a loop over managers (simrl.managers), each owning one kind of term:

    actions (delayed) -> ctrl -> interval events -> sim.step(decimation) -> joint state and
    views -> metrics' history -> commands -> terminations -> rewards -> curricula -> resets by
    mask (spawn events, stateful terms, commands, reset events) -> observations

Everything is batched torch on the sim device; nothing loops over envs in Python and nothing
waits on the device inside a step (on mjwarp every step resets by mask, whether or not an
episode ended; episode statistics accumulate on the device and `episode_log()` reads them once
per iteration). Ended episodes reset inside `step` (gymnasium's SAME_STEP autoreset).

rsl-rl's `VecEnv.step` returns 4 values where gymnasium's returns 5, so one object cannot be
both under the name `step`: `simrl.rl.vecenv.RslRlVecEnv(env)` is the rsl-rl view, which shares
every buffer with the env (no copies). This layer imports no RL library.

A task is a config class over this class as it is: its fields, the terms only it uses in
`TERMS`, the entries its fields imply in `own_entries()` (envs/cartpole.py), and the data views
its terms read in `VIEWS` (envs/locomotion: a legged robot's state, the terrain's levels;
simrl.env.task). Term functions sit in tables:
`OBS_TERMS` (each declaring its deploy read and mirror beside it:
simrl.managers.observation.observation), `REWARD_TERMS`, `METRIC_TERMS`, `TRACKING_TERMS`, plus
the library's `EVENT_TERMS`, `TERMINATION_TERMS`, `COMMAND_TERMS`, `ACTION_TERMS`,
`CURRICULUM_TERMS`. Term params that name bodies, joints or sites resolve to indices once, at
start-up (simrl.managers.terms), so the step indexes with tensors and never looks a name up.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space
from tensordict import TensorDict

import simrl.env.checks as checks
import simrl.env.episode_log as episode_log
import simrl.env.state as env_state
from simrl.env.config import EnvCfg, own_entries
from simrl.env.specs import TaskSpecs
from simrl.env.task import TaskModel
from simrl.managers import (
    ActionManager,
    CommandManager,
    CurriculumManager,
    EventManager,
    MetricManager,
    ObservationManager,
    RewardManager,
    TerminationManager,
)
from simrl.managers.entries import merge_entries
from simrl.mdp import objects
from simrl.mdp.actions import ACTION_TERMS
from simrl.mdp.commands import COMMAND_TERMS
from simrl.mdp.curriculum import CURRICULUM_TERMS
from simrl.mdp.events import EVENT_TERMS
from simrl.mdp.observations import OBSERVATIONS
from simrl.mdp.rewards import REWARDS
from simrl.mdp.terminations import TERMINATION_TERMS
from simrl.sim import Sim, SimError, make_sim, resolve_backend, resolve_device


class EnvBatch(TaskModel, TaskSpecs, gym.vector.VectorEnv):
    """The env batch of any task config. See the module docstring."""

    metadata: ClassVar[dict] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": ["rgb_array"]}
    # the library's terms (simrl.mdp), beside which a task config's TERMS add its own
    OBS_TERMS: ClassVar[dict[str, Callable[..., torch.Tensor]]] = {**OBSERVATIONS, **objects.OBSERVATIONS}
    REWARD_TERMS: ClassVar[dict[str, Callable[..., torch.Tensor]]] = dict(REWARDS)
    METRIC_TERMS: ClassVar[dict[str, Callable[..., torch.Tensor]]] = {}
    TRACKING_TERMS: ClassVar[dict[str, Callable[..., torch.Tensor]]] = {}
    EVENT_TERMS: ClassVar[dict[str, Callable[..., None]]] = {**EVENT_TERMS, **objects.EVENTS}
    TERMINATION_TERMS: ClassVar[dict[str, Callable[..., torch.Tensor]]] = {**TERMINATION_TERMS,
                                                                           **objects.TERMINATIONS}
    COMMAND_TERMS: ClassVar[dict[str, type]] = dict(COMMAND_TERMS)
    ACTION_TERMS: ClassVar[dict[str, type]] = dict(ACTION_TERMS)
    CURRICULUM_TERMS: ClassVar[dict[str, type]] = dict(CURRICULUM_TERMS)
    task_name: ClassVar[str] = ""

    def __init__(self, cfg: EnvCfg, num_envs: int, device: str = "auto", backend: str = "auto",
                 seed: int = 0, sim_kwargs: dict | None = None, render_mode: str | None = None):
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.cfg = cfg
        self.render_mode = render_mode
        self.task_name = getattr(cfg, "task_name", "") or type(self).task_name
        self.check_terms(cfg)
        for attr, table in checks.term_tables(type(self), cfg).items():  # the library's, the task's
            setattr(self, attr, table)
        model = self.build_model()
        cfg = self.cfg  # build_model may complete the config from the model (a robot's gait offsets)
        sim_kwargs = dict(sim_kwargs or {})
        if resolve_backend(backend, resolve_device(device)) == "mjwarp":  # the task's buffer sizes
            for k, v in getattr(cfg, "MJWARP_BUFFERS", {}).items():  # where the sim config has none
                sim_kwargs[k] = v if sim_kwargs.get(k) is None else sim_kwargs[k]
        self.sim: Sim = make_sim(model, num_envs, device=resolve_device(device), backend=backend,
                                 keyframe=cfg.keyframe, **sim_kwargs)
        self.num_envs = n = num_envs
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

        f32 = dict(device=self.device, dtype=torch.float32)
        self.episode_length_buf = torch.zeros(n, device=self.device, dtype=torch.long)
        self.actions = torch.zeros(n, self.num_actions, **f32)
        self.last_actions = torch.zeros_like(self.actions)
        self.reward_buf = torch.zeros(n, **f32)
        self.terminated_buf = torch.zeros(n, device=self.device, dtype=torch.bool)
        self.time_out_buf = torch.zeros_like(self.terminated_buf)
        self.reset_buf = torch.zeros(n, device=self.device, dtype=torch.bool)  # reset this step
        self.reward_manager = RewardManager(cfg.rewards, self.dt, n, self.device, cfg.only_positive_rewards)
        self.observation_manager = ObservationManager(cfg.observations)
        # episode log: [count, length_s, terminated, unstable, reward terms...], summed on the device
        self._log_acc = torch.zeros(4 + len(cfg.rewards), device=self.device, dtype=torch.float64)
        self._unstable_total = 0
        # resets by mask every step where the state lives on the device (no host sync to ask
        # whether any env ended); see step
        self.masked_resets = self.sim.backend == "mjwarp"
        self.sim.check_overflow = False  # read once per iteration by episode_log instead
        if hasattr(self.sim, "reset_row_overflow"):  # mjwarp: a world short of constraint rows
            self.sim.reset_row_overflow = True       # is reset and counted, as a blow-up is
        self._warned_sim_error = False
        self.action_offset = torch.zeros(self.num_actions, **f32)  # ctrl = offset + scale * a
        self.action_scale = float(cfg.action_scale or 1.0)  # tasks over a robot: the robot's
        self.setup()
        self._bind_terms()
        self.event_manager.apply(self, "startup")  # per-world model randomization, once
        self.reset_all()
        self.single_observation_space = self.observation_manager.build(self, cfg.obs_clip)
        self.compute_observations()
        self.observation_space = batch_space(self.single_observation_space, n)
        clip = cfg.action_clip
        self.single_action_space = gym.spaces.Box(-clip, clip, (self.num_actions,), np.float32)
        self.action_space = batch_space(self.single_action_space, n)

    def _bind_terms(self) -> None:
        """The managers of every kind, in their dependency order: commands before curricula (a
        level scales a command), everything after `setup` (the views exist)."""
        cfg = self.cfg
        own = own_entries(cfg, getattr(self, "scene", None))  # the entries the config's fields imply

        def entries(field: str, kind: str) -> dict[str, Any]:
            return merge_entries(own.get(field, {}), getattr(cfg, field), kind)

        self.METRIC_TERMS = {**self.METRIC_TERMS, **self.view_metrics()}
        self.reward_manager.bind(self, self.REWARD_TERMS)
        self.observation_manager.bind(self, self.OBS_TERMS)
        self.metric_manager = MetricManager(self, self.METRIC_TERMS, self.TRACKING_TERMS)
        self.event_manager = EventManager(self, entries("events", "event"), self.EVENT_TERMS)
        self.termination_manager = TerminationManager(
            self, entries("terminations", "termination"), self.TERMINATION_TERMS)
        self.command_manager = CommandManager(self, entries("commands", "command"), self.COMMAND_TERMS)
        self.action_manager = ActionManager(self, entries("actions", "action"), self.ACTION_TERMS,
                                            delay=getattr(cfg, "action_delay", None))
        self.curriculum_manager = CurriculumManager(
            self, entries("curriculum", "curriculum"), self.CURRICULUM_TERMS)

    # --- the loop -----------------------------------------------------------------------------
    def step(self, actions: torch.Tensor):
        """gymnasium step: (obs, reward, terminated, truncated, infos), SAME_STEP autoreset."""
        return self.advance(actions, final_obs=True)

    def advance(self, actions: torch.Tensor, final_obs: bool = False):
        """One control step: (obs buffers, reward, terminated, truncated, infos), the live
        buffers themselves (no copies). `final_obs` also computes the ended episodes' last
        observations into infos (gymnasium's `step`); a learner that bootstraps from
        `time_outs` skips that work."""
        actions = torch.as_tensor(actions, device=self.device, dtype=torch.float32)
        actions = torch.nan_to_num(actions).clamp(-self.cfg.action_clip, self.cfg.action_clip)
        self.reset_buf.zero_()
        self.last_actions.copy_(self.actions)
        self.actions.copy_(actions)
        self.action_manager.apply(self, self.actions)
        self.event_manager.apply(self, "interval")  # into the state this step starts from
        unstable = self._physics()
        self.update()
        self.metric_manager.update(self)  # the stateful metrics' episode history
        self.command_manager.step(self)  # after the physics (a heading command reads the new yaw)
        self.terminated_buf = self.termination_manager.compute(self) | unstable
        timed = self.termination_manager.time_outs(self.episode_length_buf >= self.max_episode_length)
        self.time_out_buf = timed & ~self.terminated_buf
        self.reward_buf = self.reward_manager.compute(self, unstable)
        done = self.terminated_buf | self.time_out_buf
        self.curriculum_manager.update(self, done)
        self._accumulate_log(done, unstable)
        infos: dict[str, Any] = self.metric_manager.compute(self) if self.record_metrics else {}
        self._end_and_reset(done, unstable, infos if final_obs else None)
        self.compute_observations()
        infos["time_outs"] = self.time_out_buf
        return self.obs_buf, self.reward_buf, self.terminated_buf, self.time_out_buf, infos

    def _physics(self) -> torch.Tensor:
        """Step the physics; bool (N,) of the worlds that diverged or that the engine failed on
        (they are reset as unstable)."""
        failed = None
        try:
            self.sim.step(self.decimation)
        except SimError as e:
            if e.worlds is None:  # a failure of the whole batch (e.g. buffer overflow): stop
                raise
            if not self._warned_sim_error:  # once: the count is logged as sim/unstable_resets
                warnings.warn(f"{e} (resetting them; warned once)", RuntimeWarning, stacklevel=3)
                self._warned_sim_error = True
            failed = e.worlds
        self.episode_length_buf += 1
        unstable = self.sim.unstable(self.cfg.max_qvel)
        if failed is not None:
            unstable[failed.to(self.device)] = True
        return unstable

    def _end_and_reset(self, done: torch.Tensor, unstable: torch.Tensor, infos: dict | None) -> None:
        """Reset the worlds whose episodes ended; with `infos`, their last observations first.

        On the device (mjwarp) every step resets by mask, whether or not an episode ended:
        asking would be a host sync. In host memory (MuJoCo C) asking is free, so idle steps
        skip the reset work."""
        if not (self.masked_resets or bool(done.any())):
            return
        if infos is not None:  # the last frame of the ended episodes: not pushed into histories
            self.compute_observations(commit=False)
            infos["final_obs"] = {g: v.clone() for g, v in self.obs_buf.items()}
            infos["_final_obs"] = done.clone()
        if self.masked_resets or bool((done & ~unstable).any()):
            self._reset(done)
            return
        # only blown-up worlds end here: their new episodes draw from a spare generator, so every
        # other world's random stream is the one of a run without blow-ups (a reset draws for all
        # worlds and keeps the rows of `done`)
        self.gen, self.spare_gen = self.spare_gen, self.gen
        try:
            self._reset(done)
        finally:
            self.gen, self.spare_gen = self.spare_gen, self.gen

    def _reset(self, mask: torch.Tensor) -> None:
        """Reset the envs where bool `mask` (N,) is True: sim to the keyframe, then the spawn
        events, the stateful terms, the commands' draws and the reset events.

        No forward pass afterwards: the next observation reads qpos/qvel, which the reset set;
        derived quantities (contacts, xpos) of a reset env are stale until its next step, and
        tasks mask what they read from them with `reset_buf`.
        """
        self.sim.reset(mask, forward=False)
        self.reset_buf |= mask
        self.episode_length_buf.masked_fill_(mask, 0)
        self.actions.masked_fill_(mask[:, None], 0.0)
        self.last_actions.masked_fill_(mask[:, None], 0.0)
        self.event_manager.apply(self, "spawn", mask)  # where the episode starts
        self.action_manager.reset(self, mask)  # an action delay's draw
        self.reset_views(mask)
        self.reward_manager.reset(self, mask)
        self.metric_manager.reset(self, mask)
        self.command_manager.resample(self, mask)
        self.event_manager.apply(self, "reset", mask)
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
        self.reward_manager.sums.zero_()
        return self.compute_observations(), {}

    # --- observations and rewards -------------------------------------------------------------
    def compute_observations(self, commit: bool = True) -> dict[str, torch.Tensor]:
        """Every observation group from the current state (simrl.managers.observation)."""
        return self.observation_manager.compute(self, commit)

    def terminated(self) -> torch.Tensor:
        """Bool (N,): episodes in a terminal state now (simrl.managers.termination)."""
        return self.termination_manager.compute(self)

    @property
    def obs_buf(self) -> dict[str, torch.Tensor]:
        """The last observation of every group (the learner's own: not written in place)."""
        return self.observation_manager.buf

    @property
    def obs_layout(self) -> dict[str, list]:
        """Where each term sits in each group (ObsSlots): export and deploy read it."""
        return self.observation_manager.layout

    @property
    def obs_dims(self) -> dict[str, int]:
        """Columns of each observation group."""
        return self.observation_manager.dims

    @property
    def episode_sums(self) -> dict[str, torch.Tensor]:
        """Each reward term's weighted sum over the running episodes, (N,) each."""
        return self.reward_manager.episode_sums

    def get_observations(self) -> TensorDict:
        return TensorDict(dict(self.obs_buf), batch_size=[self.num_envs], device=self.device)

    # --- commands -----------------------------------------------------------------------------
    @property
    def command_terms(self) -> dict[str, Any]:
        return self.command_manager.terms

    @property
    def record_metrics(self) -> bool:
        """Evaluation turns it on: every step's infos carry the metric terms' values."""
        return self.metric_manager.record

    @record_metrics.setter
    def record_metrics(self, on: bool) -> None:
        self.metric_manager.record = bool(on)

    def command(self, name: str | None = None) -> torch.Tensor:
        """Command `name`'s current values (N, d); None: the env's only command."""
        return self.command_manager.get(name, self.task_name).command

    def fix_command(self, values: Any, name: str | None = None) -> None:
        """Pin every env's command `name` (None: the env's only command, or its only tracked
        one: a velocity) to `values` and stop its clock (evaluation); a reset still draws a new
        one for the env it resets."""
        self.command_manager.fix(self, values, name, self.task_name)

    def required_command(self, name: str, func: str) -> Any:
        """The command term `name`, which the task's own terms read by name: it must be a `func`
        term, else a one-line error saying to replace its params, not drop or retype it."""
        from simrl.errors import ConfigError

        term = self.command_terms.get(name)
        if not isinstance(term, self.COMMAND_TERMS[func]):
            raise ConfigError(f"task '{self.task_name}': its rewards and observations read the command "
                              f"'{name}', a {func}; replace its params, do not drop or retype it "
                              f"(commands: {sorted(self.command_terms)})")
        return term

    # --- the episode log (simrl.env.episode_log) ----------------------------------------------
    def _accumulate_log(self, done: torch.Tensor, unstable: torch.Tensor) -> None:
        episode_log.accumulate(self, done, unstable)

    def episode_log(self) -> dict[str, float]:
        """Means over the episodes that ended since the last call (simrl.env.episode_log.read:
        one host sync, once per iteration), the curricula's and the views' figures."""
        log = episode_log.read(self)
        log.update(self.curriculum_manager.log(self))
        log.update(self.view_log())
        return log

    @property
    def unstable_count(self) -> int:
        """Unstable worlds reset since the env was built (reads the device: not per step)."""
        return self._unstable_total + int(self._log_acc[3])

    # --- checkpoints and checks ---------------------------------------------------------------
    def config_key(self) -> str:
        return env_state.config_key(self)

    def state_dict(self) -> dict[str, Any]:
        """Everything the next step depends on (simrl.env.state): a checkpoint's env part."""
        return env_state.state_dict(self)

    def load_state_dict(self, saved: dict[str, Any]) -> None:
        """Restore `state_dict()`'s output; another format or config is refused in one line."""
        env_state.load_state_dict(self, saved)

    def close(self, **kwargs) -> None:
        pass

    @classmethod
    def check_terms(cls, cfg: EnvCfg) -> None:
        """Every term `cfg` names exists (simrl.env.checks), before anything is built."""
        checks.check_terms(cls, cfg)

    def uniform(self, shape, lo: float, hi: float) -> torch.Tensor:
        """Uniform samples from the env's seeded generator, on the env device."""
        return torch.rand(shape, generator=self.gen, device=self.device) * (hi - lo) + lo
