"""A reference gait as an action prior: a clock-driven stepping pattern added to the policy's
actions, so the policy learns a residual over a step instead of having to find one.

    actions:
      reference_gait:
        func: reference_gait
        params: {amplitude: {".*_hip_pitch_joint": -0.3, ".*_knee_joint": 0.6, ".*_ankle_pitch_joint": -0.3}}
    curriculum:
      fade_gait: {func: reference_gait_fade, params: {start_step: 6000, end_step: 12000}}

In each foot's swing phase of the gait clock the policy observes (the task's `gait_period_s` and
`gait_offsets`, unless given), the joints of that foot's leg move by `amplitude` (rad, on their
joint targets) times `sin(pi (phase - stance) / (1 - stance))`: zero through the stance, the full
amplitude at mid-swing. It is on only while a move is commanded (the planar command above
`threshold` m/s) and off while standing is. Each joint follows the foot below it in the
kinematic tree. `gain` scales every amplitude (a screen's knob); `level` (1 by default) scales
it too: `reference_gait_fade` lowers it to 0 over training. Export writes it into policy.json's
action section and the robot-side runtime adds the same offsets from its own clock
(simrl.deploy.runtime.prior_offsets).
"""

from __future__ import annotations

import re
from typing import Any

import mujoco
import torch

from simrl.errors import ConfigError


class ReferenceGait:
    """An action prior (see the module docstring): `add(env, actions)` returns the actions the
    position terms then turn into joint targets."""

    prior = True  # adds to the actions; claims no actuator of its own

    def __init__(self, env: Any, amplitude: dict[str, float], period: float | None = None,
                 offsets: Any = None, stance: float = 0.55, command: str = "base_velocity",
                 threshold: float = 0.1, gain: float = 1.0):
        cfg, m = env.cfg, env.model
        if period is None:
            period = getattr(cfg, "gait_period_s", None)
        if period is None:
            raise ConfigError("reference_gait follows the gait clock, but the task has none: set "
                              "task.cfg.gait_period_s (e.g. 0.8) or the term's period")
        offsets = list(getattr(cfg, "gait_offsets", None) or []) if offsets is None else list(offsets)
        feet = [int(b) for b in env.legged.feet.tolist()]
        if len(offsets) != len(feet):
            raise ConfigError(f"reference_gait: {len(offsets)} offsets for {len(feet)} feet: give one per "
                              "foot")
        if not float(period) > 0 or not 0.0 < float(stance) < 1.0:
            raise ConfigError(f"reference_gait: period must be > 0 s and stance in (0, 1), got period "
                              f"{period!r}, stance {stance!r}")
        if not isinstance(amplitude, dict) or not amplitude:
            raise ConfigError("reference_gait: amplitude is {joint regex: rad}, e.g. {'.*_knee_joint': 0.6}")
        joints = list(env.robot.joints)
        cols, amps, foot_of = [], [], []
        for pattern in amplitude:
            if not any(re.fullmatch(pattern, j) for j in joints):
                raise ConfigError(f"reference_gait: amplitude pattern '{pattern}' matches no policy joint; "
                                  f"policy joints: {joints}")
        for col, name in enumerate(joints):
            value = gain * next((float(v) for p, v in amplitude.items() if re.fullmatch(p, name)), 0.0)
            if value == 0.0:
                continue
            foot = _foot_below(m, m.joint(name).bodyid[0], feet)
            if foot is None:
                raise ConfigError(f"reference_gait: joint '{name}' is on no leg (no foot below it in the "
                                  f"kinematic tree); feet: {[m.body(b).name for b in feet]}")
            cols.append(col)
            amps.append(value)
            foot_of.append(foot)
        f32 = dict(device=env.device, dtype=torch.float32)
        self.cols = cols
        self.joint_names = [joints[c] for c in cols]
        self.amplitude_rad = amps
        self.index = torch.as_tensor(cols, device=env.device, dtype=torch.long)
        self.amplitude = torch.as_tensor(amps, **f32)  # rad; in action units once linked
        self.offsets = torch.as_tensor([float(offsets[f]) for f in foot_of], **f32)
        self.period, self.stance, self.threshold = float(period), float(stance), float(threshold)
        if command not in env.command_terms:
            raise ConfigError(f"reference_gait: command '{command}' is not a command of the task; commands: "
                              f"{sorted(env.command_terms)}")
        self.command = command
        self.level = torch.ones((), **f32)  # scales the amplitude: a fade curriculum lowers it

    def link(self, env: Any, terms: dict[str, Any]) -> None:
        """Amplitudes into action units, by the scale of the position term driving each column."""
        scale = torch.ones(len(self.cols), device=env.device)
        for k, col in enumerate(self.cols):
            term = next((t for t in terms.values() if col in t.cols and not getattr(t, "prior", False)), None)
            if term is None or getattr(term, "mode", None) != "absolute":
                raise ConfigError(f"reference_gait: joint '{self.joint_names[k]}' needs an absolute "
                                  "joint_position_action (its targets are offsets from the default pose)")
            s = term.scale
            scale[k] = s if isinstance(s, float) else s[term.cols.index(col)]
        self.amplitude = self.amplitude / scale

    def offsets_now(self, env: Any) -> torch.Tensor:
        """(N, columns) the prior's actions this step (in action units)."""
        t = env.episode_length_buf.float()[:, None] * (env.dt / self.period)
        phase = torch.remainder(t + self.offsets, 1.0)
        swing = ((phase - self.stance) / (1.0 - self.stance)).clamp(min=0.0)
        moving = env.command_terms[self.command].command[:, :2].norm(dim=1) > self.threshold
        return torch.sin(torch.pi * swing) * (self.amplitude * self.level) * moving[:, None]

    def add(self, env: Any, actions: torch.Tensor) -> torch.Tensor:
        out = actions.clone()
        out[:, self.index] += self.offsets_now(env)
        return out

    def spec(self, env: Any) -> dict[str, Any]:
        """policy.json's `action.prior` entry: what the runtime adds, from its own clock."""
        return {"cols": [], "prior": {
            "kind": "reference_gait", "columns": list(self.cols),
            "amplitude": (self.amplitude * self.level).tolist(),  # action units, faded as trained
            "offsets": self.offsets.tolist(), "period": self.period, "stance": self.stance,
            "threshold": self.threshold, "joint_names": self.joint_names}}


