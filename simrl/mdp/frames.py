"""Where the scene's bodies and sites are, in the robot's base frame: the data view that arm
and hand terms read (an end-effector's pose, an object's position relative to the base).

    pos, quat = site_pose_b(env, site)     # (N, 3), (N, 4) wxyz
    pos = body_pos_b(env, body)            # (N, 3)

Read from the last kinematics (`xpos`, `xquat`): after a physics step, or after a spawn event's
`forward_kinematics` (a fixed base's pose is the model's, known from the start). A term's `site`
param of None means the task's end-effector, the config's `ee_site`, resolved to its id once
per env.
"""

from __future__ import annotations

import weakref
from typing import Any

import mujoco
import torch

from simrl.errors import ConfigError
from simrl.math import quat_conjugate, quat_mul, quat_rotate, quat_rotate_inv

_SITES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # env -> site bodies and offsets
_FIXED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # env -> a fixed base's world pose
_EE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # env -> the ee_site's id


def base_pose(env: Any, term: str = "a base-frame pose") -> tuple[torch.Tensor, torch.Tensor]:
    """The robot's root body pose in the world: position (N, 3), orientation (N, 4). A fixed
    base's never moves: computed once from the model, so it holds before the first physics step
    too; a floating base's is the last kinematics' (`xpos`, `xquat`)."""
    scene = getattr(env, "scene", None)
    if scene is None:
        raise ConfigError(f"{term} needs a task over a robot scene (a config with `robot`); task "
                          f"'{env.task_name}' has none: read it with a term of its own")
    base = scene.root_body
    if not scene.fixed_base:
        return env.sim.xpos[:, base].float(), env.sim.xquat[:, base].float()
    if env not in _FIXED:
        d = mujoco.MjData(env.model)
        mujoco.mj_kinematics(env.model, d)
        n, f32 = env.num_envs, dict(device=env.device, dtype=torch.float32)
        _FIXED[env] = (torch.as_tensor(d.xpos[base], **f32).expand(n, 3),
                       torch.as_tensor(d.xquat[base], **f32).expand(n, 4))
    return _FIXED[env]


def body_pos_b(env: Any, body: int) -> torch.Tensor:
    """Body `body`'s position (N, 3) in the base frame."""
    base_pos, base_quat = base_pose(env)
    return quat_rotate_inv(base_quat, env.sim.xpos[:, body].float() - base_pos)


def site_pose_b(env: Any, site: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Site `site`'s position (N, 3) and orientation (N, 4) in the base frame."""
    bodies, local_pos, local_quat = _site_frames(env)
    body = bodies[site]
    pos_w, quat_w = env.sim.xpos[:, body].float(), env.sim.xquat[:, body].float()
    pos_w = pos_w + quat_rotate(quat_w, local_pos[site].expand_as(pos_w))
    quat_w = quat_mul(quat_w, local_quat[site].expand_as(quat_w))
    base_pos, base_quat = base_pose(env)
    return quat_rotate_inv(base_quat, pos_w - base_pos), quat_mul(quat_conjugate(base_quat), quat_w)


def ee_site(env: Any, site: int | None = None) -> int:
    """`site`, or where it is None the task's end-effector site (`cfg.ee_site`)."""
    if site is not None:
        return site
    if env not in _EE:
        name = getattr(env.cfg, "ee_site", None)
        if name is None:
            raise ConfigError(f"task '{env.task_name}' has no ee_site: give the term a site param")
        _EE[env] = site_id(env.model, name, "ee_site")
    return _EE[env]


def site_id(m: mujoco.MjModel, name: str, what: str) -> int:
    """The id of site `name`, or a one-line error listing the model's sites."""
    sid = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, name)
    if sid < 0:
        valid = [m.site(i).name for i in range(m.nsite)]
        raise ConfigError(f"{what} '{name}' is not a site of the scene; valid: {valid} (add one on the "
                          "tool's body with the robot yaml's `sites:`)")
    return sid


def _site_frames(env: Any) -> tuple[list[int], torch.Tensor, torch.Tensor]:
    """Every site's body (host ints: indexing with them reads no device) and pose in it."""
    if env not in _SITES:
        m, f32 = env.model, dict(device=env.device, dtype=torch.float32)
        _SITES[env] = ([int(b) for b in m.site_bodyid], torch.as_tensor(m.site_pos, **f32),
                       torch.as_tensor(m.site_quat, **f32))
    return _SITES[env]
