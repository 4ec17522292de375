"""Sim-to-sim: run an exported policy through simrl.deploy in plain MuJoCo C (one MjData).

Nothing here touches torch or the env batch, and nothing here knows the task: the scene is
rebuilt from `policy.json` (the robot config, assembled as in training, or the task's MJCF), the
policy sees only what a robot would give it (joint encoders, IMU gyro, orientation and
velocimeter, the command, a target pose) at the control rate, and episodes start, last and end
as the export's `deploy` section says: its `target` (a pose drawn per episode, the reading
`target_pose`) and `success` (a site held within a tolerance of it) serve any arm. It is the
rehearsal of deployment before hardware: each episode is the deploy controller
(`simrl.deploy.controller`: its stand, policy and safety envelope) driving a simulated robot
(`simrl.rehearse.mujoco_robot`), the loop that runs on the robot, not one of its own.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from simrl.deploy import DeployPolicy
from simrl.deploy.controller import Controller, Limits, limits_from_meta
from simrl.rehearse.mujoco_robot import MujocoRobot
from simrl.rehearse.scene import Readings, body_pos, fell, quat_mul, scene_model, site_pose


def exported_meta(path: str | Path) -> dict[str, Any]:
    """policy.json beside an exported `policy.onnx`, checked to be a simrl export with a deploy
    section (one-line errors for a missing file, a foreign one, an old export)."""
    from simrl.deploy import load_metadata
    from simrl.errors import ConfigError, MissingFileError

    path = Path(path)
    if not path.is_file():
        raise MissingFileError(f"no exported policy at '{path}': pass policy=<run>/export/policy.onnx "
                               "(export.py writes it)")
    try:  # reads only the user's file: a failure means it is not a simrl export
        meta = load_metadata(path)
    except Exception as e:
        raise ConfigError(f"'{path}' is not a policy exported by export.py ({type(e).__name__}: {e})") from e
    if "deploy" not in meta:
        raise ConfigError(f"'{path}' was exported by an older simrl (no 'deploy' section in its "
                          "metadata): export the checkpoint again with export.py")
    return meta


def sample_target(spec: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    """A pose target [x, y, z, qw, qx, qy, qz] in the base frame, drawn as training draws it:
    a position in the box, an orientation turned from `about_quat` by roll, pitch, yaw."""
    pos = [rng.uniform(*spec[k]) for k in ("x", "y", "z")]
    if "about_quat" not in spec:  # a position target
        return np.asarray(pos)
    quat = np.asarray(spec["about_quat"], dtype=np.float64)
    for axis, key in ((0, "roll"), (1, "pitch"), (2, "yaw")):  # extrinsic x, then y, then z
        turn = np.zeros(4)
        vec = np.zeros(3)
        vec[axis] = 1.0
        mujoco.mju_axisAngle2Quat(turn, vec, rng.uniform(*spec[key]))
        quat = quat_mul(turn, quat)
    return np.concatenate([pos, quat])


class Success:
    """The export's success rule over one episode. Kinds: `site_pose` (a site within `pos` m
    and `ori` rad of the target pose for the last `hold_s`: reach) and `object_at_target` (an
    object within `dist` m of the target position at the end, never dropped after it was
    lifted `lift_height` above its rest height: lift)."""

    def __init__(self, rule: dict[str, Any], control_dt: float):
        self.rule, self.kind = rule, rule.get("kind", "site_pose")
        if self.kind not in ("site_pose", "object_at_target"):
            raise ValueError(f"policy.json success kind '{self.kind}' is unknown to this simrl; known: "
                             "site_pose, object_at_target")
        self.hold = max(1, round(rule.get("hold_s", 0.0) / control_dt))
        self.done: list[dict[str, float]] = []

    def reset(self, target: np.ndarray) -> None:
        self.target, self.held, self.grasped, self.dropped, self.last = target, 0, False, False, {}

    def step(self, m: mujoco.MjModel, d: mujoco.MjData) -> None:
        r = self.rule
        if self.kind == "site_pose":
            pos_err, ori_err = site_error(m, d, r, self.target)
            self.held = self.held + 1 if pos_err < r["pos"] and ori_err < r["ori"] else 0
            self.last = {"final_pos_error": pos_err, "final_ori_error": ori_err}
        else:
            height = d.xpos[m.body(r["body"]).id, 2] - r["rest_z"]
            self.grasped |= bool(height > r["lift_height"])
            self.dropped |= self.grasped and bool(height < 0.005)
            self.last = {"final_object_error": float(np.linalg.norm(body_pos(m, d, r) - self.target))}

    def end_episode(self) -> None:
        if self.kind == "site_pose":
            ok = self.held >= self.hold
        else:  # an episode of no steps has no final error: a failure
            ok = self.last.get("final_object_error", np.inf) < self.rule["dist"] and not self.dropped
        self.done.append({"success": float(ok), **self.last,
                          **({"lifted": float(self.grasped)} if self.kind == "object_at_target" else {})})

    def summary(self) -> dict[str, float]:
        return {k: float(np.mean([e[k] for e in self.done])) for k in self.done[0]} if self.done else {}


def site_error(m: mujoco.MjModel, d: mujoco.MjData, rule: dict[str, Any],
               target: np.ndarray) -> tuple[float, float]:
    """Position (m) and orientation (rad) error of the rule's site to `target` (base frame)."""
    pose = site_pose(m, d, rule)
    pos, quat = pose[:3], pose[3:]
    diff = quat_mul(np.array([quat[0], -quat[1], -quat[2], -quat[3]]), target[3:])
    angle = 2.0 * np.arctan2(np.linalg.norm(diff[1:]), abs(diff[0]))
    return float(np.linalg.norm(pos - target[:3])), float(angle)


