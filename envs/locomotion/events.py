"""The velocity task's randomization and starts, as event terms its config lists (in this order,
the order of their draws): at start-up the robot's model per env and the first terrain levels;
at each episode's spawn the base and joints, the place on the ground, the ground's friction and
damping, the IMU's biases. Also each foot's tip and how far a base must rise so no geom starts
inside the ground."""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np
import torch

from simrl.errors import ConfigError
from simrl.managers.termination import deploy_facts
from simrl.math import yaw_quat
from simrl.scene import Scene, assemble
from simrl.terrain.curriculum import next_levels


def foot_tips(m: mujoco.MjModel, feet: list[int], colliding: np.ndarray) -> np.ndarray:
    """Each foot body's tip in its own frame: the centre of its colliding geom farthest
    from the body's origin (the foot sphere at the end of a calf; a toe geom of a biped's
    foot, as G1's), or the origin."""
    tips = []
    for b in feet:
        geoms = np.flatnonzero((m.geom_bodyid == b) & colliding)
        far = max(geoms, key=lambda g: np.linalg.norm(m.geom_pos[g]), default=None)
        tips.append(np.zeros(3) if far is None else m.geom_pos[far])
    return np.array(tips, dtype=np.float64).reshape(-1, 3)


def spawn_lifts(scene: Scene, grid: Any, cfg: Any, k: int = 9) -> np.ndarray:
    """How far the base must rise above the default pose's height for no robot geom to
    start below a flat ground, at k joint scales spanning joint_pos_scale (MuJoCo C, once)."""
    if not cfg.spawn_clear:
        return np.zeros(k)
    flat = scene if grid is None else assemble(cfg.robot)
    m, d = flat.model, mujoco.MjData(flat.model)
    lifts = []
    for scale in np.linspace(*cfg.joint_pos_scale, k):
        mujoco.mj_resetDataKeyframe(m, d, 0)
        d.qpos[flat.joint_qpos] = flat.default_joint_pos * scale
        mujoco.mj_forward(m, d)
        depth = [-d.contact[i].dist for i in range(d.ncon)]
        lifts.append(max([0.0, *depth]))
    return np.array(lifts)


def _lift(table: torch.Tensor, span: tuple[float, float], scale: torch.Tensor) -> torch.Tensor:
    """(N,) base lift for each env's joint scale (N, 1), interpolated in the table."""
    lo, hi = span
    k = table.numel()  # >= 2 entries (spawn_lifts)
    x = ((scale[:, 0] - lo) / max(hi - lo, 1e-9) * (k - 1)).clamp(0, k - 1)
    i = x.floor().long().clamp(max=k - 2)
    t = x - i
    return table[i] * (1 - t) + table[i + 1] * t


