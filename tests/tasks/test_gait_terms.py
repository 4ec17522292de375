"""Biped gait terms of the velocity task (envs/locomotion/cfg.py) and per-joint term params."""

from __future__ import annotations

import math

import pytest
import torch

import simrl
from simrl.envs.locomotion import feet_air_time_biped, foot_slip, posture
from simrl.errors import ConfigError


@pytest.fixture(scope="module")
def g1():
    return simrl.make("humanoid", 3, device="cpu", cfg={"rewards": {
        "posture": {"weight": 0.5, "params": {"std_by_joint": {".*knee_joint": 0.1, ".*": 1.0}}},
        "foot_slip": -0.1, "feet_air_time_biped": {"weight": 1.0, "params": {"threshold": 0.3}}}})


def test_single_stance_earns_the_shorter_of_stance_and_swing_time_capped(g1):
    g1.command()[:] = torch.tensor([0.5, 0.0, 0.0])
    g1.command()[2] = 0.0  # standing: nothing earned
    g1.legged.contact = torch.tensor([[True, False], [True, True], [False, True]])
    g1.legged.contact_time = torch.tensor([[0.2, 0.0], [0.5, 0.5], [0.0, 0.9]])
    g1.legged.air_time = torch.tensor([[0.0, 0.15], [0.0, 0.0], [0.6, 0.0]])
    got = feet_air_time_biped(g1, threshold=0.3)
    assert got.tolist() == pytest.approx([0.15, 0.0, 0.0])  # single; double stance; standing
    g1.command()[2, 0] = 0.5
    assert feet_air_time_biped(g1, threshold=0.3)[2].item() == pytest.approx(0.3)  # capped


def test_the_step_reward_pays_air_time_past_its_target_and_a_floor_stops_short_steps_costing():
    from simrl.envs.locomotion import feet_air_time

    env = simrl.make("quadruped", 3, device="cpu")  # air_time_target_s 0.5
    env.command()[:] = torch.tensor([0.5, 0.0, 0.0])
    env.command()[2] = 0.0  # standing: nothing earned or lost
    env.legged.first_contact = torch.tensor([[True, True, False, False], [True] * 4, [True] * 4])
    landed = torch.tensor([[0.7, 0.2, 0.0, 0.0], [0.1] * 4, [0.1] * 4])
    env.legged.air_time_on_landing = landed * env.legged.first_contact
    assert feet_air_time(env).tolist() == pytest.approx([0.2 - 0.3, -1.6, 0.0])
    assert feet_air_time(env, floor=0.0).tolist() == pytest.approx([0.2, 0.0, 0.0])
    assert feet_air_time(env, target=0.1).tolist() == pytest.approx([0.6 + 0.1, 0.0, 0.0], abs=1e-6)
    assert feet_air_time(env, target=0.0, cap=0.3).tolist() == pytest.approx([0.3 + 0.2, 0.4, 0.0], abs=1e-6)


def test_slip_counts_only_planted_feet(g1):
    """Feet that moved (0.3, 0.4, 5) and (9, 9, 9) times dt since the last step: only the planted
    ones count, and only horizontally."""
    slip = foot_slip(g1)
    moved = torch.tensor([[0.3, 0.4, 5.0], [9.0, 9.0, 9.0]]) * g1.dt
    slip.pos = g1.sim.xpos[:, g1.legged.feet].float() - moved
    slip.fresh = torch.zeros(3, dtype=torch.bool)
    g1.legged.contact = torch.tensor([[True, False], [False, False], [True, True]])
    assert slip(g1).tolist() == pytest.approx([0.25, 0.0, 0.25 + 162.0], rel=1e-4)


def test_posture_uses_each_joints_own_tolerance(g1):
    fn = g1.reward_manager.term_fn("posture")
    g1.joint_pos = g1.default_joint_pos.expand(3, -1).clone()
    assert fn(g1).tolist() == pytest.approx([1.0] * 3)
    knee = g1.robot.joints.index("left_knee_joint")
    hip = g1.robot.joints.index("left_hip_pitch_joint")
    g1.joint_pos[0, knee] += 0.1  # one std of the knee
    g1.joint_pos[1, hip] += 0.1  # a tenth of the hip's
    n = len(g1.robot.joints)
    assert fn(g1).tolist() == pytest.approx([math.exp(-1 / n), math.exp(-0.01 / n), 1.0], rel=1e-5)
    assert posture(g1, std_by_joint=1.0).shape == (3,)


