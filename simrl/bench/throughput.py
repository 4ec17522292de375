"""The sim and env modes: simrl's env-steps/s against a bare mujoco.batch loop measured in the
same run (the sim layer, or a task's step with its physics share), a terrain against flat, and
on a CUDA machine the same under mjwarp with CUDA graphs on and off."""

from __future__ import annotations

import platform
from argparse import Namespace

import mujoco
import torch

from simrl.bench.env import bench_env, bench_terrain, task_of
from simrl.bench.graphs import bench_graphs
from simrl.bench.sim import bench_sim


def run_terrain(args: Namespace) -> None:
    """env mode with a terrain: the task on it next to flat, and what its parts cost."""
    t = args.terrain
    print(f"simrl.bench env terrain={t}: {task_of(args.robot)} task "
          f"({args.robot or 'primitive quadruped'}), random actions, mujoco, {args.nthread} threads, "
          f"torch {torch.__version__}, mujoco {mujoco.__version__}")
    print(f"{'worlds':>8} {'variant':>32} {'env-steps/s':>12} {'vs flat':>8}")
    for n in args.num_worlds:
        r = bench_terrain(n, args.steps, args.repeats, args.nthread, t, args.robot)
        for name, rate in r.items():
            print(f"{n:>8} {name:>32} {rate:>12,.0f} {rate / r['flat']:>8.3f}")
        other = next(k for k in r if k.startswith(f"{t}, stairs"))
        print(f"         terrain costs {1 - r[t] / r['flat']:.1%} of the flat task's throughput; "
              f"height scan {1 - r[t] / r[t + ', no height scan']:.1%} of the {t} step, "
              f"history 3 {1 - r[t + ', history 3'] / r[t]:.1%}; with {other[len(t) + 2:]}, the "
              f"terrain costs {1 - r[other] / r['flat']:.1%}")


def run(args: Namespace) -> None:
    """The sim mode, or the env mode (`args.mode`)."""
    if args.mode == "env" and args.terrain:
        run_terrain(args)
        return
    env_task = args.task if args.task != "quadruped" else None  # env mode: task=lift, task=reach
    what = f"robot {args.robot}" if args.robot else (env_task or "quadruped")
    print(f"simrl.bench {args.mode}: {what}, control at 50 Hz, {args.nthread} threads, "
          f"{platform.processor() or platform.machine()}, torch {torch.__version__}, "
          f"mujoco {mujoco.__version__}")
    label = "simrl.sim (mujoco)" if args.mode == "sim" else f"{env_task or task_of(args.robot)} task (mujoco)"
    print(f"{'worlds':>8} {'bare Batch env-steps/s':>24} {label + ' env-steps/s':>36} {'ratio':>7}")
    for n in args.num_worlds:
        r = bench_sim(n, args.steps, args.repeats, args.nthread) if args.mode == "sim" else \
            bench_env(n, args.steps, args.repeats, args.nthread, args.robot, env_task)
        print(f"{n:>8} {r['bare']:>24,.0f} {r['simrl']:>36,.0f} {r['ratio']:>7.3f}")
        if "physics_share" in r:
            print(f"         physics share of the task step (its own states, same run): "
                  f"{r['physics_share']:.3f}  (task logic + resets: {1 - r['physics_share']:.1%})")
    if args.mode == "env":
        print("note: the bare loop steps standing robots under small random targets and never resets;\n"
              "the task steps random-policy robots that fall, collide and reset, which costs the\n"
              "physics more. The physics share isolates what simrl adds on the task's own states.")

    if torch.cuda.is_available():
        print(f"GPU: {torch.cuda.get_device_name(0)}")
        gpu_sizes = [1024] if args.quick else [1024, 4096, 16384]
        bench_graphs("sim" if args.mode == "sim" else "task", gpu_sizes, args.steps, args.repeats, "cuda:0")
