"""An env's checkpoint state: managers' state round-trips, another format is refused in one line."""

from __future__ import annotations

import pytest
import torch

import simrl


def _cartpole():
    return simrl.make("cartpole", 8, device="cpu", seed=0)


def test_a_restored_env_continues_bit_for_bit_with_its_managers_state():
    a, b = _cartpole(), _cartpole()
    for _ in range(30):  # cartpole episodes end quickly under random actions: resets, sums, logs
        a.step(torch.rand(8, a.num_actions) * 2 - 1)
    b.load_state_dict(a.state_dict())
    assert torch.equal(a.reward_manager.sums, b.reward_manager.sums)
    actions = torch.rand(8, a.num_actions) * 2 - 1
    for _ in range(20):
        oa, ra, *_ = a.step(actions)
        ob, rb, *_ = b.step(actions)
        assert torch.equal(oa["policy"], ob["policy"]) and torch.equal(ra, rb)
    assert a.episode_log() == b.episode_log()


def test_a_state_of_another_format_is_refused_naming_it():
    env = _cartpole()
    old = env.state_dict()
    del old["format"]  # as simrl 0.1.0 saved it
    with pytest.raises(ValueError, match=r"format 1 \(simrl 0\.1\.0, the state on the env\).*train anew"):
        env.load_state_dict(old)
    old["format"] = 2
    with pytest.raises(ValueError, match=r"env state format 2 \(a simrl before data views"):
        env.load_state_dict(old)


class StepCount:
    """A data view from outside the simrl package: its state is saved with the env all the same."""

    not_state = frozenset({"label"})

    def __init__(self, env):
        self.count = torch.zeros(env.num_envs, dtype=torch.long)
        self.label = "derived"

    def refresh(self, env):
        pass

    def update(self, env):
        self.count += 1

    def reset(self, env, mask):
        self.count.masked_fill_(mask, 0)


def test_a_view_from_any_package_is_saved_and_restored_with_the_env():
    from simrl.env import EnvBatch
    from simrl.envs.locomotion import QuadrupedCfg

    class Cfg(QuadrupedCfg):
        VIEWS = {**QuadrupedCfg.VIEWS, "steps": StepCount}

    env = EnvBatch(Cfg(), 2, device="cpu", seed=0)
    for _ in range(3):
        env.step(torch.zeros(2, env.num_actions))
    state = env.state_dict()
    saved = state["task"]["views"]["steps"]["__object__"]
    assert "count" in saved and "label" not in saved
    fresh = EnvBatch(Cfg(), 2, device="cpu", seed=0)
    fresh.load_state_dict(state)
    assert torch.equal(fresh.steps.count, env.steps.count) and int(env.steps.count.max()) == 3
    assert fresh.steps is fresh.views["steps"]


def test_derived_manager_attributes_are_not_saved():
    state = _cartpole().state_dict()["task"]
    terms = state["termination_manager"]["__object__"]
    assert "ended" in terms and "fns" not in terms and "terms" not in terms
    assert "sums" in state["reward_manager"]["__object__"]
