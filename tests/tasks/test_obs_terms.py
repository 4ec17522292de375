"""Observation terms' own clip and delay: in training, in the run's layout, and the same frames
from the robot-side runtime (simrl.deploy.runtime.observation)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import simrl
from simrl.deploy.runtime import observation
from simrl.env import ObsTerm
from simrl.errors import ConfigError


def _cartpole(policy_terms, n=2):
    cfg = {"init_noise": 0.0, "observations": {"policy": policy_terms}}
    env = simrl.make("cartpole", n, device="cpu", seed=0, cfg=cfg)
    env.reset(seed=0)
    return env


def test_a_delayed_term_shows_the_frame_of_delay_steps_ago_and_a_clipped_one_is_bounded():
    env = _cartpole([ObsTerm("pole_angle"), ObsTerm("pole_vel", delay=2), ObsTerm("cart_vel", clip=0.05)])
    seen, clipped = [], False
    for k in range(6):
        obs, *_ = env.step(torch.full((2, 1), 1.0 if k < 3 else -1.0))
        assert not env.reset_buf.any()  # cartpole's first steps end no episode
        seen.append(env.sim.qvel[:, 1].float().clone())
        if k >= 2:  # the pole's velocity of two steps before
            torch.testing.assert_close(obs["policy"][:, 1], seen[k - 2])
        cart = obs["policy"][:, 2]
        assert cart.abs().max() <= 0.05 + 1e-6
        clipped |= bool((env.sim.qvel[:, 0].abs() > 0.05).any())
    assert clipped  # the bound was met, not just never reached
    assert env.obs_layout["policy"][1].delay == 2 and env.obs_layout["policy"][2].clip == 0.05


def test_the_runtime_builds_the_same_delayed_and_clipped_frames():
    env = _cartpole([ObsTerm("pole_vel", delay=1, history=2), ObsTerm("cart_vel", clip=0.05)])
    meta = {"obs_clip": env.cfg.obs_clip, "obs_terms": [
        {"name": s.name, "start": s.slice.start, "stop": s.slice.stop, "scale": s.scale, "history": s.history,
         "width": s.width, "clip": s.clip, "delay": s.delay, "read": env.OBS_TERMS[s.name].deploy_read}
        for s in env.obs_layout["policy"]]}
    history: dict = {}
    obs = env.compute_observations()
    for k in range(5):
        got = observation(meta, {"joint_vel": env.sim.qvel[0].numpy()}, history)
        np.testing.assert_allclose(got, obs["policy"][0].numpy(), rtol=0, atol=1e-6)
        obs, *_ = env.step(torch.full((2, 1), 1.0 if k < 3 else -1.0))
    assert (obs["policy"][:, 0] != obs["policy"][:, 1]).all()  # two different frames are stacked


@pytest.mark.parametrize(("term", "words"), [
    (ObsTerm("cart_pos", delay=-1), "delay must be an int >= 0"),
    (ObsTerm("cart_pos", clip=0), "clip must be a number > 0"),
])
def test_bad_clip_or_delay_end_in_one_line(term, words):
    with pytest.raises(ConfigError, match=words):
        _cartpole([term])


def test_a_state_saved_with_another_delay_is_refused_naming_the_observations():
    plain, late = _cartpole([ObsTerm("pole_vel")]), _cartpole([ObsTerm("pole_vel", delay=1)])
    with pytest.raises(ValueError, match=r"saved with another config: task.cfg.observations"):
        late.load_state_dict(plain.state_dict())
