"""Commands by configuration (simrl.mdp.commands): the velocity task's base_velocity, the arms'
pose and position targets, their clocks, pinning for evaluation, checkpoints and bad entries."""

from __future__ import annotations

import pytest
import torch

import simrl
from simrl.errors import ConfigError, UnknownNameError


def _quad(n=16, **cfg):
    return simrl.make("quadruped", n, device="cpu", seed=0, cfg={"push_vel": 0.0, **cfg})


def test_the_velocity_task_draws_its_command_from_its_ranges_and_on_its_clock():
    env = _quad(64, lin_vel_x=[0.2, 0.4], lin_vel_y=[0.0, 0.0], yaw_rate=[-0.1, 0.1],
                standing_share=0.25, resample_s=0.04)  # every 2 control steps
    assert list(env.command_terms) == ["base_velocity"]
    assert env.command() is env.command_terms["base_velocity"].command
    cmd = env.command().clone()
    moving = cmd[:, 0] != 0
    assert ((cmd[moving, 0] >= 0.2) & (cmd[moving, 0] <= 0.4)).all() and (cmd[:, 1] == 0).all()
    assert (cmd[~moving] == 0).all() and 0 < int((~moving).sum()) < 64  # a share stands still
    env.step(torch.zeros(64, env.num_actions))
    assert torch.equal(env.command(), cmd)  # step 1 of 2: the same commands
    env.step(torch.zeros(64, env.num_actions))
    stepped = env.episode_length_buf % 2 == 0  # envs reset in between restart their clock
    assert not torch.equal(env.command()[stepped], cmd[stepped])


def test_fix_command_pins_every_env_and_stops_the_clock():
    env = _quad(8, resample_s=0.02)  # a new draw every control step
    env.fix_command([0.7, -0.1, 0.2])
    for _ in range(3):
        env.step(torch.zeros(8, env.num_actions))
        live = ~env.reset_buf  # a reset draws a new command for the env it resets
        assert torch.allclose(env.command()[live], torch.tensor([0.7, -0.1, 0.2]))
    env.fix_command([0.5])  # missing components are 0
    assert torch.allclose(env.command(), torch.tensor([0.5, 0.0, 0.0]))


def test_a_config_entry_is_merged_over_the_tasks_command():
    still = {"lin_vel_y": [0.0, 0.0], "yaw_rate": [0.0, 0.0], "standing_share": 0.0}
    env = _quad(8, commands={"base_velocity": {"params": {"lin_vel_x": [0.3, 0.3], **still}}})
    assert torch.allclose(env.command(), torch.tensor([0.3, 0.0, 0.0]))
    assert env.command_manager.clock["base_velocity"] == round(env.cfg.resample_s / env.dt)  # the task's
    assert env.deploy_spec()["tracks_commands"] is True
    env = _quad(8, commands={"base_velocity": {"params": {"lin_vel_x": [0.3, 0.3]}}})
    assert torch.allclose(env.command()[:, 0].abs().max(), torch.tensor(0.3))
    assert (env.command()[:, 1:] != 0).any()  # the task's lateral and yaw ranges stay


def test_fix_command_fills_missing_components_with_zero_and_refuses_too_many():
    env = _quad(4)
    env.fix_command([0.5])
    assert torch.equal(env.command(), torch.tensor([[0.5, 0.0, 0.0]] * 4))
    with pytest.raises(ConfigError, match=r"\[vx, vy, yaw_rate\]"):
        env.fix_command([0.5, 0.0, 0.0, 1.0])


def test_a_pinned_command_stays_pinned_through_a_checkpoint():
    env = _quad(4, resample_s=0.02)
    env.fix_command([0.6, 0.0, 0.0])
    fresh = _quad(4, resample_s=0.02)
    fresh.load_state_dict(env.state_dict())
    fresh.step(torch.zeros(4, fresh.num_actions))
    live = ~fresh.reset_buf
    assert torch.allclose(fresh.command()[live], torch.tensor([0.6, 0.0, 0.0]))


def test_the_command_curriculum_scales_the_draws_through_the_commands_level():
    env = _quad(64, command_curriculum={"start": 0.5})
    assert float(env.command_terms["base_velocity"].level) == 0.5
    lo, hi = env.cfg.lin_vel_x
    assert (env.command()[:, 0] >= 0.5 * lo - 1e-6).all() and (env.command()[:, 0] <= 0.5 * hi + 1e-6).all()


