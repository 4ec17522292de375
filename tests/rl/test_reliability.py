"""Reliability in training: diverged worlds mid-training are reset and never reach the learner.

The env batch's long random-action soak is tests/tasks/test_soak.py."""

from __future__ import annotations

import math

import pytest
import torch
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from simrl import ASSETS, CONFIGS
from simrl.registry import make
from simrl.rl.runner import Trainer


def _agent(task: str) -> dict:
    with initialize_config_dir(config_dir=str(CONFIGS), version_base=None):
        cfg = compose("train", overrides=[f"task={task}"])
    return OmegaConf.to_container(cfg.agent, resolve=True)


def test_nan_injected_mid_training_is_reset_and_never_reaches_the_learner():
    torch.manual_seed(0)
    env = make("quadruped", 16, device="cpu", seed=0)
    agent = _agent("quadruped")
    agent["num_steps_per_env"] = 8
    trainer = Trainer(env, agent)
    trainer.learn(2, progress=False)
    env.sim.qvel[3, 10] = float("nan")  # world 3 diverges
    env.sim.qpos[7, 2] = float("inf")   # and world 7
    trainer.learn(3, progress=False)
    assert env.unstable_count == 2  # worlds 3 and 7, once each; no other world diverged
    assert sum(m.get("sim/unstable_resets", 0.0) for m in trainer.history) == env.unstable_count
    for m in trainer.history:
        assert all(math.isfinite(v) for k, v in m.items() if k.startswith("Loss/")), m
    actor = trainer.alg.get_policy()
    assert all(torch.isfinite(p).all() for p in actor.parameters())
    norm = actor.obs_normalizer
    assert torch.isfinite(norm._mean).all() and torch.isfinite(norm._var).all()
    assert torch.isfinite(env.sim.qpos).all() and torch.isfinite(env.sim.qvel).all()


def test_a_checkpoint_that_runs_code_when_unpickled_is_refused_unrun(cartpole_export, tmp_path):
    """weights_only loading: a pickle that calls a function on load is refused by name, and the
    function never runs; simrl's own checkpoints load as before."""
    from pathlib import Path

    import pytest
    import torch

    from simrl.rl.checkpoint import CheckpointError, load_checkpoint

    run_dir, _ = cartpole_export
    good = load_checkpoint(run_dir)
    assert "actor_state_dict" in good and good["infos"]["config"]["task"]["name"] == "cartpole"

    marker = tmp_path / "pwned"

    class Payload:
        def __reduce__(self):
            return (Path.touch, (marker,))

    evil = tmp_path / "model_9.pt"
    torch.save({**good, "infos": Payload()}, evil)
    with pytest.raises(CheckpointError, match=r"holds GLOBAL \S+, which simrl does not unpickle"):
        load_checkpoint(evil)
    assert not marker.exists()


@pytest.mark.parametrize("backend", ["mujoco", pytest.param("mjwarp", marks=pytest.mark.mjwarp)])
def test_worlds_poisoned_every_step_are_reset_and_counted_and_the_rest_run_as_if_untouched(backend):
    """NaN written into 10% of the worlds before every one of 100 steps: each poisoned world is
    reset and counted every step, earns nothing, and every other world's observations, rewards
    and state are bit-identical to those of a run where nothing was poisoned."""
    n, poisoned = 40, torch.arange(0, 40, 10)  # worlds 0, 10, 20, 30
    sim = {"graphs": False} if backend == "mjwarp" else None
    clean, dirty = (make("quadruped", n, device="cpu", backend=backend, seed=3, sim=sim,
                         cfg={"episode_length_s": 0.5}) for _ in range(2))  # time-outs at 25 steps
    rest = torch.ones(n, dtype=torch.bool)
    rest[poisoned] = False
    actions = torch.Generator().manual_seed(0)
    ended_rest = 0
    for step in range(100):
        a = 0.5 * torch.randn(n, clean.num_actions, generator=actions)
        dirty.sim.qvel[poisoned, step % dirty.sim.qvel.shape[1]] = float("nan")
        obs_c, rew_c, term_c, trunc_c, _ = clean.advance(a)
        obs_d, rew_d, term_d, trunc_d, _ = dirty.advance(a)
        assert term_d[poisoned].all() and (rew_d[poisoned] == 0).all(), step
        for g in obs_c:
            assert torch.equal(obs_c[g][rest], obs_d[g][rest]), (step, g)
        assert torch.equal(rew_c[rest], rew_d[rest]) and torch.equal(term_c[rest], term_d[rest])
        assert torch.equal(clean.sim.qpos[rest], dirty.sim.qpos[rest]), step
        assert torch.isfinite(dirty.sim.qpos).all() and torch.isfinite(dirty.sim.qvel).all()
        ended_rest += int(term_c[rest].sum() + trunc_c[rest].sum())
    assert dirty.unstable_count == 100 * len(poisoned) and clean.unstable_count == 0
    assert ended_rest > 0  # the rest had resets of their own in the window: those stayed equal too


def test_a_world_whose_mujoco_warnings_rise_is_reset_and_counted():
    """MuJoCo C warns (contact buffer full, bad qacc, ...) and steps on: simrl resets that world."""
    import mujoco

    env = make("cartpole", 8, device="cpu", seed=0)
    zeros = torch.zeros(8, env.num_actions)
    env.advance(zeros)
    env.sim.batch.warning[5, int(mujoco.mjtWarning.mjWARN_CONTACTFULL), 1] += 1
    _, _, term, _, _ = env.advance(zeros)
    assert term.tolist() == [i == 5 for i in range(8)]
    _, _, term, _, _ = env.advance(zeros)  # counted once, not again while the count stands
    assert not term.any() and env.unstable_count == 1


@pytest.mark.mjwarp
def test_a_world_that_overflows_its_constraint_rows_on_mjwarp_is_reported_as_unstable():
    """njmax too small for a landing quadruped: the env batch's sim (reset_row_overflow, as
    EnvBatch sets it) reports those worlds as unstable, to be reset and counted, and does not
    raise; the contact buffer all worlds share would still raise (tests/sim/test_sim_mjwarp.py)."""
    from simrl.sim import make_sim

    sim = make_sim(str(ASSETS / "quadruped" / "quadruped.xml"), 2, device="cpu", backend="mjwarp",
                   njmax=16, graphs=False, check_overflow=False)
    sim.reset_row_overflow = True
    flagged = torch.zeros(2, dtype=torch.bool)
    for _ in range(50):  # from the default pose just above the floor, the feet land
        sim.step(2)
        bad = sim.unstable()
        flagged |= bad
        sim.reset(bad)
    assert flagged.all()
    sim.raise_on_overflow()  # the row overflows were handled: nothing to raise
    env = make("quadruped", 2, device="cpu", backend="mjwarp", seed=0, sim={"graphs": False})
    assert env.sim.reset_row_overflow