def controller_limits(meta: dict[str, Any], m: mujoco.MjModel, read: Readings, **overrides) -> Limits:
    """The deploy controller's envelope for a simulated run: the export's limits, a stand of no
    duration (an episode starts in the default pose), no overrun faults (the clock is the
    simulation's), and the actuated joints located in the readings by name."""
    coords = [int(a) for a in read.qpos]
    index = [coords.index(int(m.jnt_qposadr[m.joint(j).id])) for j in meta["action"]["joint_names"]]
    return limits_from_meta(meta, **{"stand_s": 0.0, "overrun_streak": sys.maxsize,
                                     "joint_index": np.array(index), **overrides})


def free_root(m: mujoco.MjModel, meta: dict[str, Any]) -> tuple[int | None, int | None]:
    """(qpos address, dof address) of the robot's free root joint; (None, None) for a fixed base
    (an arm's root body has no joint) or a policy exported without a robot config."""
    robot = meta.get("robot")
    if not robot:
        return None, None
    root = m.body(robot["config"]["root_body"])
    if root.jntnum[0] >= 1 and m.jnt_type[root.jntadr[0]] == mujoco.mjtJoint.mjJNT_FREE:
        return int(m.jnt_qposadr[root.jntadr[0]]), int(m.jnt_dofadr[root.jntadr[0]])
    return None, None


