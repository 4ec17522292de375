"""Curricula: terms that make a task harder as the policy earns it, listed in a task's config:

    curriculum:
      command_level: {func: command_level,
                      params: {command: base_velocity, start: 0.3, step: 0.1, threshold: 0.8}}

A task builds its own entries from its fields (its config's `own_entries`: the velocity task's
`command_curriculum`); a config entry of the same name is merged over it, `null` drops one. A
curriculum term is a small class: `func(env, **params)` builds its state, `update(env, done)`
runs each step on the episodes that end (bool `done` (N,), their reward sums still in
`env.episode_sums`), on the device with no host sync, and `log(env)` gives its figures to the
episode log (read once per iteration). A term keeps no reference to the env (its state is
checkpointed by walking it).

The terrain curriculum (a velocity task on a grid) decides where a reset env starts, so it runs
in that task's spawn event `place_on_terrain` (`simrl.terrain.next_levels`) rather than here.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from simrl.errors import ConfigError
from simrl.managers.terms import reward_terms


class CommandLevel:
    """legged_gym's command curriculum: the command `command`'s draws are scaled by a level that
    starts at `start` and rises by `step` (up to 1) after each episode length in which the
    episodes that ended earned at least `threshold` of reward term `reward`'s best per second
    (exp(0) = 1 times its weight: a tracking kernel's)."""

    def __init__(self, env: Any, command: str, reward: str = "track_lin_vel", start: float = 0.3,
                 step: float = 0.1, threshold: float = 0.8):
        if not all(isinstance(v, (int, float)) and 0 < v <= 1 for v in (start, step, threshold)):
            raise ConfigError(f"command_curriculum takes start, step and threshold, each in (0, 1] (e.g. "
                              f"{{start: 0.3, step: 0.1, threshold: 0.8}}), got start {start!r}, step "
                              f"{step!r}, threshold {threshold!r}")
        term = env.command_terms.get(command)
        if term is None or not hasattr(term, "level"):
            raise ConfigError(f"command_level: command '{command}' is not a command with a level (a "
                              f"velocity_command); commands: {sorted(env.command_terms)}")
        weight = next((t.weight for t in reward_terms(env.cfg.rewards) if t.name == reward), None)
        if weight is None:
            raise ConfigError(f"command_curriculum raises the commands when {reward} is earned, but the "
                              f"task's rewards have no {reward} term")
        self.command, self.reward, self.step, self.threshold = command, reward, float(step), float(threshold)
        self.best = float(weight)  # per second
        self.level = term.level  # the command's own tensor: it scales every draw
        self.level.fill_(start)
        self.window_sum = torch.zeros((), device=env.device)  # over the current window
        self.window_count = torch.zeros((), device=env.device)
        self.window_steps = 0  # control steps into the window (a host counter: no sync)

    def update(self, env: Any, done: torch.Tensor) -> None:
        ended = done.float()
        self.window_sum = self.window_sum + (env.episode_sums[self.reward] * ended).sum()
        self.window_count = self.window_count + ended.sum()
        self.window_steps += 1
        if self.window_steps < env.max_episode_length:
            return
        per_s = self.window_sum / self.window_count.clamp(min=1) / env.cfg.episode_length_s
        good = (self.window_count > 0) & (per_s >= self.threshold * self.best)
        self.level.copy_(torch.where(good, (self.level + self.step).clamp(max=1.0), self.level))
        self.window_sum, self.window_count = torch.zeros_like(per_s), torch.zeros_like(per_s)
        self.window_steps = 0

    def log(self, env: Any) -> dict[str, torch.Tensor]:
        return {"Curriculum/command_level": self.level}


_STAGE_KEYS = ("lin_vel_x", "lin_vel_y", "yaw_rate", "standing_share")


class CommandStages:
    """The command `command`'s ranges change in stages as training goes on: each stage, from
    control step `at_step` on (counted per env since the env was built: iterations x the
    learner's steps per env), replaces any of `lin_vel_x`, `lin_vel_y`, `yaw_rate` ([min, max])
    and `standing_share` with its own; later draws use them. A recipe starts on the commands
    the criterion asks for (forward and standing) and widens them once the robot walks:

        curriculum:
          widen: {func: command_stages, params: {command: base_velocity, stages: [
                  {at_step: 2400, lin_vel_x: [-0.5, 1.0], yaw_rate: [-0.5, 0.5]}]}}

    The stage is decided by a host counter (no device read); it and the command's ranges are
    saved with the env, so a resumed run continues on its stage."""

    not_state = frozenset({"term"})

    def __init__(self, env: Any, command: str, stages: Any):
        term = env.command_terms.get(command)
        if term is None or not hasattr(term, "ranges") or not hasattr(term, "standing_share"):
            raise ConfigError(f"command_stages: command '{command}' is not a velocity_command; commands: "
                              f"{sorted(env.command_terms)}")
        self.command, self.stages = command, _stages(stages)
        self.term = term  # the command it changes (its own state: saved with the commands)
        self.steps = 0  # control steps since the env was built
        self.stage = 0  # stages applied

    def update(self, env: Any, done: torch.Tensor) -> None:
        self.set_step(self.steps + 1)

    def set_step(self, steps: int) -> None:
        """Go to control step `steps` (a checkpoint's iteration x steps per env, where the env
        is rebuilt: evaluation, export), applying every stage that starts by then."""
        self.steps = steps
        while self.stage < len(self.stages) and self.steps >= self.stages[self.stage]["at_step"]:
            stage = self.stages[self.stage]
            for i, key in enumerate(_STAGE_KEYS[:3]):
                if key in stage:
                    self.term.ranges[i] = stage[key]
            if "standing_share" in stage:
                self.term.standing_share = stage["standing_share"]
            self.stage += 1

    def log(self, env: Any) -> dict[str, float]:
        return {"Curriculum/command_stage": float(self.stage)}


def _stages(stages: Any) -> list[dict[str, Any]]:
    """The stages checked: a list of {at_step, and any of lin_vel_x, lin_vel_y, yaw_rate,
    standing_share}, in order of at_step."""
    if not isinstance(stages, (list, tuple)) or not stages:
        raise ConfigError(f"command_stages: stages is a list of {{at_step, {', '.join(_STAGE_KEYS)}}}, "
                          f"got {stages!r}")
    out, last = [], 0
    for k, stage in enumerate(stages):
        where = f"command_stages: stage {k}"
        if not hasattr(stage, "keys") or "at_step" not in stage:
            raise ConfigError(f"{where} needs at_step (control steps: iterations x steps per env), got "
                              f"{stage!r}")
        unknown = sorted(set(stage) - {"at_step", *_STAGE_KEYS})
        if unknown:
            raise ConfigError(f"{where}: unknown keys {unknown}; valid: {['at_step', *_STAGE_KEYS]}")
        at = stage["at_step"]
        if isinstance(at, bool) or not isinstance(at, int) or at <= last:
            after = f"after the last stage's ({last})" if k else "a positive int"
            raise ConfigError(f"{where}: at_step must be {'an int ' if k else ''}{after}, got {at!r}")
        rule = {"at_step": at}
        rule.update({key: _span(where, key, stage[key]) for key in _STAGE_KEYS[:3] if key in stage})
        if "standing_share" in stage:
            share = stage["standing_share"]
            if not isinstance(share, (int, float)) or not 0.0 <= share <= 1.0:
                raise ConfigError(f"{where}: standing_share must be in [0, 1], got {share!r}")
            rule["standing_share"] = float(share)
        out.append(rule)
        last = at
    return out


def _span(where: str, key: str, value: Any) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: {key} must be [min, max], got {value!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
        raise ConfigError(f"{where}: {key} must be [min, max] with finite min <= max, got {[lo, hi]}")
    return lo, hi


CURRICULUM_TERMS = {"command_level": CommandLevel, "command_stages": CommandStages}
