"""Throughput benchmarks, each quoted as a ratio to a baseline measured in the same run.

    python -m simrl.bench                  # sim layer vs a bare mujoco.batch loop (quadruped)
    python -m simrl.bench env              # the quadruped task (obs, rewards, resets) vs bare loop
    python -m simrl.bench env robot=unitree_go1 num_worlds=[256,1024] steps=100
    python -m simrl.bench iteration        # a PPO iteration split into physics/task/policy/update
    python -m simrl.bench iteration versus.height_scan_size=[1.6,1.0]   # alternated with a variant
    python -m simrl.bench export           # policy inference latency: onnxruntime vs torch (TRT)
    python -m simrl.bench ranks            # torchrun data parallelism: N ranks vs one, same envs
    python -m simrl.bench graphs device=cuda   # mjwarp with CUDA graphs on vs off, no CPU baseline
    python -m simrl.bench launches         # Warp launches, host syncs, torch ops per env step
    python -m simrl.bench quick=true       # small sizes, for CI
    python -m simrl.bench learn task=quadruped seeds=3 iterations=300   # learning speed over seeds
    python -m simrl.bench --help           # every mode's keys

Every mode takes key=value words (values read as YAML), as train.py does; `--flag` words are
refused naming their key=value form. On a CUDA machine the sim and env modes also time mjwarp at
1024 / 4096 / 16384 worlds with CUDA graphs on and off (the sim layer alone, and the whole
quadruped task). Runs alternate baseline and candidate (A B A B ...) and report the median of
each, so machine noise hits both alike.

One module per job: `cli` (the words, the dispatch), `sim` (the sim layer and a bare
mujoco.batch loop), `env` (a task's step), `throughput` (the sim and env modes' tables), `graphs`,
`iteration`, `export`, `launches`, `ranks`.
"""

from simrl.bench.cli import main, parse
from simrl.bench.env import bench_env, bench_terrain, task_loop, timed
from simrl.bench.export import bench_export
from simrl.bench.graphs import bench_graphs
from simrl.bench.iteration import bench_iteration, quadruped_agent
from simrl.bench.launches import bench_launches
from simrl.bench.ranks import bench_ranks
from simrl.bench.sim import QUADRUPED, bare_batch_loop, bench_sim, sim_loop

__all__ = ["QUADRUPED", "bare_batch_loop", "bench_env", "bench_export", "bench_graphs", "bench_iteration",
           "bench_launches", "bench_ranks", "bench_sim", "bench_terrain", "main", "parse", "quadruped_agent",
           "sim_loop", "task_loop", "timed"]
