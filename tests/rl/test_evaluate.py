"""Evaluation reads only what a task declares: its tracking and episode-end metrics."""

from __future__ import annotations

import math

import torch

import simrl
from simrl.rl.evaluate import evaluate


def _zeros(env):
    return lambda obs: torch.zeros(env.num_envs, env.num_actions)


def test_tracking_errors_come_from_the_task_terms_on_the_pinned_command():
    env = simrl.make("quadruped", 8, device="cpu", seed=3,
                     cfg={"episode_length_s": 2.0, "push_vel": 0.0})
    standing = evaluate(env, _zeros(env), command=(0.0, 0.0, 0.0))
    asked = evaluate(env, _zeros(env), command=(0.8, 0.0, 0.5))
    # the default pose stands still: its error is the command it ignores
    assert standing["lin_vel_error"] < 0.15 and standing["yaw_rate_error"] < 0.3
    assert abs(asked["lin_vel_error"] - 0.8) < 0.15 and abs(asked["yaw_rate_error"] - 0.5) < 0.3
    assert asked["episodes"] == 8 and "crossed_share" not in asked  # flat ground: no crossing


def test_a_terrain_run_reports_the_crossing_and_a_task_without_tracking_none():
    env = simrl.make("quadruped", 4, device="cpu", cfg={"episode_length_s": 0.5, "terrain": "rough"})
    r = evaluate(env, _zeros(env), command=(0.5, 0.0, 0.0))
    assert r["crossed_share"] == 0.0  # half a second of standing crosses nothing

    def far_from_spawn(obs):  # the curriculum's distance, as if each env had walked 10 m
        env.terrain.spawn[:] = env.legged.base_pos[:, :2] - 10.0
        return torch.zeros(env.num_envs, env.num_actions)

    r = evaluate(env, far_from_spawn, command=(0.5, 0.0, 0.0))
    assert r["crossed_share"] == 1.0 - r["fall_share"] and r["fall_share"] < 1.0
    cart = simrl.make("cartpole", 4, device="cpu")
    r = evaluate(cart, _zeros(cart))
    assert "lin_vel_error" not in r and 0.0 <= r["fall_share"] <= 1.0 and r["episodes"] == 4


def test_episodes_shorter_than_the_settling_time_give_no_tracking_figure():
    env = simrl.make("quadruped", 2, device="cpu", cfg={"episode_length_s": 0.5})
    r = evaluate(env, _zeros(env), command=(0.5, 0.0, 0.0))  # 1 s to settle, 0.5 s episodes
    assert math.isnan(r["lin_vel_error"]) and math.isnan(r["yaw_rate_error"])
    assert r["fall_share"] == 0.0 and r["mean_steps"] == env.max_episode_length == 25


def test_mean_steps_counts_each_first_episode_to_its_end():
    cart = simrl.make("cartpole", 8, device="cpu", seed=1, cfg={"init_noise": 0.0})
    pushed = evaluate(cart, lambda obs: torch.ones(8, 1))  # full force one way: the cart leaves
    assert pushed["fall_share"] == 1.0 and 1 < pushed["mean_steps"] < cart.max_episode_length
