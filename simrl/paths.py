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


class CheckoutTasks:
    """Import finder for `simrl.envs` in a checkout: the tasks are its top-level envs/ folder
    (a wheel installs that folder inside the package; setup.py). First on sys.meta_path, so the
    simrl imported and its tasks always come from the same tree, also where an editable install
    of another checkout is present (`python -m simrl.bench learn checkout=<tree>`)."""

    @staticmethod
    def find_spec(name: str, path=None, target=None):
        if name != "simrl.envs":
            return None
        init = ROOT / "envs" / "__init__.py"
        if (_PACKAGE / "envs").is_dir() or not init.is_file():
            return None
        from importlib.util import spec_from_file_location

        return spec_from_file_location(name, init, submodule_search_locations=[str(init.parent)])