def test_slip_is_zero_right_after_a_reset_and_its_state_is_the_envs(g1):
    """foot_slip keeps the feet's last positions (a stateful term): the env's reset tells it, so
    a reset env's teleported feet do not count as a slide; its state goes into checkpoints."""
    g1.reset()
    slip = g1.reward_manager.stateful["foot_slip"]
    for _ in range(5):
        g1.step(torch.randn(3, g1.num_actions))
    g1.legged.contact = torch.ones(3, 2, dtype=torch.bool)
    before = slip.pos.clone()
    g1.sim.qpos[0, :2] += 0.5  # env 0 moved between steps (a reset puts it elsewhere)
    g1.sim.forward()
    g1.reward_manager.reset(g1, torch.tensor([True, False, False]))
    assert slip(g1)[0] == 0 and torch.isfinite(slip.pos).all() and not torch.equal(slip.pos, before)
    state = g1.state_dict()
    saved = state["task"]["reward_manager"]["__object__"]["term_state"]["foot_slip"]
    assert torch.equal(saved["pos"], slip.pos) and torch.equal(saved["fresh"], slip.fresh)
    pos, fresh = slip.pos.clone(), slip.fresh.clone()
    g1.step(torch.randn(3, g1.num_actions))  # moves the term's state on
    assert not torch.equal(slip.pos, pos)
    g1.load_state_dict(state)  # and a checkpoint's state puts it back
    assert torch.equal(slip.pos, pos) and torch.equal(slip.fresh, fresh)


def test_a_stateful_term_without_reset_is_refused():
    class Trace:
        def __init__(self, env):
            self.n = env.num_envs

        def __call__(self, env):
            return torch.zeros(self.n)

    from simrl.envs.locomotion import QuadrupedCfg

    rewards = QuadrupedCfg.TERMS["rewards"]
    rewards["trace_no_reset"] = Trace
    try:
        with pytest.raises(ConfigError, match=r"reward term 'trace_no_reset': Trace is a class, so it keeps "
                                              r"state between steps; it needs a reset\(env, mask\)"):
            simrl.make("quadruped", 2, device="cpu", cfg={"rewards": {"trace_no_reset": 1.0}})
    finally:
        del rewards["trace_no_reset"]


def test_a_per_joint_param_that_misses_a_joint_is_named():
    with pytest.raises(ConfigError, match="no pattern of .* matches joint"):
        simrl.make("humanoid", 2, device="cpu", cfg={"rewards": {
            "posture": {"weight": 0.5, "params": {"std_by_joint": {".*knee_joint": 0.1}}}}})


# --- the gait clock ------------------------------------------------------------------------------
CLOCK = {"gait_period_s": 0.8, "obs_noise": False, "push_vel": 0.0}


def test_the_gait_clock_is_each_foots_phase_and_restarts_with_the_episode():
    env = simrl.make("humanoid", 2, device="cpu", robot="unitree_g1_legs", seed=0, cfg=CLOCK)
    assert [s.name for s in env.obs_layout["policy"]][-1] == "gait_clock"
    assert [s.name for s in env.obs_layout["critic"]][-1] == "gait_clock"
    obs = env.compute_observations()["policy"]
    # at phase 0 the feet are half a cycle apart
    assert obs[:, -4:].flatten().tolist() == pytest.approx([0.0, 1.0, 0.0, -1.0] * 2, abs=1e-6)
    for _ in range(10):  # 0.2 s: a quarter of the 0.8 s cycle
        obs, *_ = env.step(torch.zeros(2, 12))
    keep = env.episode_length_buf == 10
    assert keep.all()
    assert obs["policy"][0, -4:].tolist() == pytest.approx([1.0, 0.0, -1.0, 0.0], abs=1e-5)
    env._reset(torch.tensor([True, False]))
    clock = env.compute_observations()["policy"][:, -4:]
    assert clock[0].tolist() == pytest.approx([0.0, 1.0, 0.0, -1.0], abs=1e-6)  # a new episode: phase 0
    assert clock[1].tolist() == pytest.approx([1.0, 0.0, -1.0, 0.0], abs=1e-5)


