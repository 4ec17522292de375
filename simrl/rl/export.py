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
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from simrl.deploy.runtime import FORMAT_VERSION, required_readings
from simrl.env import EnvBatch
from simrl.errors import UserError
from simrl.managers.observation import deploy_read

FORMATS = ("onnx", "tensorrt")
PARITY_ATOL = 1e-5
PARITY_RTOL = 1e-5  # of each action's size: float32 rounding grows with it (a gripper's action of 10)



class ExportError(UserError, RuntimeError):
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


def policy_metadata(env: EnvBatch, checkpoint: str | Path, groups: list[str]) -> dict[str, Any]:
    """Everything deploy needs, as JSON-able data (`deploy_metadata` plus provenance)."""
    return {
        **deploy_metadata(env, groups),
        "versions": {p: _version(p) for p in
                     ("simrl", "torch", "mujoco", "mujoco-warp", "rsl-rl-lib", "onnx", "onnxruntime")},
        "checkpoint": str(checkpoint),
        "checkpoint_sha256": sha256(checkpoint),
    }


def deploy_metadata(env: EnvBatch, groups: list[str]) -> dict[str, Any]:
    """What a robot-side program needs to run a policy of this env. The policy's input is its
    observation `groups` concatenated in order (as rsl-rl's model reads them), so the term
    layout is too; the robot facts and the task's deploy spec come from the env itself."""
    layout, offset, docs = [], 0, {}
    for group in groups:
        if group not in env.obs_layout:
            raise ExportError(f"the policy reads observation group '{group}' but task "
                              f"'{env.task_name}' has groups {sorted(env.obs_layout)}")
        for slot in env.obs_layout[group]:
            s = slot.slice
            read = deploy_read(env.OBS_TERMS[slot.func], slot.params)
            if read is None:
                raise ExportError(f"observation term '{slot.name}' of group '{group}' declares no reading "
                                  f"(its @observation(read=...)), so a robot cannot supply it: the "
                                  f"policy reads {groups}; give the term a reading, or keep it out of the "
                                  f"actor's groups (privileged state belongs to the critic)")
            read = dict(read)
            doc = read.pop("doc", "")
            read.pop("sim", None)  # how sim-to-sim makes the reading: deploy.sim_readings
            names = [read["reading"]] if isinstance(read["reading"], str) else read["reading"]
            for name in names:  # one doc for one reading, or {reading: doc}
                text = doc.get(name, "") if isinstance(doc, dict) else doc
                if text and not docs.get(name):
                    docs[name] = text
            layout.append({"name": slot.name, "start": offset + s.start, "stop": offset + s.stop,
                           "scale": slot.scale, "history": slot.history, "width": slot.width,
                           "clip": slot.clip, "delay": slot.delay,
                           "read": read})
        offset = layout[-1]["stop"]
    return {
        "format_version": FORMAT_VERSION,  # the one the deploy runtime reads
        "task": env.task_name,
        "obs_groups": list(groups),
        "obs_dim": offset,
        "obs_terms": layout,
        "obs_clip": float(env.cfg.obs_clip),
        "readings": required_readings({"obs_terms": layout}),
        "reading_docs": {k: v for k, v in docs.items() if k != "last_action"},
        "num_actions": env.num_actions,
        "action": env.action_spec(),
        "default_joint_pos": env.action_offset.tolist(),
        "control_dt": env.dt,
        "deploy": env.deploy_spec(),
        "robot": env.scene.facts() if getattr(env, "scene", None) is not None else None,
        "physics_dt": float(env.model.opt.timestep),
        "decimation": env.decimation,
    }


