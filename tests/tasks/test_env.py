"""Env batch: the gymnasium vector-env contract, the episode log, task terms.

rsl-rl's view of it (simrl.rl.vecenv) is tests/rl/test_vecenv.py."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.vector import AutoresetMode

import simrl
from simrl.registry import make

N = 8


@pytest.fixture(scope="module")
def quad():
    return make("quadruped", N, device="cpu", seed=3)


def _to_np(obs: dict) -> dict:
    return {k: v.numpy() for k, v in obs.items()}


# --- gymnasium contract ------------------------------------------------------------------------
def test_spaces_contain_reset_and_step_outputs(quad):
    obs, info = quad.reset(seed=0)
    assert info == {}  # gymnasium's reset info: nothing to report at a reset
    assert quad.observation_space.contains(_to_np(obs))
    assert quad.single_observation_space["policy"].shape == (obs["policy"].shape[1],)
    assert quad.single_action_space.shape == (12,)
    assert quad.action_space.shape == (N, 12)
    actions = torch.from_numpy(quad.action_space.sample()).clamp(-1, 1)
    obs, rew, term, trunc, info = quad.step(actions)
    assert quad.observation_space.contains(_to_np(obs))
    assert rew.shape == (N,) and rew.dtype == torch.float32
    assert term.shape == trunc.shape == (N,) and term.dtype == trunc.dtype == torch.bool
    for v in obs.values():
        assert v.dtype == torch.float32 and v.device == quad.device and torch.isfinite(v).all()


def test_returned_observations_and_rewards_are_not_overwritten(quad):
    o1, _ = quad.reset(seed=0)
    p1 = o1["policy"].clone()
    o2, r2, *_ = quad.step(torch.zeros(N, 12))
    r2c = r2.clone()
    quad.step(torch.zeros(N, 12))
    assert o1 is not o2 and torch.equal(o1["policy"], p1) and torch.equal(r2, r2c)
    with torch.inference_mode():
        quad.step(torch.zeros(N, 12))
    quad.reset(seed=0)  # inference-mode steps must not poison later resets


def test_metadata_declares_same_step_autoreset(quad):
    assert quad.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert quad.num_envs == N and quad.render_mode is None


def test_same_step_autoreset_and_final_obs():
    env = make("cartpole", 4, device="cpu", seed=0)
    env.reset(seed=0)
    push = torch.ones(4, 1)  # drive every cart one way: the pole falls within a second
    for _ in range(200):
        obs, rew, term, trunc, info = env.step(push)
        if term.any():
            break
    assert term.any(), "a pole must fall under a constant push"
    assert info["_final_obs"].tolist() == (term | trunc).tolist()
    ended = term.nonzero().flatten()
    final = info["final_obs"]["policy"][ended]
    # the terminal observation shows the fallen pole; the returned one is a fresh episode
    assert (final[:, 1].abs() > env.cfg.max_angle).all()
    assert (obs["policy"][ended, 1].abs() <= env.cfg.init_noise + 1e-6).all()
    assert (env.episode_length_buf[ended] == 0).all()


def test_time_out_is_a_truncation_not_a_termination():
    env = make("cartpole", 2, device="cpu", seed=0, cfg={"episode_length_s": 0.1})
    env.reset(seed=0)
    for _ in range(env.max_episode_length):
        obs, rew, term, trunc, info = env.step(torch.zeros(2, 1))
    assert trunc.all() and not term.any()
    assert torch.equal(info["time_outs"], trunc)


def test_seeding_gives_identical_rollouts():
    def rollout(seed):
        env = make("quadruped", 4, device="cpu", seed=seed)
        env.reset(seed=seed)
        gen = torch.Generator().manual_seed(0)
        out = []
        for _ in range(30):
            obs, rew, *_ = env.step(torch.randn(4, 12, generator=gen))
            out.append((obs["policy"].clone(), rew.clone()))
        return out

    a, b, c = rollout(5), rollout(5), rollout(6)
    assert all(torch.equal(x[0], y[0]) and torch.equal(x[1], y[1]) for x, y in zip(a, b, strict=True))
    assert not all(torch.equal(x[0], y[0]) for x, y in zip(a, c, strict=True))


def test_make_vec_and_simrl_make():
    env = gym.make_vec("simrl/Cartpole-v0", num_envs=3, device="cpu")
    assert env.num_envs == 3
    obs, _ = env.reset(seed=1)
    assert obs["policy"].shape == (3, 4)
    env2 = gym.make_vec("simrl/Cartpole-v0", num_envs=2, device="cpu", max_episode_steps=7)
    assert env2.max_episode_length == 7
    assert simrl.make("cartpole", 2, device="cpu").num_envs == 2


def test_unknown_task_and_keys_list_choices():
    valid = r"\['cartpole', 'humanoid', 'inhand_rotate', 'lift', 'quadruped', 'reach'\]"
    with pytest.raises(KeyError, match=rf"unknown task 'quadrupod'; valid: {valid}"):
        make("quadrupod", 2)
    with pytest.raises(KeyError, match=r"unknown QuadrupedCfg keys \['pushh_vel'\]; valid: .*push_vel"):
        make("quadruped", 2, device="cpu", cfg={"pushh_vel": 1.0})
    with pytest.raises(KeyError, match="unknown reward term 'speed'.*valid: .*track_lin_vel"):
        make("quadruped", 2, device="cpu", cfg={"rewards": {"speed": 1.0}})


# --- episode log ------------------------------------------------------------------------------
def test_episode_log_accumulates_on_the_device_until_read():
    """Read once for many steps: the means are over every episode that ended in between."""
    env = make("cartpole", 4, device="cpu", seed=0)
    lengths = []
    for _ in range(150):
        length_s = (env.episode_length_buf + 1).float() * env.dt
        _, _, term, trunc, _ = env.step(torch.ones(4, 1))
        lengths += length_s[term | trunc].tolist()
    log = env.episode_log()
    assert len(lengths) >= 4  # several episodes ended
    assert log["Episode/length_s"] == pytest.approx(sum(lengths) / len(lengths), rel=1e-5)
    # alive earns weight 1 per second: its episode sum / episode_length_s is length_s / 5 s
    assert log["Episode_Reward/alive"] == pytest.approx(log["Episode/length_s"] / 5.0, rel=1e-4)
    assert env.episode_log() == {}  # read clears it


# --- quadruped terms on crafted states ---------------------------------------------------------
def _set_base(env, quat=(1, 0, 0, 0), lin_vel=(0, 0, 0), ang_vel=(0, 0, 0)):
    env.sim.qpos[:, 3:7] = torch.tensor(quat, dtype=env.sim.dtype)
    env.sim.qvel[:, 0:3] = torch.tensor(lin_vel, dtype=env.sim.dtype)
    env.sim.qvel[:, 3:6] = torch.tensor(ang_vel, dtype=env.sim.dtype)
    env.sim.forward()
    env.refresh()


def test_tracking_rewards_peak_at_the_command():
    from simrl.envs.locomotion import track_lin_vel, track_yaw_rate

    env = make("quadruped", 2, device="cpu", seed=0)
    env.reset(seed=0)
    env.fix_command([0.8, 0.0, 0.5])
    _set_base(env, lin_vel=(0.8, 0, 0), ang_vel=(0, 0, 0.5))
    np.testing.assert_allclose(track_lin_vel(env).numpy(), 1.0, atol=1e-5)
    np.testing.assert_allclose(track_yaw_rate(env).numpy(), 1.0, atol=1e-5)
    _set_base(env, lin_vel=(0.3, 0, 0), ang_vel=(0, 0, 0.0))
    np.testing.assert_allclose(track_lin_vel(env).numpy(), np.exp(-0.25 / 0.25), rtol=1e-4)
    np.testing.assert_allclose(track_yaw_rate(env).numpy(), np.exp(-0.25 / 0.25), rtol=1e-4)


def test_base_velocity_is_read_in_the_base_frame():
    env = make("quadruped", 1, device="cpu", seed=0)
    env.reset(seed=0)
    s = np.sqrt(0.5)
    _set_base(env, quat=(s, 0, 0, s), lin_vel=(1.0, 0, 0))  # yawed +90 deg, moving along world x
    np.testing.assert_allclose(env.legged.base_lin_vel_b[0].numpy(), [0, -1, 0], atol=1e-6)
    np.testing.assert_allclose(env.legged.gravity_b[0].numpy(), [0, 0, -1], atol=1e-6)


def test_penalties_and_tilt_termination():
    from simrl.envs.locomotion import ang_vel_xy, lin_vel_z, orientation

    env = make("quadruped", 1, device="cpu", seed=0)
    env.reset(seed=0)
    _set_base(env, lin_vel=(0, 0, 0.5), ang_vel=(0.3, 0.4, 0))
    np.testing.assert_allclose(lin_vel_z(env).numpy(), [0.25], rtol=1e-5)
    np.testing.assert_allclose(ang_vel_xy(env).numpy(), [0.25], rtol=1e-5)
    assert orientation(env).item() < 1e-10 and not env.terminated().item()
    c, s = np.cos(np.pi / 3 + 0.05), np.sin(np.pi / 3 + 0.05)  # rolled past 60 degrees
    _set_base(env, quat=(np.cos((np.pi / 3 + 0.05) / 2), np.sin((np.pi / 3 + 0.05) / 2), 0, 0))
    np.testing.assert_allclose(orientation(env).item(), s**2, rtol=1e-4)
    assert c < 0.5 and env.terminated().item()


def test_trunk_on_the_ground_terminates():
    env = make("quadruped", 1, device="cpu", seed=0)
    env.reset(seed=0)
    env.sim.qpos[0, 2] = 0.05  # upside down, legs in the air: the trunk box carries the weight
    env.sim.qpos[0, 3:7] = torch.tensor([0.0, 1.0, 0.0, 0.0], dtype=env.sim.dtype)
    env.sim.forward()
    env.sim.step(10)
    env.refresh()
    assert env.terminated().item()


def test_nonfinite_world_is_reset_and_counted():
    env = make("quadruped", 4, device="cpu", seed=0)
    env.reset(seed=0)
    env.sim.qvel[1, 8] = float("nan")
    obs, rew, term, trunc, info = env.step(torch.zeros(4, 12))
    assert term.tolist() == [False, True, False, False]
    assert torch.isfinite(rew).all() and rew[1] == 0.0
    assert all(torch.isfinite(v).all() for v in obs.values())
    assert env.unstable_count == 1 and env.episode_log()["sim/unstable_resets"] == 1.0
    assert torch.isfinite(env.sim.qpos).all()


def test_engine_failure_in_some_worlds_resets_them_and_training_goes_on(monkeypatch):
    from simrl.sim import SimError

    env = make("quadruped", 4, device="cpu", seed=0)
    env.reset(seed=0)
    real_step = type(env.sim).step

    def failing_step(nstep=1):  # as mujoco.batch does: the others step, worlds 2 keeps its state
        real_step(env.sim, nstep)
        raise SimError("MuJoCo failed in worlds [2]", worlds=torch.tensor([2]))

    monkeypatch.setattr(env.sim, "step", failing_step)
    with pytest.warns(RuntimeWarning, match=r"failed in worlds \[2\].*resetting them"):
        obs, rew, term, trunc, _ = env.step(torch.zeros(4, 12))
    assert term.tolist() == [False, False, True, False] and rew[2] == 0.0
    assert env.episode_length_buf.tolist() == [1, 1, 0, 1]
    assert env.unstable_count == 1 and env.episode_log()["sim/unstable_resets"] == 1.0
    monkeypatch.undo()
    obs, rew, term, *_ = env.step(torch.zeros(4, 12))
    assert not term.any() and all(torch.isfinite(v).all() for v in obs.values())

    def batch_failure(nstep=1):  # a failure of the whole batch has no worlds to reset: it stops
        raise SimError("buffer overflow")

    monkeypatch.setattr(env.sim, "step", batch_failure)
    with pytest.raises(SimError, match="buffer overflow"):
        env.step(torch.zeros(4, 12))


def test_a_push_shows_in_the_observation_of_the_step_it_happens():
    """The critic sees a push the step it happens, whether or not another env reset then."""
    from simrl.math import quat_rotate_inv

    envs, obs = {}, {}
    for push in (1.0, 0.0):  # and a twin that is never pushed, to see the push itself
        cfg = {"push_interval_s": 0.06, "obs_noise": False, "push_vel": push}
        env = envs[push] = make("quadruped", 4, device="cpu", seed=0, cfg=cfg)
        # the push event, every 3 control steps (none where push_vel is 0)
        assert env.event_manager.interval_steps() == ([3] if push else [])
        env.reset(seed=0)
        for _ in range(2):
            env.step(torch.zeros(4, 12))
        obs[push], _, term, trunc, _ = env.step(torch.zeros(4, 12))  # the push step; no resets
        assert not (term | trunc).any()
    env = envs[1.0]
    qpos, qvel = env.sim.qpos.float(), env.sim.qvel.float()
    v_now = quat_rotate_inv(qpos[:, 3:7], qvel[:, 0:3])
    v_twin = envs[0.0].legged.base_lin_vel_b
    assert (v_now[:, :2] - v_twin[:, :2]).norm(dim=1).min() > 0.05  # they were pushed
    lin = next(t for t in env.obs_layout["critic"] if t.name == "base_lin_vel")  # privileged
    torch.testing.assert_close(obs[1.0]["critic"][:, lin.slice], 2.0 * v_now)  # scale 2


def test_default_pose_follows_the_robot_config():
    """Per-joint angles in the robot config become the home pose: targets, resets, keyframe."""
    from simrl.scene import load_robot

    robot = load_robot("quadruped").to_dict()
    robot["default_pose"] = {".*_thigh_joint": 0.7, ".*_calf_joint": -1.5, ".*": 0.0}
    env = make("quadruped", 2, device="cpu", seed=0, robot=robot, cfg={"joint_pos_scale": (1.0, 1.0)})
    want = np.array([0.0, 0.7, -1.5] * 4)
    np.testing.assert_allclose(env.default_joint_pos.numpy(), want, atol=1e-7)
    np.testing.assert_allclose(env.sim.ctrl[0].numpy(), want, atol=1e-7)
    np.testing.assert_allclose(env.sim.qpos[:, 7:].numpy(), np.tile(want, (2, 1)), atol=1e-7)
    np.testing.assert_allclose(env.model.key_ctrl[0], want)
    assert not np.allclose(load_robot_keyframe_joints(), want)  # the MJCF's own pose differs


def load_robot_keyframe_joints():
    import mujoco

    from simrl import ASSETS

    m = mujoco.MjModel.from_xml_path(str(ASSETS / "quadruped" / "quadruped.xml"))
    return m.key_qpos[0, 7:]


def test_an_old_field_name_is_refused_naming_the_valid_ones():
    from simrl.errors import UnknownNameError

    with pytest.raises(UnknownNameError, match=r"unknown QuadrupedCfg keys \['added_trunk_mass'\]; valid: .*"
                                               r"'added_base_mass'"):
        make("quadruped", 2, device="cpu", cfg={"added_trunk_mass": (0.0, 0.0)})


@pytest.mark.parametrize("robot", ["quadruped", "unitree_go1"])
def test_resets_start_every_geom_above_the_ground(robot):
    """A joint pose scaled by 0.5 stretches the legs below the default pose's feet; the base
    rises by the depth, so no contact starts inside the floor (without it: ~12-14 cm deep)."""
    def deepest(clear: bool) -> float:
        env = simrl.make("quadruped", 3, seed=0, robot=robot, cfg={
            "joint_pos_scale": (0.5, 0.5), "spawn_clear": clear, "push_vel": 0.0})
        env.reset()
        depth = 0.0
        for w in range(3):
            d = env.sim.get_mjdata(w)
            depth = max([depth, *(-d.contact[i].dist for i in range(d.ncon))])
        return depth

    assert deepest(False) > 0.1
    assert deepest(True) < 1e-3


def test_a_biped_starts_each_episode_at_rest_a_quadruped_with_a_random_base_velocity():
    """reset_base_vel: legged_gym's +-0.5 per axis for the quadruped; a humanoid (Isaac Lab's G1,
    H1) starts at rest, and an old run without the field replays with the 0.5 it trained with."""
    def root_vel(task: str, **cfg) -> torch.Tensor:
        env = simrl.make(task, 64, device="cpu", seed=0, cfg=cfg or None)
        env.reset()
        return env.sim.qvel[:, env.legged.root_dof : env.legged.root_dof + 6].float()

    quad = root_vel("quadruped")
    assert quad.abs().max() <= 0.5 and quad.std() > 0.2  # uniform on [-0.5, 0.5]: std 0.29
    assert root_vel("humanoid").abs().max() == 0.0
    assert root_vel("humanoid", reset_base_vel=0.3).abs().max().item() == pytest.approx(0.3, abs=0.02)
    from simrl.envs.locomotion import HumanoidCfg
    from simrl.errors import ConfigError
    assert HumanoidCfg.since["reset_base_vel"] == 0.5
    for bad in (-0.1, float("nan")):
        with pytest.raises(ConfigError, match="reset_base_vel must be a finite speed >= 0"):
            simrl.make("humanoid", 1, device="cpu", cfg={"reset_base_vel": bad})


def test_the_command_curriculum_widens_the_ranges_when_tracking_is_earned():
    """Commands are the ranges times a level that rises by `step` once per episode length in
    which the ended episodes earned >= `threshold` of track_lin_vel's best (per second), and
    stays where they did not; a resumed run keeps its level (it is env state)."""
    cfg = {"command_curriculum": {"start": 0.5, "step": 0.25, "threshold": 0.6}, "episode_length_s": 0.2}
    env = simrl.make("quadruped", 4, device="cpu", seed=0, cfg=cfg)
    assert float(env.command_terms["base_velocity"].level) == 0.5 and env.max_episode_length == 10
    env.command_terms["base_velocity"].resample(env, torch.ones(4, dtype=torch.bool))
    lo, hi = env.cfg.lin_vel_x
    assert (env.command()[:, 0] >= 0.5 * lo - 1e-6).all() and (env.command()[:, 0] <= 0.5 * hi + 1e-6).all()
    col = list(env.cfg.rewards).index("track_lin_vel")
    best = env.cfg.rewards["track_lin_vel"] * env.cfg.episode_length_s  # a whole episode at the command

    def window(share: float) -> float:
        for _ in range(env.max_episode_length):
            env.reward_manager.sums[:, col] = share * best
            term = env.curriculum_manager.terms["command_level"]
            term.update(env, torch.tensor([True, False, True, False]))
        return float(env.command_terms["base_velocity"].level)

    assert window(0.5) == 0.5  # under the threshold: no rise
    assert window(0.7) == 0.75 and window(0.9) == 1.0 and window(0.9) == 1.0  # capped at the full ranges
    state = env.state_dict()
    fresh = simrl.make("quadruped", 4, device="cpu", seed=0, cfg=cfg)
    fresh.load_state_dict(state)
    assert float(fresh.command_terms["base_velocity"].level) == 1.0
    assert env.episode_log().get("Curriculum/command_level") == 1.0
    from simrl.errors import ConfigError

    with pytest.raises(ConfigError, match="command_curriculum takes start, step and threshold"):
        simrl.make("quadruped", 2, device="cpu", cfg={"command_curriculum": {"start": 0.0}})
