"""Batched simulation: one MJCF model, `num_worlds` worlds, two backends behind one interface.

    sim = make_sim("assets/quadruped/quadruped.xml", num_worlds=1024)   # auto backend
    sim.ctrl[:] = targets; sim.step(4); obs = sim.qpos

`backend="auto"` picks `mjwarp` (MuJoCo Warp) when a CUDA device is used, else `mujoco`
(MuJoCo C, multi-threaded). `backend="mjwarp", device="cpu"` runs MuJoCo Warp on Warp's CPU
device: slow, but it lets the tests check that backend without a GPU.
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import torch

from simrl.errors import ConfigError
from simrl.sim.base import COMMON_PARAMS, SETCONST_FIELDS, Sim, SimError, load_model

BACKENDS = ("auto", "mujoco", "mjwarp")

__all__ = [
    "BACKENDS",
    "COMMON_PARAMS",
    "SETCONST_FIELDS",
    "Sim",
    "SimError",
    "load_model",
    "make_sim",
    "resolve_device",
    "resolve_backend",
]


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """'auto' -> cuda:0 when CUDA exists else cpu; 'cuda[:N]' is checked to exist."""
    if isinstance(device, torch.device):
        device = str(device)
    if device == "auto":
        return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except RuntimeError as e:
        raise ConfigError(f"unknown device '{device}': use auto, cpu, cuda or cuda:N") from e
    if dev.type == "cuda":
        n = torch.cuda.device_count() if torch.cuda.is_available() else 0
        index = dev.index or 0
        if index >= n:
            found = f"{n} CUDA device(s)" if n else "no CUDA device"
            raise ConfigError(
                f"device '{device}' requested but this machine has {found}. "
                f"Use device=cpu (MuJoCo C backend) or device=auto."
            )
        dev = torch.device("cuda", index)
    elif dev.type != "cpu":
        raise ConfigError(f"unsupported device '{device}': use auto, cpu, cuda or cuda:N")
    return dev


def resolve_backend(backend: str, device: torch.device) -> str:
    if backend not in BACKENDS:
        raise ConfigError(f"unknown sim backend '{backend}'; valid: {', '.join(BACKENDS)}")
    if backend == "auto":
        return "mjwarp" if device.type == "cuda" else "mujoco"
    if backend == "mujoco" and device.type != "cpu":
        raise ConfigError(
            f"the 'mujoco' backend (MuJoCo C) runs on the CPU, not on {device}: "
            "use device=cpu, or backend=mjwarp for the GPU."
        )
    return backend


def make_sim(
    model: str | Path | mujoco.MjModel,
    num_worlds: int,
    device: str | torch.device = "auto",
    backend: str = "auto",
    keyframe: str | int | None = None,
    **backend_kwargs,
) -> Sim:
    """Build a batched simulator. Extra kwargs go to the backend (nthread; nconmax, njmax...)."""
    from simrl.sim.base import check_num_worlds

    num_worlds = check_num_worlds(num_worlds)
    if backend not in BACKENDS:  # before any device probing, so the error is about the backend
        raise ConfigError(f"unknown sim backend '{backend}'; valid: {', '.join(BACKENDS)}")
    dev = resolve_device(device)
    backend = resolve_backend(backend, dev)
    mjm = load_model(model)
    if backend == "mujoco":
        from simrl.sim.mujoco_backend import MujocoSim as cls
    else:
        from simrl.sim.mjwarp_backend import WarpSim as cls
    import inspect

    takes = set(inspect.signature(cls.__init__).parameters) - {"self", "model", "num_worlds",
                                                                "keyframe", "device"}
    wrong = sorted(set(backend_kwargs) - takes)
    if wrong:
        raise ConfigError(f"sim settings {wrong} do not apply to the {backend} backend, which "
                          f"takes {sorted(takes)}: drop them (sim.kwargs.<name>=null)")
    if backend == "mujoco":
        return cls(mjm, num_worlds, keyframe=keyframe, **backend_kwargs)
    return cls(mjm, num_worlds, keyframe=keyframe, device=str(dev), **backend_kwargs)
