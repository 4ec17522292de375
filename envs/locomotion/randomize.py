"""The velocity task's start-up randomization (per world, once) and where its robots start: each
foot's tip, and how far a base must rise so no geom starts inside the ground."""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np
import torch

from simrl.scene import assemble


def foot_tips(env: Any) -> np.ndarray:
    """Each foot body's tip in its own frame: the centre of its colliding geom farthest
    from the body's origin (the foot sphere at the end of a calf; a toe geom of a biped's
    foot, as G1's), or the origin."""
    m, tips = env.model, []
    for b in env.scene.feet:
        geoms = np.flatnonzero((m.geom_bodyid == b) & env.colliding)
        far = max(geoms, key=lambda g: np.linalg.norm(m.geom_pos[g]), default=None)
        tips.append(np.zeros(3) if far is None else m.geom_pos[far])
    return np.array(tips, dtype=np.float64).reshape(-1, 3)


def spawn_lifts(env: Any, k: int = 9) -> np.ndarray:
    """How far the base must rise above the default pose's height for no robot geom to
    start below a flat ground, at k joint scales spanning joint_pos_scale (MuJoCo C, once)."""
    if not env.cfg.spawn_clear:
        return np.zeros(k)
    flat = env.scene if env.grid is None else assemble(env.cfg.robot)
    m, d = flat.model, mujoco.MjData(flat.model)
    lifts = []
    for scale in np.linspace(*env.cfg.joint_pos_scale, k):
        mujoco.mj_resetDataKeyframe(m, d, 0)
        d.qpos[flat.joint_qpos] = flat.default_joint_pos * scale
        mujoco.mj_forward(m, d)
        depth = [-d.contact[i].dist for i in range(d.ncon)]
        lifts.append(max([0.0, *depth]))
    return np.array(lifts)


def lift(env: Any, scale: torch.Tensor) -> torch.Tensor:
    """(N,) base lift for each env's joint scale (N, 1), interpolated in the table."""
    lo, hi = env.cfg.joint_pos_scale
    k = env.lift_table.numel()  # >= 2 entries (spawn_lifts)
    x = ((scale[:, 0] - lo) / max(hi - lo, 1e-9) * (k - 1)).clamp(0, k - 1)
    i = x.floor().long().clamp(max=k - 2)
    t = x - i
    return env.lift_table[i] * (1 - t) + env.lift_table[i + 1] * t


def randomize_model(env: Any) -> None:
    """Per env, once at start-up (legged_gym's way: mass and centre-of-mass edits need
    set_const, hundreds of launches over all worlds on mjwarp): PD gains, motor strength,
    joint friction, damping and armature, base mass and centre of mass."""
    cfg, sim, sc, n, nu = env.cfg, env.sim, env.scene, env.num_envs, env.num_actions


    def draw(span, shape):
        return env.uniform(shape, *span)


    if tuple(cfg.kp_scale) != (1.0, 1.0) or tuple(cfg.kd_scale) != (1.0, 1.0):
        gain, bias = sim.param("actuator_gainprm"), sim.param("actuator_biasprm")
        kp = torch.as_tensor(sc.kp, device=env.device) * draw(cfg.kp_scale, (n, nu))
        kd = torch.as_tensor(sc.kd, device=env.device) * draw(cfg.kd_scale, (n, nu))
        gain[:, :nu, 0] = kp.to(gain.dtype)  # the policy's servos; held joints keep theirs
        bias[:, :nu, 1] = -kp.to(bias.dtype)
        bias[:, :nu, 2] = -kd.to(bias.dtype)
    if tuple(cfg.effort_scale) != (1.0, 1.0):
        force = sim.param("actuator_forcerange")
        force[:, :nu].mul_(draw(cfg.effort_scale, (n, nu, 1)).to(force.dtype))
    for field_name, span in (("dof_frictionloss", cfg.joint_friction),
                             ("dof_damping", cfg.joint_damping),
                             ("dof_armature", cfg.joint_armature)):
        if tuple(span) != (0.0, 0.0):
            view = sim.param(field_name)
            view[:, env.joint_dof] += draw(span, (n, nu)).to(view.dtype)
    mass = sim.param("body_mass")
    mass[:, sc.root_body] += draw(cfg.added_base_mass, (n,)).to(mass.dtype)
    if cfg.com_offset:
        ipos = sim.param("body_ipos")
        ipos[:, sc.root_body] += draw((-cfg.com_offset, cfg.com_offset), (n, 3)).to(ipos.dtype)
    sim.set_const()