def test_the_deploy_runtime_keeps_the_same_clock_from_the_policys_start(quad_export):
    """DeployPolicy supplies `policy_time` itself (its observations since reset x dt): fed only
    the robot's readings each step, it builds the env's observation, clock included, and
    restarts the clock at `reset`."""
    import numpy as np

    from simrl.deploy import DeployPolicy
    from simrl.rehearse.scene import Readings
    from simrl.rl.export import deploy_metadata

    env = simrl.make("humanoid", 1, device="cpu", robot="unitree_g1_legs", seed=0, cfg=CLOCK)
    meta = deploy_metadata(env, ["policy"])
    assert meta["obs_terms"][-1]["read"] == {"reading": "policy_time", "op": "phase_sincos",
                                             "args": {"period": 0.8, "offsets": [0.0, 0.5]}}
    assert "policy_time" not in meta["readings"]  # the robot supplies nothing for it
    policy = DeployPolicy(quad_export[1]["onnx"])
    policy.meta = meta  # only its observation builder is exercised here
    read = Readings(env.model, meta)
    obs, _ = env.reset()
    gen = torch.Generator().manual_seed(0)
    for step in range(8):
        r = read(env.sim.get_mjdata(0), env.command()[0].numpy())
        policy.last_action = env.actions[0].numpy()
        np.testing.assert_allclose(policy.observation(r), obs["policy"][0].numpy(), atol=1e-5,
                                   err_msg=f"step {step}")
        obs, *_ = env.step(0.2 * torch.randn(1, 12, generator=gen))
    policy.reset()
    assert policy.observation(r)[-4:].tolist() == pytest.approx([0.0, 1.0, 0.0, -1.0], abs=1e-6)


def test_gait_contact_rewards_feet_in_step_with_the_clock(g1):
    from simrl.envs.locomotion import gait_contact

    g1.episode_length_buf[:] = torch.tensor([5, 5, 30])  # phases (0.125, 0.625), again, (0.75, 0.25)
    g1.legged.contact = torch.tensor([[True, False], [False, True], [False, True]])
    assert gait_contact(g1, period=0.8).tolist() == pytest.approx([1.0, 0.0, 1.0])


def test_feet_height_phase_pays_for_each_foot_on_its_clock_drawn_swing_height(g1):
    from simrl.envs.locomotion import feet_height_phase

    g1.episode_length_buf[:] = torch.tensor([5, 5, 5])  # phases (0.125, 0.625): left planted,
    g1.command()[:] = torch.tensor([0.5, 0.0, 0.0])     # right a sixth into its swing: sin(pi/6)
    g1.command()[2] = 0.0                                # standing: nothing earned
    g1.legged.foot_height = torch.tensor([[0.0, 0.04], [0.04, 0.0], [0.0, 0.04]])
    got = feet_height_phase(g1, period=0.8, stance=0.55, height=0.08, std=0.05)
    assert got.tolist() == pytest.approx([1.0, math.exp(-2 * 0.8**2), 0.0], abs=1e-5)


def test_the_foot_heights_a_phase_reward_reads_are_the_tips_over_the_ground():
    env = simrl.make("humanoid", 2, device="cpu", cfg={"rewards": {"feet_height_phase": 1.0}})
    env.reset()
    env.step(torch.zeros(2, env.num_actions))
    assert env.legged.track_foot_height and not env.legged.track_swing
    assert torch.equal(env.legged.foot_height, env.legged.foot_heights(env))
    assert env.legged.foot_height.abs().max().item() < 0.03  # standing: both tips on the ground


