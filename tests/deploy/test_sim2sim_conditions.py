"""Sim-to-sim test conditions (pushes, friction, terrain) from the exported ONNX in MuJoCo C."""

from __future__ import annotations

import json
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
                         "task.cfg.push_interval_s=4", "task.cfg.friction=[0.3,0.3]", "terrain=stairs")
    got = sim2sim_conditions(cfg)
    assert got["push_vel"] == 1.0 and got["push_interval_s"] == 4.0 and got["friction"] == 0.3
    assert got["terrain"]["step_height"] == [0.1, 0.1]
    assert "tile" not in got and meta["deploy"]["terrain"] is None  # trained on the plane
