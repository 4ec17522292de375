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
inside that task's reset (`simrl.terrain.next_levels`) rather than here.
"""

from __future__ import annotations

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


CURRICULUM_TERMS = {"command_level": CommandLevel}
