"""Named entities of a scene: the robot and each object, with the ids of the bodies, joints and
sites that belong to it, so a term can name them entity by entity (`robot/.*_foot`, `cube`)."""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from simrl.errors import ConfigError


@dataclass(frozen=True)
class Entity:
    """One articulated or rigid thing in the scene and where it lives in the model."""

    name: str
    kind: str  # "robot" or "object"
    root_body: int
    bodies: tuple[int, ...]  # its root body and every body below it
    joints: tuple[int, ...]
    sites: tuple[int, ...]
    fixed_base: bool  # no free joint on its root body (an arm bolted to the world, a fixed prop)

    def ids(self, objtype: mujoco.mjtObj) -> tuple[int, ...]:
        """Its ids of one kind of model object (body, joint or site)."""
        return {mujoco.mjtObj.mjOBJ_BODY: self.bodies, mujoco.mjtObj.mjOBJ_JOINT: self.joints,
                mujoco.mjtObj.mjOBJ_SITE: self.sites}[objtype]


def entity_at(model: mujoco.MjModel, name: str, kind: str, root_body: int) -> Entity:
    """The entity rooted at `root_body`: that body's subtree and the joints and sites on it."""
    below = [b for b in range(model.nbody) if _under(model, b, root_body)]
    inside = np.isin(model.jnt_bodyid, below)
    root_jnt = int(model.body_jntadr[root_body])
    free = root_jnt >= 0 and model.jnt_type[root_jnt] == mujoco.mjtJoint.mjJNT_FREE
    return Entity(name=name, kind=kind, root_body=int(root_body), bodies=tuple(below),
                  joints=tuple(int(j) for j in np.flatnonzero(inside)),
                  sites=tuple(int(s) for s in np.flatnonzero(np.isin(model.site_bodyid, below))),
                  fixed_base=not free)


def _under(model: mujoco.MjModel, body: int, root: int) -> bool:
    while body > 0:
        if body == root:
            return True
        body = int(model.body_parentid[body])
    return body == root


def entities_of(model: mujoco.MjModel, robot_root: int, objects: dict[str, int]) -> dict[str, Entity]:
    """The scene's entities: `robot` (rooted at its root body) and each object by its name."""
    out = {"robot": entity_at(model, "robot", "robot", robot_root)}
    for name, body in objects.items():
        if name in out:
            raise ConfigError(f"object '{name}': the scene's robot entity has that name; rename the object")
        out[name] = entity_at(model, name, "object", body)
    return out
