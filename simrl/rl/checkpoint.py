"""A run's checkpoint files: where they are (model_<iteration>.pt), reading one safely
(`weights_only=True`), whether it fits an env, and the random states a checkpoint carries so that
a resumed run continues bit for bit."""

from __future__ import annotations

import os
import pickle
import random
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from simrl.errors import UserError

if TYPE_CHECKING:
    from simrl.env import EnvBatch

CKPT_RE = re.compile(r"model_(\d+)\.pt$")


class CheckpointError(UserError, ValueError):
    """A checkpoint that cannot be used here: missing, corrupt, or for another task/shape."""


class RunWriteError(UserError, OSError):
    """A run dir write failed (disk full, no permission): the run stops, earlier files intact."""


class TrainingDiverged(UserError, RuntimeError):
    """Too many worlds blew up in one iteration: the run stopped without learning from it."""


def rng_state() -> dict[str, Any]:
    """The torch, numpy and Python random states, as tensors and plain data."""
    _, keys, pos, has_gauss, gauss = np.random.get_state()
    state = {"torch": torch.get_rng_state(), "python": random.getstate(),
             "numpy": {"keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos),
                       "has_gauss": int(has_gauss), "gauss": float(gauss)}}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    random.setstate(state["python"])
    n = state["numpy"]
    np.random.set_state(("MT19937", n["keys"].numpy().astype(np.uint32), n["pos"], n["has_gauss"],
                         n["gauss"]))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def checkpoints(run_dir: str | Path) -> list[Path]:
    """A run dir's model_<iteration>.pt files, oldest iteration first ([] where none or no dir)."""
    run_dir = Path(run_dir).expanduser()
    if not run_dir.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in run_dir.glob("model_*.pt") if (m := CKPT_RE.search(p.name))]
    return [p for _, p in sorted(found)]


def latest_checkpoint(path: str | Path) -> Path:
    """`path` itself if a file, else the run dir's model_<highest iteration>.pt."""
    path = Path(path).expanduser()
    if path.is_file():
        return path
    if not path.is_dir():
        raise CheckpointError(f"no checkpoint or run dir at '{path}'")
    ckpts = checkpoints(path)
    if not ckpts:
        raise CheckpointError(
            f"run dir '{path}' holds no checkpoint (model_<iteration>.pt); pass a run dir that "
            "trained for at least one iteration, or a checkpoint file"
        )
    return ckpts[-1]


def learner_differences(a: dict, b: dict) -> list[str]:
    """Where two checkpoints' learners differ (not bit-equal): actor and critic tensors (weights,
    normalizer statistics) by name, and the optimizer's per-parameter state. [] where equal."""
    out = [f"{k}.{n}" for k in ("actor_state_dict", "critic_state_dict")
           for n in a[k] if not torch.equal(a[k][n], b[k][n])]
    for i, (x, y) in enumerate(zip(a["optimizer_state_dict"]["state"].values(),
                                   b["optimizer_state_dict"]["state"].values(), strict=True)):
        out += [f"adam{i}.{k}" for k in x if not torch.equal(torch.as_tensor(x[k]), torch.as_tensor(y[k]))]
    return out


def load_checkpoint(path: str | Path, map_location: str | torch.device = "cpu") -> dict:
    """A checkpoint (file or run dir: its latest) read with `weights_only=True`: tensors and plain
    containers only, so opening someone else's file cannot run the code a pickle may carry."""
    path = latest_checkpoint(path)
    try:
        ckpt = torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as e:
        found = re.search(r"Unsupported global: (GLOBAL \S+)", str(e))
        if found is None:  # not a refused global: a truncated or foreign file
            raise CheckpointError(f"could not read checkpoint '{path}' (UnpicklingError: {e})") from e
        raise CheckpointError(f"'{path}' holds {found.group(1)}, which simrl does not unpickle (it loads "
                              f"with weights_only=True, so a file cannot run code when opened); pass a "
                              f"checkpoint written by simrl or rsl-rl") from None
    except Exception as e:  # torch raises many types for a truncated or foreign file
        raise CheckpointError(f"could not read checkpoint '{path}' ({type(e).__name__}: {e})") from e
    if not isinstance(ckpt, dict) or "actor_state_dict" not in ckpt:
        raise CheckpointError(f"'{path}' is not an rsl-rl/simrl checkpoint (no actor_state_dict)")
    ckpt["path"] = str(path)
    return ckpt


def env_signature(env: EnvBatch) -> dict[str, Any]:
    """What a checkpoint must match to drive this env: task, observation sizes, action size."""
    return {
        "task": env.task_name,
        "obs_dims": env.obs_dims,
        "num_actions": env.num_actions,
    }


def check_compatible(ckpt: dict, env: EnvBatch) -> None:
    want = env_signature(env)
    got = (ckpt.get("infos") or {}).get("env")
    if got is None:
        return  # a plain rsl-rl checkpoint: the state-dict load will check the shapes
    if got["task"] != want["task"]:
        raise CheckpointError(
            f"checkpoint '{ckpt['path']}' was trained on task '{got['task']}', "
            f"not '{want['task']}': pass task={got['task']} or another checkpoint"
        )
    if got["obs_dims"] != want["obs_dims"] or got["num_actions"] != want["num_actions"]:
        raise CheckpointError(
            f"checkpoint '{ckpt['path']}' expects observations {got['obs_dims']} and "
            f"{got['num_actions']} actions; this env has {want['obs_dims']} and "
            f"{want['num_actions']}: the task config differs from the one it was trained with"
        )


def dist_info() -> tuple[int, int, int]:
    """(world_size, rank, local_rank) from torchrun's environment; (1, 0, 0) otherwise."""
    return (int(os.environ.get("WORLD_SIZE", "1")), int(os.environ.get("RANK", "0")),
            int(os.environ.get("LOCAL_RANK", "0")))
