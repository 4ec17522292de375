"""Objects: free bodies a scene holds beside its robot (a cube to pick up), as data.

    objects = {"cube": {"size": [0.02, 0.02, 0.02], "mass": 0.05, "pos": [0.5, 0.0, 0.02]}}
    scene = assemble("franka_panda_hand", objects=objects)   # simrl.scene
    scene.objects["cube"].qpos                                 # qpos address of its free joint

Each object is one box geom on a body with a free joint, added on the scene's `MjSpec` after
the robot (so its qpos and dofs come last), at rest at `pos` in the `home` keyframe. Its
contype/conaffinity default to 1/1: it touches the floor and any robot geom whose contype or
conaffinity has bit 0 (Menagerie's mjx_panda collides through exactly those on its fingertips).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import mujoco

from simrl.errors import ConfigError, UnknownNameError


@dataclass
class ObjectCfg:
    """A box: half sizes (m), mass (kg), MuJoCo's friction triple, rest position (world)."""

    name: str
    size: list[float]  # half extents [x, y, z]
    mass: float = 0.1
    friction: list[float] = field(default_factory=lambda: [1.0, 0.005, 0.0001])
    pos: list[float] = field(default_factory=lambda: [0.5, 0.0, 0.0])  # z 0: resting on the floor
    rgba: list[float] = field(default_factory=lambda: [0.85, 0.2, 0.2, 1.0])
    contype: int = 1
    conaffinity: int = 1


@dataclass
class ObjectIds:
    """Where an assembled object lives in the model."""

    body: int
    qpos: int  # free joint: pos 3, quat 4
    dof: int  # lin 3, ang 3
    rest_pos: list[float]  # its keyframe position (world)


def objects_from(values: dict[str, Any] | None) -> list[ObjectCfg]:
    """Object configs from {name: fields}; a missing size, an unknown field or a bad value is
    refused naming it."""
    out = []
    names = [f.name for f in dataclasses.fields(ObjectCfg) if f.name != "name"]
    for name, fields in dict(values or {}).items():
        fields = dict(fields or {})
        unknown = sorted(set(fields) - set(names))
        if unknown:
            raise UnknownNameError(f"object '{name}': unknown fields {unknown}; valid: {names}")
        if "size" not in fields:
            raise ConfigError(f"object '{name}' has no size: give size: [hx, hy, hz] (half extents, m)")
        obj = ObjectCfg(name=str(name), **fields)
        obj.size = [float(v) for v in obj.size]
        if len(obj.size) != 3 or min(obj.size) <= 0:
            raise ConfigError(f"object '{name}': size must be 3 half extents > 0 (m), got {obj.size}")
        if not obj.mass > 0:
            raise ConfigError(f"object '{name}': mass must be > 0 kg, got {obj.mass}")
        if len(obj.pos) != 3 or len(obj.friction) != 3:
            raise ConfigError(f"object '{name}': pos needs [x, y, z] and friction [slide, spin, roll], "
                              f"got pos {obj.pos}, friction {obj.friction}")
        out.append(obj)
    return out


def add_to_spec(spec: mujoco.MjSpec, objects: list[ObjectCfg]) -> None:
    """Each object as a free body with one box geom, resting on z = pos z + its half height."""
    taken = {b.name for b in spec.bodies}
    for obj in objects:
        if obj.name in taken:
            raise ConfigError(f"object '{obj.name}': the scene already has a body of that name; rename it")
        x, y, z = obj.pos
        body = spec.worldbody.add_body(name=obj.name, pos=[x, y, z + obj.size[2]])
        body.add_freejoint(name=f"{obj.name}_free")
        body.add_geom(name=obj.name, type=mujoco.mjtGeom.mjGEOM_BOX, size=obj.size, mass=obj.mass,
                      friction=obj.friction, rgba=obj.rgba, contype=obj.contype,
                      conaffinity=obj.conaffinity, condim=3)


def object_ids(model: mujoco.MjModel, objects: list[ObjectCfg]) -> dict[str, ObjectIds]:
    out = {}
    for obj in objects:
        body = model.body(obj.name)
        jnt = int(body.jntadr[0])
        out[obj.name] = ObjectIds(body=int(body.id), qpos=int(model.jnt_qposadr[jnt]),
                                  dof=int(model.jnt_dofadr[jnt]),
                                  rest_pos=[*obj.pos[:2], obj.pos[2] + obj.size[2]])
    return out
