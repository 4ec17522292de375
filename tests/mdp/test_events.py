"""Events by configuration (simrl.mdp.events): startup, reset and interval terms with params."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import simrl
from simrl.errors import ConfigError, UnknownNameError

CALM = {"push_vel": 0.0, "obs_noise": False}


def test_an_interval_push_kicks_the_base_at_its_period_and_only_then():
    push = {"push": {"func": "push_body", "mode": "interval", "interval_s": 0.1,
                     "params": {"body": "trunk", "max_vel": 2.0}}}
    env = simrl.make("quadruped", 4, device="cpu", seed=3, cfg={**CALM, "events": push})
    ref = simrl.make("quadruped", 4, device="cpu", seed=3, cfg=CALM)
    for step in range(1, 6):  # every 5 control steps (0.1 s), before that step's physics
        env.step(torch.zeros(4, 12))
        ref.step(torch.zeros(4, 12))
        same = torch.equal(env.sim.qvel, ref.sim.qvel)
        assert same == (step < 5), step
    kick = (env.sim.qvel[:, :2] - ref.sim.qvel[:, :2]).abs()
    assert kick.max() > 0.3 and kick.max() < 2.5


def test_startup_and_reset_events_scale_model_fields_per_env_within_their_range():
    events = {"mass": {"func": "scale_field", "mode": "startup",
                       "params": {"field": "body_mass", "bodies": "trunk", "range": [0.5, 1.5]}},
              "damping": {"func": "scale_field", "mode": "reset",
                          "params": {"field": "dof_damping", "joints": ".*_calf_joint", "range": [2.0, 3.0]}}}
    cfg = {**CALM, "added_base_mass": [0.0, 0.0], "joint_damping": [0.1, 0.1], "events": events}
    env = simrl.make("quadruped", 8, device="cpu", seed=0, cfg=cfg)
    m = env.model
    trunk = m.body("trunk").id
    mass = env.sim.param("body_mass")[:, trunk]
    assert ((mass >= 0.5 * m.body_mass[trunk] - 1e-6) & (mass <= 1.5 * m.body_mass[trunk] + 1e-6)).all()
    assert mass.unique().numel() == 8  # one draw per world
    calves = [m.joint(f"{leg}_calf_joint").dofadr[0] for leg in ("FR", "FL", "RR", "RL")]
    damp = env.sim.param("dof_damping")[:, calves].clone()
    base = m.dof_damping[calves] + 0.1
    ratio = damp / torch.as_tensor(base, dtype=damp.dtype)
    assert ((ratio >= 2.0 - 1e-6) & (ratio <= 3.0 + 1e-6)).all()  # the reset at construction
    mask = torch.tensor([True] + [False] * 7)
    env._reset(mask)  # a reset event acts on the envs being reset only (and compounds there)
    after = env.sim.param("dof_damping")[:, calves]
    assert not torch.equal(after[0], damp[0]) and torch.equal(after[1:], damp[1:])


def test_bad_event_entries_are_named():
    def make(events):
        return simrl.make("quadruped", 2, device="cpu", cfg={"events": events})

    with pytest.raises(ConfigError, match="mode must be one of"):
        make({"p": {"func": "push_body", "mode": "often"}})
    with pytest.raises(ConfigError, match="interval_s .* goes with mode interval"):
        make({"p": {"func": "push_body", "mode": "interval", "params": {"body": "trunk", "max_vel": 1}}})
    with pytest.raises(UnknownNameError, match=r"unknown func 'shove'.*\['forward_kinematics', "
                       r"'ground_dampratio', .*'push_body', .*'scale_field', 'start_terrain_levels'\]"):
        make({"p": {"func": "shove", "mode": "reset"}})
    with pytest.raises(ConfigError, match=r"unknown params \['speed'\]; valid: \['body', 'max_vel'\]"):
        make({"p": {"func": "push_body", "mode": "reset", "params": {"body": "trunk", "speed": 1}}})
    with pytest.raises(UnknownNameError, match="body 'torso' matches nothing"):
        make({"p": {"func": "push_body", "mode": "reset", "params": {"body": "torso", "max_vel": 1}}})
    with pytest.raises(ConfigError, match="has no free joint"):
        make({"p": {"func": "push_body", "mode": "reset", "params": {"body": "FR_calf", "max_vel": 1}}})


def test_a_state_saved_with_other_events_is_refused_naming_them():
    env = simrl.make("quadruped", 2, device="cpu", seed=0, cfg=CALM)
    state = env.state_dict()
    env.load_state_dict(state)  # its own config loads
    kick = {"kick": {"func": "push_body", "mode": "interval", "interval_s": 1.0,
                     "params": {"body": "trunk", "max_vel": 0.3}}}
    other = simrl.make("quadruped", 2, device="cpu", seed=0, cfg={**CALM, "events": kick})
    with pytest.raises(ValueError, match=r"saved with another config: task.cfg.events"):
        other.load_state_dict(state)
    assert np.isfinite(env.sim.qpos.numpy()).all()


def test_spawn_events_run_before_the_commands_draw_and_reset_events_after():
    """A reach reset draws the arm's joint noise (a spawn event), then the target (the command),
    then any reset event: the target is the same whether or not a reset event draws after it,
    and moving the joint noise to a reset event changes the target drawn."""
    def target(**cfg):
        env = simrl.make("reach", 4, device="cpu", seed=5, cfg=cfg)
        return env.command_terms["ee_pose"].pos_b.clone(), env

    base, env = target()
    assert [e for e in env.cfg.own_entries()["events"]] == ["arm", "kinematics"]
    damp = {"damp": {"func": "scale_field", "mode": "reset",
                     "params": {"field": "dof_damping", "joints": "joint1", "range": [1.0, 2.0]}}}
    after, _ = target(events=damp)
    assert torch.equal(after, base)
    moved, _ = target(events={"arm": {"mode": "reset"}})
    assert not torch.equal(moved, base)


def test_forward_kinematics_as_a_spawn_event_brings_poses_to_the_new_joints():
    env = simrl.make("reach", 2, device="cpu", seed=1)
    site = env.model.site("attachment_site").id
    for w in range(2):
        d = env.sim.get_mjdata(w)
        np.testing.assert_allclose(env.sim.xpos[w].numpy(), d.xpos, atol=1e-9)
        assert np.linalg.norm(d.site_xpos[site]) > 0.1  # the flange, not the origin
    stale = simrl.make("reach", 2, device="cpu", seed=1, cfg={"events": {"kinematics": None}})
    assert not torch.equal(stale.sim.xpos, env.sim.xpos)  # the keyframe's, not the new joints'
