"""Policy inference latency, one observation at a time: onnxruntime against torch eager on the
CPU, and TensorRT where it builds (the export mode)."""

from __future__ import annotations

from argparse import Namespace
from pathlib import Path

import numpy as np
import torch

from simrl.bench.iteration import quadruped_agent


def bench_export(onnx_path: str | None, runs: int) -> None:
    """Median and p99 microseconds per single-observation inference: onnxruntime vs torch."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:  # the random policy and any TensorRT engines
        _bench_export(onnx_path, runs, Path(tmp))


def _bench_export(onnx_path: str | None, runs: int, tmp: Path) -> None:
    import onnxruntime as ort

    from simrl.rl.export import OnnxPolicy, latency_us

    if onnx_path is None:  # the quadruped's policy shape, randomly initialized
        from rsl_rl.models import MLPModel

        from simrl.registry import make

        cfg = quadruped_agent()["actor"]
        env = make("quadruped", num_envs=1, device="cpu")  # the task's real sizes
        obs = env.get_observations()
        n_obs, n_act = obs["policy"].shape[1], env.num_actions
        actor = MLPModel(obs, {"actor": ["policy"]}, "actor", n_act, hidden_dims=cfg["hidden_dims"],
                         obs_normalization=True, activation=cfg["activation"],
                         distribution_cfg={"class_name": "GaussianDistribution"})
        module = OnnxPolicy(actor).eval()
        onnx_path = str(tmp / "policy.onnx")
        torch.onnx.export(module, (torch.zeros(2, n_obs),), onnx_path, input_names=["obs"],
                          output_names=["actions"], dynamo=True, verbose=False,
                          dynamic_shapes={"obs": {0: torch.export.Dim("batch")}})
        sizes = "-".join(map(str, [n_obs, *cfg["hidden_dims"], n_act]))
        label = f"quadruped-shaped MLP {sizes}, {cfg['activation']} (random weights)"
    else:
        module = None
        label = onnx_path
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    session = ort.InferenceSession(onnx_path, opts, providers=["CPUExecutionProvider"])
    n_obs = session.get_inputs()[0].shape[1]
    x = np.random.default_rng(0).normal(size=(1, n_obs)).astype(np.float32)

    ort_us = latency_us(lambda: session.run(None, {"obs": x}), runs)
    print(f"policy: {label}, batch 1, 1 thread, {runs} runs")
    print(f"{'runtime':>22} {'median us':>10} {'p99 us':>10}")
    print(f"{'onnxruntime (CPU)':>22} {np.median(ort_us):>10.1f} {np.percentile(ort_us, 99):>10.1f}")
    if module is not None:
        torch.set_num_threads(1)
        xt = torch.from_numpy(x)
        with torch.inference_mode():
            torch_us = latency_us(lambda: module(xt), runs)
        print(f"{'torch eager (CPU)':>22} {np.median(torch_us):>10.1f} {np.percentile(torch_us, 99):>10.1f}")
        print(f"onnxruntime / torch median latency ratio: {np.median(ort_us) / np.median(torch_us):.2f}")
    import shutil

    from simrl.rl.export import ExportError, build_tensorrt

    trt_dir = tmp / "tensorrt"  # engines go here, not beside the user's export
    trt_dir.mkdir()
    trt_onnx = shutil.copy(onnx_path, trt_dir / "policy.onnx")
    for precision in ("fp32", "fp16"):
        try:
            trt = build_tensorrt(trt_onnx, precision)
        except ExportError as e:
            print(f"TensorRT {precision}: no figure ({str(e).splitlines()[0]})")
            continue
        print(f"{'TensorRT ' + precision + ' (GPU)':>22} {trt['latency_us_median']:>10.1f} "
              f"{trt['latency_us_p99']:>10.1f}   (end to end: host -> GPU -> host)")


def run(args: Namespace) -> None:
    """The export mode: `onnx` (default: a random quadruped-shaped policy), 200 runs when quick."""
    bench_export(args.onnx, 200 if args.quick else 5000)