def test_a_checkpoint_holds_the_commands_and_their_clocks():
    env = _quad(8, resample_s=0.02)
    for _ in range(3):
        env.step(torch.zeros(8, env.num_actions))
    state = env.state_dict()
    want = env.command().clone()
    fresh = _quad(8, resample_s=0.02)
    fresh.fix_command([0.3, 0.0, 0.0])  # a pinned command stops its clock: the state restores it
    storage = fresh.command()
    fresh.load_state_dict(state)
    assert torch.equal(fresh.command(), want) and fresh.command() is storage  # restored in place
    assert fresh.command_manager.clock == env.command_manager.clock == {"base_velocity": 1}
    a, b = _quad(8, resample_s=0.02), _quad(8, resample_s=0.02)
    a.load_state_dict(state)
    b.load_state_dict(state)
    for _ in range(2):  # and the next draws match
        a.step(torch.zeros(8, a.num_actions))
        b.step(torch.zeros(8, b.num_actions))
    assert torch.equal(a.command(), b.command()) and not torch.equal(a.command(), want)


def test_heading_mode_steers_the_yaw_rate_towards_the_drawn_heading():
    entry = {"func": "velocity_command", "resample_s": 10.0,
             "params": {"lin_vel_x": [0.5, 0.5], "yaw_rate": [-1.0, 1.0], "heading": True,
                        "standing_share": 0.0}}
    env = _quad(8, commands={"base_velocity": entry})
    assert env.command_terms["base_velocity"].heading_mode
    env.step(torch.zeros(8, env.num_actions))
    vel = env.command_terms["base_velocity"]
    err = torch.remainder(vel.heading - env.legged.base_yaw + torch.pi, 2 * torch.pi) - torch.pi
    torch.testing.assert_close(env.command()[:, 2], (0.5 * err).clamp(-1.0, 1.0))


def test_the_arms_targets_are_command_terms_and_their_deploy_facts_say_how_they_are_drawn():
    reach = simrl.make("reach", 4, device="cpu", seed=0)
    spec = reach.deploy_spec()["target"]
    assert spec["reading"] == "target_pose" and spec["frame_body"] == "link0"
    assert spec["x"] == list(reach.cfg.target_x) and len(spec["about_quat"]) == 4
    assert reach.command().shape == (4, 7)
    reach.fix_command([0.5, 0.0, 0.4, 1.0, 0.0, 0.0, 0.0], "ee_pose")
    assert torch.allclose(reach.command()[:, :3], torch.tensor([0.5, 0.0, 0.4]))

    lift = simrl.make("lift", 4, device="cpu", seed=0,
                      cfg={"commands": {"object_target": {"func": "position_command",
                                                          "params": {"x": [0.5, 0.5], "y": [0.1, 0.1],
                                                                     "z": [0.3, 0.3]}}}})
    assert torch.allclose(lift.command_terms["object_target"].pos_b, torch.tensor([0.5, 0.1, 0.3]))
    assert lift.deploy_spec()["target"] == {"reading": "target_pos", "frame_body": spec["frame_body"],
                                            "x": [0.5, 0.5], "y": [0.1, 0.1], "z": [0.3, 0.3]}


@pytest.mark.parametrize(("entry", "error", "words"), [
    ({"base_velocity": {"func": "walk_command"}}, UnknownNameError, "valid: ['pose_command'"),
    ({"base_velocity": None}, ConfigError, "do not drop or retype"),
    ({"base_velocity": {"func": "position_command", "params": {"x": [0, 1], "y": [0, 1], "z": [0, 1]}}},
     ConfigError, "do not drop or retype"),
    ({"base_velocity": {"func": "velocity_command", "resample_s": 0}}, ConfigError, "resample_s must be > 0"),
    ({"base_velocity": {"func": "velocity_command", "params": {"lin_vel_x": [1, 0]}}}, ConfigError,
     "min <= max"),
    ({"base_velocity": {"func": "velocity_command", "params": {"lin_vel_x": [0, 1], "speed": 1}}},
     ConfigError, "unknown params ['speed']"),
    ({"extra": {"params": {}}}, UnknownNameError, "unknown func 'extra'"),  # func defaults to the name
])
def test_bad_command_entries_end_in_one_line(entry, error, words):
    with pytest.raises(error, match=None) as e:
        _quad(2, commands=entry)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_a_task_with_several_commands_asks_which_one_to_pin():
    entry = {"func": "velocity_command", "params": {"lin_vel_x": [0.0, 1.0]}}
    env = _quad(2, commands={"second": entry})
    with pytest.raises(ConfigError, match=r"2 commands \['base_velocity', 'second'\]: name one"):
        env.fix_command([0.5, 0.0, 0.0])
    with pytest.raises(UnknownNameError, match="no command 'third'"):
        env.command("third")
    env.fix_command([0.0, 0.0, 0.0], "second")
    assert (env.command("second") == 0).all()