def test_the_gait_clock_mirrors_by_swapping_the_feet_and_bad_settings_are_named():
    from simrl import mirror

    env = simrl.make("humanoid", 2, device="cpu", robot="unitree_g1_legs", cfg=CLOCK)
    sp = env.mirror_maps()["obs"]["policy"]
    x = torch.arange(float(env.obs_layout["policy"][-1].slice.stop)).expand(1, -1)
    assert mirror.apply(x, sp)[0, -4:].tolist() == x[0, -4:][[2, 3, 0, 1]].tolist()
    odd = simrl.make("humanoid", 2, device="cpu", robot="unitree_g1_legs",
                     cfg={**CLOCK, "gait_offsets": [0.0, 0.3]})
    with pytest.raises(ConfigError, match="offsets that the left-right mirror shifts by one amount"):
        odd.mirror_maps()
    with pytest.raises(ConfigError, match="gait_period_s must be > 0"):
        simrl.make("humanoid", 2, device="cpu", cfg={"gait_period_s": 0.0})


# --- the biped recipe as experiment configs -------------------------------------------------------
@pytest.mark.parametrize("experiment,robot,tight", [
    ("g1_legs", "unitree_g1_legs", ["left_hip_roll_joint", "right_hip_yaw_joint", "left_ankle_roll_joint"]),
    ("t1_legs", "booster_t1", ["Left_Hip_Roll", "Right_Hip_Yaw", "Right_Ankle_Roll"]),
])
def test_the_biped_recipe_composes_for_each_humanoid_with_its_own_joint_names(experiment, robot, tight):
    from omegaconf import OmegaConf

    from tests.conftest import compose_config

    cfg = compose_config("train", "task=humanoid", f"experiment={experiment}")
    task_cfg = OmegaConf.to_container(cfg.task.cfg, resolve=True)
    assert task_cfg["robot"] == robot and cfg.agent.actor.hidden_dims == [256, 128, 64]
    env = simrl.make("humanoid", 2, device="cpu", seed=0, cfg=task_cfg)
    assert env.num_actions == 12 and [s.name for s in env.obs_layout["policy"]][-1] == "gait_clock"
    fn = env.reward_manager.term_fn("posture")
    std = fn.keywords["std_by_joint"]  # resolved once, one tolerance per policy joint
    joints = list(env.robot.joints)
    assert [std[joints.index(j)].item() for j in tight] == pytest.approx([0.1] * 3)
    assert std[joints.index([j for j in joints if "knee" in j.lower()][0])].item() == pytest.approx(0.5)
    env.reset()
    obs = env.step(torch.zeros(2, env.num_actions))[0]
    assert torch.isfinite(obs["policy"]).all() and torch.isfinite(obs["critic"]).all()


def test_the_quadruped_trots_on_a_clock_by_default_and_its_reward_reads_the_observed_clock():
    from simrl.envs.locomotion import QuadrupedCfg, gait_contact

    env = simrl.make("quadruped", 2, device="cpu", seed=0)
    clock = env.obs_layout["policy"][-1]
    assert clock.name == "gait_clock" and clock.slice.stop - clock.slice.start == 8  # sin, cos x 4 feet
    assert env.obs_layout["critic"][-1].name == "gait_clock"
    fn = env.reward_manager.term_fn("gait_contact")
    assert fn.keywords["offsets"] == [0.0, 0.5, 0.5, 0.0]  # the clock's, not the term's biped default
    assert fn.keywords["period"] == QuadrupedCfg.gait_period_s == 0.4
    assert "feet_air_time" not in [t.name for _, t in env.reward_manager.active]  # weight 0: off
    env.episode_length_buf[:] = 2  # 0.04 s into a 0.4 s cycle: FR and RL in stance, FL and RR in swing
    assert env.robot.feet == ["FR_calf", "FL_calf", "RR_calf", "RL_calf"]
    env.legged.contact = torch.tensor([[True, False, False, True], [False, True, True, False]])
    assert gait_contact(env, **fn.keywords).tolist() == [1.0, 0.0]


