"""Terms over a free object of the scene (a cube in a hand, a box on a table): its pose for the
policy as perception reports it, its velocities for the critic, where each episode puts it,
and its fall ending the episode.

    observations: {policy: {cube_pose: {func: object_pose, params: {body: cube}}}}
    events: {place_cube: {func: reset_object_pose, mode: spawn, params: {body: cube,
             x: [0.08, 0.12], y: [-0.01, 0.01], z: [0.16, 0.17], yaw: [-3.1416, 3.1416]}}}
    terminations: {cube_dropped: {func: object_below, params: {body: cube, min_height: 0.05}}}

State is read from the object's free joint (`qpos`, `qvel`), which a reset sets. Poses are in
the robot's base frame, its root body's: for a fixed-base robot (a hand, an arm) that pose never
moves and is known from the model, so the first observation of an episode is the object's new
pose; for a floating base it is the last physics step's (`xpos`, `xquat`), one step stale in the
first observation after a reset.
Each term declares what a robot-side program and sim-to-sim need: the observation its reading
(policy.json `deploy.sim_readings` says how sim-to-sim makes it from MuJoCo's state), the event
and termination their facts (`deploy.reset.object_poses`, `deploy.termination.min_body_height`).
"""

from __future__ import annotations

import weakref
from typing import Any

import mujoco
import torch

from simrl.errors import ConfigError
from simrl.managers.observation import observation
from simrl.managers.termination import deploy_facts
from simrl.math import quat_conjugate, quat_mul, quat_rotate, quat_rotate_inv, yaw_quat
from simrl.mdp.frames import base_pose

_FREE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # env -> {body: (qpos, dof)}


def free_joint(env: Any, body: int, term: str) -> tuple[int, int]:
    """(qpos address, dof address) of `body`'s free joint, looked up once per env and body (the
    terms call it every step); a body without one is refused."""
    known = _FREE.setdefault(env, {})
    if body not in known:
        known[body] = _free_joint(env, body, term)
    return known[body]


def _free_joint(env: Any, body: int, term: str) -> tuple[int, int]:
    m = env.model
    jnt = int(m.body_jntadr[body])
    if jnt < 0 or m.jnt_type[jnt] != mujoco.mjtJoint.mjJNT_FREE:
        free = [m.body(b).name for b in range(m.nbody) if m.body_jntadr[b] >= 0
                and m.jnt_type[m.body_jntadr[b]] == mujoco.mjtJoint.mjJNT_FREE]
        raise ConfigError(f"{term}: body '{m.body(body).name}' has no free joint; free bodies: {free}")
    return int(m.jnt_qposadr[jnt]), int(m.jnt_dofadr[jnt])


def _name(params: dict[str, Any]) -> str:
    return str(params["body"]).split("/")[-1]


def _pose_read(params: dict[str, Any]) -> dict[str, Any]:
    """The reading `<object>_pose` and how sim-to-sim makes it (the body in the robot's base)."""
    name = _name(params)
    return {"reading": f"{name}_pose",
            "doc": f"the {name}'s pose in the robot's base frame: [x, y, z] m, quaternion wxyz "
                   "(perception's estimate)",
            "sim": {"body": params["body"], "frame_body": None, "quantity": "pose"}}


@observation(read=_pose_read)
def object_pose(env: Any, body: int) -> torch.Tensor:
    """`body`'s position (3) and orientation (4, wxyz) in the robot's base frame (N, 7)."""
    base_pos, base_quat = base_pose(env, "object_pose")
    q, _ = free_joint(env, body, "object_pose")
    pos_w, quat_w = env.sim.qpos[:, q : q + 3].float(), env.sim.qpos[:, q + 3 : q + 7].float()
    return torch.cat([quat_rotate_inv(base_quat, pos_w - base_pos),
                      quat_mul(quat_conjugate(base_quat), quat_w)], dim=1)


def object_ang_vel_w(env: Any, body: int) -> torch.Tensor:
    """`body`'s angular velocity in the world frame (N, 3): privileged (no robot reads it)."""
    q, d = free_joint(env, body, "object_ang_vel_w")
    local = env.sim.qvel[:, d + 3 : d + 6].float()  # a free joint's angular velocity: body frame
    return quat_rotate(env.sim.qpos[:, q + 3 : q + 7].float(), local)


def object_lin_vel_w(env: Any, body: int) -> torch.Tensor:
    """`body`'s linear velocity in the world frame (N, 3): privileged (no robot reads it)."""
    _, d = free_joint(env, body, "object_lin_vel_w")
    return env.sim.qvel[:, d : d + 3].float()


