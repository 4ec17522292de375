"""The trainer's share of the GPU path's budget, on Warp's CPU device: host syncs per PPO
iteration do not grow with its steps (tests/sim/test_gpu_path.py holds the env step's)."""

from __future__ import annotations

import pytest

from simrl.profile import count_syncs
from simrl.registry import make

pytestmark = pytest.mark.mjwarp


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

    from simrl import CONFIGS

    with initialize_config_dir(config_dir=str(CONFIGS), version_base=None):
        agent = OmegaConf.to_container(compose("train", overrides=["task=cartpole"]).agent, resolve=True)
    agent["num_steps_per_env"] = steps
    agent["algorithm"]["num_mini_batches"] = 1
    agent["algorithm"]["num_learning_epochs"] = 1
    return agent
