"""Export a trained policy for the robot: ONNX with a dynamic batch axis, metadata, parity check.

`policy.onnx` maps `obs: (batch, n_obs)` to `actions: (batch, n_act)`, with the observation
normalizer folded in. Everything the robot needs to build the training observation and apply
the actions is stored twice: in the ONNX `metadata_props` (key `simrl`, JSON) and in the sidecar
`policy.json`. An export is only declared done once onnxruntime matches the torch policy on
observations recorded from the env.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.metadata
import json
import logging
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import torch

from simrl.env import EnvBatch

FORMATS = ("onnx", "tensorrt")
PARITY_ATOL = 1e-5


class ExportError(RuntimeError):
    """The exported artifact does not reproduce the policy (or cannot be built here)."""


class OnnxPolicy(torch.nn.Module):
    """obs -> normalizer -> MLP -> deterministic action (the Gaussian's mean)."""

    def __init__(self, actor) -> None:
        super().__init__()
        self.obs_normalizer = copy.deepcopy(actor.obs_normalizer)
        self.mlp = copy.deepcopy(actor.mlp)
        dist = actor.distribution
        self.head = dist.as_deterministic_output_module() if dist is not None else torch.nn.Identity()

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.head(self.mlp(self.obs_normalizer(obs)))


def sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _version(pkg: str) -> str:
    try:
        return importlib.metadata.version(pkg)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def policy_metadata(env: EnvBatch, checkpoint: str | Path, group: str = "policy") -> dict[str, Any]:
    """Everything deploy needs, as JSON-able data."""
    layout = [
        {"name": n, "start": s.start, "stop": s.stop, "scale": sc}
        for n, s, sc, _ in env.obs_layout[group]
    ]
    return {
        "format_version": 1,
        "task": env.task_name,
        "obs_group": group,
        "obs_dim": layout[-1]["stop"],
        "obs_terms": layout,
        "obs_clip": float(env.cfg.obs_clip),
        "num_actions": env.num_actions,
        "action": env.action_spec(),
        "default_joint_pos": env.action_offset.tolist(),
        "control_dt": env.dt,
        "physics_dt": float(env.model.opt.timestep),
        "decimation": env.cfg.decimation,
        "versions": {p: _version(p) for p in
                     ("simrl", "torch", "mujoco", "mujoco-warp", "rsl-rl-lib", "onnx", "onnxruntime")},
        "checkpoint": str(checkpoint),
        "checkpoint_sha256": sha256(checkpoint),
    }


@torch.inference_mode()
def record_observations(env: EnvBatch, policy, n: int, group: str = "policy") -> np.ndarray:
    """At least `n` observations of `group` from rolling the policy out (with resets)."""
    env.reset()
    obs = env.compute_observations()
    rows = []
    while sum(len(r) for r in rows) < n:
        rows.append(obs[group].cpu().numpy().copy())
        obs, *_ = env.step(policy(obs))
    return np.concatenate(rows)[: max(n, 1)]


def export_onnx(
    env: EnvBatch, actor, checkpoint: str | Path, out_dir: str | Path, num_check: int = 1000
) -> dict[str, Any]:
    """Write out_dir/policy.onnx + policy.json; verify with onnxruntime. Returns a report."""
    import onnx
    import onnxruntime as ort

    for name in ("onnx_ir", "onnxscript", "torch.onnx", "torch.export"):
        logging.getLogger(name).setLevel(logging.WARNING)  # the exporter is chatty at INFO
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    meta = policy_metadata(env, checkpoint)
    module = OnnxPolicy(actor).to("cpu").eval()
    onnx_path = out_dir / "policy.onnx"
    example = torch.zeros(2, meta["obs_dim"])
    torch.onnx.export(
        module, (example,), str(onnx_path), input_names=["obs"], output_names=["actions"],
        dynamic_shapes={"obs": {0: torch.export.Dim("batch")}}, opset_version=18,
        dynamo=True, external_data=False, verbose=False,
    )
    model = onnx.load(str(onnx_path))
    del model.metadata_props[:]
    entry = model.metadata_props.add()
    entry.key, entry.value = "simrl", json.dumps(meta)
    onnx.save(model, str(onnx_path))
    (out_dir / "policy.json").write_text(json.dumps(meta, indent=2))

    # parity: onnxruntime vs the torch actor on observations the env produced
    from tensordict import TensorDict

    def torch_policy(obs):
        return actor(TensorDict(dict(obs), batch_size=[env.num_envs]))

    obs = record_observations(env, torch_policy, num_check)
    with torch.inference_mode():
        want = module(torch.from_numpy(obs)).numpy()
    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    got = session.run(["actions"], {"obs": obs})[0]
    err = float(np.abs(got - want).max())
    if not np.isfinite(err) or err > PARITY_ATOL:
        raise ExportError(
            f"onnxruntime disagrees with the torch policy on {len(obs)} recorded observations: "
            f"max |diff| = {err:.3g} > {PARITY_ATOL}. The export at {onnx_path} is not usable."
        )
    return {"onnx": str(onnx_path), "json": str(out_dir / "policy.json"),
            "num_checked": len(obs), "max_abs_diff": err}


def trtexec_command(onnx_path: str | Path, precision: str) -> str:
    engine = Path(onnx_path).with_suffix(f".{precision}.engine")
    flag = " --fp16" if precision == "fp16" else ""
    return (f"trtexec --onnx={onnx_path} --saveEngine={engine}{flag} "
            f"--minShapes=obs:1x{{n_obs}} --optShapes=obs:1x{{n_obs}} --maxShapes=obs:64x{{n_obs}}")


def build_tensorrt(onnx_path: str | Path, precision: str = "fp16") -> dict[str, Any]:
    """Serialize a TensorRT engine where TensorRT and a CUDA GPU exist; else explain how."""
    if precision not in ("fp16", "fp32"):
        raise ValueError(f"unknown precision '{precision}'; valid: fp16, fp32")
    meta = json.loads(Path(onnx_path).with_name("policy.json").read_text())
    cmd = trtexec_command(onnx_path, precision).replace("{n_obs}", str(meta["obs_dim"]))
    try:
        import tensorrt  # noqa: F401
    except ImportError:
        tensorrt = None
    if tensorrt is None or not torch.cuda.is_available():
        why = "TensorRT is not installed" if tensorrt is None else "no CUDA GPU is visible"
        raise ExportError(
            f"cannot build a TensorRT engine here: {why}. On the Jetson (JetPack ships TensorRT)"
            f" copy {onnx_path} and policy.json over and run:\n  {cmd}"
        )
    if shutil.which("trtexec"):
        subprocess.run(cmd.split(), check=True)
        return {"engine": cmd.split("--saveEngine=")[1].split()[0], "command": cmd}
    raise ExportError(f"TensorRT Python found but trtexec is not on PATH; run:\n  {cmd}")