@deploy_facts(lambda env, body, min_height: {
    "min_body_height": {env.model.body(body).name: float(min_height)}})
def object_below(env: Any, body: int, min_height: float) -> torch.Tensor:
    """`body`'s height (world z, m) below `min_height`: an object dropped."""
    q, _ = free_joint(env, body, "object_below")
    return env.sim.qpos[:, q + 2] < min_height


def _range(value: Any, key: str) -> tuple[float, float]:
    lo, hi = (float(v) for v in value)
    if not lo <= hi:
        raise ConfigError(f"reset_object_pose: {key} must be [min, max] with min <= max, got {list(value)}")
    return lo, hi


def _pose_facts(env: Any, body: int, x: Any, y: Any, z: Any = None, yaw: Any = None) -> dict:
    box = {k: list(map(float, v)) for k, v in (("x", x), ("y", y), ("z", z), ("yaw", yaw)) if v is not None}
    return {"object_poses": {env.model.body(body).name: box}}


@deploy_facts(_pose_facts)
def reset_object_pose(env: Any, mask: torch.Tensor, body: int, x: Any, y: Any, z: Any = None,
                      yaw: Any = None) -> None:
    """Place the free `body` at rest: world position uniform in the `x`, `y`, `z` ranges (m),
    turned about the world z axis by a uniform angle in `yaw` (rad; [-3.1416, 3.1416] for any
    heading). Where `z` or `yaw` is not given, the keyframe's height or orientation stays (a cube
    resting on a table keeps its height)."""
    q, d = free_joint(env, body, "reset_object_pose")
    n, rows, sim = env.num_envs, mask[:, None], env.sim
    ranges = [_range(v, k) for k, v in (("x", x), ("y", y), ("z", z), ("yaw", yaw)) if v is not None]
    axes = 2 if z is None else 3
    pos = torch.stack([env.uniform((n,), lo, hi) for lo, hi in ranges[:axes]], dim=1).to(sim.dtype)
    sim.qpos[:, q : q + axes] = torch.where(rows, pos, sim.qpos[:, q : q + axes])
    if yaw is not None:
        quat = yaw_quat(env.uniform((n,), *ranges[axes])).to(sim.dtype)
        sim.qpos[:, q + 3 : q + 7] = torch.where(rows, quat, sim.qpos[:, q + 3 : q + 7])
    sim.qvel[:, d : d + 6] = sim.qvel[:, d : d + 6].masked_fill(rows, 0.0)


_LIMITS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # env -> the policy joints' (lo, hi)


def _joint_limits(env: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """The policy joints' position ranges (-inf/inf where unlimited), on the env's device, built
    once per env (a tensor made from host data on every reset would be a copy each time)."""
    if env not in _LIMITS:
        m = env.model
        jnt = [int(m.actuator_trnid[i, 0]) for i in range(env.num_actions)]
        limited = m.jnt_limited[jnt].astype(bool)
        lo = torch.as_tensor(m.jnt_range[jnt, 0], device=env.device, dtype=torch.float32)
        hi = torch.as_tensor(m.jnt_range[jnt, 1], device=env.device, dtype=torch.float32)
        on = torch.as_tensor(limited, device=env.device)
        _LIMITS[env] = (torch.where(on, lo, -torch.inf), torch.where(on, hi, torch.inf))
    return _LIMITS[env]


@deploy_facts(lambda env, noise: {"joint_noise": float(noise)})
def reset_joints_uniform(env: Any, mask: torch.Tensor, noise: float) -> None:
    """The robot's policy joints at the default pose plus uniform noise of +-`noise` rad,
    inside their ranges, at rest; their targets at the default pose."""
    rows, sim, na = mask[:, None], env.sim, env.num_actions
    lo, hi = _joint_limits(env)
    q = env.default_joint_pos + env.uniform((env.num_envs, na), -noise, noise)
    q = torch.maximum(torch.minimum(q, hi), lo).to(sim.dtype)
    sim.qpos[:, env.joint_qpos] = torch.where(rows, q, sim.qpos[:, env.joint_qpos])
    sim.qvel[:, env.joint_dof] = sim.qvel[:, env.joint_dof].masked_fill(rows, 0.0)
    sim.ctrl[:, :na] = torch.where(rows, env.default_joint_pos.to(sim.dtype), sim.ctrl[:, :na])


OBSERVATIONS = {"object_pose": object_pose, "object_ang_vel_w": object_ang_vel_w,
                "object_lin_vel_w": object_lin_vel_w}
TERMINATIONS = {"object_below": object_below}
EVENTS = {"reset_object_pose": reset_object_pose, "reset_joints_uniform": reset_joints_uniform}
