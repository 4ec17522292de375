"""Scene assembly: a robot config's MJCF edited on its `mujoco.MjSpec` into the one model that
training, export and sim-to-sim use, with the terrain and the objects beside it, and every
index the terms need looked up by name (`Scene`, its named entities).

    scene = assemble("unitree_go1", terrain="rough", objects={"cube": {"size": [0.02] * 3}})
    scene.entities["robot"].bodies, scene.entities["cube"].root_body

Assembly, on the spec (never on an edited copy of vendor XML): a floor where the model has none;
IMU sensors (gyro, accelerometer, orientation, velocimeter) at the configured site; the actuators
replaced by one position actuator per policy joint, in action order, with the configured gains
and effort limits (or the MJCF's own position gains where the config gives none: a torque-motor
model must give them); a `home` keyframe at the default pose; optionally feet-only collisions,
or none at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from simrl.errors import ConfigError, UnknownNameError
from simrl.scene.entity import Entity, entities_of
from simrl.scene.objects import ObjectIds, object_ids, objects_from
from simrl.scene.objects import add_to_spec as add_objects
from simrl.scene.robot import (
    CONES,
    DEFAULT_KEY,
    GROUND,
    IMU_SENSORS,
    RobotCfg,
    joint_ranges,
    load_robot,
    load_spec,
    per_joint,
)
from simrl.terrain import Terrain, add_to_spec, generate, terrain_from


# --- assembly --------------------------------------------------------------------------------
@dataclass
class Scene:
    """The assembled model and the robot's indices in it, looked up by name."""

    model: mujoco.MjModel
    robot: RobotCfg
    origin: dict[str, str]
    root_qpos: int | None  # qpos address of the root free joint (pos 3, quat 4); None: fixed base
    root_dof: int | None  # dof address of the root free joint (lin 3, ang 3; ang in the body frame)
    joint_qpos: np.ndarray  # (num_joints,) qpos address per policy joint, in action order
    joint_dof: np.ndarray  # (num_joints,) dof address per policy joint
    root_body: int
    feet: np.ndarray  # body ids
    terminate_contacts: np.ndarray  # body ids
    penalize_contacts: np.ndarray  # body ids
    default_joint_pos: np.ndarray  # (num_joints,)
    imu_pos: np.ndarray | None  # (3,) IMU site position in the root body frame; None: no IMU
    imu_quat: np.ndarray | None  # (4,) IMU site orientation in the root body frame (wxyz)
    kp: np.ndarray
    kd: np.ndarray
    effort_limit: np.ndarray
    terrain: Terrain | None = None  # the generated grid, where the ground is not a plane
    # the held joints (RobotCfg.held_joints), after the policy's: qpos addresses, the angle each
    # is held at, and its servo's gains; their actuators follow the policy's in the model
    held_qpos: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    held_pos: np.ndarray = field(default_factory=lambda: np.zeros(0))
    held_kp: np.ndarray = field(default_factory=lambda: np.zeros(0))
    held_kd: np.ndarray = field(default_factory=lambda: np.zeros(0))
    objects: dict[str, ObjectIds] = field(default_factory=dict)  # free bodies beside the robot
    # the robot ("robot") and each object by its name: what term params name entity by entity
    entities: dict[str, Entity] = field(default_factory=dict)

    @property
    def fixed_base(self) -> bool:
        """True where the root body has no free joint (an arm bolted to the world)."""
        return self.root_qpos is None

    def facts(self) -> dict[str, Any]:
        """What a robot-side program needs, as plain data (export writes it to policy.json)."""
        return {
            "name": self.robot.name,
            "source": self.origin,
            "config": self.robot.to_dict(),
            "joint_names": list(self.robot.joints),
            "default_joint_pos": self.default_joint_pos.tolist(),
            "kp": self.kp.tolist(),
            "kd": self.kd.tolist(),
            "effort_limit": self.effort_limit.tolist(),
            "action_scale": float(self.robot.action_scale),
            # joints a robot-side program holds at `pos` with these gains while it commands the
            # policy's (the deploy controller does, from stand on)
            "held": {"joint_names": list(self.robot.held_joints), "pos": self.held_pos.tolist(),
                     "kp": self.held_kp.tolist(), "kd": self.held_kd.tolist(),
                     # their position ranges (None: unlimited), checked by the deploy controller
                     "joint_pos": joint_ranges(self.model, [self.model.joint(j).id
                                                            for j in self.robot.held_joints])},
        }


