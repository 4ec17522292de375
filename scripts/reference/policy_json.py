"""docs/reference/policy-json.md: the policy.json that simrl/rl/export.py writes, documented from a
real export (an untrained quadruped policy, exported into a temporary directory). Every key found
needs a line in MEANINGS, and every line there a key: the page cannot fall behind the format."""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import logging
import tempfile
import warnings
from pathlib import Path
from typing import Any

from .common import cell, header, prose

# Keys whose values are not described key by key: their keys are data (reading names, package
# names) or documented on another page (a robot config: robot-yaml.md).
OPAQUE = {"reading_docs", "versions", "robot.config", "deploy.scene.robot", "obs_terms[].read.args"}
ROBOT = "The robot config as loaded: every field of RobotCfg ([robot-yaml.md](robot-yaml.md))"
MEANINGS = {
    "format_version": "The format's version (`FORMAT_VERSION`, below): a runtime refuses a newer one.",
    "task": "The task the policy was trained on (`simrl.make` name).",
    "obs_groups": "The observation groups the policy reads, concatenated in this order.",
    "obs_dim": "Length of the policy's input vector `obs` (every term's columns).",
    "obs_terms": "The observation terms in input order, each saying where it sits and how a robot builds it.",
    "obs_terms[].name": "The term's name in the task config.",
    "obs_terms[].start": "First column of the term in `obs`.",
    "obs_terms[].stop": "One past its last column (`stop - start = width x history`).",
    "obs_terms[].scale": "Factor applied to the raw value (one number, or one per column).",
    "obs_terms[].history": "Frames stacked, oldest first (1: the current frame only).",
    "obs_terms[].width": "Columns of one frame.",
    "obs_terms[].clip": "The term's own clip to +-clip after scaling (null: only `obs_clip`).",
    "obs_terms[].delay": "Control steps the term lags by in training (a sensor's latency).",
    "obs_terms[].read": "How the robot-side runtime builds the term from raw readings.",
    "obs_terms[].read.reading": "The raw reading (or the list of readings an op combines) it is built from.",
    "obs_terms[].read.op": "The math that makes the term of the reading (`simrl.deploy.OPS`; absent: value).",
    "obs_terms[].read.minus": "Subtracted from the reading: values, or a policy.json key "
                              "(`default_joint_pos`).",
    "obs_terms[].read.args": "The op's keyword arguments (e.g. a gait clock's period and offsets).",
    "obs_clip": "Every observation clipped to +-obs_clip after scaling.",
    "readings": "The raw readings a robot must supply each control step, in a stable order.",
    "reading_docs": "What each raw reading is: {reading: its meaning and units}.",
    "num_actions": "Length of the policy's output `actions`.",
    "action": "How actions become actuator targets (simrl.managers.action).",
    "action.scale": "Action to target factor: one number, or one per actuator.",
    "action.mode": "`absolute`: target = offset + scale x action; `delta`: target += scale x action.",
    "action.offset": "Targets at action 0 (the default pose), per actuator.",
    "action.clip": "Actions clipped to +-clip before they are applied.",
    "action.actuator_names": "The MJCF actuator of each action column.",
    "action.joint_names": "The joint each action column drives.",
    "action.kp": "Position gain of each actuator (the PD gains to run on the robot).",
    "action.kd": "Damping gain of each actuator.",
    "action.torque_limit": "|torque| limit of each actuator (Infinity where unlimited).",
    "action.ctrl_range": "Control range [lo, hi] of each actuator.",
    "default_joint_pos": "The policy joints' default pose (rad), in action order.",
    "control_dt": "Seconds per policy step (physics_dt x decimation).",
    "deploy": "What sim-to-sim and a robot-side program need to rehearse and guard the task.",
    "deploy.scene": "How to rebuild the scene in plain MuJoCo C.",
    "deploy.scene.robot": ROBOT + ".",
    "deploy.keyframe": "The MJCF keyframe episodes start from.",
    "deploy.episode_length_s": "Episode length in training (s).",
    "deploy.tracks_commands": "Whether the policy tracks a velocity command (evaluation reports tracking).",
    "deploy.termination": "The termination terms' facts, checked robot-side and in sim-to-sim.",
    "deploy.termination.max_tilt_cos": "An episode ends when the base tilts past acos(this) from upright.",
    "deploy.termination.contact_bodies": "Bodies whose contact ends an episode.",
    "deploy.reset": "The reset events' facts: how an episode's start is drawn.",
    "deploy.reset.joint_scale": "The default joint pose is scaled by a uniform factor in [lo, hi] at reset.",
    "deploy.limits": "The safety envelope the deploy controller enforces.",
    "deploy.limits.joint_pos": "Each actuated joint's position range [lo, hi] (null: unlimited).",
    "deploy.command_ranges": "The trained command ranges [[lo, hi] per command column].",
    "deploy.action_delay": "Action delay trained with, [min, max] control steps (a robot has its own).",
    "deploy.terrain": "The terrain grid config trained on (null: flat ground).",
    "robot": "The robot's facts as assembled (simrl.scene.assemble).",
    "robot.name": "The robot config's name.",
    "robot.source": "Where the MJCF came from: a path and its sha256, or a Menagerie model and commit.",
    "robot.source.path": "The MJCF path (relative to assets/ or absolute).",
    "robot.source.sha256": "sha256 of that MJCF file.",
    "robot.config": ROBOT + ".",
    "robot.joint_names": "The policy joints, in action order.",
    "robot.default_joint_pos": "Their default pose (rad).",
    "robot.kp": "Position gains per policy joint, as resolved from the robot config.",
    "robot.kd": "Damping gains per policy joint.",
    "robot.effort_limit": "|torque| limits per policy joint.",
    "robot.action_scale": "The robot config's action scale (rad per unit action).",
    "robot.held": "Joints held still by a robot-side servo while the policy drives the others.",
    "robot.held.joint_names": "The held joints.",
    "robot.held.pos": "The angle each is held at (rad).",
    "robot.held.kp": "Their position gains.",
    "robot.held.kd": "Their damping gains.",
    "robot.held.joint_pos": "Their position ranges [lo, hi] (null: unlimited), checked by the controller.",
    "physics_dt": "Physics step (s).",
    "decimation": "Physics steps per policy step.",
    "versions": "Versions of simrl and the packages that made the export: {package: version}.",
    "checkpoint": "The checkpoint file exported.",
    "checkpoint_sha256": "Its sha256.",
    "onnx_sha256": "sha256 of policy.onnx: the deploy runtime refuses an ONNX file that does not match.",
}


