"""In-hand cube rotation (envs/inhand): a task added as configuration alone. The hand holds the
cube at rest, the deploy runtime builds the policy's observation (the cube's pose included) from
the readings policy.json names, and the turn rate evaluation reports is the one sim-to-sim
computes by the metric's declared MuJoCo C twin; a trained policy runs through the whole chain."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import simrl
from simrl.deploy.runtime import observation
from simrl.envs.inhand.rotate import turn_rate, turn_rate_mj
from simrl.rehearse.scene import Readings
from simrl.rl.export import deploy_metadata
from simrl.rl.sim2sim import run_sim2sim

ROOT = Path(__file__).resolve().parents[2]


def test_the_cupped_hand_holds_the_cube_at_rest():
    env = simrl.make("inhand_rotate", 16, device="cpu", seed=0)
    assert sorted(env.scene.entities) == ["cube", "robot"] and env.scene.fixed_base
    assert env.num_actions == 16
    ended = torch.zeros(16, dtype=torch.bool)
    for _ in range(100):  # 5 s of zero actions: the default pose and its servos hold the cube
        _, _, term, _, _ = env.step(torch.zeros(16, 16))
        ended |= term
    assert not ended.any()
    cube = env.scene.objects["cube"].qpos
    assert (env.sim.qpos[:, cube + 2] > 0.15).all()  # on the palm, not the floor


def test_deploy_builds_the_policy_observation_and_the_turn_rate_from_readings():
    env = simrl.make("inhand_rotate", 3, device="cpu", seed=1, cfg={"obs_noise": False})
    meta = deploy_metadata(env, ["policy"])
    assert meta["readings"] == ["joint_pos", "joint_vel", "cube_pose"]
    assert "pose in the robot's base frame" in meta["reading_docs"]["cube_pose"]
    assert meta["deploy"]["metrics"] == {"turn_rate": {"sim": "simrl.envs.inhand.rotate:turn_rate_mj",
                                                       "reduce": "mean"}}
    read = Readings(env.model, meta)
    gen = torch.Generator().manual_seed(0)
    turned = 0.0
    for _ in range(5):
        obs = env.compute_observations(commit=False)["policy"]
        rate = turn_rate(env)
        for w in range(3):
            d = env.sim.get_mjdata(w)
            r = read(d, None)
            r["last_action"] = env.actions[w].numpy()
            np.testing.assert_allclose(observation(meta, r), obs[w].numpy(), atol=1e-5)
            assert turn_rate_mj(env.model, d) == pytest.approx(float(rate[w]), abs=1e-5)
            turned += abs(float(rate[w]))
        env.step(0.5 * torch.randn(3, 16, generator=gen))
    assert turned > 0.0  # the cube moved: the comparison was not of zeros


def test_a_trained_policy_exports_and_runs_sim_to_sim(tmp_path):
    run = tmp_path / "run"
    train = [sys.executable, "train.py", "task=inhand_rotate", "num_envs=16", "max_iterations=2",
             "device=cpu", "progress=false", f"hydra.run.dir={run}"]
    r = subprocess.run(train, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    r = subprocess.run([sys.executable, "export.py", f"checkpoint={run}", "num_envs=4", "num_check=20"],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    onnx = run / "export" / "policy.onnx"
    meta = json.loads((run / "export" / "policy.json").read_text())
    assert meta["deploy"]["termination"] == {"min_body_height": {"cube": 0.12}}
    result = run_sim2sim(onnx, episodes=2, seed=0)
    assert result["episodes"] == 2 and np.isfinite(result["turn_rate"])
    assert 0.0 <= result["fall_share"] <= 1.0


@pytest.mark.mjwarp
@pytest.mark.parametrize("ending", [0, 3], ids=["no resets", "with resets"])
def test_the_hand_steps_on_mjwarp_without_host_syncs(ending):
    """The same task on MuJoCo Warp (Warp's CPU device here): a training step, resets included,
    never waits on the device: the object terms read cached tables and draw for every env."""
    from simrl.profile import count_syncs
    from simrl.rl.vecenv import RslRlVecEnv

    n = 8
    env = simrl.make("inhand_rotate", n, device="cpu", backend="mjwarp", seed=0, sim={"graphs": False})
    venv = RslRlVecEnv(env, log_every=0)
    venv.step(torch.zeros(n, 16))  # warm-up: kernels, first allocations, cached tables
    env.episode_length_buf.zero_()
    env.episode_length_buf[:ending] = env.max_episode_length - 1  # these time out this step
    with torch.inference_mode(), count_syncs() as syncs:
        _, rew, dones, _ = venv.step(torch.zeros(n, 16))
    assert syncs.total == 0, dict(syncs.by_op)
    assert int(dones.sum()) == ending and torch.isfinite(rew).all()