def _names(items) -> list[str]:
    return [x.name for x in items]


def _add_sites(spec: mujoco.MjSpec, robot: RobotCfg) -> None:
    """The config's `sites`, each on a named body of the MJCF at a pose in that body's frame."""
    bodies, sites = _names(spec.bodies), _names(spec.sites)
    for name, where in robot.sites.items():
        where = dict(where or {})
        unknown = sorted(set(where) - {"body", "pos", "quat"})
        if unknown or "body" not in where:
            raise ConfigError(f"robot '{robot.name}': site '{name}' takes body (required), pos and quat; "
                              f"got {sorted(where)}")
        if name in sites:
            raise ConfigError(f"robot '{robot.name}': site '{name}' is already in the MJCF "
                              f"({robot.source}): use it as it is, or add the new one under another name")
        if where["body"] not in bodies:
            valid = [b for b in bodies if b][:60]
            raise UnknownNameError(f"robot '{robot.name}': site '{name}' is on body '{where['body']}', which "
                                   f"is not in the MJCF ({robot.source}); valid: {valid}")
        pos, quat = where.get("pos", [0.0, 0.0, 0.0]), where.get("quat", [1.0, 0.0, 0.0, 0.0])
        if len(pos) != 3 or len(quat) != 4:
            raise ConfigError(f"robot '{robot.name}': site '{name}' needs pos [x, y, z] and quat "
                              f"[w, x, y, z], got pos {pos}, quat {quat}")
        spec.body(where["body"]).add_site(name=name, pos=[float(v) for v in pos],
                                          quat=[float(v) for v in quat])


def _check_names(spec: mujoco.MjSpec, robot: RobotCfg) -> None:
    bodies, joints = _names(spec.bodies), _names(spec.joints)
    sites, geoms = _names(spec.sites), _names(spec.geoms)
    checks = [("root_body", [robot.root_body], bodies), ("feet", robot.feet, bodies),
              ("joints", robot.joints, joints), ("held_joints", robot.held_joints, joints),
              ("imu_site", [robot.imu_site] if robot.imu_site else [], sites),
              ("foot_geoms", robot.foot_geoms, geoms),
              ("terminate_contacts", robot.terminate_contacts, bodies),
              ("penalize_contacts", robot.penalize_contacts, bodies)]
    for what, wanted, valid in checks:
        missing = [n for n in wanted if n not in valid]
        if missing:
            shown = [v for v in valid if v][:60]
            hint = ""
            if valid is bodies and any(n in geoms for n in missing):  # a geom's name where a body's goes
                owner = {g.name: g.parent.name for g in spec.geoms}
                hint = (f" ({what} are bodies: {[n for n in missing if n in geoms]} are geoms, of bodies "
                        f"{[owner[n] for n in missing if n in geoms]})")
            raise UnknownNameError(f"robot '{robot.name}': {what} {missing} not in the MJCF "
                                   f"({robot.source}){hint}; valid: {shown}")
    if len(set(robot.joints)) != len(robot.joints):
        raise ConfigError(f"robot '{robot.name}': joints repeat in {robot.joints}")
    both = [j for j in robot.held_joints if j in set(robot.joints)]
    if both:
        raise ConfigError(f"robot '{robot.name}': held_joints names policy joints {both}: a joint is "
                          "either the policy's (joints) or held (held_joints), not both")
    if len(set(robot.held_joints)) != len(robot.held_joints):
        raise ConfigError(f"robot '{robot.name}': held_joints repeat in {robot.held_joints}")
    if robot.collision == "feet_only" and not robot.foot_geoms:
        raise ConfigError(f"robot '{robot.name}': collision=feet_only needs foot_geoms")


def _check_actuated(model: mujoco.MjModel, robot: RobotCfg) -> None:
    """Every joint the MJCF actuates must be a policy joint: assembly replaces the MJCF's
    actuators with the policy's, so a joint left out would hang limp with no motor."""
    actuated = [model.joint(int(model.actuator_trnid[a, 0])).name for a in range(model.nu)
                if model.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT]
    left_out = [j for j in dict.fromkeys(actuated) if j not in {*robot.joints, *robot.held_joints}]
    if left_out:
        raise ConfigError(f"robot '{robot.name}': joints leaves out {left_out}, which the MJCF "
                          f"({robot.source}) actuates: add them to joints (the policy drives them) or to "
                          f"held_joints (a servo holds them at the default pose); without a motor they "
                          f"would hang limp")


