"""The observation manager: each group's terms bound to their params, the group's layout (where
each term sits in the vector, computed once), and every step's observation buffers.

A term's frame is `fn(env)` scaled, noised (uniform ±noise after scaling, where the config's
`obs_noise` is on), clipped to its `clip`; with `delay` D the frame of D control steps ago, with
`history` H the last H of those frames, oldest first. The group's vector is then cleaned of
non-finite values and clipped to `obs_clip`. Export and deploy read the same layout.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np
import torch

from simrl.managers.entries import term_func
from simrl.managers.terms import bind


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
    func: str | None = None  # the term function (None: the name): one function under two names




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
    func: str = ""  # the term function's name in the task's table


def observation(func: Callable[..., torch.Tensor] | None = None, *, read: Any = None,
                mirror: Callable[[Any], tuple[np.ndarray, np.ndarray]] | None = None) -> Any:
    """Declare, beside an observation term, what the layers above read of it:

    - `read`: how a robot supplies it (export writes it into policy.json for simrl.deploy):
      `{"reading": name, "doc": what it is, "op": value | gravity | pos_rot6d | ..., "columns":
      [...], "minus": a policy.json key}`, or `f(params) -> that dict` where it depends on the
      term's params (a clock's period). None: the robot cannot supply it (privileged state, for
      the critic only; export refuses it in an actor's group).
    - `mirror`: `f(env) -> (perm, sign)`, the left-right mirror image of one frame of it
      (simrl.mirror), for symmetry augmentation. None: symmetry is refused for a policy reading it.

        @observation(read={"reading": "gyro"}, mirror=lambda env: mirror.axial(None))
        def base_ang_vel(env): ...

    or `observation(fn, read=..., mirror=...)` for a function defined elsewhere (a lambda)."""
    def mark(f: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
        f.deploy_read = read
        f.mirror = mirror
        return f
    return mark if func is None else mark(func)


def deploy_read(func: Callable[..., torch.Tensor], params: Mapping[str, Any]) -> dict[str, Any] | None:
    """An observation term's declared read for these params (None: it declares none)."""
    read = getattr(func, "deploy_read", None)
    return read(dict(params)) if callable(read) else read


class ObservationManager:
    """Observation groups (`policy`, `critic`, ...) of one env batch. State: the last buffers
    and each delayed or stacked term's frames (a checkpoint holds them)."""

    not_state = frozenset({"groups", "fns", "layout", "_scales"})

    def __init__(self, groups: Mapping[str, list[ObsTerm]]):
        self.groups = dict(groups)
        self.fns: dict[tuple[str, str], Callable[..., torch.Tensor]] = {}
        self.layout: dict[str, list[ObsSlot]] = {}
        self.buf: dict[str, torch.Tensor] = {}
        self.history: dict[tuple[str, str], torch.Tensor] = {}  # (N, H + D, width), oldest first
        self._scales: dict[tuple[float, ...], torch.Tensor] = {}

    def bind(self, env: Any, table: Mapping[str, Callable[..., torch.Tensor]]) -> None:
        """Each term as `f(env)`, its params bound (names checked by the env's check_terms)."""
        self.fns = {}
        for group, terms in self.groups.items():
            for t in terms:
                where = f"observation term '{t.name}' in group '{group}'"
                func = term_func(table, t.func or t.name, where)
                self.fns[(group, t.name)] = bind(env, func, t.params, where)

    def build(self, env: Any, obs_clip: float) -> gym.spaces.Dict:
        """The layout of every group, from one evaluation of each term on the current state;
        allocates the buffers and histories; returns the single-env observation space."""
        n, f32 = env.num_envs, dict(device=env.device, dtype=torch.float32)
        spaces = {}
        for group, terms in self.groups.items():
            start = 0
            layout = []
            for t in terms:
                d = int(self.fns[(group, t.name)](env).shape[1])
                scale = t.scale if isinstance(t.scale, (int, float)) else list(t.scale)
                if isinstance(scale, list) and len(scale) != d:
                    raise ValueError(f"obs term '{t.name}' has {d} columns but {len(scale)} scales")
                h, lag = int(t.history), int(t.delay)
                clip_t = None if t.clip is None else float(t.clip)
                layout.append(ObsSlot(t.name, slice(start, start + d * h), scale, t.noise, h, d,
                                      MappingProxyType(dict(t.params)), clip_t, lag, t.func or t.name))
                if h + lag > 1:  # the last H + D frames; the first H of them are observed
                    self.history[(group, t.name)] = torch.zeros(n, h + lag, d, **f32)
                start += d * h
            self.layout[group] = layout
            self.buf[group] = torch.zeros(n, start, **f32)
            spaces[group] = gym.spaces.Box(-obs_clip, obs_clip, (start,), np.float32)
        return gym.spaces.Dict(spaces)

    def compute(self, env: Any, commit: bool = True) -> dict[str, torch.Tensor]:
        """Every group from the current state. `commit`: push this frame into the histories
        (False for a look at the state that does not advance time)."""
        clip, noisy = env.cfg.obs_clip, env.cfg.obs_noise
        fresh: dict[str, torch.Tensor] = {}  # a new dict too: callers may keep the last one
        for group, layout in self.layout.items():
            # a fresh buffer each step: rsl-rl keeps a reference to the observation it acted on
            # until the transition is stored after the next env step, so writing in place would
            # silently record o_{t+1} as o_t
            buf = torch.empty_like(self.buf[group])
            fresh[group] = buf
            for name, sl, scale, noise, history, _, _, term_clip, delay, _ in layout:
                value = self.fns[(group, name)](env)
                if isinstance(scale, list):
                    value = value * self._scale_tensor(scale, env.device)
                elif scale != 1.0:
                    value = value * scale
                if noise and noisy:
                    u = torch.rand(value.shape, generator=env.gen, device=env.device)
                    value = value + (2 * u - 1) * noise
                if term_clip is not None:
                    value = value.clamp(-term_clip, term_clip)
                if history + delay > 1:  # a fresh episode starts with its first frame in every slot
                    past = self.history[(group, name)]
                    frames = torch.cat([past[:, 1:], value[:, None]], dim=1)
                    first = value[:, None].expand_as(frames)
                    frames = torch.where(env.reset_buf[:, None, None], first, frames)
                    if commit:
                        self.history[(group, name)] = frames
                    value = frames[:, :history].reshape(env.num_envs, -1)
                buf[:, sl] = value
            torch.nan_to_num_(buf, nan=0.0, posinf=clip, neginf=-clip).clamp_(-clip, clip)
        self.buf = fresh
        return fresh

    def _scale_tensor(self, scale: list[float], device: torch.device) -> torch.Tensor:
        key = tuple(scale)
        if key not in self._scales:
            self._scales[key] = torch.tensor(scale, device=device, dtype=torch.float32)
        return self._scales[key]

    @property
    def dims(self) -> dict[str, int]:
        """Columns of each group."""
        return {g: int(b.shape[1]) for g, b in self.buf.items()}
