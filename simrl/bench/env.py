"""A task's step (observations, rewards, resets) timed as training steps it: against a bare
mujoco.batch loop of the same model, with its physics share, and on a terrain against flat."""

from __future__ import annotations

import contextlib
import dataclasses
import statistics
import time
from collections.abc import Iterator

import mujoco
import torch

from simrl.bench.sim import QUADRUPED, alternate, bare_batch_loop, sync
from simrl.rl.vecenv import RslRlVecEnv


@contextlib.contextmanager
def timed(env) -> Iterator[dict[str, float]]:
    """Seconds spent in the physics (`sim.step`) and in whole env steps while the block runs.

    Wraps the env's own methods on the instance (and syncs the device around each timed call,
    so leave it off where absolute rates matter); the env module knows nothing of it.
    """
    timers = {"physics": 0.0, "env_step": 0.0}
    sync_ = (lambda: torch.cuda.synchronize(env.device)) if env.device.type == "cuda" else (lambda: None)

    def timer(fn, key):
        def wrapped(*args, **kwargs):
            sync_()
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                sync_()
                timers[key] += time.perf_counter() - t

        return wrapped

    env.sim.step = timer(env.sim.step, "physics")
    env.advance = timer(env.advance, "env_step")
    try:
        yield timers
    finally:
        del env.sim.step, env.advance  # back to the class methods


def task_loop(n: int, steps: int, device: str = "cpu", backend: str = "mujoco",
              sim_kwargs: dict | None = None, shares: list[float] | None = None,
              robot: str | None = None, cfg: dict | None = None, task: str | None = None) -> float:
    """Env-steps/s of a task (default: the locomotion task of `robot`) under random actions
    (obs, rewards, resets included), stepped through rsl-rl's view as training does.

    With `shares`, the physics share of the step is timed too and appended (this syncs the
    device around each physics call, so leave it off where the absolute rate matters).
    """
    from simrl.registry import make

    env = make(task or task_of(robot), num_envs=n, device=device, backend=backend, sim=sim_kwargs or {},
               robot=robot, cfg=cfg)
    venv = RslRlVecEnv(env, log_every=0)  # as training steps it (no final_obs, log read per iteration)
    actions = torch.zeros(n, env.num_actions, device=env.device)
    gen = torch.Generator(device=env.device).manual_seed(0)
    for _ in range(3):  # warm-up: compile, capture, and the first replay (graph instantiation)
        venv.step(actions)
    sync(env.device)
    with timed(env) if shares is not None else contextlib.nullcontext() as timers:
        t = time.perf_counter()
        with torch.inference_mode():
            for _ in range(steps):
                actions.normal_(0, 0.5, generator=gen)
                venv.step(actions)
        sync(env.device)
        elapsed = time.perf_counter() - t
    if shares is not None:
        shares.append(timers["physics"] / elapsed)
    return n * steps / elapsed


def task_of(robot: str | None) -> str:
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
    bare, ours = alternate(
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

    critic = task_cfg(task_of(robot), {"robot": robot} if robot else None).observations["critic"]
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