def _check_gains(robot: RobotCfg, key: str, values: np.ndarray, joints: list[str] | None = None) -> None:
    """kp and effort_limit > 0 on every joint; kd >= 0 (a servo without damping is allowed)."""
    bad = ~(values >= 0) if key == "kd" else ~(values > 0)
    if bad.any():
        rule = ">= 0" if key == "kd" else "> 0"
        wrong = {j: float(v) for j, v, b in zip(joints or robot.joints, values, bad, strict=True) if b}
        raise ConfigError(f"robot '{robot.name}': {key} must be {rule} on every joint, got {wrong}: "
                          f"fix {key} in the robot config (a number, a list, or {{joint regex: value}})")


def _mjcf_position_gains(model: mujoco.MjModel, joints: list[str]) -> dict[str, Any]:
    """kp, kd, effort limit of the MJCF's own position actuators on the joints (None if a joint
    has none, or a torque motor), and the ctrlrange of each joint that has one."""
    kp, kd, lim, ctrlrange = [], [], [], {}
    position = True
    for j in joints:
        jid = model.joint(j).id
        acts = [i for i in range(model.nu) if model.actuator_trntype[i] == mujoco.mjtTrn.mjTRN_JOINT
                and model.actuator_trnid[i, 0] == jid]
        a = acts[0] if acts else None
        if a is None or model.actuator_biastype[a] != mujoco.mjtBias.mjBIAS_AFFINE \
                or model.actuator_gainprm[a, 0] <= 0:
            position = False  # a torque motor's ctrlrange is N m, not a target range
            continue
        if model.actuator_ctrllimited[a]:
            ctrlrange[j] = model.actuator_ctrlrange[a].copy()
        kp.append(model.actuator_gainprm[a, 0])
        kd.append(-model.actuator_biasprm[a, 2])
        lo, hi = model.actuator_forcerange[a]
        lim.append(max(abs(lo), abs(hi)) if model.actuator_forcelimited[a] else np.inf)
    if not position:
        return {"kp": None, "kd": None, "effort_limit": None, "ctrlrange": ctrlrange}
    return {"kp": np.asarray(kp), "kd": np.asarray(kd), "effort_limit": np.asarray(lim),
            "ctrlrange": ctrlrange}


