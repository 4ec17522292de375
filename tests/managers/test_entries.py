"""One grammar and one merge rule for every kind of term entry (simrl.managers.entries)."""

from __future__ import annotations

import pytest
import torch

import simrl
from simrl.errors import ConfigError
from simrl.managers.entries import deep_merge, merge_entries


def test_params_deep_merge_where_the_func_is_kept_and_restart_where_it_changes():
    base = {"push": {"func": "push_body", "mode": "interval", "interval_s": 8.0,
                     "params": {"body": "trunk", "max_vel": 1.0, "nested": {"a": 1, "b": 2}}}}
    kept = merge_entries(base, {"push": {"params": {"max_vel": 0.5, "nested": {"b": 3}}}}, "event")
    assert kept["push"]["params"] == {"body": "trunk", "max_vel": 0.5, "nested": {"a": 1, "b": 3}}
    assert kept["push"]["interval_s"] == 8.0 and base["push"]["params"]["max_vel"] == 1.0  # base untouched
    other = merge_entries(base, {"push": {"func": "scale_field", "params": {"field": "body_mass"}}}, "event")
    assert other["push"]["params"] == {"field": "body_mass"}


def test_null_drops_an_entry_and_a_null_for_a_missing_one_is_refused_naming_the_entries():
    both = {"a": {"func": "x"}, "b": {"func": "y"}}
    assert merge_entries(both, {"a": None}, "termination") == {"b": {"func": "y"}}
    with pytest.raises(ConfigError, match=r"termination 'c': null drops an entry, but there is none of that "
                                          r"name; entries: \['a'\]"):
        merge_entries({"a": {"func": "x"}}, {"c": None}, "termination")


def test_a_bare_reward_weight_merges_into_its_entry_keeping_func_and_params():
    base = {"fine": {"weight": 1.0, "func": "ee_pos_tanh", "params": {"std": 0.02}}, "alive": 1.0}
    out = merge_entries(base, {"fine": 2.0, "alive": {"params": {}}}, "reward")
    assert out["fine"] == {"weight": 2.0, "func": "ee_pos_tanh", "params": {"std": 0.02}}
    assert out["alive"] == {"weight": 1.0, "params": {}}
    assert deep_merge({"a": {"b": 1}}, {"a": 2}) == {"a": 2}


def test_one_term_joins_one_observation_group_from_a_config_and_null_drops_one():
    plain = simrl.make("quadruped", 2, device="cpu", seed=0)
    env = simrl.make("quadruped", 2, device="cpu", seed=0, cfg={"observations": {"critic": {
        "base_lin_vel_z": {"func": "base_lin_vel", "scale": 3.0}, "height_scan": None}}})
    assert env.obs_dims["policy"] == plain.obs_dims["policy"]  # the other group as it was
    layout = {s.name: s for s in env.obs_layout["critic"]}
    scan = {s.name: s for s in plain.obs_layout["critic"]}["height_scan"]
    assert "base_lin_vel_z" in layout and "height_scan" not in layout
    assert env.obs_dims["critic"] == plain.obs_dims["critic"] + 3 - scan.width
    obs = env.compute_observations()["critic"]
    new, lin = obs[:, layout["base_lin_vel_z"].slice], obs[:, layout["base_lin_vel"].slice]
    assert torch.equal(new, 1.5 * lin)  # the same function under its own name and scale (3.0 vs 2.0)


def test_a_list_replaces_a_group_and_bad_observation_entries_are_refused_in_one_line():
    env = simrl.make("cartpole", 2, device="cpu", cfg={"observations": {"policy": [{"name": "pole_angle"}]}})
    assert [s.name for s in env.obs_layout["policy"]] == ["pole_angle"]
    with pytest.raises(ConfigError, match=r"observation term 'cart_pos' in group 'policy': unknown keys "
                                          r"\['weight'\]"):
        simrl.make("cartpole", 2, device="cpu", cfg={"observations": {"policy": {"cart_pos": {"weight": 1}}}})
    with pytest.raises(ConfigError, match=r"group 'privileged': null drops a group.*\['policy'\]"):
        simrl.make("cartpole", 2, device="cpu", cfg={"observations": {"privileged": None}})


def test_an_observation_entry_naming_its_own_func_still_deep_merges_its_params():
    # as an ObsTerm reaches the merge: func None (its name)
    own = {"clock": {"func": None, "scale": 1.0, "params": {"period": 0.8, "offsets": [0.0, 0.5]}}}
    out = merge_entries(own, {"clock": {"func": "clock", "params": {"period": 0.4}}}, "observation")
    assert out["clock"]["params"] == {"period": 0.4, "offsets": [0.0, 0.5]}
