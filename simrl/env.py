"""The env batch: `num_envs` worlds of one task, a gymnasium `VectorEnv` over a `Sim`.

One step: actions -> `ctrl` -> `sim.step(decimation)` -> task update -> terminations ->
weighted reward terms -> reset of the finished envs (inside `step`, gymnasium's SAME_STEP
autoreset) -> observation groups. Everything is batched torch on the sim device; nothing loops
over envs in Python.

rsl-rl's `VecEnv.step` returns 4 values where gymnasium's returns 5, so one object cannot be
both under the name `step`: `env.rsl_rl()` gives the rsl-rl view (`RslRlVecEnv`), which shares
every buffer with the env (no copies) and only reshapes what `step` returns.

A task subclasses `EnvBatch` and fills in the hooks (`apply_actions`, `update`, `terminated`,
`reset_envs`) plus three tables of small term functions `f(env) -> Tensor`:
`OBS_TERMS` (name -> (N, d)), `REWARD_TERMS` (name -> (N,)), weighted by name from its config.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import gymnasium as gym
import mujoco
import numpy as np
import torch
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space
from rsl_rl.env import VecEnv
from tensordict import TensorDict

from simrl import ASSETS
from simrl.sim import Sim, SimError, make_sim, resolve_device


@dataclass
class ObsTerm:
    """One observation term: `fn(env)` scaled, noised (uniform ±noise, after scaling), clipped."""

    name: str
    scale: float | list[float] = 1.0  # one factor, or one per column of the term
    noise: float = 0.0


@dataclass
class EnvCfg:
    """What every task config has. Tasks subclass it with their own fields."""

    model: str = ""  # MJCF path, relative to assets/ or absolute
    keyframe: str | None = None
    decimation: int = 4  # physics substeps per control step
    episode_length_s: float = 20.0
    action_scale: float = 1.0
    action_clip: float = 100.0
    obs_clip: float = 100.0
    max_qvel: float = 1000.0  # a world faster than this (or non-finite) is reset as unstable
    obs_noise: bool = True  # add each term's configured noise (off for evaluation and parity)
    only_positive_rewards: bool = False  # clip each step's total at 0 (legged_gym): no incentive
    # to end an episode early just to stop paying penalties
    observations: dict[str, list[ObsTerm]] = field(default_factory=dict)
    rewards: dict[str, float] = field(default_factory=dict)


def cfg_from_dict(cls: type, values: dict[str, Any] | None) -> Any:
    """Build config dataclass `cls` from a (Hydra) dict; unknown keys list the valid ones."""
    values = dict(values or {})
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
    OBS_TERMS: ClassVar[dict[str, Callable[[EnvBatch], torch.Tensor]]] = {}
    REWARD_TERMS: ClassVar[dict[str, Callable[[EnvBatch], torch.Tensor]]] = {}
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
        self._check_terms()
        dev = resolve_device(device)
        model = cfg.model if cfg.model.startswith("/") else str(ASSETS / cfg.model)
        self.sim: Sim = make_sim(
            model, num_envs, device=dev, backend=backend, keyframe=cfg.keyframe,
            **(sim_kwargs or {}),
        )
        self.num_envs = num_envs
        self.device = self.sim.device
        self.model = self.sim.model
        self.dt = cfg.decimation * float(self.model.opt.timestep)
        self.max_episode_length = math.ceil(cfg.episode_length_s / self.dt)
        self.gen = torch.Generator(device=self.device)
        self.gen.manual_seed(seed)

        n, f32 = num_envs, dict(device=self.device, dtype=torch.float32)
        self.episode_length_buf = torch.zeros(n, device=self.device, dtype=torch.long)
        self.actions = torch.zeros(n, self.num_actions, **f32)
        self.last_actions = torch.zeros_like(self.actions)
        self.reward_buf = torch.zeros(n, **f32)
        self.terminated_buf = torch.zeros(n, device=self.device, dtype=torch.bool)
        self.time_out_buf = torch.zeros_like(self.terminated_buf)
        self.episode_sums = {k: torch.zeros(n, **f32) for k in cfg.rewards}
        self.unstable_count = 0
        self._warned_sim_error = False
        self.profile = False  # True: accumulate seconds in self.timers (syncs the device)
        self.timers = {"physics": 0.0, "env_step": 0.0}
        self.action_offset = torch.zeros(self.num_actions, **f32)  # ctrl = offset + scale * a
        self.setup()

        # observation layout: computed once from the terms; export/deploy read the same data
        self.obs_layout: dict[str, list[tuple[str, slice, float, float]]] = {}
        self._obs_buf: dict[str, torch.Tensor] = {}
        self.reset_all()
        spaces = {}
        for group, terms in cfg.observations.items():
            start = 0
            layout = []
            for t in terms:
                d = int(self.OBS_TERMS[t.name](self).shape[1])
                scale = t.scale if isinstance(t.scale, (int, float)) else list(t.scale)
                if isinstance(scale, list) and len(scale) != d:
                    raise ValueError(f"obs term '{t.name}' has {d} columns but {len(scale)} scales")
                layout.append((t.name, slice(start, start + d), scale, t.noise))
                start += d
            self.obs_layout[group] = layout
            self._obs_buf[group] = torch.zeros(n, start, **f32)
            spaces[group] = gym.spaces.Box(-cfg.obs_clip, cfg.obs_clip, (start,), np.float32)
        self.compute_observations()

        self.single_observation_space = gym.spaces.Dict(spaces)
        self.observation_space = batch_space(self.single_observation_space, n)
        clip = cfg.action_clip
        self.single_action_space = gym.spaces.Box(-clip, clip, (self.num_actions,), np.float32)
        self.action_space = batch_space(self.single_action_space, n)
        self.extras: dict[str, Any] = {"log": {}}

    # --- task hooks ---------------------------------------------------------------------------
    @property
    def num_actions(self) -> int:
        return int(self.model.nu)

    def setup(self) -> None:
        """Allocate task buffers (called once, before the first reset)."""

    def apply_actions(self, actions: torch.Tensor) -> None:
        """Write `actions` (N, num_actions), clipped, into `sim.ctrl`."""
        self.sim.ctrl[:] = self.action_offset + self.cfg.action_scale * actions

    def action_spec(self) -> dict[str, Any]:
        """How actions become actuator commands, as plain data (export and deploy read it)."""
        m = self.model
        joint = mujoco.mjtObj.mjOBJ_JOINT
        return {
            "scale": float(self.cfg.action_scale),
            "offset": self.action_offset.tolist(),
            "clip": float(self.cfg.action_clip),
            "actuator_names": [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, i) for i in range(m.nu)],
            "joint_names": [mujoco.mj_id2name(m, joint, int(m.actuator_trnid[i, 0])) for i in range(m.nu)],
            "kp": m.actuator_gainprm[:, 0].tolist(),
            "kd": (-m.actuator_biasprm[:, 2]).tolist(),
            "torque_limit": np.abs(m.actuator_forcerange).max(axis=1).tolist(),
            "ctrl_range": m.actuator_ctrlrange.tolist(),
        }

    def refresh(self) -> None:
        """Re-read task state from the sim views (after physics and after resets)."""

    def update(self) -> None:
        """Task state after the physics (commands, contact timers...); calls `refresh`."""
        self.refresh()

    def terminated(self) -> torch.Tensor:
        """Bool (N,): episodes that ended in a terminal state (not a time-out)."""
        return torch.zeros(self.num_envs, device=self.device, dtype=torch.bool)

    def reset_envs(self, ids: torch.Tensor) -> None:
        """Task part of resetting envs `ids`: the sim is already at its keyframe for them."""

    # --- the loop -----------------------------------------------------------------------------
    def step(self, actions: torch.Tensor):
        """gymnasium step: (obs, reward, terminated, truncated, infos), SAME_STEP autoreset."""
        obs, rew, term, trunc, infos = self._step(actions, final_obs=True)
        return obs, rew, term, trunc, infos

    def _step(self, actions: torch.Tensor, final_obs: bool):
        if self.profile:
            return self._profiled_step(actions, final_obs)
        return self._step_impl(actions, final_obs)

    def _profiled_step(self, actions, final_obs):
        sync = torch.cuda.synchronize if self.device.type == "cuda" else (lambda: None)
        sim_step = self.sim.step

        def timed_step(n):
            sync()
            t = time.perf_counter()
            sim_step(n)
            sync()
            self.timers["physics"] += time.perf_counter() - t

        sync()
        t0 = time.perf_counter()
        self.sim.step = timed_step
        try:
            out = self._step_impl(actions, final_obs)
        finally:
            del self.sim.step  # back to the class method
        sync()
        self.timers["env_step"] += time.perf_counter() - t0
        return out

    def _step_impl(self, actions: torch.Tensor, final_obs: bool):
        actions = torch.as_tensor(actions, device=self.device, dtype=torch.float32)
        actions = torch.nan_to_num(actions).clamp(-self.cfg.action_clip, self.cfg.action_clip)
        self.last_actions.copy_(self.actions)
        self.actions.copy_(actions)
        self.apply_actions(self.actions)
        failed = self._sim_step()
        self.episode_length_buf += 1

        unstable = self.sim.unstable(self.cfg.max_qvel)
        if failed is not None:
            unstable[failed.to(self.device)] = True
        self.update()
        self.terminated_buf = self.terminated() | unstable
        self.time_out_buf = (self.episode_length_buf >= self.max_episode_length) & ~self.terminated_buf
        self.compute_rewards(unstable)

        done = self.terminated_buf | self.time_out_buf
        ids = done.nonzero().flatten()
        infos: dict[str, Any] = {}
        n_unstable = int(unstable.sum()) if ids.numel() else 0
        self.unstable_count += n_unstable
        if ids.numel():
            if final_obs:
                self.compute_observations()
                infos["final_obs"] = {g: v.clone() for g, v in self._obs_buf.items()}
                infos["_final_obs"] = done.clone()
            self.extras["log"] = self._episode_log(ids)
            self.extras["log"]["sim/unstable_resets"] = float(n_unstable)
            self._reset(ids)
        else:
            self.extras["log"] = {}
        self.compute_observations()
        self.extras["time_outs"] = self.time_out_buf
        infos["time_outs"] = self.time_out_buf
        return self._obs_buf, self.reward_buf, self.terminated_buf, self.time_out_buf, infos

    def _sim_step(self) -> torch.Tensor | None:
        """Step the physics; ids of worlds the engine failed on (they are reset as unstable)."""
        try:
            self.sim.step(self.cfg.decimation)
        except SimError as e:
            if e.worlds is None:  # a failure of the whole batch (e.g. buffer overflow): stop
                raise
            if not self._warned_sim_error:  # once: the count is logged as sim/unstable_resets
                warnings.warn(f"{e} (resetting them; warned once)", RuntimeWarning, stacklevel=3)
                self._warned_sim_error = True
            return e.worlds
        return None

    def compute_rewards(self, unstable: torch.Tensor | None = None) -> None:
        self.reward_buf = torch.zeros_like(self.reward_buf)  # fresh: the last one was returned
        for name, weight in self.cfg.rewards.items():
            if weight == 0.0:
                continue
            value = self.REWARD_TERMS[name](self) * (weight * self.dt)
            if unstable is not None:  # a diverged world earns nothing, poisons nothing
                value = torch.where(unstable, 0.0, torch.nan_to_num(value))
            self.reward_buf += value
            self.episode_sums[name] += value
        if self.cfg.only_positive_rewards:
            self.reward_buf.clamp_(min=0.0)

    def compute_observations(self) -> dict[str, torch.Tensor]:
        clip = self.cfg.obs_clip
        fresh: dict[str, torch.Tensor] = {}  # a new dict too: callers may keep the last one
        for group, layout in self.obs_layout.items():
            # a fresh buffer each step: rsl-rl keeps a reference to the observation it acted on
            # until the transition is stored after the next env step, so writing in place would
            # silently record o_{t+1} as o_t
            buf = torch.empty_like(self._obs_buf[group])
            fresh[group] = buf
            for name, sl, scale, noise in layout:
                value = self.OBS_TERMS[name](self)
                if isinstance(scale, list):
                    value = value * self._scale_tensor(scale)
                elif scale != 1.0:
                    value = value * scale
                if noise and self.cfg.obs_noise:
                    u = torch.rand(value.shape, generator=self.gen, device=self.device)
                    value = value + (2 * u - 1) * noise
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

    def _episode_log(self, ids: torch.Tensor) -> dict[str, float]:
        log = {}
        for name, sums in self.episode_sums.items():
            log[f"Episode_Reward/{name}"] = float(sums[ids].mean() / self.cfg.episode_length_s)
            sums[ids] = 0.0
        log["Episode/length_s"] = float(self.episode_length_buf[ids].float().mean() * self.dt)
        log["Episode/terminated"] = float(self.terminated_buf[ids].float().mean())
        return log

    def _reset(self, ids: torch.Tensor) -> None:
        self.sim.reset(ids, forward=False)  # forwarded below, after the task's own reset
        self.episode_length_buf[ids] = 0
        self.actions[ids] = 0.0
        self.last_actions[ids] = 0.0
        self.reset_envs(ids)
        self.sim.forward(ids)
        self.refresh()

    def reset_all(self) -> None:
        self._reset(torch.arange(self.num_envs, device=self.device))

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """gymnasium reset: every env to a fresh episode; `seed` reseeds the env's generator."""
        if seed is not None:
            self.gen.manual_seed(seed)
        self.reset_all()
        for sums in self.episode_sums.values():
            sums.zero_()
        return self.compute_observations(), {}

    def get_observations(self) -> TensorDict:
        return TensorDict(dict(self._obs_buf), batch_size=[self.num_envs], device=self.device)

    def rsl_rl(self) -> RslRlVecEnv:
        return RslRlVecEnv(self)

    # --- rendering ----------------------------------------------------------------------------
    def render(self, world: int = 0, width: int = 640, height: int = 480, camera: str | int | None = None):
        """rgb_array frame (height, width, 3) of env `world`, from the model's tracking camera."""
        from simrl.render import Renderer, default_camera

        if getattr(self, "_renderer", None) is None or self._renderer_size != (width, height):
            self._renderer = Renderer(self.sim, width, height)
            self._renderer_size = (width, height)
        return self._renderer.frame(world, default_camera(self.sim) if camera is None else camera)

    def close(self, **kwargs) -> None:
        pass

    def _check_terms(self) -> None:
        for name in self.cfg.rewards:
            if name not in self.REWARD_TERMS:
                raise KeyError(
                    f"unknown reward term '{name}' for task '{self.task_name}'; "
                    f"valid: {sorted(self.REWARD_TERMS)}"
                )
        for group, terms in self.cfg.observations.items():
            for t in terms:
                if t.name not in self.OBS_TERMS:
                    raise KeyError(
                        f"unknown observation term '{t.name}' in group '{group}' for task "
                        f"'{self.task_name}'; valid: {sorted(self.OBS_TERMS)}"
                    )

    def uniform(self, shape, lo: float, hi: float) -> torch.Tensor:
        """Uniform samples from the env's seeded generator, on the env device."""
        return torch.rand(shape, generator=self.gen, device=self.device) * (hi - lo) + lo


class RslRlVecEnv(VecEnv):
    """rsl-rl's view of an EnvBatch: same buffers, `step` returns (obs, rew, dones, extras)."""

    def __init__(self, env: EnvBatch):
        self.env = env
        self.num_envs = env.num_envs
        self.num_actions = env.num_actions
        self.max_episode_length = env.max_episode_length
        self.device = env.device
        self.cfg = dataclasses.asdict(env.cfg)

    @property
    def episode_length_buf(self) -> torch.Tensor:
        return self.env.episode_length_buf

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        self.env.episode_length_buf[:] = value

    def get_observations(self) -> TensorDict:
        return self.env.get_observations()

    def step(self, actions: torch.Tensor):
        obs, rew, term, trunc, _ = self.env._step(actions, final_obs=False)
        td = TensorDict(dict(obs), batch_size=[self.num_envs], device=self.device)
        return td, rew, term | trunc, self.env.extras