@torch.inference_mode()
def record_observations(env: EnvBatch, policy, n: int, groups: list[str]) -> np.ndarray:
    """At least `n` policy inputs (`groups` concatenated) from rolling the policy out."""
    env.reset()
    obs = env.compute_observations()
    rows = []
    while sum(len(r) for r in rows) < n:
        rows.append(torch.cat([obs[g] for g in groups], dim=1).cpu().numpy())
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
    groups = list(getattr(actor, "obs_groups", None) or ["policy"])  # rsl-rl MLPModel's inputs
    meta = policy_metadata(env, checkpoint, groups)
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
    # the sidecar also pins the ONNX file itself: the deploy runtime refuses a changed one
    sidecar = {**meta, "onnx_sha256": sha256(onnx_path)}
    (out_dir / "policy.json").write_text(json.dumps(sidecar, indent=2))

    # parity: onnxruntime vs the torch actor on observations the env produced
    from tensordict import TensorDict

    def torch_policy(obs):
        return actor(TensorDict(dict(obs), batch_size=[env.num_envs]))

    obs = record_observations(env, torch_policy, num_check, groups)
    with torch.inference_mode():
        want = module(torch.from_numpy(obs)).numpy()
    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    got = session.run(["actions"], {"obs": obs})[0]
    diff = np.abs(got - want)
    err = float(diff.max())
    bound = PARITY_ATOL + PARITY_RTOL * np.abs(want)
    if not np.isfinite(err) or (diff > bound).any():
        worst = np.unravel_index(int(np.argmax(diff - bound)), diff.shape)
        onnx_path.unlink(missing_ok=True)  # a policy that failed its check is not left to be used
        (out_dir / "policy.json").unlink(missing_ok=True)
        raise ExportError(
            f"onnxruntime disagrees with the torch policy on {len(obs)} recorded observations: "
            f"|diff| {float(diff[worst]):.3g} on an action of {float(want[worst]):.3g} (allowed: "
            f"{PARITY_ATOL} + {PARITY_RTOL} x |action|); the export was removed from {out_dir}"
        )
    return {"onnx": str(onnx_path), "json": str(out_dir / "policy.json"),
            "num_checked": len(obs), "max_abs_diff": err}


def latency_us(fn, runs: int, warmup: int = 50) -> np.ndarray:
    """Microseconds per call of `fn`, `runs` calls after `warmup` untimed ones."""
    for _ in range(warmup):
        fn()
    out = np.empty(runs)
    for i in range(runs):
        t = time.perf_counter()
        fn()
        out[i] = time.perf_counter() - t
    return out * 1e6


TRT_TOL = {"fp32": 1e-4, "fp16": 2e-2}  # max |engine - onnxruntime| accepted per precision
TRT_MAX_BATCH = 1024  # the engine's batch range is 1..TRT_MAX_BATCH (the robot runs batch 1)


def trtexec_command(onnx_path: str | Path, precision: str, n_obs: int) -> str:
    """The trtexec line that builds the same engine as `build_tensorrt` (on the Jetson)."""
    engine = Path(onnx_path).with_suffix(f".{precision}.engine")
    flag = " --fp16" if precision == "fp16" else " --noTF32"  # fp32 means fp32, not TF32
    return (f"trtexec --onnx={onnx_path} --saveEngine={engine}{flag} --minShapes=obs:1x{n_obs} "
            f"--optShapes=obs:1x{n_obs} --maxShapes=obs:{TRT_MAX_BATCH}x{n_obs}")


def build_tensorrt(onnx_path: str | Path, precision: str = "fp16",
                   check_obs: np.ndarray | None = None) -> dict[str, Any]:
    """Serialize a TensorRT engine where TensorRT and a CUDA GPU exist; else explain how.

    With TensorRT (>= 8.6) present the engine is built with its Python API, checked against
    onnxruntime on `check_obs` within TRT_TOL[precision], and timed end to end for a single
    observation (host -> GPU -> host). Written for the Jetson / GPU workstation path and not yet
    run on one: this repository's CI has neither, so only the refusal (with the exact trtexec
    command) is exercised there.
    """
    if precision not in TRT_TOL:
        raise ValueError(f"unknown precision '{precision}'; valid: {', '.join(TRT_TOL)}")
    import onnx

    onnx_path = Path(onnx_path)
    graph = onnx.load(str(onnx_path), load_external_data=False).graph
    n_obs, num_actions = (int(t.type.tensor_type.shape.dim[1].dim_value)
                          for t in (graph.input[0], graph.output[0]))
    cmd = trtexec_command(onnx_path, precision, n_obs)
    try:
        import tensorrt as trt
    except ImportError:
        trt = None
    if trt is None or not torch.cuda.is_available():
        why = "TensorRT is not installed" if trt is None else "no CUDA GPU is visible"
        raise ExportError(
            f"cannot build a TensorRT engine here: {why}. On the Jetson (JetPack ships TensorRT)"
            f" copy {onnx_path} and policy.json over and run:\n  {cmd}"
        )
    engine_path = onnx_path.with_suffix(f".{precision}.engine")
    engine_path.write_bytes(_build_engine(trt, onnx_path, precision, n_obs))
    run = _TrtRunner(trt, engine_path, num_actions)

    import onnxruntime as ort

    obs = check_obs if check_obs is not None else np.random.default_rng(0).normal(size=(1000, n_obs))
    obs = obs.astype(np.float32)
    want = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"]).run(None, {"obs": obs})[0]
    got = np.concatenate([run(obs[i : i + TRT_MAX_BATCH]) for i in range(0, len(obs), TRT_MAX_BATCH)])
    err = float(np.abs(got - want).max())
    if not np.isfinite(err) or err > TRT_TOL[precision]:
        raise ExportError(f"TensorRT {precision} engine differs from ONNX by {err:.3g} "
                          f"> {TRT_TOL[precision]} on {len(obs)} observations")
    times = latency_us(lambda: run(obs[:1]), runs=1000)
    return {"engine": str(engine_path), "max_abs_diff_vs_onnx": err, "trtexec": cmd,
            "latency_us_median": float(np.median(times)), "latency_us_p99": float(np.percentile(times, 99))}