def _foot_below(m: mujoco.MjModel, body: int, feet: list[int]) -> int | None:
    """Index in `feet` of the foot whose chain to the root passes through `body`."""
    for i, foot in enumerate(feet):
        b = foot
        while b > 0:
            if b == body:
                return i
            b = int(m.body_parentid[b])
    return None


class ReferenceGaitFade:
    """The reference gait's `level` from 1 down to 0, linearly between `start_step` and
    `end_step` control steps of training (per env: iterations x steps per env)."""

    def __init__(self, env: Any, action: str = "reference_gait", start_step: int = 0, end_step: int = 1):
        term = env.action_manager.terms.get(action) if hasattr(env, "action_manager") else None
        if not isinstance(term, ReferenceGait):
            raise ConfigError(f"reference_gait_fade: action '{action}' is not a reference_gait term")
        if not 0 <= int(start_step) < int(end_step):
            raise ConfigError(f"reference_gait_fade: need 0 <= start_step < end_step, got {start_step}, "
                              f"{end_step}")
        self.level = term.level
        self.start, self.end = int(start_step), int(end_step)
        self.steps = 0  # control steps so far (a host counter: no sync)

    def update(self, env: Any, done: torch.Tensor) -> None:
        if env.record_metrics:  # evaluation steps are not training: the level holds
            return
        self.set_step(self.steps + 1)

    def set_step(self, steps: int) -> None:
        """The level after `steps` control steps of training (an env rebuilt from a checkpoint
        for export or evaluation sets it from the checkpoint's iteration)."""
        self.steps = int(steps)
        share = min(max((self.steps - self.start) / (self.end - self.start), 0.0), 1.0)
        self.level.fill_(1.0 - share)

    def log(self, env: Any) -> dict[str, torch.Tensor]:
        return {"Curriculum/reference_gait_level": self.level}

