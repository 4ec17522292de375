"""Data-parallel training: train.py on N torchrun ranks against one rank, the same total envs
(the ranks mode; it launches train.py, so it needs a source checkout)."""

from __future__ import annotations

import statistics
import sys
from argparse import Namespace
from pathlib import Path

import torch

from simrl.bench.sim import alternate
from simrl.errors import ConfigError
from simrl.sim.mujoco_backend import default_nthread


def _train_rate(ranks: int, envs_per_rank: int, iterations: int, task: str, device: str) -> float:
    """Total env-steps/s of `train.py` on `ranks` torchrun ranks (median over iterations 2..)."""
    import csv
    import subprocess
    import tempfile

    from simrl.paths import ROOT

    with tempfile.TemporaryDirectory() as run_dir:
        launcher = [sys.executable] if ranks == 1 else [
            sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={ranks}"]
        cmd = [*launcher, str(ROOT / "train.py"), f"task={task}", f"num_envs={envs_per_rank}",
               f"max_iterations={iterations}", f"device={device}", "progress=false",
               f"hydra.run.dir={run_dir}"]
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{(r.stdout + r.stderr)[-2000:]}")
        with open(Path(run_dir) / "metrics.csv", newline="") as f:
            rates = [float(row["steps_per_s"]) for row in csv.DictReader(f)]
    return ranks * statistics.median(rates[1:] or rates)  # rank 0's rate; every rank does as much


def bench_ranks(total_envs: int, ranks: int, iterations: int, repeats: int, task: str,
                device: str) -> dict:
    """Data-parallel training: `ranks` torchrun ranks x total/ranks envs vs one rank x total."""
    one, many = alternate(
        lambda: _train_rate(1, total_envs, iterations, task, device),
        lambda: _train_rate(ranks, total_envs // ranks, iterations, task, device),
        repeats,
    )
    return {"total_envs": total_envs, "ranks": ranks, "one_rank": one, "ranks_rate": many,
            "ratio": many / one}


def run(args: Namespace) -> None:
    """The ranks mode: one `num_worlds` total, a multiple of `ranks`."""
    from simrl.paths import ROOT
    from simrl.sim import resolve_device

    sizes, ranks = args.num_worlds, args.ranks
    if not (ROOT / "train.py").is_file():
        raise ConfigError(f"ranks mode launches train.py, which a source checkout has and an installed "
                          f"package does not (looked in {ROOT})")
    if len(sizes) != 1 or sizes[0] % ranks or sizes[0] < ranks:
        raise ConfigError(f"ranks mode takes one num_worlds, a multiple of ranks={ranks} "
                          f"(the total envs both runs share), got num_worlds={sizes}")
    if resolve_device(args.device).type == "cuda" and torch.cuda.device_count() < ranks:
        raise ConfigError(f"ranks={ranks} on CUDA needs one GPU per rank; this machine has "
                          f"{torch.cuda.device_count()}: use fewer ranks or device=cpu")
    n = sizes[0]
    print(f"data-parallel training ({args.task}, {n} envs in total, device {args.device}, "
          f"{default_nthread()} CPUs): train.py on one rank vs torchrun on {ranks}")
    r = bench_ranks(n, ranks, 3 if args.quick else 6, args.repeats, args.task, args.device)
    print(f"{'ranks':>6} {'envs/rank':>10} {'env-steps/s':>12}")
    print(f"{1:>6} {n:>10} {r['one_rank']:>12,.0f}")
    print(f"{ranks:>6} {n // ranks:>10} {r['ranks_rate']:>12,.0f}")
    print(f"ratio {ranks} ranks / 1 rank: {r['ratio']:.2f}")
