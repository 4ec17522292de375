"""The sim layer (`simrl.sim`, mujoco backend) against a bare mujoco.batch loop of the same model:
env-steps/s of each, and the helpers every mode times with (alternation, device sync)."""

from __future__ import annotations

import statistics
import time

import mujoco
import mujoco.batch
import numpy as np
import torch

from simrl.paths import ASSETS
from simrl.sim import make_sim

QUADRUPED = ASSETS / "quadruped" / "quadruped.xml"
DECIMATION = 4


def controls(model: mujoco.MjModel, n: int, steps: int, seed: int = 0) -> np.ndarray:
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
    u = controls(model, n, steps)
    t = time.perf_counter()
    for k in range(steps):
        ctrl[:] = u[k]
        batch.step(nstep=decimation)
    return n * steps / (time.perf_counter() - t)


def sim_loop(n: int, steps: int, backend: str, device: str, nthread: int, graphs: bool = True) -> float:
    """Env-steps/s through simrl.sim: ctrl tensor written, `sim.step(4)`."""
    kw = {"nthread": nthread} if backend == "mujoco" else {"graphs": graphs}
    sim = make_sim(QUADRUPED, n, device=device, backend=backend, keyframe="home", **kw)
    u = torch.as_tensor(controls(sim.model, n, steps), dtype=sim.dtype, device=sim.device)
    for _ in range(3):  # warm-up: compile, capture, and the first replay (graph instantiation)
        sim.step(DECIMATION)
    sync(sim.device)
    t = time.perf_counter()
    for k in range(steps):
        sim.ctrl[:] = u[k]
        sim.step(DECIMATION)
    sync(sim.device)
    return n * steps / (time.perf_counter() - t)


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def alternate(a, b, repeats: int) -> tuple[float, float]:
    """Run `a` and `b` in turn (A B A B ...) `repeats` times: the median of each."""
    ra, rb = [], []
    for _ in range(repeats):
        ra.append(a())
        rb.append(b())
    return statistics.median(ra), statistics.median(rb)


def bench_sim(n: int, steps: int, repeats: int, nthread: int) -> dict:
    model = mujoco.MjModel.from_xml_path(str(QUADRUPED))
    bare, ours = alternate(
        lambda: bare_batch_loop(model, n, steps, nthread),
        lambda: sim_loop(n, steps, "mujoco", "cpu", nthread),
        repeats,
    )
    return {"num_worlds": n, "bare": bare, "simrl": ours, "ratio": ours / bare}