# --- startup ------------------------------------------------------------------------------------
def randomize_legged_model(env: Any, mask: torch.Tensor, kp_scale: Any, kd_scale: Any, effort_scale: Any,
                           joint_friction: Any, joint_damping: Any, joint_armature: Any,
                           added_base_mass: Any, com_offset: float) -> None:
    """Per env, once at start-up (legged_gym's way: mass and centre-of-mass edits need
    set_const, hundreds of launches over all worlds on mjwarp): PD gains (factors), motor
    strength (a factor on the effort limit), joint friction, damping and armature (added), base
    mass (added, kg) and centre of mass (+- m per axis)."""
    sim, sc, n, nu = env.sim, env.scene, env.num_envs, env.num_actions

    def draw(span, shape):
        return env.uniform(shape, *span)

    if tuple(kp_scale) != (1.0, 1.0) or tuple(kd_scale) != (1.0, 1.0):
        gain, bias = sim.param("actuator_gainprm"), sim.param("actuator_biasprm")
        kp = torch.as_tensor(sc.kp, device=env.device) * draw(kp_scale, (n, nu))
        kd = torch.as_tensor(sc.kd, device=env.device) * draw(kd_scale, (n, nu))
        gain[:, :nu, 0] = kp.to(gain.dtype)  # the policy's servos; held joints keep theirs
        bias[:, :nu, 1] = -kp.to(bias.dtype)
        bias[:, :nu, 2] = -kd.to(bias.dtype)
    if tuple(effort_scale) != (1.0, 1.0):  # the limit where the MJCF sets it: actuator or joint
        scale = draw(effort_scale, (n, nu, 1))
        force = sim.param("actuator_forcerange")
        force[:, :nu].mul_(scale.to(force.dtype))
        joints = sc.model.actuator_trnid[:nu, 0]  # the policy's joints, in action order
        if sc.model.jnt_actfrclimited[joints].any():
            jnt = sim.param("jnt_actfrcrange")
            jnt[:, torch.as_tensor(joints, device=env.device)] *= scale.to(jnt.dtype)
    for field_name, span in (("dof_frictionloss", joint_friction), ("dof_damping", joint_damping),
                             ("dof_armature", joint_armature)):
        if tuple(span) != (0.0, 0.0):
            view = sim.param(field_name)
            view[:, env.joint_dof] += draw(span, (n, nu)).to(view.dtype)
    mass = sim.param("body_mass")
    mass[:, sc.root_body] += draw(added_base_mass, (n,)).to(mass.dtype)
    if com_offset:
        ipos = sim.param("body_ipos")
        ipos[:, sc.root_body] += draw((-com_offset, com_offset), (n, 3)).to(ipos.dtype)
    sim.set_const()


def start_terrain_levels(env: Any, mask: torch.Tensor) -> None:
    """Each env's first terrain level, up to the grid's `max_init_level`."""
    terrain = env.terrain
    top = min(terrain.grid.cfg.max_init_level, terrain.grid.num_levels - 1)
    terrain.levels = torch.randint(0, top + 1, (env.num_envs,), generator=env.gen, device=env.device)


# --- spawn: where each episode starts -----------------------------------------------------------
# sim-to-sim starts within 10% of the stand pose: a robot starts its policy from its stand
@deploy_facts(lambda env, **_: {"joint_scale": [0.9, 1.1]})
def reset_legged_pose(env: Any, mask: torch.Tensor, joint_scale: Any, base_vel: float) -> None:
    """A random heading, the joints at the default pose times a uniform factor in `joint_scale`
    (their targets at the default pose), a base velocity uniform in +-`base_vel` per axis (m/s
    and rad/s), the joints at rest; the base's lift clear of the ground is kept for
    `place_on_terrain`."""
    if tuple(joint_scale) != tuple(env.cfg.joint_pos_scale):  # the lift table spans the field's
        raise ConfigError(f"reset_legged_pose: joint_scale {list(joint_scale)} differs from the task's "
                          f"joint_pos_scale {list(env.cfg.joint_pos_scale)}, over which the base's lift "
                          "clear of the ground is computed: set task.cfg.joint_pos_scale instead")
    n, sim, dt, legged = env.num_envs, env.sim, env.sim.dtype, env.legged
    rows, rq, rd = mask[:, None], legged.root_qpos, legged.root_dof
    quat = yaw_quat(env.uniform((n,), -3.14159, 3.14159)).to(dt)
    scale = env.uniform((n, 1), *joint_scale)
    joints = (env.default_joint_pos * scale).to(dt)
    legged.spawn_lift = _lift(legged.lift_table, env.cfg.joint_pos_scale, scale)
    root_vel = env.uniform((n, 6), -base_vel, base_vel).to(dt)
    sim.qpos[:, rq + 3 : rq + 7] = torch.where(rows, quat, sim.qpos[:, rq + 3 : rq + 7])
    sim.qpos[:, env.joint_qpos] = torch.where(rows, joints, sim.qpos[:, env.joint_qpos])
    sim.qvel[:, rd : rd + 6] = torch.where(rows, root_vel, sim.qvel[:, rd : rd + 6])
    sim.qvel[:, env.joint_dof] = sim.qvel[:, env.joint_dof].masked_fill(rows, 0.0)
    na = env.num_actions  # held joints' targets never change (the keyframe's)
    sim.ctrl[:, :na] = torch.where(rows, env.default_joint_pos.to(dt), sim.ctrl[:, :na])