def start_episode(m: mujoco.MjModel, d: mujoco.MjData, read: Readings, reset: dict[str, Any],
                  rng: np.random.Generator, key: int = -1) -> None:
    """Reset `d` to the keyframe (or the model's default) and draw the training reset's spread
    (policy.json's `deploy.reset`): joint scale and noise within the joints' ranges, qpos noise,
    each free object placed in its spawn box."""
    if key >= 0:
        mujoco.mj_resetDataKeyframe(m, d, key)
    else:
        mujoco.mj_resetData(m, d)
    if "joint_scale" in reset:
        d.qpos[read.qpos] *= rng.uniform(*reset["joint_scale"])
    if "qpos_noise" in reset:
        s = reset["qpos_noise"]
        d.qpos[:] += rng.uniform(-s, s, m.nq)
    if "joint_noise" in reset:  # as training: within the joints' ranges
        s = reset["joint_noise"]
        q = d.qpos[read.qpos] + rng.uniform(-s, s, len(read.qpos))
        jnt = [int(m.dof_jntid[v]) for v in read.dof]
        lo, hi = m.jnt_range[jnt].T
        d.qpos[read.qpos] = np.where(m.jnt_limited[jnt].astype(bool), np.clip(q, lo, hi), q)
    poses = dict(reset.get("object_poses", {}))
    for obj in reset.get("objects", []):  # a lift export written before object_poses: its x, y box
        poses[obj["body"]] = {"x": obj["x"], "y": obj["y"]}
    for body, box in poses.items():  # simrl.mdp.objects.reset_object_pose
        jnt = m.body(body).jntadr[0]  # the ranges it names are drawn; the keyframe keeps the rest
        q, v = int(m.jnt_qposadr[jnt]), int(m.jnt_dofadr[jnt])
        for i, k in enumerate(("x", "y", "z")):
            if k in box:
                d.qpos[q + i] = rng.uniform(*box[k])
        if "yaw" in box:
            yaw = rng.uniform(*box["yaw"])
            d.qpos[q + 3 : q + 7] = [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
        d.qvel[v : v + 6] = 0.0


class Twins:
    """The figures policy.json's `deploy.metrics` names, each computed by its metric term's
    MuJoCo C twin (simrl.managers.metric): a tracking figure's mean over each episode's settled
    steps, a metric's value at the episode's end; per figure, the mean over episodes."""

    def __init__(self, specs: dict[str, dict[str, str]]):
        import importlib

        self.specs, self.funcs = specs, {}
        for name, spec in specs.items():
            module, _, func = spec["sim"].partition(":")
            try:
                self.funcs[name] = getattr(importlib.import_module(module), func)
            except (ImportError, AttributeError) as e:
                raise ValueError(f"policy.json's metric '{name}' is computed by {spec['sim']}, which does "
                                 f"not import here ({e}): run sim-to-sim where the task's code is") from e
        self.episodes: dict[str, list[float]] = {name: [] for name in specs}

    def reset(self) -> None:
        self.values: dict[str, list[float]] = {name: [] for name in self.specs}

    def step(self, m: mujoco.MjModel, d: mujoco.MjData, settled: bool, ending: bool) -> None:
        """A tracking figure counts the settled steps an episode goes on from, as evaluation
        counts them (not the one it ends on); a metric keeps its value at every step, the last
        one being the episode's end."""
        for name, f in self.funcs.items():
            if self.specs[name]["reduce"] == "final" or (settled and not ending):
                self.values[name].append(float(f(m, d)))

    def end_episode(self) -> None:
        for name, values in self.values.items():
            if values:
                self.episodes[name].append(values[-1] if self.specs[name]["reduce"] == "final"
                                           else float(np.mean(values)))

    def summary(self) -> dict[str, float]:
        return {name: float(np.mean(v)) if v else float("nan") for name, v in self.episodes.items()}


def run_sim2sim(
    onnx_path: str | Path,
    command=(0.5, 0.0, 0.0),
    episodes: int = 10,
    seed: int = 0,
    settle_s: float = 1.0,
    push_vel: float = 0.0,
    push_interval_s: float = 4.0,
    friction: float | None = None,
    terrain: Any = None,
    tile: tuple[int, int | str] | None = None,
    limits: dict[str, Any] | None = None,
    delay_steps: int = 0,
    motor_strength: float = 1.0,
) -> dict[str, float]:
    """Episodes of the exported policy in MuJoCo C; the same figures as simrl.rl.evaluate.

    Test conditions, none of them the policy's business: `push_vel` kicks the base by a random
    horizontal velocity of up to that (m/s per axis) every `push_interval_s`; `friction` sets
    every geom's sliding friction (contacts take the larger of two geoms'); `terrain` replaces
    the ground (a configs/terrain name or fields, e.g. "stairs"), episodes starting on `tile`
    (level, type index or name; default: the hardest level, types in turn). On a terrain grid
    `crossed_share` is the share of episodes that got past half a tile from the start without
    a fall. `delay_steps` applies each joint command that many control steps late;
    `motor_strength` makes every motor give that share of the torque asked of it, up to that
    share of its limit (0.7: motors 30% weaker).

    Each episode is the deploy controller driving a simulated robot; where its safety envelope
    (`limits`: overrides of `simrl.deploy.controller.Limits`, e.g. `{"joint_vel": [...]}`)
    stops the policy, the episode ends there and counts as a fall (`fault_share`, and a warning
    that names the faults).
    """
    policy = DeployPolicy(onnx_path)
    meta = policy.meta
    if "deploy" not in meta:
        raise ValueError(f"'{onnx_path}' was exported before policy.json carried a 'deploy' "
                         "section: export the checkpoint again with export.py")
    spec = meta["deploy"]
    m, grid = scene_model(meta, terrain)
    if friction is not None:
        m.geom_friction[:, 0] = friction
    robot_sim = MujocoRobot(meta, keyframe=False, model=m, delay_steps=delay_steps, strength=motor_strength)
    d, read = robot_sim.d, robot_sim.read
    envelope = controller_limits(meta, m, read, **(limits or {}))
    rng = np.random.default_rng(seed)
    period = float(meta["control_dt"])
    steps = int(round(spec["episode_length_s"] / period))
    settle = int(settle_s / period)
    key = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, spec["keyframe"]) if spec.get("keyframe") else -1
    root_qpos, root_dof = free_root(m, meta)
    term = spec["termination"]
    bodies = [m.body(b).id for b in term.get("contact_bodies", [])]
    tracks = spec["tracks_commands"]
    reset = spec.get("reset", {})
    push_every = max(1, round(push_interval_s / period))
    if push_vel and root_dof is None:
        raise ValueError("pushes need a floating base (a policy exported with a robot config)")
    if (terrain is not None or grid is not None) and root_qpos is None:
        raise ValueError("a terrain needs a floating base to start on its tiles; this policy's robot has "
                         "a fixed base: leave terrain out")
    target_spec = spec.get("target")
    success = Success(spec["success"], period) if spec.get("success") else None
    twins = Twins(spec.get("metrics", {}))
    steps_run, lin_errs, yaw_errs, falls, crossed, faults = [], [], [], [], [], []
    for episode in range(episodes):
        start_episode(m, d, read, reset, rng, key)
        target = sample_target(target_spec, rng) if target_spec else None
        if success:
            success.reset(target)
        twins.reset()
        if grid is not None:  # start on the tile's platform
            level, kind = tile if tile is not None else (grid.num_levels - 1, episode % grid.num_types)
            if isinstance(kind, str):
                kind = grid.cfg.types.index(kind)
            d.qpos[root_qpos : root_qpos + 3] += grid.origins[level, kind]
        start = None if root_qpos is None else d.qpos[root_qpos : root_qpos + 2].copy()
        robot_sim.restart()
        ctl = Controller(policy, robot_sim, envelope, command=command)
        if target is not None:
            ctl.extra_readings = {read.target_name: target}
        # The episode starts where training's do, in the default pose: the controller's stand
        # (stand_s 0) commands that pose, then the policy takes over in the same instant.
        ctl.request("stand")
        ctl.cycle()
        ctl.request("policy")
        t0 = robot_sim.clock()
        lin, yaw, down, t, far, fault = [], [], False, 0, False, None
        for t in range(steps):
            if push_vel and (t + 1) % push_every == 0:
                d.qvel[root_dof : root_dof + 2] += rng.uniform(-push_vel, push_vel, 2)
            ctl.cycle()
            if ctl.state != "policy":  # the controller's safety envelope stopped the policy
                down, fault = True, ctl.fault
                break
            robot_sim.sleep_until(t0 + (t + 1) * period)
            r = robot_sim.latest().readings
            if success:
                success.step(m, d)
            if tracks and t >= settle:
                lin.append(np.linalg.norm(r["base_lin_vel"][:2] - np.asarray(command[:2])))
                yaw.append(abs(r["gyro"][2] - command[2]))
            ground = 0.0
            if grid is not None:
                xy = d.qpos[root_qpos : root_qpos + 2]
                ground = float(grid.height_at(xy[0], xy[1]))
                far |= bool(np.linalg.norm(xy - start) > grid.cfg.tile_size / 2)
            down = fell(m, d, r, term, root_qpos, bodies, ground)
            twins.step(m, d, t >= settle, ending=down or t == steps - 1)
            if down:
                break
        falls.append(down)
        faults.append(fault)
        crossed.append(far and not down)
        if success:
            success.end_episode()
        twins.end_episode()
        lin_errs.append(np.mean(lin) if lin else np.nan)
        yaw_errs.append(np.mean(yaw) if yaw else np.nan)
        steps_run.append(t + 1)
    reasons = sorted({f for f in faults if f})
    if reasons:
        warnings.warn(f"sim-to-sim: the deploy controller stopped the policy (damping) in "
                      f"{sum(f is not None for f in faults)} of {episodes} episodes, counted as falls: "
                      + "; ".join(reasons), stacklevel=2)
    nan = float("nan")
    metrics = {**(success.summary() if success else {}), **twins.summary()}
    return {
        **metrics,
        "episodes": episodes,
        "mean_steps": float(np.mean(steps_run)),
        "lin_vel_error": _nanmean(lin_errs) if tracks else nan,
        "yaw_rate_error": _nanmean(yaw_errs) if tracks else nan,
        "fall_share": float(np.mean(falls)),
        "fault_share": float(np.mean([f is not None for f in faults])),
        "crossed_share": float(np.mean(crossed)) if grid is not None else nan,
    }


def _nanmean(values: list[float]) -> float:
    """Mean over the episodes that lasted past the settling time; NaN where none did."""
    kept = [v for v in values if not np.isnan(v)]
    return float(np.mean(kept)) if kept else float("nan")
