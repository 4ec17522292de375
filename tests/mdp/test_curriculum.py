"""Curricula by configuration (simrl.mdp.curriculum): the command level as a term with params."""

from __future__ import annotations

import pytest
import torch

import simrl
from simrl.errors import ConfigError, UnknownNameError


def _quad(**cfg):
    return simrl.make("quadruped", 4, device="cpu", seed=0, cfg={"episode_length_s": 0.2, **cfg})


def test_a_configured_command_level_scales_the_command_and_rises_when_earned():
    env = _quad(curriculum={"level": {"func": "command_level",
                                      "params": {"command": "base_velocity", "start": 0.25, "step": 0.5}}})
    term = env.curriculum_manager.terms["level"]
    level = env.command_terms["base_velocity"].level
    assert term.level is level and float(level) == 0.25
    col = list(env.cfg.rewards).index("track_lin_vel")
    for _ in range(env.max_episode_length):  # one window in which every ended episode tracked perfectly
        env.reward_manager.sums[:, col] = env.cfg.rewards["track_lin_vel"] * env.cfg.episode_length_s
        term.update(env, torch.ones(4, dtype=torch.bool))
    assert float(env.command_terms["base_velocity"].level) == 0.75
    assert env.episode_log()["Curriculum/command_level"] == 0.75


def test_the_velocity_tasks_field_and_a_config_entry_merge():
    env = _quad(command_curriculum={"start": 0.5}, curriculum={"command_level": {"params": {"step": 0.2}}})
    term = env.curriculum_manager.terms["command_level"]
    level = env.command_terms["base_velocity"].level
    assert float(level) == 0.5 and term.step == 0.2 and term.threshold == 0.8
    dropped = _quad(command_curriculum={"start": 0.5}, curriculum={"command_level": None})
    assert not dropped.curriculum_manager.terms


@pytest.mark.parametrize(("curriculum", "error", "words"), [
    ({"c": {"func": "terrain_speed"}}, UnknownNameError, "valid: ['command_level', 'reference_gait_fade']"),
    ({"c": {"func": "command_level", "params": {"command": "twist"}}}, ConfigError,
     "command 'twist' is not a command with a level"),
    ({"c": {"func": "command_level", "params": {"command": "base_velocity", "reward": "speed"}}}, ConfigError,
     "rewards have no speed term"),
    ({"c": {"func": "command_level", "params": {"command": "base_velocity", "step": 2}}}, ConfigError,
     "each in (0, 1]"),
    ({"c": {"params": {}}}, UnknownNameError, "curriculum 'c': unknown func 'c'"),
])
def test_bad_curriculum_entries_end_in_one_line(curriculum, error, words):
    with pytest.raises(error) as e:
        _quad(curriculum=curriculum)
    assert words in str(e.value) and "\n" not in str(e.value)
