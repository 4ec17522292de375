"""Export and deploy: ONNX round trip and metadata, parity, deploy observation equality,
sim-to-sim, and clear errors for bad input."""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from simrl import ROOT
from simrl.deploy import DeployPolicy, load_metadata, projected_gravity
from simrl.registry import make
from simrl.rl.app import export, policy_from_checkpoint, train
from simrl.rl.export import ExportError
from simrl.rl.runner import CheckpointError

CONFIGS = str(ROOT / "configs")


def _compose(name, *overrides):
    with initialize_config_dir(config_dir=CONFIGS, version_base=None):
        return compose(name, overrides=list(overrides))


@pytest.fixture(scope="module")
def quad_export(tmp_path_factory):
    """A quadruped policy after one iteration (untrained is fine for parity), exported."""
    run_dir = tmp_path_factory.mktemp("quad_run")
    cfg = _compose("train", "task=quadruped", "num_envs=16", "max_iterations=1", "progress=false",
                   "device=cpu", "agent.num_steps_per_env=4")
    train(cfg, run_dir)
    report = export(_compose("export", f"checkpoint={run_dir}", "num_envs=16"))
    return run_dir, report


def test_onnx_has_dynamic_batch_and_metadata(quad_export):
    run_dir, report = quad_export
    model = onnx.load(report["onnx"])
    (inp,), (out,) = model.graph.input, model.graph.output
    assert inp.name == "obs" and out.name == "actions"
    assert inp.type.tensor_type.shape.dim[0].dim_param  # symbolic batch axis
    meta = json.loads({p.key: p.value for p in model.metadata_props}["simrl"])
    assert meta == json.loads((run_dir / "export" / "policy.json").read_text())
    assert meta["task"] == "quadruped" and meta["obs_dim"] == 48 and meta["num_actions"] == 12
    assert [t["name"] for t in meta["obs_terms"]][:3] == ["base_lin_vel", "base_ang_vel", "projected_gravity"]
    assert meta["action"]["joint_names"][:3] == ["FR_hip_joint", "FR_thigh_joint", "FR_calf_joint"]
    assert len(meta["default_joint_pos"]) == 12 and meta["action"]["scale"] == 0.25
    assert meta["control_dt"] == pytest.approx(0.02) and meta["decimation"] == 4
    assert len(meta["checkpoint_sha256"]) == 64 and meta["versions"]["mujoco"] == "4.0.0"
    session = ort.InferenceSession(report["onnx"])
    for batch in (1, 7):
        y = session.run(None, {"obs": np.zeros((batch, 48), np.float32)})[0]
        assert y.shape == (batch, 12)


def test_export_parity_is_checked_and_reported(quad_export):
    _, report = quad_export
    assert report["num_checked"] >= 1000 and report["max_abs_diff"] <= 1e-5


def test_deploy_observation_and_actions_match_the_env(quad_export):
    run_dir, report = quad_export
    env = make("quadruped", 64, device="cpu", seed=9, cfg={"obs_noise": False})
    agent = OmegaConf.to_container(OmegaConf.load(run_dir / "config.yaml").agent)
    policy, _ = policy_from_checkpoint(env, run_dir, agent)
    deploy = DeployPolicy(report["onnx"])
    env.reset(seed=9)
    obs = env.compute_observations()
    worst_obs = worst_act = 0.0
    n = 0
    gen = torch.Generator().manual_seed(0)
    with torch.inference_mode():
        for _ in range(16):  # 16 steps x 64 envs = 1024 states
            q, v = env.sim.qpos.numpy(), env.sim.qvel.numpy()
            readings = {
                "joint_pos": q[:, 7:], "joint_vel": v[:, 6:], "gyro": v[:, 3:6], "quat": q[:, 3:7],
                "base_lin_vel": env.base_lin_vel_b.numpy(), "command": env.commands.numpy(),
                "last_action": env.actions.numpy(),
            }
            got = deploy.observation(readings)
            worst_obs = max(worst_obs, float(np.abs(got - obs["policy"].numpy()).max()))
            want_act = policy(obs).numpy()
            worst_act = max(worst_act, float(np.abs(deploy.infer(got) - want_act).max()))
            n += len(got)
            obs, *_ = env.step(torch.from_numpy(want_act) + 0.3 * torch.randn(64, 12, generator=gen))
    assert n >= 1000
    assert worst_obs <= 1e-5, worst_obs
    assert worst_act <= 1e-5, worst_act


