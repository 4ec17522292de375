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
    with pytest.raises(ValueError, match=r"env state format 1 \(simrl 0\.1\.0\).*train anew"):
        env.load_state_dict(old)


def test_derived_manager_attributes_are_not_saved():
    state = _cartpole().state_dict()["task"]
    terms = state["termination_manager"]["__object__"]
    assert "ended" in terms and "fns" not in terms and "terms" not in terms
    assert "sums" in state["reward_manager"]["__object__"]
