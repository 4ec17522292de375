"""The reference gait (envs/locomotion/gait_prior.py): a clock-driven swing added to the leg actions, the
same from the deploy runtime's own clock, faded by its curriculum, refused where it cannot apply."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import simrl
from simrl.deploy.runtime import joint_targets, prior_offsets
from simrl.errors import ConfigError
from simrl.rl.export import deploy_metadata

AMPLITUDE = {".*_hip_pitch_joint": -0.3, ".*_knee_joint": 0.6, ".*_ankle_pitch_joint": -0.3}


def _g1(n=4, **cfg):
    prior = {"reference_gait": {"func": "reference_gait", "params": {"amplitude": AMPLITUDE}}}
    values = {"gait_period_s": 0.8, "lin_vel_x": [0.5, 0.5], "lin_vel_y": [0.0, 0.0], "yaw_rate": [0.0, 0.0],
              "standing_share": 0.0, "action_delay": [0, 0], "actions": prior, **cfg}
    return simrl.make("humanoid", n, device="cpu", seed=0, robot="unitree_g1_legs", cfg=values)


def test_the_swing_is_zero_in_stance_full_at_mid_swing_and_off_while_standing():
    env = _g1()
    term = env.action_manager.terms["reference_gait"]
    assert term.joint_names == ["left_hip_pitch_joint", "left_knee_joint", "left_ankle_pitch_joint",
                                "right_hip_pitch_joint", "right_knee_joint", "right_ankle_pitch_joint"]
    period_steps = round(0.8 / env.dt)  # 40 control steps; stance 0.55: 22 steps, then a 18-step swing
    rad = torch.tensor([-0.3, 0.6, -0.3]) / env.action_scale  # action units
    env.episode_length_buf[:] = torch.tensor([0, 21, 31, 31])  # stance, its end, mid-swing (x2)
    env.command()[3] = 0.0  # env 3 told to stand
    got = term.offsets_now(env)
    assert (got[:2, :3] == 0).all()  # the left leg in stance
    torch.testing.assert_close(got[2, :3], rad, rtol=0, atol=1e-5)  # (31/40 - 0.55) / 0.45 = 0.5: the peak
    assert (got[3] == 0).all()  # standing: no swing
    assert (got[2, 3:] == 0).all()  # the right leg half a cycle later: in stance
    assert period_steps == 40


def test_the_runtime_adds_the_same_swing_from_its_own_clock_across_a_reset():
    env = _g1()
    meta = deploy_metadata(env, ["policy"])
    act, dt = meta["action"], meta["control_dt"]
    assert act["priors"][0]["kind"] == "reference_gait"
    env.command()[1] = 0.0  # one env standing throughout
    gen = torch.Generator().manual_seed(0)
    worst, swung = 0.0, 0
    for k in range(70):
        if k == 30:
            env._reset(torch.tensor([True, False, False, False]))  # a new episode: both clocks restart
        steps = env.episode_length_buf.clone()
        commands = env.command().clone()
        actions = 0.2 * torch.randn(4, env.num_actions, generator=gen)
        env.step(actions)
        for i in range(4):
            if env.reset_buf[i]:
                continue  # the reset wrote the default pose over this step's targets
            drive = actions[i].numpy() + prior_offsets(act, int(steps[i]), dt, commands[i].numpy())
            want = joint_targets(act, drive.astype(np.float32), np.asarray(act["offset"]))
            worst = max(worst, float(np.abs(env.sim.ctrl[i, :env.num_actions].numpy() - want).max()))
            swung += int(np.abs(drive - actions[i].numpy()).max() > 0.1)
    assert worst < 1e-5, worst
    assert swung > 20  # the swing was on for the walking envs


def test_the_fade_lowers_the_level_to_zero_and_a_checkpoint_keeps_it():
    fade = {"func": "reference_gait_fade", "params": {"start_step": 2, "end_step": 6}}
    cfg = {"curriculum": {"fade": fade}}
    env = _g1(**cfg)
    levels = []
    for _ in range(8):
        env.step(torch.zeros(4, env.num_actions))
        levels.append(round(float(env.action_manager.terms["reference_gait"].level), 3))
    assert levels == [1.0, 1.0, 0.75, 0.5, 0.25, 0.0, 0.0, 0.0]
    other = _g1(**cfg)
    env.curriculum_manager.terms["fade"].steps = 3
    env.action_manager.terms["reference_gait"].level.fill_(0.75)
    other.load_state_dict(env.state_dict())
    assert other.curriculum_manager.terms["fade"].steps == 3
    assert float(other.action_manager.terms["reference_gait"].level) == 0.75
    assert deploy_metadata(other, ["policy"])["action"]["priors"][0]["amplitude"][1] == pytest.approx(
        0.75 * 0.6 / other.action_scale, rel=1e-6)  # the export carries the faded amplitude


@pytest.mark.parametrize(("cfg", "words"), [
    ({"actions": {"reference_gait": {"func": "reference_gait", "params": {"amplitude": {"waist_.*": 0.1}}}}},
     "amplitude pattern 'waist_.*' matches no policy joint; policy joints: ['left_hip_pitch_joint'"),
    ({"gait_period_s": None}, "reference_gait follows the gait clock, but the task has none"),
    ({"curriculum": {"fade": {"func": "reference_gait_fade", "params": {"start_step": 5, "end_step": 5}}}},
     "need 0 <= start_step < end_step"),
])
def test_bad_reference_gait_settings_are_refused_in_one_line(cfg, words):
    with pytest.raises(ConfigError) as e:
        _g1(**cfg)
    assert words in str(e.value) and "\n" not in str(e.value)


def test_the_runtime_swings_per_command_row_and_needs_the_command():
    env = _g1()
    act = deploy_metadata(env, ["policy"])["action"]
    rows = prior_offsets(act, 31, env.dt, np.array([[0.5, 0.0, 0.0], [0.0, 0.0, 0.0]]))
    assert np.abs(rows[0]).max() > 0.5 and not rows[1].any()  # the standing row: no swing
    with pytest.raises(KeyError, match="readings lack 'command'"):
        prior_offsets(act, 31, env.dt, None)


def test_a_rebuilt_env_takes_the_fade_from_the_checkpoint_and_holds_it_in_evaluation(tmp_path):
    from simrl.rl.app import _env_for_checkpoint, policy_from_checkpoint, train
    from tests.conftest import compose_config

    fade = "+task.cfg.curriculum={fade:{func:reference_gait_fade,params:{start_step:0,end_step:16}}}"
    cfg = compose_config("train", "task=humanoid", "experiment=g1_walk", fade, "num_envs=8",
                         "max_iterations=1", "progress=false", "device=cpu", "agent.num_steps_per_env=4")
    train(cfg, tmp_path)
    env, run_cfg = _env_for_checkpoint(tmp_path / "model_1.pt", num_envs=2)  # another size: no env state
    policy_from_checkpoint(env, tmp_path / "model_1.pt", dict(run_cfg.agent))
    level = env.action_manager.terms["reference_gait"].level
    assert float(level) == 0.75  # 1 iteration x 4 steps of 16
    env.record_metrics = True  # evaluation
    env.step(torch.zeros(2, env.num_actions))
    assert float(level) == 0.75
