"""Sim-to-sim test conditions (pushes, friction, terrain) from the exported ONNX in MuJoCo C."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from simrl.rehearse.scene import scene_model
from simrl.rl.sim2sim import run_sim2sim
from tests.conftest import compose_config, with_deploy_spec


def test_pushes_kick_the_base(quad_export, tmp_path):
    """Kicks of up to 3 m/s every control step make tracking a standing command impossible;
    without them the same policy's error is far smaller (tilt can't end these episodes)."""
    _, report = quad_export
    onnx = with_deploy_spec(report, tmp_path / "p", termination={}, episode_length_s=1.5)
    calm = run_sim2sim(onnx, command=(0.0, 0.0, 0.0), episodes=2, seed=0, settle_s=0.5)
    kicked = run_sim2sim(onnx, command=(0.0, 0.0, 0.0), episodes=2, seed=0, settle_s=0.5,
                         push_vel=3.0, push_interval_s=0.02)
    assert kicked["lin_vel_error"] > 1.0 > calm["lin_vel_error"]


def test_sim2sim_runs_the_deploy_controller_whose_envelope_can_stop_the_policy(quad_export, tmp_path):
    """Sim-to-sim is the deploy controller on a simulated robot: a joint-velocity limit no
    walking policy keeps (0.01 rad/s) makes its safety envelope stop every episode at once,
    counted as a fall and named in a warning; the export's own limits stop nothing."""
    _, report = quad_export
    onnx = with_deploy_spec(report, tmp_path / "c", termination={}, episode_length_s=1.0)
    calm = run_sim2sim(onnx, command=(0.5, 0.0, 0.0), episodes=2, seed=0)
    assert (calm["fault_share"], calm["fall_share"], calm["mean_steps"]) == (0.0, 0.0, 50.0)
    with pytest.warns(UserWarning, match="velocity limit"):
        tight = run_sim2sim(onnx, command=(0.5, 0.0, 0.0), episodes=2, seed=0,
                            limits={"joint_vel": np.full(12, 0.01)})
    assert tight["fault_share"] == tight["fall_share"] == 1.0
    assert tight["mean_steps"] < 10  # stopped within the first cycles, not at the episode's end


def test_stairs_terrain_starts_episodes_on_the_tiles_platform(quad_export, tmp_path):
    """On the stairs ground the robot starts on its tile's platform (1 m up on the up-pyramid):
    at the first control step it stands ~0.3 m above the ground under it, so a 0.2 m height
    limit ends nothing; a policy placed at the floor's height would be inside the stairs."""
    _, report = quad_export
    onnx = with_deploy_spec(report, tmp_path / "s", termination={"min_base_height": 0.2},
                    episode_length_s=0.04)
    meta = json.loads(Path(report["json"]).read_text())
    m, grid = scene_model(meta, "stairs")
    assert grid is not None and grid.origins[0, 0, 2] == pytest.approx(1.0)  # 10 steps of 0.10 m
    r = run_sim2sim(onnx, episodes=2, seed=0, terrain="stairs", tile=(0, "stairs_up"))
    assert r["fall_share"] == 0.0 and r["crossed_share"] == 0.0  # 2 steps: not across yet
    flat = run_sim2sim(onnx, episodes=1, seed=0)
    assert np.isnan(flat["crossed_share"])  # no grid, no crossing figure


def test_eval_options_become_sim2sim_conditions(quad_export):
    _, report = quad_export
    meta = json.loads(Path(report["json"]).read_text())
    from simrl.rl.evaluation_app import sim2sim_conditions

    cfg = compose_config("eval", f"policy={report['onnx']}", "pushes=true", "task.cfg.push_vel=1.0",
                         "task.cfg.push_interval_s=4", "task.cfg.friction=[0.3,0.3]", "terrain=stairs",
                         "task.cfg.action_delay=[1,1]", "motor_strength=0.7")
    got = sim2sim_conditions(cfg)
    assert got["push_vel"] == 1.0 and got["push_interval_s"] == 4.0 and got["friction"] == 0.3
    assert got["delay_steps"] == 1 and got["motor_strength"] == 0.7
    assert got["terrain"]["step_height"] == [0.1, 0.1]
    assert "tile" not in got and meta["deploy"]["terrain"] is None  # trained on the plane


@pytest.mark.parametrize("word, says", [("task.cfg.action_delay=[0,2]", "one action delay"),
                                        ("task.cfg.action_delay=1", "action_delay must be (min, max)"),
                                        ("motor_strength=1.5", "in (0, 1]")])
def test_bad_robustness_conditions_are_named_in_one_line(quad_export, word, says):
    from simrl.errors import ConfigError
    from simrl.rl.evaluation_app import sim2sim_conditions

    cfg = compose_config("eval", f"policy={quad_export[1]['onnx']}", word)
    with pytest.raises(ConfigError, match=re.escape(says)):
        sim2sim_conditions(cfg)


def test_a_delayed_link_applies_each_command_one_send_late_and_weak_motors_scale_torque(quad_export):
    """delay_steps=1: the first command after a restart holds until the next arrives, then each
    is applied one send late; strength 0.5 halves every servo's gains and torque limits."""
    from simrl.deploy.controller import JointCommand
    from simrl.rehearse.mujoco_robot import MujocoRobot

    meta = json.loads(Path(quad_export[1]["json"]).read_text())
    cmds = [JointCommand(q=np.full(12, v), kp=np.full(12, 20.0), kd=np.full(12, 0.5))
            for v in (0.1, 0.2, 0.3)]
    prompt, late = MujocoRobot(meta), MujocoRobot(meta, delay_steps=1)
    applied = []
    for cmd in cmds:
        prompt.send(cmd)
        late.send(cmd)
        applied.append((prompt.d.ctrl[prompt.act[0]], late.d.ctrl[late.act[0]]))
    assert applied == [(0.1, 0.1), (0.2, 0.1), (0.3, 0.2)]
    late.restart()
    late.send(cmds[2])
    assert late.d.ctrl[late.act[0]] == 0.3  # a restart forgets the queue
    full, weak = MujocoRobot(meta), MujocoRobot(meta, strength=0.5)
    full.send(cmds[0])
    weak.send(cmds[0])
    a = full.act
    assert np.allclose(weak.m.actuator_gainprm[a, 0], 0.5 * full.m.actuator_gainprm[a, 0])
    assert np.allclose(weak.m.actuator_biasprm[a, 1:3], 0.5 * full.m.actuator_biasprm[a, 1:3])
    joints = full.m.actuator_trnid[a, 0]
    limits = np.concatenate([full.m.actuator_forcerange[a], full.m.jnt_actfrcrange[joints]])
    assert np.abs(limits).max() > 0  # the robot has torque limits to halve
    assert np.allclose(np.concatenate([weak.m.actuator_forcerange[a], weak.m.jnt_actfrcrange[joints]]),
                       0.5 * limits)
    with pytest.raises(ValueError, match="delay_steps"):
        MujocoRobot(meta, delay_steps=-1)


def test_motor_strength_is_refused_from_a_checkpoint_naming_the_sim2sim_form(quad_export):
    from simrl.errors import ConfigError
    from simrl.rl.evaluation_app import evaluate_app

    with pytest.raises(ConfigError, match="sim-to-sim condition"):
        evaluate_app(compose_config("eval", f"checkpoint={quad_export[0]}", "motor_strength=0.7"))
