"""The GPU path's budget, checked on Warp's CPU device: host syncs and launches per env step.

A host sync stalls the CPU until the GPU drains its queue; one per step caps a 4096-env batch
far below what MuJoCo Warp's kernels can do. These tests run the mjwarp backend exactly as on
CUDA (masked resets every step, deferred logs) and count syncs through a torch dispatch mode.
"""

from __future__ import annotations

import pytest
import torch

from simrl.profile import count_launches, count_syncs
from simrl.registry import make

pytestmark = pytest.mark.mjwarp
N = 8


@pytest.fixture(scope="module")
def env():
    return make("quadruped", N, device="cpu", backend="mjwarp", seed=0, sim={"graphs": False})


def _step_counts(env, step, ending: int) -> tuple:
    env.episode_length_buf.zero_()
    env.episode_length_buf[:ending] = env.max_episode_length - 1  # these time out this step
    with torch.inference_mode(), count_syncs() as syncs, count_launches() as launches:
        out = step(torch.zeros(N, env.num_actions))
    return syncs, launches, out


@pytest.mark.parametrize("ending", [0, 3], ids=["no resets", "with resets"])
def test_training_step_never_syncs_the_host(env, ending):
    venv = env.rsl_rl(log_every=0)
    venv.step(torch.zeros(N, env.num_actions))  # warm-up (kernels, first allocations)
    syncs, _, (_, _, dones, _) = _step_counts(env, venv.step, ending)
    assert syncs.total == 0, dict(syncs.by_op)
    assert int(dones.sum()) == ending  # the resets did happen
    assert (env.episode_length_buf[:ending] == 0).all() and (env.episode_length_buf[ending:] == 1).all()


def test_gymnasium_step_with_final_obs_never_syncs_the_host(env):
    env.step(torch.zeros(N, env.num_actions))
    syncs, _, (_, _, _, trunc, info) = _step_counts(env, env.step, 2)
    assert syncs.total == 0, dict(syncs.by_op)
    assert info["_final_obs"].tolist() == trunc.tolist() and int(trunc.sum()) == 2


def test_a_step_with_resets_launches_what_one_without_does():
    """With graphs (the CUDA configuration): every step replays the physics and the masked
    reset, and nothing else: no set_const, no forward after resets."""
    env = make("quadruped", N, device="cpu", backend="mjwarp", seed=0, sim={"graphs": True})
    venv = env.rsl_rl(log_every=0)
    venv.step(torch.zeros(N, env.num_actions))  # captures
    for ending in (0, 4):
        syncs, launches, _ = _step_counts(env, venv.step, ending)
        assert dict(launches.by_kind) == {"capture_launch": 2}, ending
        assert syncs.total == 0


def test_the_sync_counter_sees_what_it_must():
    """The counter itself: each kind of sync the env avoids is counted when it does happen."""
    x, mask = torch.arange(6.0), torch.tensor([True, False] * 3)
    with torch.inference_mode(), count_syncs() as c:
        float(x.sum()), mask.nonzero(), x[mask], x[[0, 2]], x.tolist(), bool(mask.any())
        torch.where(mask, x, 0.0)  # not a sync
    assert dict(c.by_op) == {"item/float/bool": 2, "nonzero": 1, "bool-mask index": 1,
                             "tensor from host data (list index, torch.tensor)": 1, "tolist": 1}


def test_trainer_reads_the_device_a_fixed_number_of_times_per_iteration():
    """Syncs per PPO iteration do not grow with its steps: the episode log and returns are read
    once per iteration, not per step."""
    from simrl.rl.runner import Trainer

    env = make("cartpole", 16, device="cpu", backend="mjwarp", seed=0, sim={"graphs": False})
    counts = []
    for steps in (4, 12):
        agent = _cartpole_agent(steps)
        trainer = Trainer(env, agent)
        trainer.learn(1, progress=False)
        with count_syncs() as syncs:
            trainer.learn(1, progress=False)
        counts.append(syncs.by_op)
    # what the rollout adds per step would show as a difference between 4 and 12 steps
    assert counts[0] == counts[1], counts


def _cartpole_agent(steps: int) -> dict:
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from simrl import ROOT

    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base=None):
        agent = OmegaConf.to_container(compose("train", overrides=["task=cartpole"]).agent, resolve=True)
    agent["num_steps_per_env"] = steps
    agent["algorithm"]["num_mini_batches"] = 1
    agent["algorithm"]["num_learning_epochs"] = 1
    return agent


def _gpu_script(tmp_path, **env_vars):
    import os
    import subprocess

    from simrl import ROOT

    env = {**os.environ, "SIMRL_GPU_RESULTS": str(tmp_path), **env_vars}
    return subprocess.run(["bash", str(ROOT / "bench" / "gpu.sh"), "--rehearse"], env=env,
                          capture_output=True, text=True, timeout=900)


def test_gpu_script_rehearses_end_to_end_on_the_cpu(tmp_path):
    """bench/gpu.sh --rehearse: the GPU check's every step, on Warp's CPU device, tiny sizes."""
    r = _gpu_script(tmp_path)
    log = (tmp_path / "gpu.log").read_text()
    assert r.returncode == 0, log[-3000:]
    assert "simrl GPU check: all steps passed" in log
    for step in ("sim layer, graphs on/off", "quadruped task, graphs on/off", "PPO iteration shares",
                 "train to the walking criterion", "play: tracking and falls",
                 "launches and syncs per env step"):
        assert f"-- {step}: exit 0" in log, step
    assert (tmp_path / "train" / "model_2.pt").is_file()
    assert "falls" in log and "graphs on env-steps/s" in log
    # the launches table: both rows, zero syncs
    rows = [ln.split() for ln in log.splitlines() if ln.strip().startswith(("no resets", "with resets"))]
    assert len(rows) == 2 and all(float(row[3]) == 0.0 for row in rows), rows


def test_gpu_script_reports_failed_steps_and_keeps_going(tmp_path):
    r = _gpu_script(tmp_path, PYTHON="false")  # every python step fails at once
    log = (tmp_path / "gpu.log").read_text()
    assert r.returncode == 7, log  # versions, 2 graphs tables, iteration, train, play, launches
    assert "7 step(s) failed: versions (exit 1)" in log