def place_on_terrain(env: Any, mask: torch.Tensor, spawn_xy: float) -> None:
    """The base at its default height plus its lift over the ground. On a terrain grid, the
    curriculum's step for the envs whose episodes ended first, then a start within +-`spawn_xy`
    m of their tile's centre."""
    sim, legged, terrain, rq = env.sim, env.legged, env.terrain, env.legged.root_qpos
    if terrain.grid is None:
        z = (legged.base_z0 + legged.spawn_lift).to(sim.dtype)
        sim.qpos[:, rq + 2] = torch.where(mask, z, sim.qpos[:, rq + 2])
        return
    n, rows, grid = env.num_envs, mask[:, None], terrain.grid
    if terrain.curriculum:
        top = grid.num_levels
        terrain.levels = next_levels(
            terrain.levels, terrain.walked, terrain.cmd_disp.norm(dim=1), env.terminated_buf, mask,
            grid.cfg.tile_size, top, torch.randint(0, top, (n,), generator=env.gen, device=env.device))
    origin = terrain.origins[terrain.levels, terrain.types]
    xy = origin[:, :2] + env.uniform((n, 2), -spawn_xy, spawn_xy)
    z = terrain.field(xy[:, 0], xy[:, 1]) + legged.base_z0 + legged.spawn_lift
    pos = torch.cat([xy, z[:, None]], dim=1).to(sim.dtype)
    sim.qpos[:, rq : rq + 3] = torch.where(rows, pos, sim.qpos[:, rq : rq + 3])
    terrain.spawn = torch.where(rows, xy, terrain.spawn)
    terrain.walked = terrain.walked.masked_fill(mask, 0.0)
    terrain.farthest = terrain.farthest.masked_fill(mask, 0.0)
    terrain.cmd_disp = terrain.cmd_disp.masked_fill(mask[:, None], 0.0)


def ground_friction(env: Any, mask: torch.Tensor, range: Any) -> None:  # noqa: A002
    """The episode's friction coefficient, uniform in `range`, on the robot's colliding geoms
    (a contact takes the larger of its two geoms': the ground's is ~0); the critic reads it."""
    n, rows, legged = env.num_envs, mask[:, None], env.legged
    friction = env.sim.param("geom_friction")
    mu = env.uniform((n, 1), *range)
    touching = friction[:, legged.touching, 0]
    friction[:, legged.touching, 0] = torch.where(rows, mu.to(friction.dtype), touching)
    legged.mu = torch.where(rows, mu, legged.mu)


def ground_dampratio(env: Any, mask: torch.Tensor, range: Any) -> None:  # noqa: A002
    """The episode's contact damping ratio, uniform in `range`, on the robot's colliding geoms
    (below 1 the ground gives back energy: MuJoCo's contacts have no restitution coefficient)."""
    solref = env.sim.param("geom_solref")
    ratio = env.uniform((env.num_envs, 1), *range).to(solref.dtype)
    touching = env.legged.touching
    solref[:, touching, 1] = torch.where(mask[:, None], ratio, solref[:, touching, 1])


def imu_bias(env: Any, mask: torch.Tensor, gyro: float, gravity: float) -> None:
    """The episode's IMU biases, constant over it: +-`gyro` rad/s per axis on the angular
    velocity, +-`gravity` per axis on the projected gravity."""
    n, rows, legged = env.num_envs, mask[:, None], env.legged
    legged.gyro_bias = torch.where(rows, env.uniform((n, 3), -gyro, gyro), legged.gyro_bias)
    legged.gravity_bias = torch.where(rows, env.uniform((n, 3), -gravity, gravity), legged.gravity_bias)


EVENTS = {f.__name__: f for f in (randomize_legged_model, start_terrain_levels, reset_legged_pose,
                                  place_on_terrain, ground_friction, ground_dampratio, imu_bias)}
