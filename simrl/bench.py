"""Throughput benchmarks, each quoted as a ratio to a baseline measured in the same run.

    python -m simrl.bench                 # sim layer vs a bare mujoco.batch loop (quadruped)
    python -m simrl.bench env             # the quadruped task (obs, rewards, resets) vs bare loop
    python -m simrl.bench iteration       # a PPO iteration split into physics/task/policy/update
    python -m simrl.bench export          # policy inference latency: onnxruntime vs torch (TRT)
    python -m simrl.bench ranks           # torchrun data parallelism: N ranks vs one, same envs
    python -m simrl.bench graphs --device cuda   # mjwarp with CUDA graphs on vs off, no CPU baseline
    python -m simrl.bench launches        # Warp launches, host syncs, torch ops per env step
    python -m simrl.bench --quick         # small sizes, for CI
    python -m simrl.bench learn task=quadruped seeds=3 iterations=300   # learning speed over seeds

On a CUDA machine the sim and env modes also time mjwarp at 1024 / 4096 / 16384 worlds with
CUDA graphs on and off (the sim layer alone, and the whole quadruped task).
Runs alternate baseline and candidate (A B A B ...) and report the median of each, so machine
noise hits both alike.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import platform
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import mujoco
import mujoco.batch
import numpy as np
import torch

from simrl.paths import ASSETS
from simrl.rl.vecenv import RslRlVecEnv
from simrl.sim import make_sim
from simrl.sim.mujoco_backend import default_nthread

QUADRUPED = ASSETS / "quadruped" / "quadruped.xml"
DECIMATION = 4


def _controls(model: mujoco.MjModel, n: int, steps: int, seed: int = 0) -> np.ndarray:
    """Bounded random joint targets around the home pose (a plausible, varied gait load)."""
    rng = np.random.default_rng(seed)
    home = model.key_ctrl[0] if model.nkey else np.zeros(model.nu)
    lo, hi = model.actuator_ctrlrange.T
    return np.clip(home + rng.normal(0, 0.3, size=(steps, n, model.nu)), lo, hi)


def bare_batch_loop(model: mujoco.MjModel, n: int, steps: int, nthread: int,
                    decimation: int = DECIMATION) -> float:
    """Env-steps/s of the physical limit: a plain Batch, ctrl written, `step(nstep=decimation)`."""
    batch = mujoco.batch.Batch(model, n, nthread=nthread)
    batch.reset(keyframe=0 if model.nkey else -1)
    ctrl = batch.bind("ctrl")
    batch.bind("qpos"), batch.bind("qvel")  # same bound fields as the sim layer reads
    u = _controls(model, n, steps)
    t = time.perf_counter()
    for k in range(steps):
        ctrl[:] = u[k]
        batch.step(nstep=decimation)
    return n * steps / (time.perf_counter() - t)


def sim_loop(n: int, steps: int, backend: str, device: str, nthread: int, graphs: bool = True) -> float:
    """Env-steps/s through simrl.sim: ctrl tensor written, `sim.step(4)`."""
    kw = {"nthread": nthread} if backend == "mujoco" else {"graphs": graphs}
    sim = make_sim(QUADRUPED, n, device=device, backend=backend, keyframe="home", **kw)
    u = torch.as_tensor(_controls(sim.model, n, steps), dtype=sim.dtype, device=sim.device)
    for _ in range(3):  # warm-up: compile, capture, and the first replay (graph instantiation)
        sim.step(DECIMATION)
    _sync(sim.device)
    t = time.perf_counter()
    for k in range(steps):
        sim.ctrl[:] = u[k]
        sim.step(DECIMATION)
    _sync(sim.device)
    return n * steps / (time.perf_counter() - t)


@contextlib.contextmanager
def timed(env) -> Iterator[dict[str, float]]:
    """Seconds spent in the physics (`sim.step`) and in whole env steps while the block runs.

    Wraps the env's own methods on the instance (and syncs the device around each timed call,
    so leave it off where absolute rates matter); the env module knows nothing of it.
    """
    timers = {"physics": 0.0, "env_step": 0.0}
    sync = (lambda: torch.cuda.synchronize(env.device)) if env.device.type == "cuda" else (lambda: None)

    def timer(fn, key):
        def wrapped(*args, **kwargs):
            sync()
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                sync()
                timers[key] += time.perf_counter() - t

        return wrapped

    env.sim.step = timer(env.sim.step, "physics")
    env.advance = timer(env.advance, "env_step")
    try:
        yield timers
    finally:
        del env.sim.step, env.advance  # back to the class methods


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _alternate(a, b, repeats: int) -> tuple[float, float]:
    ra, rb = [], []
    for _ in range(repeats):
        ra.append(a())
        rb.append(b())
    return statistics.median(ra), statistics.median(rb)


def bench_sim(n: int, steps: int, repeats: int, nthread: int) -> dict:
    model = mujoco.MjModel.from_xml_path(str(QUADRUPED))
    bare, ours = _alternate(
        lambda: bare_batch_loop(model, n, steps, nthread),
        lambda: sim_loop(n, steps, "mujoco", "cpu", nthread),
        repeats,
    )
    return {"num_worlds": n, "bare": bare, "simrl": ours, "ratio": ours / bare}


def task_loop(n: int, steps: int, device: str = "cpu", backend: str = "mujoco",
              sim_kwargs: dict | None = None, shares: list[float] | None = None,
              robot: str | None = None, cfg: dict | None = None, task: str | None = None) -> float:
    """Env-steps/s of a task (default: the locomotion task of `robot`) under random actions
    (obs, rewards, resets included), stepped through rsl-rl's view as training does.

    With `shares`, the physics share of the step is timed too and appended (this syncs the
    device around each physics call, so leave it off where the absolute rate matters).
    """
    from simrl.registry import make

    env = make(task or _task(robot), num_envs=n, device=device, backend=backend, sim=sim_kwargs or {},
               robot=robot, cfg=cfg)
    venv = RslRlVecEnv(env, log_every=0)  # as training steps it (no final_obs, log read per iteration)
    actions = torch.zeros(n, env.num_actions, device=env.device)
    gen = torch.Generator(device=env.device).manual_seed(0)
    for _ in range(3):  # warm-up: compile, capture, and the first replay (graph instantiation)
        venv.step(actions)
    _sync(env.device)
    with timed(env) if shares is not None else contextlib.nullcontext() as timers:
        t = time.perf_counter()
        with torch.inference_mode():
            for _ in range(steps):
                actions.normal_(0, 0.5, generator=gen)
                venv.step(actions)
        _sync(env.device)
        elapsed = time.perf_counter() - t
    if shares is not None:
        shares.append(timers["physics"] / elapsed)
    return n * steps / elapsed


def _task(robot: str | None) -> str:
    """The locomotion task a robot trains with: bipeds the humanoid one, the rest quadruped."""
    if robot is None:
        return "quadruped"
    from simrl.scene import load_robot

    return "humanoid" if len(load_robot(robot).feet) == 2 else "quadruped"


def bench_env(n: int, steps: int, repeats: int, nthread: int, robot: str | None = None,
              task: str | None = None) -> dict:
    """The task step vs a bare Batch loop of the same model (the assembled scene of `robot`,
    or of `task`: its robot and objects)."""
    if task is not None:
        from simrl.registry import make

        model = make(task, 1, device="cpu", backend="mujoco", robot=robot).model
    elif robot is None:
        model = mujoco.MjModel.from_xml_path(str(QUADRUPED))
    else:
        from simrl.scene import assemble

        model = assemble(robot).model
    decimation = max(1, round(0.02 / model.opt.timestep))  # the tasks' 50 Hz control
    shares: list[float] = []
    bare, ours = _alternate(
        lambda: bare_batch_loop(model, n, steps, nthread, decimation),
        lambda: task_loop(n, steps, sim_kwargs={"nthread": nthread}, shares=shares, robot=robot, task=task),
        repeats,
    )
    return {"num_worlds": n, "bare": bare, "simrl": ours, "ratio": ours / bare,
            "physics_share": statistics.median(shares)}


def bench_terrain(n: int, steps: int, repeats: int, nthread: int, terrain: str,
                  robot: str | None = None) -> dict[str, float]:
    """The task on `terrain` next to the flat task, alternated in one run, and what the height
    scan and a 3-frame history cost, and the stairs built the other way (stacked boxes if
    `terrain` builds them as height field, else height field): each variant's env-steps/s
    (median of `repeats`)."""
    from simrl.registry import task_cfg
    from simrl.terrain import terrain_from

    critic = task_cfg(_task(robot), {"robot": robot} if robot else None).observations["critic"]
    no_scan = [dataclasses.asdict(t) for t in critic if t.name != "height_scan"]
    grid = terrain_from(terrain).to_dict()
    boxes = [] if grid.get("box_types") else [t for t in grid.get("types", []) if "stairs" in t]
    stairs = "stairs of boxes" if boxes else "stairs as height field"
    variants = {
        "flat": {},
        terrain: {"terrain": terrain},
        f"{terrain}, no height scan": {"terrain": terrain, "observations": {"critic": no_scan}},
        f"{terrain}, history 3": {"terrain": terrain, "history": 3},
        f"{terrain}, {stairs}": {"terrain": {**grid, "box_types": boxes}},
    }
    runs: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(repeats):
        for name, cfg in variants.items():
            runs[name].append(task_loop(n, steps, sim_kwargs={"nthread": nthread}, robot=robot, cfg=cfg))
    return {k: statistics.median(v) for k, v in runs.items()}


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
        on, off = _alternate(lambda n=n: rate(n, True), lambda n=n: rate(n, False), repeats)
        rows.append({"num_worlds": n, "graphs_on": on, "graphs_off": off, "ratio": on / off})
        print(f"{n:>8} {on:>22,.0f} {off:>12,.0f} {on / off:>7.2f}")
    return rows


def _quadruped_agent() -> dict:
    """The rsl-rl config `train.py task=quadruped` uses (networks as trained)."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from simrl.paths import CONFIGS

    with initialize_config_dir(config_dir=str(CONFIGS), version_base=None):
        return OmegaConf.to_container(compose("train", overrides=["task=quadruped"]).agent, resolve=True)


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

        cfg = _quadruped_agent()["actor"]
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


