"""simrl: robot RL on massively parallel MuJoCo simulation."""

from pathlib import Path

__version__ = "0.1.0"

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "assets"



def make(task: str, num_envs: int, **kwargs):
    """Build an env batch of a registered task (see simrl.registry.make)."""
    from simrl.registry import make as _make

    return _make(task, num_envs, **kwargs)


__all__ = ["ASSETS", "ROOT", "__version__", "make"]