def _build_engine(trt, onnx_path: Path, precision: str, n_obs: int) -> bytes:
    """A serialized engine for `onnx_path`: batch 1..TRT_MAX_BATCH, fp16 or strict fp32."""
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    major = int(trt.__version__.split(".")[0])
    # TensorRT 10 networks are always explicit-batch (the flag is ignored); 8.x needs it set
    flags = 0 if major >= 10 else 1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH)
    network = builder.create_network(flags)
    parser = trt.OnnxParser(network, logger)
    if not parser.parse(onnx_path.read_bytes()):
        errors = [str(parser.get_error(i)) for i in range(parser.num_errors)]
        raise ExportError(f"TensorRT could not parse {onnx_path}: {errors}")
    config = builder.create_builder_config()
    if precision == "fp16":
        fp16 = getattr(trt.BuilderFlag, "FP16", None)
        if fp16 is None:  # removed in TensorRT 11 (strongly typed networks only)
            raise ExportError(f"TensorRT {trt.__version__} has no FP16 builder flag: build fp32 "
                              "(precision=fp32), or run trtexec with an fp16 ONNX model")
        config.set_flag(fp16)
    elif hasattr(trt.BuilderFlag, "TF32"):
        config.clear_flag(trt.BuilderFlag.TF32)  # on by default: it would round fp32 matmuls
    profile = builder.create_optimization_profile()
    profile.set_shape("obs", (1, n_obs), (1, n_obs), (TRT_MAX_BATCH, n_obs))
    config.add_optimization_profile(profile)
    blob = builder.build_serialized_network(network, config)
    if blob is None:
        raise ExportError("TensorRT failed to build the engine (see its log above)")
    return bytes(blob)


class _TrtRunner:
    """Runs a serialized engine on float32 numpy batches on its own CUDA stream."""

    def __init__(self, trt, engine_path: Path, num_actions: int):
        logger = trt.Logger(trt.Logger.WARNING)
        self.engine = trt.Runtime(logger).deserialize_cuda_engine(engine_path.read_bytes())
        if self.engine is None:
            raise ExportError(f"TensorRT could not load the engine it just built: {engine_path}")
        for name in ("obs", "actions"):
            dtype = self.engine.get_tensor_dtype(name)
            if dtype != trt.DataType.FLOAT:
                raise ExportError(f"engine tensor '{name}' is {dtype}, expected float32 I/O")
        self.context = self.engine.create_execution_context()
        self.num_actions = num_actions
        self.stream = torch.cuda.Stream()  # not the default stream: enqueueV3 syncs on that

    def __call__(self, x: np.ndarray) -> np.ndarray:
        with torch.cuda.stream(self.stream):
            xin = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).cuda()
            out = torch.empty(len(x), self.num_actions, device="cuda")
            ok = self.context.set_input_shape("obs", tuple(xin.shape))
            ok = ok and self.context.set_tensor_address("obs", xin.data_ptr())
            ok = ok and self.context.set_tensor_address("actions", out.data_ptr())
            ok = ok and self.context.execute_async_v3(self.stream.cuda_stream)
            if not ok:
                raise ExportError(f"TensorRT refused a batch of {len(x)} observations "
                                  f"(the engine takes 1..{TRT_MAX_BATCH})")
            result = out.cpu()  # on self.stream: waits for the engine
        self.stream.synchronize()
        return result.numpy()