def export_quadruped() -> dict[str, Any]:
    """policy.json of an untrained quadruped policy (one short iteration on 16 envs, on the CPU)."""
    from hydra import compose, initialize_config_dir

    from simrl.paths import CONFIGS
    from simrl.rl.app import export, train

    def config(name: str, *overrides: str):
        with initialize_config_dir(config_dir=str(CONFIGS), version_base=None):
            return compose(name, overrides=list(overrides))

    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.disable(logging.WARNING)
        run = Path(tmp) / "run"
        train(config("train", "task=quadruped", "num_envs=16", "max_iterations=1", "progress=false",
                     "device=cpu", "agent.num_steps_per_env=4", f"log_root={tmp}"), run)
        report = export(config("export", f"checkpoint={run}", "num_envs=16", "num_check=16"))
        logging.disable(logging.NOTSET)
        return json.loads(Path(report["json"]).read_text())


def json_type(values: list[Any]) -> str:
    """The JSON type(s) of `values` (one key's value in each place it occurs)."""
    def one(v: Any) -> str:
        if isinstance(v, list):
            return f"list[{json_type(v)}]" if v else "list"
        return {type(None): "null", bool: "bool", int: "int", float: "float", str: "string",
                dict: "object"}[type(v)]
    return " or ".join(sorted({one(v) for v in values}))


def walk(values: list[Any], path: str, out: dict[str, list[Any]]) -> None:
    """Every documented key under `path` -> its values wherever it occurs, depth first (the objects
    of a list share one `path[]`)."""
    if path in OPAQUE:
        return
    items = [x for v in values if isinstance(v, list) for x in v if isinstance(x, dict)]
    if items:
        walk(items, path + "[]", out)
    children: dict[str, list[Any]] = {}
    for v in values:
        for k, sub in (v.items() if isinstance(v, dict) else ()):
            children.setdefault(k, []).append(sub)
    for k, subs in children.items():
        key = f"{path}.{k}" if path else k
        out[key] = subs
        walk(subs, key, out)


def format_history() -> str:
    """The comment above FORMAT_VERSION in simrl/deploy/runtime.py: what each version added."""
    from simrl.deploy import runtime

    lines = inspect.getsource(runtime).splitlines()
    end = next(i for i, line in enumerate(lines) if line.startswith("FORMAT_VERSION"))
    start = end
    while start > 0 and lines[start - 1].startswith("#"):
        start -= 1
    text = " ".join(line.lstrip("#").strip() for line in lines[start:end])
    return text[:1].upper() + text[1:]


def page() -> tuple[str, list[str]]:
    """(the page's text, the problems: keys without a meaning, meanings without a key)."""
    from simrl.deploy.runtime import FORMAT_VERSION
    from simrl.rl import export

    meta = export_quadruped()
    keys: dict[str, list[Any]] = {}
    walk([meta], "", keys)
    problems = [f"policy.json key '{k}' has no meaning in scripts/reference/policy_json.py MEANINGS"
                for k in keys if k not in MEANINGS]
    problems += [f"MEANINGS has '{k}', which the export does not write: remove it from "
                 "scripts/reference/policy_json.py" for k in MEANINGS if k not in keys]
    lines = header("policy.json", "The format of `policy.json`, which `python export.py checkpoint=<run>` "
                   "(simrl/rl/export.py) writes beside `policy.onnx`: everything a robot-side program "
                   "(simrl.deploy) needs to build the policy's observation and apply its actions.")
    lines += [prose(inspect.cleandoc(export.__doc__).split("\n\n", 1)[1].replace("\n", " ")), "",
              "## Format version", "",
              f"This page documents `format_version` **{FORMAT_VERSION}** (`simrl.deploy.runtime."
              f"FORMAT_VERSION`). {prose(format_history())}.", "",
              "## Keys", "",
              "Every key of the policy.json of a quadruped policy (`task=quadruped`, its default robot), "
              "in file order; `[]` marks the objects of a list. Other tasks and robots write the same "
              "top-level keys, with their own facts under `deploy` and `action` (an arm's pose "
              "target, a gripper's `binary` columns, a reference gait's `priors`).", "",
              "| key | type | meaning |", "| --- | --- | --- |"]
    for k in keys:
        lines.append(f"| `{k}` | {json_type(keys[k])} | {cell(MEANINGS.get(k, '**undocumented**'))} |")
    return "\n".join(lines) + "\n", problems