def test_deploy_targets_use_offset_scale_and_gains(quad_export):
    _, report = quad_export
    deploy = DeployPolicy(report["onnx"])
    readings = {"joint_pos": np.asarray(deploy.meta["default_joint_pos"]), "joint_vel": np.zeros(12),
                "gyro": np.zeros(3), "quat": np.array([1.0, 0, 0, 0]), "base_lin_vel": np.zeros(3),
                "command": np.zeros(3)}
    targets, kp, kd = deploy.act(readings)
    action = deploy.last_action
    np.testing.assert_allclose(targets, deploy.offset + 0.25 * action, atol=1e-6)
    assert kp.shape == kd.shape == (12,) and (kp > 0).all() and (kd >= 0).all()


def test_projected_gravity_matches_the_env():
    env = make("quadruped", 4, device="cpu", seed=2)
    env.reset(seed=2)
    np.testing.assert_allclose(projected_gravity(env.base_quat.numpy()), env.gravity_b.numpy(), atol=1e-6)


def test_bad_export_input(quad_export, tmp_path):
    run_dir, report = quad_export
    with pytest.raises(ValueError, match="unknown export format 'tflite'; valid: onnx, tensorrt"):
        export(_compose("export", f"checkpoint={run_dir}", "format=tflite"))
    corrupt = tmp_path / "model_1.pt"
    corrupt.write_bytes(b"\x00garbage")
    with pytest.raises(CheckpointError, match="could not read checkpoint"):
        export(_compose("export", f"checkpoint={corrupt}"))
    with pytest.raises(FileNotFoundError, match="no exported policy"):
        DeployPolicy(tmp_path / "missing.onnx")
    with pytest.raises(CheckpointError, match="no checkpoint or run dir"):
        export(_compose("export", f"checkpoint={tmp_path / 'nope'}"))


def test_tensorrt_without_gpu_prints_the_trtexec_command(quad_export):
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the engine would really be built")
    run_dir, _ = quad_export
    with pytest.raises(ExportError, match=r"trtexec --onnx=.*policy.onnx .*--fp16 .*obs:1024x48"):
        export(_compose("export", f"checkpoint={run_dir}", "format=tensorrt", "precision=fp16"))
    with pytest.raises(ExportError, match=r"policy.fp32.engine --noTF32 "):
        export(_compose("export", f"checkpoint={run_dir}", "format=tensorrt", "precision=fp32"))


def test_metadata_readable_from_onnx_alone(quad_export, tmp_path):
    _, report = quad_export
    lone = tmp_path / "policy.onnx"
    lone.write_bytes(open(report["onnx"], "rb").read())  # no sidecar JSON beside it
    assert load_metadata(lone)["task"] == "quadruped"


@pytest.fixture(scope="module")
def cartpole_export(tmp_path_factory):
    """A briefly trained cartpole, exported."""
    run_dir = tmp_path_factory.mktemp("cartpole")
    train(_compose("train", "task=cartpole", "num_envs=64", "max_iterations=3", "progress=false",
                   "device=cpu"), run_dir)
    return run_dir, export(_compose("export", f"checkpoint={run_dir}", "num_envs=8"))


def test_sim2sim_on_cartpole(cartpole_export):
    from simrl.rl.sim2sim import run_sim2sim

    _, report = cartpole_export
    r = run_sim2sim(report["onnx"], episodes=3, seed=0)
    assert r["episodes"] == 3 and 0 <= r["fall_share"] <= 1 and r["mean_steps"] >= 1


