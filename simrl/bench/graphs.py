"""mjwarp with CUDA graphs on against off, alternated in one run (no CPU baseline): the sim
layer alone or the whole quadruped task (the graphs mode; the sim and env modes on CUDA)."""

from __future__ import annotations

from argparse import Namespace

import mujoco
import torch

from simrl.bench.env import task_loop
from simrl.bench.sim import DECIMATION, alternate, sim_loop


def bench_graphs(what: str, sizes: list[int], steps: int, repeats: int, device: str,
                 terrain: str | None = None) -> list[dict]:
    """mjwarp with CUDA graphs on vs off (alternated in one run): `what` is "sim" (the sim
    layer alone) or "task" (the whole quadruped task: observations, rewards, resets)."""
    def rate(n: int, graphs: bool) -> float:
        if what == "sim":
            return sim_loop(n, steps, "mjwarp", device, nthread=0, graphs=graphs)
        return task_loop(n, steps, device, "mjwarp", {"graphs": graphs},
                         cfg={"terrain": terrain} if terrain else None)

    rows = []
    label = "simrl.sim" if what == "sim" else "quadruped task, random actions"
    if terrain and what == "task":
        label += f", terrain {terrain}"
    print(f"mjwarp on {device} ({label}), decimation {DECIMATION}:")
    print(f"{'worlds':>8} {'graphs on env-steps/s':>22} {'graphs off':>12} {'on/off':>7}")
    for n in sizes:
        on, off = alternate(lambda n=n: rate(n, True), lambda n=n: rate(n, False), repeats)
        rows.append({"num_worlds": n, "graphs_on": on, "graphs_off": off, "ratio": on / off})
        print(f"{n:>8} {on:>22,.0f} {off:>12,.0f} {on / off:>7.2f}")
    return rows


def run(args: Namespace) -> None:
    """The graphs mode (bench/gpu.sh runs it on the GPU)."""
    from simrl.sim import resolve_device

    dev = resolve_device(args.device)
    print(f"torch {torch.__version__}, mujoco {mujoco.__version__}"
          + (f", GPU {torch.cuda.get_device_name(dev)}" if dev.type == "cuda" else ""))
    bench_graphs(args.what, args.num_worlds, args.steps, args.repeats, str(dev), args.terrain)
