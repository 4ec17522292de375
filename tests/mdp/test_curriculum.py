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
    ({"c": {"func": "terrain_speed"}}, UnknownNameError,
     "valid: ['command_level', 'command_stages', 'reference_gait_fade']"),
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


STAGES = {"widen": {"func": "command_stages", "params": {"command": "base_velocity", "stages": [
    {"at_step": 3, "lin_vel_x": [-1.0, -0.8], "standing_share": 0.0},
    {"at_step": 5, "yaw_rate": [0.4, 0.5]}]}}}
NARROW = {"lin_vel_x": [0.5, 0.5], "lin_vel_y": [0.0, 0.0], "yaw_rate": [0.0, 0.0], "standing_share": 0.0,
          "resample_s": 0.02, "push_vel": 0.0}


def test_command_stages_widen_the_ranges_at_their_step_and_resume_on_their_stage():
    env = simrl.make("quadruped", 8, device="cpu", seed=0, cfg={**NARROW, "curriculum": STAGES})
    zero = torch.zeros(8, env.num_actions)
    env.step(zero)
    assert torch.allclose(env.command()[:, 0], torch.tensor(0.5))  # stage 0: the recipe's commands
    for _ in range(3):
        env.step(zero)
    live = ~env.reset_buf
    assert (env.command()[live, 0] <= -0.8).all() and (env.command()[live, 2] == 0.0).all()
    saved = env.state_dict()
    env.step(zero)  # its curriculum update turns the second stage on: the next draws use it
    fresh = simrl.make("quadruped", 8, device="cpu", seed=0, cfg={**NARROW, "curriculum": STAGES})
    fresh.load_state_dict(saved)  # resumes on stage 1, with its ranges, and steps on bit for bit
    assert fresh.command_terms["base_velocity"].ranges[0] == (-1.0, -0.8)
    fresh.step(zero)
    assert torch.equal(fresh.command(), env.command())
    env.step(zero)
    assert (env.command()[~env.reset_buf, 2] >= 0.4).all()  # the second stage
    assert env.episode_log()["Curriculum/command_stage"] == 2.0


@pytest.mark.parametrize(("stages", "words"), [
    ([{"lin_vel_x": [0, 1]}], "stage 0 needs at_step"),
    ([{"at_step": 10, "lin_vel_z": [0, 1]}], r"stage 0: unknown keys \['lin_vel_z'\]; valid: \['at_step'"),
    ([{"at_step": 10}, {"at_step": 5}], "stage 1: at_step must be an int after the last stage's \\(10\\)"),
    ([{"at_step": 10, "yaw_rate": [1, -1]}], r"yaw_rate must be \[min, max\] with finite min <= max"),
    ([{"at_step": 10, "standing_share": 2}], r"standing_share must be in \[0, 1\]"),
    ([], "stages is a list of"),
])
def test_bad_command_stages_are_named_in_one_line(stages, words):
    cur = {"widen": {"func": "command_stages", "params": {"command": "base_velocity", "stages": stages}}}
    with pytest.raises(ConfigError, match=words):
        simrl.make("quadruped", 2, device="cpu", cfg={"curriculum": cur})


def test_command_stages_go_to_a_checkpoints_step_where_the_env_is_rebuilt():
    """Evaluation and export rebuild the env and set each curriculum to the checkpoint's step:
    the stages due by then apply, so policy.json's command ranges are the trained ones."""
    env = simrl.make("quadruped", 2, device="cpu", seed=0, cfg={**NARROW, "curriculum": STAGES})
    term = env.curriculum_manager.terms["widen"]
    term.set_step(4)
    assert term.stage == 1 and env.command_terms["base_velocity"].ranges[0] == (-1.0, -0.8)
    assert env.deploy_spec()["command_ranges"][0] == [-1.0, -0.8]
    term.set_step(10)
    assert term.stage == 2 and env.command_terms["base_velocity"].ranges[2] == (0.4, 0.5)
