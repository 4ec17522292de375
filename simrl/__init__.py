"""simrl: robot RL on massively parallel MuJoCo simulation."""

import logging
import os
import sys


def _choose_gl() -> None:
    """Headless machines render offscreen through EGL; set before mujoco is imported.

    mujoco fails at import when MUJOCO_GL names a library that is missing, so a missing one is
    recorded (simrl.render raises a clear RenderError then) and mujoco keeps its default.
    """
    import ctypes.util

    want = os.environ.get("MUJOCO_GL")
    if want is None and not os.environ.get("DISPLAY"):
        want = "egl"
    lib = {"egl": "EGL", "osmesa": "OSMesa"}.get((want or "").lower())
    if lib and ctypes.util.find_library(lib) is None:
        os.environ.pop("MUJOCO_GL", None)
        os.environ["SIMRL_GL_MISSING"] = f"MUJOCO_GL={want}, but lib{lib} was not found"
    elif want:
        os.environ["MUJOCO_GL"] = want


if "mujoco" not in sys.modules:
    _choose_gl()
# PyOpenGL, imported by mujoco under EGL, logs an INFO line that Hydra apps would print
logging.getLogger("OpenGL").setLevel(logging.WARNING)

__version__ = "0.1.0"

from simrl.paths import ASSETS, CONFIGS, ROOT, CheckoutTasks  # noqa: E402  (after the GL choice)

if CheckoutTasks not in sys.meta_path:
    sys.meta_path.insert(0, CheckoutTasks)  # a checkout's envs/ is simrl.envs


def make(task: str, num_envs: int, **kwargs):
    """Build an env batch of a registered task (see simrl.registry.make)."""
    from simrl.registry import make as _make

    return _make(task, num_envs, **kwargs)


def train(task: str | None = None, *overrides: str, **values):
    """Train `task` as train.py would; returns a TrainResult (see simrl.api.train)."""
    from simrl.api import train as _train

    return _train(task, *overrides, **values)


def evaluate(run: str, *overrides: str, **values):
    """Evaluate a run, checkpoint or exported policy as eval.py would (see simrl.api.evaluate)."""
    from simrl.api import evaluate as _evaluate

    return _evaluate(run, *overrides, **values)


def play(*args, **kwargs):
    """Refused in one line naming simrl.evaluate (see simrl.api.play)."""
    from simrl.api import play as _play

    return _play(*args, **kwargs)


def export(run: str, *overrides: str, **values):
    """Export a run's policy as export.py would (see simrl.api.export)."""
    from simrl.api import export as _export

    return _export(run, *overrides, **values)


# gymnasium ids (simrl/Quadruped-v0, ...) exist after `import simrl`; registering loads no task
from simrl.registry import register_gymnasium, register_task  # noqa: E402

register_gymnasium()

__all__ = ["ASSETS", "CONFIGS", "ROOT", "__version__", "evaluate", "export", "make", "register_task", "train"]
