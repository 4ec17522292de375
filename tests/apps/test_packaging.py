"""Packaging: a wheel ships the repo's top-level assets/ and configs/ inside simrl, and a
non-editable install finds them (not a checkout's); a checkout uses its own folders."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import simrl
from simrl import ROOT

SOURCES = ("simrl", "envs", "assets", "configs", "setup.py", "pyproject.toml", "README.md")


def _files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kwargs)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    return r


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """`pip wheel .` of a copy of the checkout (the build writes build/ and *.egg-info beside
    the sources; the copy keeps them out of the repo)."""
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(ROOT / name, src / name)
    out = tmp_path_factory.mktemp("wheel")
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
          str(src)])
    (path,) = out.glob("simrl-*.whl")
    return path


def test_a_checkout_uses_its_own_assets_and_configs():
    assert simrl.ASSETS == ROOT / "assets" and simrl.CONFIGS == ROOT / "configs"
    assert not (Path(simrl.__file__).parent / "_configs").exists()  # nothing packaged in the tree


def test_the_wheel_ships_every_module_asset_and_config(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder, packaged in (("assets", "simrl/_assets"), ("configs", "simrl/_configs")):
        want = {f"{packaged}/{f}" for f in _files(ROOT / folder)}
        assert want == {n for n in names if n.startswith(packaged + "/")}, folder
    assert {"simrl/_configs/train.yaml", "simrl/_configs/robot/unitree_go1.yaml",
            "simrl/_assets/quadruped/quadruped.xml"} <= names
    modules = {f"{pkg}/{f}" for pkg, folder in (("simrl", "simrl"), ("simrl/envs", "envs"))
               for f in _files(ROOT / folder) if f.endswith(".py")}
    assert modules <= names, sorted(modules - names)
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith((".dist-info", ".data"))}
    assert tops == {"simrl"}, f"the wheel claims top-level names besides simrl: {sorted(tops)}"
    assert "simrl/py.typed" in names
    zoo = {f"simrl/zoo/{f}" for f in _files(ROOT / "simrl" / "zoo") if not f.endswith(".py")}
    assert "simrl/zoo/index.yaml" in zoo and zoo <= names, sorted(zoo - names)  # the shipped policies
    assert not any(n.startswith(("tests/", "assets/", "configs/")) for n in names)


def test_an_installed_copy_finds_its_assets_and_configs(wheel, tmp_path):
    """Installed without -e (pip --target, then imported from elsewhere): the env batch builds
    from the packaged MJCF and robot configs, and simrl.train composes the packaged configs."""
    site = tmp_path / "site"
    _run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)])
    code = """
import json, torch, simrl, simrl.envs
from simrl.scene import robot_names
env = simrl.make("quadruped", 4, device="cpu")
obs, rew, term, trunc, _ = env.step(torch.zeros(4, env.num_actions))
run = simrl.train("cartpole", "max_iterations=1", "num_envs=8", device="cpu", progress=False, run_dir="run")
print(json.dumps({"simrl": simrl.__file__, "envs": simrl.envs.__file__, "assets": str(simrl.ASSETS),
                  "configs": str(simrl.CONFIGS), "robots": robot_names(), "rew": list(rew.shape),
                  "checkpoint": run.checkpoint.name, "task": run.config["task"]["name"]}))
"""
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}
    r = _run([sys.executable, "-c", code], cwd=work, env=env)
    got = json.loads(r.stdout.strip().splitlines()[-1])
    site, pkg = site.resolve(), site.resolve() / "simrl"
    assert got["simrl"] == str(pkg / "__init__.py") and got["envs"] == str(pkg / "envs" / "__init__.py")
    assert not (site / "envs").exists()  # no generic top-level name in site-packages
    assert got["assets"] == str(pkg / "_assets") and got["configs"] == str(pkg / "_configs")
    assert set(got["robots"]) == {p.stem for p in (ROOT / "configs" / "robot").glob("*.yaml")}
    assert got["rew"] == [4] and got["checkpoint"] == "model_1.pt" and got["task"] == "cartpole"
    assert (work / "run" / "config.yaml").is_file()
    # the console scripts of the install run the apps from any directory
    r = _run([str(site / "bin" / "simrl-train"), "task=cartpole", "num_envs=8", "max_iterations=1",
              "progress=false", "hydra.run.dir=run2"], cwd=work, env=env)
    assert (work / "run2" / "model_1.pt").is_file() and (work / "run2" / "train.log").is_file(), r.stdout
    r = subprocess.run([str(site / "bin" / "simrl-eval"), "checkpoint=nowhere"], cwd=work, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and r.stderr.startswith("simrl: error:"), r.stderr[-2000:]
    r = subprocess.run([str(site / "bin" / "simrl-play"), "checkpoint=nowhere", "episodes=3"], cwd=work,
                       env=env, capture_output=True, text=True, timeout=300)
    refused = r.stderr.endswith("the metrics table is simrl-eval: simrl-eval checkpoint=nowhere episodes=3\n")
    assert r.returncode == 1 and refused, r.stderr[-2000:]