def assemble(robot: RobotCfg | str | Path | dict, terrain: Any = None, objects: dict | None = None) -> Scene:
    """Build the scene model for `robot` (see the module docstring) on `terrain` (a
    simrl.terrain config, name or dict; None or "flat": a plane), with `objects` ({name:
    simrl.scene.objects.ObjectCfg fields}: free bodies such as a cube to pick up)."""
    robot = load_robot(robot)
    terrain_cfg = terrain_from(terrain)
    object_cfgs = objects_from(objects)
    spec, origin = load_spec(robot.source)
    _add_sites(spec, robot)
    _check_names(spec, robot)
    try:
        original = spec.compile()  # the vendor model as is: its gains, ranges, keyframes
    except ValueError as e:
        raise ConfigError(f"robot '{robot.name}': its MJCF ({robot.source}) does not compile: {e}") from e

    _check_actuated(original, robot)
    values = _servo_gains(original, robot, robot.joints, "policy")
    held = _servo_gains(original, robot, robot.held_joints, "held")

    # default pose: the keyframe's joints, or per-joint angles over qpos0
    qpos = original.qpos0.copy()
    if isinstance(robot.default_pose, str):
        kid = mujoco.mj_name2id(original, mujoco.mjtObj.mjOBJ_KEY, robot.default_pose)
        if kid < 0:
            keys = [original.key(i).name for i in range(original.nkey)]
            raise UnknownNameError(f"robot '{robot.name}': default_pose keyframe '{robot.default_pose}' "
                                   f"not in the MJCF; valid: {keys}, or give per-joint angles")
        qpos = original.key_qpos[kid].copy()
        default = np.array([qpos[original.joint(j).qposadr[0]] for j in robot.joints])
        held_pos = np.array([qpos[original.joint(j).qposadr[0]] for j in robot.held_joints])
    else:
        default = per_joint(robot.default_pose, robot.joints, f"robot '{robot.name}': default_pose")
        held_pos = per_joint(robot.default_pose, robot.held_joints, f"robot '{robot.name}': default_pose")
        for j, v in zip(robot.joints + robot.held_joints, np.concatenate([default, held_pos]), strict=True):
            qpos[original.joint(j).qposadr[0]] = v
        # a key that names a joint outside the policy sets its start too (a coupled finger)
        names = set(_names(spec.joints))
        for j, v in robot.default_pose.items():
            if j not in robot.joints and j in names:
                qpos[original.joint(j).qposadr[0]] = float(v)
    root = original.body(robot.root_body)
    floating = root.jntnum[0] >= 1 and original.jnt_type[root.jntadr[0]] == mujoco.mjtJoint.mjJNT_FREE
    root_qpos = int(original.jnt_qposadr[root.jntadr[0]]) if floating else None
    if robot.base_height is not None:
        if not floating:
            raise ConfigError(f"robot '{robot.name}': base_height is set but root_body '{robot.root_body}' "
                              "has no free joint (a fixed base): remove base_height")
        qpos[root_qpos + 2] = robot.base_height

    if robot.timestep is not None:
        if robot.timestep <= 0:
            raise ConfigError(f"robot '{robot.name}': timestep must be > 0, got {robot.timestep}")
        spec.option.timestep = robot.timestep
    if robot.cone is not None:
        spec.option.cone = CONES[robot.cone]
    if robot.impratio is not None:
        spec.option.impratio = robot.impratio
    # the ground: a generated height-field grid (replacing the model's planes), or a floor
    # plane where the model has none
    world = spec.worldbody
    grid = None
    if terrain_cfg.name != "flat":
        for g in list(world.geoms):
            if g.type == mujoco.mjtGeom.mjGEOM_PLANE:
                spec.delete(g)
        grid = generate(terrain_cfg)
        add_to_spec(spec, grid)
    if grid is None and not any(g.type in GROUND for g in world.geoms):
        world.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 0.05],
                       rgba=[0.5, 0.55, 0.6, 1], contype=1, conaffinity=1)
        world.add_light(name="sun", pos=[0, 0, 4], dir=[0, 0, -1],
                        type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL)
    if robot.collision != "mjcf":  # robot geoms: contype 0, conaffinity 1; floor: contype 1
        feet = set(robot.foot_geoms)
        for g in spec.geoms:
            if g.parent == world:  # the ground: a plane, or the terrain's boxes and hfield
                g.contype = 1
            elif robot.collision == "none":
                g.contype, g.conaffinity = 0, 0
            elif robot.collision == "feet_only":
                g.contype, g.conaffinity = 0, int(g.name in feet)
            elif g.contype or g.conaffinity:
                g.contype, g.conaffinity = 0, 1
    if robot.condim is not None:
        for g in spec.geoms:
            if g.parent != world and g.conaffinity:
                g.condim = robot.condim

    # IMU sensors at the configured site (replacing any of the same names)
    if robot.imu_site:
        for s in list(spec.sensors):
            if s.name in IMU_SENSORS:
                spec.delete(s)
        for name, kind in IMU_SENSORS.items():
            spec.add_sensor(name=name, type=kind, objtype=mujoco.mjtObj.mjOBJ_SITE, objname=robot.imu_site)

    # actuators: one position actuator per policy joint, in action order, then one per held joint
    for a in list(spec.actuators):
        spec.delete(a)
    servos = {k: np.concatenate([values[k], held[k]]) for k in ("kp", "kd", "effort_limit")}
    servos_range = {**values["ctrlrange"], **held["ctrlrange"]}
    for j, kp, kd, lim in zip(robot.joints + robot.held_joints, servos["kp"], servos["kd"],
                              servos["effort_limit"], strict=True):
        act = spec.add_actuator(name=j, target=j, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        act.set_to_position(kp=float(kp), kv=float(kd))
        jid = original.joint(j).id
        ctrlrange = servos_range.get(j)  # the MJCF's own target range, else the joint's
        if ctrlrange is None and original.jnt_limited[jid]:
            ctrlrange = original.jnt_range[jid]
        if ctrlrange is not None:
            act.ctrlrange = ctrlrange
            act.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
        if np.isfinite(lim):
            act.forcerange = [-float(lim), float(lim)]
            act.forcelimited = mujoco.mjtLimited.mjLIMITED_TRUE

    # one keyframe, DEFAULT_KEY: the default pose, standing still, targets at the pose
    for k in list(spec.keys):
        spec.delete(k)
    add_objects(spec, object_cfgs)  # after the robot: their qpos follow its own
    for obj in object_cfgs:
        qpos = np.concatenate([qpos, [obj.pos[0], obj.pos[1], obj.pos[2] + obj.size[2], 1.0, 0.0, 0.0, 0.0]])
    spec.add_key(name=DEFAULT_KEY, qpos=qpos.tolist(), ctrl=np.concatenate([default, held_pos]).tolist())

    try:
        model = spec.compile()
    except ValueError as e:
        raise ConfigError(f"robot '{robot.name}': the assembled scene does not compile: {e}") from e
    body = lambda names: np.array([model.body(n).id for n in names], dtype=np.int64)  # noqa: E731
    site = model.site(robot.imu_site) if robot.imu_site else None
    if site is not None and site.bodyid[0] != model.body(robot.root_body).id:
        raise ConfigError(f"robot '{robot.name}': imu_site '{robot.imu_site}' is on body "
                          f"'{model.body(site.bodyid[0]).name}', not on root_body '{robot.root_body}': "
                          "the IMU must ride on the base (add a site on the base with `sites:`)")
    objects_at = object_ids(model, object_cfgs)
    return Scene(
        model=model, robot=robot, origin=origin, root_qpos=root_qpos,
        entities=entities_of(model, int(model.body(robot.root_body).id),
                             {name: ids.body for name, ids in objects_at.items()}),
        root_dof=int(model.jnt_dofadr[model.body(robot.root_body).jntadr[0]]) if floating else None,
        joint_qpos=np.array([model.joint(j).qposadr[0] for j in robot.joints], dtype=np.int64),
        joint_dof=np.array([model.joint(j).dofadr[0] for j in robot.joints], dtype=np.int64),
        root_body=int(model.body(robot.root_body).id), feet=body(robot.feet),
        terminate_contacts=body(robot.terminate_contacts or [robot.root_body]),
        penalize_contacts=body(robot.penalize_contacts), default_joint_pos=default,
        imu_pos=None if site is None else site.pos.copy(),
        imu_quat=None if site is None else site.quat.copy(),
        kp=values["kp"], kd=values["kd"], terrain=grid,
        effort_limit=effort_limits(model, robot.joints, values["effort_limit"]),
        objects=objects_at,
        held_qpos=np.array([model.joint(j).qposadr[0] for j in robot.held_joints], dtype=np.int64),
        held_pos=np.asarray(held_pos, dtype=np.float64), held_kp=np.asarray(held["kp"], dtype=np.float64),
        held_kd=np.asarray(held["kd"], dtype=np.float64),
    )


def effort_limits(model: mujoco.MjModel, joints: list[str], actuator: np.ndarray) -> np.ndarray:
    """Each joint's torque limit as the simulation applies it: the lower of its actuator's and
    the joint's own `actuatorfrcrange` (which MuJoCo clamps the summed actuator force to)."""
    out = np.asarray(actuator, dtype=np.float64).copy()
    for k, j in enumerate(joints):
        jid = model.joint(j).id
        if model.jnt_actfrclimited[jid]:
            out[k] = min(out[k], float(np.abs(model.jnt_actfrcrange[jid]).max()))
    return out


def _servo_gains(original: mujoco.MjModel, robot: RobotCfg, joints: list[str], which: str) -> dict:
    """kp, kd, effort limit (and the MJCF's ctrlrange) of `joints`: the config's per-joint
    values, else the MJCF's own position actuators'. A list of values is in action order, so it
    covers the policy's joints only: held joints take one number or {regex: value}."""
    gains = _mjcf_position_gains(original, joints)
    values: dict[str, Any] = {"ctrlrange": gains["ctrlrange"]}
    for k in ("kp", "kd", "effort_limit"):
        given = getattr(robot, k)
        if which == "held" and joints and isinstance(given, (list, tuple)):
            raise ConfigError(f"robot '{robot.name}': {k} is a list (one value per policy joint, in action "
                              f"order), which leaves the held joints without one: give {k} as one number "
                              "or {joint regex: value}")
        v = per_joint(given, joints, f"robot '{robot.name}': {k}")
        if v is None:
            v = gains[k]
        if v is None:
            raise ConfigError(
                f"robot '{robot.name}': {k} is not set and the MJCF has no position actuator on "
                f"every {which} joint (torque motors?): give {k} in the robot config"
            )
        _check_gains(robot, k, np.asarray(v, dtype=float), joints)
        values[k] = np.asarray(v, dtype=np.float64).reshape(len(joints))
    return values
