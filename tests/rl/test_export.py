"""Export: ONNX round trip and metadata, the torch/onnxruntime parity check, observation groups,
and clear errors for bad input. The exported policies are tests/conftest.py's fixtures; what
runs them on the robot side (simrl.deploy, sim-to-sim) is tests/deploy."""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from simrl import CONFIGS
from simrl.rl.app import export, train
from simrl.rl.checkpoint import CheckpointError
from simrl.rl.export import ExportError, sha256


def _compose(name, *overrides):
    with initialize_config_dir(config_dir=str(CONFIGS), version_base=None):
        return compose(name, overrides=list(overrides))


def test_onnx_has_dynamic_batch_and_metadata(quad_export):
    run_dir, report = quad_export
    model = onnx.load(report["onnx"])
    (inp,), (out,) = model.graph.input, model.graph.output
    assert inp.name == "obs" and out.name == "actions"
    assert inp.type.tensor_type.shape.dim[0].dim_param  # symbolic batch axis
    meta = json.loads({p.key: p.value for p in model.metadata_props}["simrl"])
    sidecar = json.loads((run_dir / "export" / "policy.json").read_text())
    onnx_sha256 = sidecar.pop("onnx_sha256")  # the sidecar pins the file that holds the rest
    assert meta == sidecar and onnx_sha256 == sha256(run_dir / "export" / "policy.onnx")
    assert meta["task"] == "quadruped" and meta["obs_dim"] == 53 and meta["num_actions"] == 12
    assert [t["name"] for t in meta["obs_terms"]][:3] == ["base_ang_vel", "projected_gravity", "command"]
    assert meta["action"]["joint_names"][:3] == ["FR_hip_joint", "FR_thigh_joint", "FR_calf_joint"]
    assert len(meta["default_joint_pos"]) == 12 and meta["action"]["scale"] == 0.25
    assert meta["control_dt"] == pytest.approx(0.02) and meta["decimation"] == 4
    assert len(meta["checkpoint_sha256"]) == 64 and meta["versions"]["mujoco"] == "4.0.0"
    session = ort.InferenceSession(report["onnx"])
    for batch in (1, 7):
        y = session.run(None, {"obs": np.zeros((batch, 53), np.float32)})[0]
        assert y.shape == (batch, 12)


def test_export_parity_is_checked_and_reported(quad_export):
    _, report = quad_export
    assert report["num_checked"] >= 1000 and report["max_abs_diff"] <= 1e-5


def test_an_export_that_fails_its_parity_check_is_removed(quad_export, tmp_path, monkeypatch):
    run_dir, _ = quad_export
    real = ort.InferenceSession

    class Off(real):  # an onnxruntime that computes each action 1e-3 off
        def run(self, names, feeds):
            return [y + 1e-3 for y in super().run(names, feeds)]

    monkeypatch.setattr(ort, "InferenceSession", Off)
    out = tmp_path / "bad_export"
    with pytest.raises(ExportError, match=r"disagrees with the torch policy.*the export was removed"):
        export(_compose("export", f"checkpoint={run_dir}", "num_envs=16", f"out_dir={out}"))
    assert not (out / "policy.onnx").exists() and not (out / "policy.json").exists()


def test_bad_export_input(quad_export, tmp_path):
    run_dir, report = quad_export
    with pytest.raises(ValueError, match="unknown export format 'tflite'; valid: onnx, tensorrt"):
        export(_compose("export", f"checkpoint={run_dir}", "format=tflite"))
    corrupt = tmp_path / "model_1.pt"
    corrupt.write_bytes(b"\x00garbage")
    with pytest.raises(CheckpointError, match="could not read checkpoint"):
        export(_compose("export", f"checkpoint={corrupt}"))
    with pytest.raises(CheckpointError, match="no checkpoint or run dir"):
        export(_compose("export", f"checkpoint={tmp_path / 'nope'}"))


def test_tensorrt_without_gpu_prints_the_trtexec_command(quad_export):
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: the engine would really be built")
    run_dir, _ = quad_export
    with pytest.raises(ExportError, match=r"trtexec --onnx=.*policy.onnx .*--fp16 .*obs:1024x53"):
        export(_compose("export", f"checkpoint={run_dir}", "format=tensorrt", "precision=fp16"))
    with pytest.raises(ExportError, match=r"policy.fp32.engine --noTF32 "):
        export(_compose("export", f"checkpoint={run_dir}", "format=tensorrt", "precision=fp32"))


def test_export_follows_the_actors_observation_groups(tmp_path):
    """An actor reading the critic group (privileged state): export follows the actor's groups
    and refuses, naming the first term no robot reading gives (nothing is written)."""
    run_dir = tmp_path / "quad_critic_actor"
    train(_compose("train", "task=quadruped", "num_envs=16", "max_iterations=1", "progress=false",
                   "device=cpu", "agent.obs_groups.actor=[critic]", "agent.num_steps_per_env=4"), run_dir)
    with pytest.raises(ExportError, match=r"term 'ground_friction' of group 'critic' declares no reading.*"
                                          r"the policy reads \['critic'\]"):
        export(_compose("export", f"checkpoint={run_dir}", "num_envs=16"))
    assert not (run_dir / "export" / "policy.onnx").exists()


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
    with pytest.raises(CheckpointError, match=r"expects observations \{'policy': 53, 'critic': 62\}.*"
                                              r"\{'policy': 15, 'critic': 3\}"):
        export(_compose("export", f"checkpoint={resized}", "num_envs=8"))
