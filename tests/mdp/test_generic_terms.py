"""Generic terms (simrl.mdp.observations, simrl.mdp.rewards) serve the legged and the arm tasks."""

from __future__ import annotations

import torch

import simrl
from simrl.managers.observation import deploy_read
from simrl.mdp.observations import joint_pos, last_action
from simrl.mdp.rewards import action_rate, joint_vel_l2, terminated


def test_one_joint_term_serves_a_legged_and_an_arm_task():
    for task in ("quadruped", "reach"):
        env = simrl.make(task, 2, device="cpu", seed=0)
        assert env.OBS_TERMS["joint_pos"] is joint_pos and env.OBS_TERMS["last_action"] is last_action
        env.step(torch.full((2, env.num_actions), 0.3))
        want = env.sim.qpos[:, env.joint_qpos].float() - env.default_joint_pos
        assert torch.equal(joint_pos(env), want)
    assert deploy_read(joint_pos, {})["minus"] == "default_joint_pos"


def test_action_rate_and_joint_velocity_costs():
    env = simrl.make("reach", 2, device="cpu", seed=0)
    env.step(torch.zeros(2, env.num_actions))
    env.step(torch.full((2, env.num_actions), 0.5))
    assert torch.allclose(action_rate(env), torch.full((2,), 0.25 * env.num_actions))
    assert torch.equal(joint_vel_l2(env), env.joint_vel.square().sum(dim=1))
    assert env.reward_manager.term_fn("joint_vel")(env).equal(joint_vel_l2(env))  # reach's name for it


def test_terminated_costs_a_fall_once_and_nothing_at_a_time_out():
    def step_flipped(rewards):
        env = simrl.make("quadruped", 2, device="cpu", seed=0, cfg={"obs_noise": False, "rewards": rewards,
                                                                         "only_positive_rewards": False})
        env.reset(seed=0)
        env.sim.qpos[0, 3:7] = torch.tensor([0.0, 1.0, 0.0, 0.0], dtype=env.sim.qpos.dtype)  # upside down
        _, reward, term, trunc, _ = env.step(torch.zeros(2, env.num_actions))
        return reward.clone(), term.clone(), trunc.clone(), env

    base, term, trunc, env = step_flipped({"alive": 1.0})
    cost, term2, _, _ = step_flipped({"alive": 1.0, "terminated": -10.0})
    assert term.tolist() == [True, False] and term2.equal(term) and not trunc.any()
    assert torch.allclose(cost - base, torch.tensor([-10.0 * env.dt, 0.0]))
    env.episode_length_buf[:] = env.max_episode_length - 1  # the next step is a time-out, not a fall
    _, _, term, trunc, _ = env.step(torch.zeros(2, env.num_actions))
    assert trunc.all() and not term.any() and not terminated(env).any()