def test_a_new_clock_period_moves_the_reward_and_a_reward_on_another_clock_is_refused():
    slow = simrl.make("quadruped", 1, device="cpu", cfg={"gait_period_s": 0.5})
    fn = slow.reward_manager.term_fn("gait_contact")
    assert fn.keywords["period"] == 0.5
    with pytest.raises(ConfigError, match=r"'gait_contact': param period=0.8 differs from the gait clock"):
        simrl.make("quadruped", 1, device="cpu", cfg={"rewards": {"gait_contact": {
            "weight": 0.5, "params": {"period": 0.8}}}})
    with pytest.raises(ConfigError, match=r"gait_offsets has 2 values, but the robot has 4 feet"):
        simrl.make("quadruped", 1, device="cpu", cfg={"gait_offsets": [0.0, 0.5]})
    with pytest.raises(ConfigError, match=r"'gait_contact': param offsets has 2 values, but the robot has 4"):
        simrl.make("quadruped", 1, device="cpu", cfg={"gait_period_s": None, "rewards": {"gait_contact": {
            "weight": 0.5, "params": {"offsets": [0.0, 0.5]}}}})
    legacy = simrl.make("quadruped", 1, device="cpu", cfg={
        "gait_period_s": None, "rewards": {"gait_contact": 0.0, "feet_air_time": 1.0}})
    assert "gait_clock" not in [t.name for t in legacy.obs_layout["policy"]]


def test_the_default_offsets_pair_the_diagonal_feet_whatever_their_order():
    from simrl.envs.locomotion import default_gait_offsets
    from simrl.scene import assemble, load_robot

    assert default_gait_offsets(assemble("quadruped")) == [0.0, 0.5, 0.5, 0.0]  # FR FL RR RL
    assert default_gait_offsets(assemble("unitree_go1")) == [0.0, 0.5, 0.5, 0.0]
    listed = load_robot("quadruped").to_dict()
    listed["feet"] = ["FL_calf", "FR_calf", "RR_calf", "RL_calf"]  # a pace if offsets kept the order
    assert default_gait_offsets(assemble(listed)) == [0.0, 0.5, 0.0, 0.5]  # FL with RR
    assert default_gait_offsets(assemble("unitree_g1_legs")) == [0.0, 0.5]
    three = {**load_robot("quadruped").to_dict(), "feet": ["FR_calf", "FL_calf", "RR_calf"]}
    with pytest.raises(ConfigError, match=r"gait_offsets null picks a gait for 2 feet .* set gait_offsets"):
        default_gait_offsets(assemble(three))
    # a clocked reward without a clock keeps its own period, with the robot's offsets
    env = simrl.make("quadruped", 1, device="cpu", cfg={"gait_period_s": None})
    fn = env.reward_manager.term_fn("gait_contact")
    assert fn.keywords["offsets"] == [0.0, 0.5, 0.5, 0.0] and "period" not in fn.keywords


def test_the_trot_clock_mirrors_by_swapping_left_and_right_feet():
    from simrl import mirror

    env = simrl.make("quadruped", 1, device="cpu")
    sp = env.mirror_maps()["obs"]["policy"]
    x = torch.arange(float(env.obs_layout["policy"][-1].slice.stop)).expand(1, -1)
    # FR, FL, RR, RL -> FL, FR, RL, RR: the trot's phases shift by half a cycle, a state of the clock
    assert mirror.apply(x, sp)[0, -8:].tolist() == x[0, -8:][[2, 3, 0, 1, 6, 7, 4, 5]].tolist()
    odd = simrl.make("quadruped", 1, device="cpu", cfg={"gait_offsets": [0.0, 0.5, 0.25, 0.5]})
    with pytest.raises(ConfigError, match="shifts by one amount"):
        odd.mirror_maps()


def test_gait_contact_can_ask_for_every_foot_down_while_standing_is_commanded():
    from simrl.envs.locomotion import gait_contact

    env = simrl.make("humanoid", 2, device="cpu", seed=0, robot="unitree_g1_legs", cfg={"gait_period_s": 0.8})
    env.episode_length_buf[:] = 30  # the left foot mid-swing, the right one in stance
    env.command()[:] = torch.tensor([[0.5, 0.0, 0.0], [0.0, 0.0, 0.0]])
    env.legged.contact = torch.ones(2, 2, dtype=torch.bool)  # both feet down
    clocked = gait_contact(env, period=0.8, offsets=(0.0, 0.5), stance=0.55)
    still = gait_contact(env, period=0.8, offsets=(0.0, 0.5), stance=0.55, still_when_standing=True)
    assert clocked.tolist() == [0.5, 0.5]  # the clock wants the left foot up, whatever the command
    assert still.tolist() == [0.5, 1.0]  # told to stand: both feet down is right
