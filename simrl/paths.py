"""Where simrl's data lives: the source checkout, its MJCF assets and its Hydra configs.

A leaf module (imports nothing of simrl), so every layer can read these without importing the
package's facade (`simrl/__init__.py`, which re-exports them).
"""

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
ROOT = _PACKAGE.parent  # the source checkout (train.py, README.md...) when running from one


def _data_dir(name: str) -> Path:
    """The folder of `name` (assets, configs): the copy a wheel ships inside the package
    (simrl/_assets, simrl/_configs; see setup.py) where installed, else the checkout's own
    top-level folder (running from the repo, or an editable install)."""
    packaged = _PACKAGE / f"_{name}"
    return packaged if packaged.is_dir() else ROOT / name


ASSETS = _data_dir("assets")  # MJCF models: <robot>/<robot>.xml
CONFIGS = _data_dir("configs")  # Hydra configs: train.yaml, task/, robot/, sim/, agent/...
