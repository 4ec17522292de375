"""simrl: robot RL on massively parallel MuJoCo simulation."""

from pathlib import Path

__version__ = "0.1.0"

ROOT = Path(__file__).resolve().parent.parent
ASSETS = ROOT / "assets"

__all__ = ["ASSETS", "ROOT", "__version__"]
