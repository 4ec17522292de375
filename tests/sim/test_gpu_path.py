"""The GPU path's budget, checked on Warp's CPU device: host syncs and launches per env step.

A host sync stalls the CPU until the GPU drains its queue; one per step caps a 4096-env batch
far below what MuJoCo Warp's kernels can do. These tests run the mjwarp backend exactly as on
CUDA (masked resets every step, deferred logs) and count syncs through a torch dispatch mode.
The trainer's own budget is tests/rl/test_host_syncs.py; bench/gpu.sh is tests/apps/test_gpu_script.py.
"""

from __future__ import annotations

import pytest
import torch

from simrl.profile import count_launches, count_syncs
from simrl.registry import make
from simrl.rl.vecenv import RslRlVecEnv

pytestmark = pytest.mark.mjwarp
N = 8


SMALL_GRID = {"name": "grid", "num_levels": 2, "tile_size": 3.0, "border": 1.0, "platform": 1.0}


@pytest.fixture(scope="module", params=["flat", "rough"])
def env(request):
    """The flat task, and the rough one with its curriculum, height scan and a 3-frame history."""
    cfg = {} if request.param == "flat" else {"terrain": SMALL_GRID, "history": 3}
    return make("quadruped", N, device="cpu", backend="mjwarp", seed=0, sim={"graphs": False}, cfg=cfg)


def _step_counts(env, step, ending: int) -> tuple:
    env.episode_length_buf.zero_()
    env.episode_length_buf[:ending] = env.max_episode_length - 1  # these time out this step
    with torch.inference_mode(), count_syncs() as syncs, count_launches() as launches:
        out = step(torch.zeros(N, env.num_actions))
    return syncs, launches, out


@pytest.mark.parametrize("ending", [0, 3], ids=["no resets", "with resets"])
def test_training_step_never_syncs_the_host(env, ending):
    venv = RslRlVecEnv(env, log_every=0)
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
    venv = RslRlVecEnv(env, log_every=0)
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


@pytest.mark.parametrize("ending", [0, 3], ids=["no resets", "with resets"])
def test_the_lift_task_steps_on_mjwarp_without_host_syncs(ending):
    """An arm and a free cube (Franka lift) on MuJoCo Warp: the same budget as the legged task."""
    env = make("lift", N, device="cpu", backend="mjwarp", seed=0, sim={"graphs": False})
    venv = RslRlVecEnv(env, log_every=0)
    venv.step(torch.zeros(N, env.num_actions))
    syncs, _, (obs, rew, dones, _) = _step_counts(env, venv.step, ending)
    assert syncs.total == 0, dict(syncs.by_op)
    assert int(dones.sum()) == ending and torch.isfinite(rew).all()