def test_export_follows_the_actors_observation_groups(tmp_path):
    """An actor reading the critic group (privileged foot contacts) exports that layout."""
    run_dir = tmp_path / "quad_critic_actor"
    train(_compose("train", "task=quadruped", "num_envs=16", "max_iterations=1", "progress=false",
                   "device=cpu", "agent.num_steps_per_env=4", "agent.obs_groups.actor=[critic]"), run_dir)
    report = export(_compose("export", f"checkpoint={run_dir}", "num_envs=16"))
    meta = load_metadata(report["onnx"])
    assert meta["obs_groups"] == ["critic"] and meta["obs_dim"] == 52
    assert meta["obs_terms"][-1] == {"name": "foot_contact", "start": 48, "stop": 52, "scale": 1.0}
    assert report["num_checked"] >= 1000 and report["max_abs_diff"] <= 1e-5
    deploy = DeployPolicy(report["onnx"])
    readings = {"joint_pos": np.asarray(meta["default_joint_pos"]), "joint_vel": np.zeros(12),
                "gyro": np.zeros(3), "quat": np.array([1.0, 0, 0, 0]), "base_lin_vel": np.zeros(3),
                "command": np.zeros(3), "foot_contact": np.ones(4)}
    assert deploy.observation(readings).shape == (52,)


def test_sim2sim_imu_reads_the_same_instant_as_the_encoders():
    import mujoco

    from simrl.rl.sim2sim import Readings, control_step
    from simrl.robot import assemble

    scene = assemble("quadruped")
    m = scene.model
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    d.qvel[:6] = [0.4, -0.2, 0.1, 0.8, -0.5, 1.2]  # a moving, tumbling base
    mujoco.mj_forward(m, d)
    read = Readings(m, {"robot": scene.facts()})
    for _ in range(3):
        control_step(m, d, m.key_ctrl[0], 4)
        r = read(d, (0.0, 0.0, 0.0))
        np.testing.assert_allclose(r["gyro"], d.qvel[3:6], atol=1e-9)  # the IMU sits at the base origin
        np.testing.assert_allclose(r["quat"], d.qpos[3:7], atol=1e-9)
        v_b = np.zeros(3)
        mujoco.mju_rotVecQuat(v_b, d.qvel[:3], d.qpos[3:7] * [1, -1, -1, -1])
        np.testing.assert_allclose(r["base_lin_vel"], v_b, atol=1e-9)
        np.testing.assert_allclose(r["joint_pos"], d.qpos[7:], atol=0)


def test_export_refuses_a_checkpoint_that_does_not_fit_its_run_config(quad_export, cartpole_export, tmp_path):
    """A checkpoint beside another task's config.yaml, or one whose observations differ."""
    import shutil

    quad_dir, _ = quad_export
    cart_dir, _ = cartpole_export
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    shutil.copy(quad_dir / "config.yaml", mixed / "config.yaml")
    shutil.copy(cart_dir / "model_3.pt", mixed / "model_3.pt")
    with pytest.raises(CheckpointError, match="trained on task 'cartpole', not 'quadruped'"):
        export(_compose("export", f"checkpoint={mixed}", "num_envs=8"))

    resized = tmp_path / "resized"
    resized.mkdir()
    cfg = OmegaConf.load(quad_dir / "config.yaml")
    cfg.task.cfg = {"observations": {"policy": [{"name": "base_ang_vel"}, {"name": "joint_pos"}],
                                     "critic": [{"name": "base_ang_vel"}]}}
    OmegaConf.save(cfg, resized / "config.yaml")
    shutil.copy(quad_dir / "model_1.pt", resized / "model_1.pt")
    with pytest.raises(CheckpointError, match=r"expects observations \{'policy': 48, 'critic': 52\}.*"
                                              r"\{'policy': 15, 'critic': 3\}"):
        export(_compose("export", f"checkpoint={resized}", "num_envs=8"))