def bench_iteration(n: int, iterations: int, device: str, backend: str, nthread: int,
                    cfg: dict | None = None) -> dict:
    """Seconds per PPO iteration split into physics, task logic, policy/storage and update
    (`cfg`: quadruped task fields over the defaults)."""
    from simrl.registry import make
    from simrl.rl.runner import Trainer

    kw = {"nthread": nthread} if backend == "mujoco" else {}
    env = make("quadruped", num_envs=n, device=device, backend=backend, sim=kw, cfg=cfg)
    agent = _quadruped_agent()
    trainer = Trainer(env, agent)
    trainer.learn(1, progress=False)  # warm-up (graph capture, allocation)
    with timed(env) as timers:
        hist = trainer.learn(iterations, progress=False)[-iterations:]
    collect = sum(m["collect_s"] for m in hist)
    learn = sum(m["learn_s"] for m in hist)
    total = collect + learn
    physics, env_step = timers["physics"], timers["env_step"]
    return {"num_envs": n, "iteration_s": total / iterations,
            "steps_per_s": n * agent["num_steps_per_env"] * iterations / total,
            "physics": physics / total, "task": (env_step - physics) / total,
            "policy_storage": (collect - env_step) / total, "ppo_update": learn / total}


def bench_launches(n: int, steps: int, device: str = "cpu", graphs: bool = False) -> dict:
    """Warp launches, host syncs and torch ops per quadruped env step on mjwarp (as training
    steps it: rsl-rl's view), for steps without resets and steps where 2% of the envs time out.

    Graphs off by default: a replayed graph counts as one launch, which hides what it replays.
    """
    from simrl.profile import count_launches, count_syncs
    from simrl.registry import make

    env = make("quadruped", num_envs=n, device=device, backend="mjwarp", sim={"graphs": graphs})
    venv = RslRlVecEnv(env, log_every=0)  # the training path (the trainer reads the log per iteration)
    actions = torch.zeros(n, env.num_actions, device=env.device)
    venv.step(actions)  # warm-up: kernels compiled, graphs captured
    rows = {}
    for label, share in (("no resets", 0.0), ("with resets", 0.02)):
        launches = syncs = ops = 0
        by_op: dict[str, int] = {}
        for _ in range(steps):
            env.episode_length_buf.zero_()  # nobody times out, unless set below
            k = max(1, round(share * n)) if share else 0
            env.episode_length_buf[:k] = env.max_episode_length - 1
            with torch.inference_mode(), count_syncs() as s, count_launches() as c:
                venv.step(actions)
            launches, syncs, ops = launches + c.total, syncs + s.total, ops + s.ops
            for kind, v in s.by_op.items():
                by_op[kind] = by_op.get(kind, 0) + v
        rows[label] = {"launches": launches / steps, "syncs": syncs / steps, "torch_ops": ops / steps,
                       "syncs_by_kind": {k: v / steps for k, v in sorted(by_op.items())}}
    if env.device.type == "cuda":  # CUDA's own check too, as training runs (graphs on)
        env = make("quadruped", num_envs=n, device=device, backend="mjwarp")
        venv = RslRlVecEnv(env, log_every=0)
        for _ in range(3):  # compile, capture, first replay
            venv.step(actions)
        env.episode_length_buf[: max(1, n // 50)] = env.max_episode_length - 1
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")  # any torch op that syncs raises
        try:
            for _ in range(steps):
                venv.step(actions)
            rows["cuda_sync_debug"] = "clean"
        except RuntimeError as e:
            rows["cuda_sync_debug"] = f"raised: {str(e).splitlines()[0]}"
        finally:
            torch.cuda.set_sync_debug_mode("default")
    return rows


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
    one, many = _alternate(
        lambda: _train_rate(1, total_envs, iterations, task, device),
        lambda: _train_rate(ranks, total_envs // ranks, iterations, task, device),
        repeats,
    )
    return {"total_envs": total_envs, "ranks": ranks, "one_rank": one, "ranks_rate": many,
            "ratio": many / one}


def main(argv: list[str] | None = None) -> None:
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["learn"]:  # key=value words, as train.py takes them (simrl.rl.learnbench)
        from simrl.rl.learnbench import main as learn_main

        learn_main(words[1:])
        return
    p = argparse.ArgumentParser(prog="python -m simrl.bench", description=__doc__.split("\n")[0])
    p.add_argument("mode", nargs="?", default="sim",
                   choices=("sim", "env", "export", "iteration", "ranks", "launches", "graphs", "learn"))
    p.add_argument("--what", default="task", choices=("sim", "task"),
                   help="graphs mode: the sim layer alone or the whole quadruped task")
    p.add_argument("--backend", default="auto", choices=("auto", "mujoco", "mjwarp"),
                   help="iteration mode: the sim backend (auto: mjwarp on CUDA, else mujoco)")
    p.add_argument("--device", default="auto", help="iteration and ranks modes: auto | cpu | cuda")
    p.add_argument("--ranks", type=int, default=2, help="ranks mode: torchrun processes")
    p.add_argument("--task", default="quadruped",
                   help="ranks mode: the task trained; env mode: the task stepped (e.g. lift, reach)")
    p.add_argument("--robot", default=None,
                   help="env mode: a robot config (configs/robot) instead of the primitive quadruped")
    p.add_argument("--terrain", default=None,
                   help="env mode: also the task on this terrain (configs/terrain, e.g. rough) next to flat; "
                        "graphs mode: the task on this terrain")
    p.add_argument("--onnx", default=None, help="export mode: a policy.onnx to time")
    p.add_argument("--num-worlds", type=int, nargs="+", default=None)
    p.add_argument("--steps", type=int, default=None, help="control steps per timing")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--versus", action="append", default=[], metavar="FIELD=VALUE",
                   help="iteration mode: also the task with these config fields (yaml values), "
                        "alternated with the default --repeats times, and the ratio")
    p.add_argument("--nthread", type=int, default=0, help="0: all CPUs")
    p.add_argument("--quick", action="store_true", help="small sizes (CI smoke run)")
    args = p.parse_args(argv)
    nthread = args.nthread or default_nthread()
    sizes = args.num_worlds or ([64] if args.quick else [1024])
    steps = args.steps or (10 if args.quick else 100)
    repeats = 1 if args.quick else args.repeats
    if args.mode == "export":
        bench_export(args.onnx, 200 if args.quick else 5000)
        _rerun(argv)
        return
    if args.mode == "ranks":
        from simrl.paths import ROOT
        from simrl.sim import resolve_device

        if not (ROOT / "train.py").is_file():
            p.error(f"ranks mode launches train.py, which a source checkout has and an installed "
                    f"package does not (looked in {ROOT})")
        if len(sizes) != 1 or sizes[0] % args.ranks or sizes[0] < args.ranks:
            p.error(f"ranks mode takes one --num-worlds, a multiple of --ranks {args.ranks} "
                    f"(the total envs both runs share), got {sizes}")
        if resolve_device(args.device).type == "cuda" and torch.cuda.device_count() < args.ranks:
            p.error(f"--ranks {args.ranks} on CUDA needs one GPU per rank; this machine has "
                    f"{torch.cuda.device_count()}: use fewer ranks or --device cpu")
        n = sizes[0]
        print(f"data-parallel training ({args.task}, {n} envs in total, device {args.device}, "
              f"{default_nthread()} CPUs): train.py on one rank vs torchrun on {args.ranks}")
        r = bench_ranks(n, args.ranks, 3 if args.quick else 6, repeats, args.task, args.device)
        print(f"{'ranks':>6} {'envs/rank':>10} {'env-steps/s':>12}")
        print(f"{1:>6} {n:>10} {r['one_rank']:>12,.0f}")
        print(f"{args.ranks:>6} {n // args.ranks:>10} {r['ranks_rate']:>12,.0f}")
        print(f"ratio {args.ranks} ranks / 1 rank: {r['ratio']:.2f}")
        _rerun(argv)
        return
    if args.mode == "graphs":  # mjwarp only, no CPU baseline (bench/gpu.sh runs it on the GPU)
        from simrl.sim import resolve_device

        dev = resolve_device(args.device)
        print(f"torch {torch.__version__}, mujoco {mujoco.__version__}"
              + (f", GPU {torch.cuda.get_device_name(dev)}" if dev.type == "cuda" else ""))
        bench_graphs(args.what, sizes, steps, repeats, str(dev), args.terrain)
        _rerun(argv)
        return
    if args.mode == "launches":
        n = sizes[0]
        device = "cpu" if args.device == "auto" else args.device
        print(f"per quadruped env step on mjwarp ({device}, {n} envs, graphs off, "
              f"{steps} steps each): Warp launches, host syncs, torch ops")
        rows = bench_launches(n, steps, device)
        print(f"{'step':>12} {'launches':>9} {'syncs':>6} {'torch ops':>10}  syncs by kind")
        debug = rows.pop("cuda_sync_debug", None)
        for label, r in rows.items():
            kinds = ", ".join(f"{k} {v:g}" for k, v in r["syncs_by_kind"].items()) or "-"
            print(f"{label:>12} {r['launches']:>9.0f} {r['syncs']:>6.1f} {r['torch_ops']:>10.0f}  {kinds}")
        if debug is not None:
            print(f"torch.cuda.set_sync_debug_mode('error') over {steps} steps with resets: {debug}")
        _rerun(argv)
        return
    if args.mode == "iteration":
        from simrl.sim import resolve_device

        dev = resolve_device(args.device)
        backend = args.backend if args.backend != "auto" else ("mjwarp" if dev.type == "cuda" else "mujoco")
        print(f"PPO iteration time shares, quadruped, backend {backend} on {dev}")
        print(f"{'envs':>7} {'s/iter':>8} {'steps/s':>10} {'physics':>8} {'task':>6} "
              f"{'policy+storage':>15} {'PPO update':>11}")
        import yaml

        versus = {k: yaml.safe_load(v) for k, _, v in (w.partition("=") for w in args.versus)}
        for n in sizes:
            times: dict[str, list[float]] = {"default": [], "versus": []}
            for _ in range(args.repeats if versus else 1):
                for label in ("default", "versus") if versus else ("default",):
                    r = bench_iteration(n, 2 if args.quick else 5, str(dev), backend, nthread,
                                        versus if label == "versus" else None)
                    times[label].append(r["iteration_s"])
                    name = f"{n}" if label == "default" else f"{n} {args.versus}"
                    print(f"{name:>7} {r['iteration_s']:>8.2f} {r['steps_per_s']:>10,.0f} "
                          f"{r['physics']:>8.0%} {r['task']:>6.0%} {r['policy_storage']:>15.0%} "
                          f"{r['ppo_update']:>11.0%}")
            if versus:
                a, b = statistics.median(times["default"]), statistics.median(times["versus"])
                print(f"median s/iter over {args.repeats} alternations: default {a:.3f}, {args.versus} "
                      f"{b:.3f}: default/versus {a / b:.3f}")
        _rerun(argv)
        return

    if args.mode == "env" and args.terrain:
        print(f"simrl.bench env --terrain {args.terrain}: {_task(args.robot)} task "
              f"({args.robot or 'primitive quadruped'}), random actions, mujoco, {nthread} threads, "
              f"torch {torch.__version__}, mujoco {mujoco.__version__}")
        print(f"{'worlds':>8} {'variant':>32} {'env-steps/s':>12} {'vs flat':>8}")
        for n in sizes:
            r = bench_terrain(n, steps, repeats, nthread, args.terrain, args.robot)
            for name, rate in r.items():
                print(f"{n:>8} {name:>32} {rate:>12,.0f} {rate / r['flat']:>8.3f}")
            t = args.terrain
            other = next(k for k in r if k.startswith(f"{t}, stairs"))
            print(f"         terrain costs {1 - r[t] / r['flat']:.1%} of the flat task's throughput; "
                  f"height scan {1 - r[t] / r[t + ', no height scan']:.1%} of the {t} step, "
                  f"history 3 {1 - r[t + ', history 3'] / r[t]:.1%}; with {other[len(t) + 2:]}, the "
                  f"terrain costs {1 - r[other] / r['flat']:.1%}")
        _rerun(argv)
        return

    env_task = args.task if args.task != "quadruped" else None  # env mode: --task lift, --task reach
    what = f"robot {args.robot}" if args.robot else (env_task or "quadruped")
    print(f"simrl.bench {args.mode}: {what}, control at 50 Hz, {nthread} threads, "
          f"{platform.processor() or platform.machine()}, torch {torch.__version__}, "
          f"mujoco {mujoco.__version__}")
    label = "simrl.sim (mujoco)" if args.mode == "sim" else f"{env_task or _task(args.robot)} task (mujoco)"
    print(f"{'worlds':>8} {'bare Batch env-steps/s':>24} {label + ' env-steps/s':>36} {'ratio':>7}")
    for n in sizes:
        r = bench_sim(n, steps, repeats, nthread) if args.mode == "sim" else \
            bench_env(n, steps, repeats, nthread, args.robot, env_task)
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
        bench_graphs("sim" if args.mode == "sim" else "task", gpu_sizes, steps, repeats, "cuda:0")
    _rerun(argv)


def _rerun(argv: list[str] | None) -> None:
    cmd = "python -m simrl.bench " + " ".join(argv if argv is not None else sys.argv[1:])
    print(f"rerun: {cmd.strip()}")


if __name__ == "__main__":
    from simrl.errors import exit_on_user_error

    with exit_on_user_error():  # a user's mistake: one line, no traceback
        main()
