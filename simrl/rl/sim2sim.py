"""Sim-to-sim: run an exported policy through simrl.deploy in plain MuJoCo C (one MjData).

Nothing here touches torch or the env batch: the policy sees only what a robot would give it
(joint encoders, IMU gyro and orientation, a velocity estimate), at the control rate, which is
the rehearsal of deployment before hardware.
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np

from simrl import ASSETS
from simrl.deploy import DeployPolicy

MODELS = {"quadruped": "quadruped/quadruped.xml", "cartpole": "cartpole/cartpole.xml"}


def _rotate_inv(quat: np.ndarray, v: np.ndarray) -> np.ndarray:
    res = np.zeros(3)
    neg = quat.copy()
    neg[1:] *= -1
    mujoco.mju_rotVecQuat(res, v, neg)
    return res


def quadruped_readings(m: mujoco.MjModel, d: mujoco.MjData, command) -> dict:
    """What the robot reports: encoders, the IMU (gyro, orientation), base velocity estimate."""
    def sensor(name):
        i = m.sensor(name).id
        return d.sensordata[m.sensor_adr[i] : m.sensor_adr[i] + m.sensor_dim[i]].copy()

    return {
        "joint_pos": d.qpos[7:].copy(),
        "joint_vel": d.qvel[6:].copy(),
        "gyro": sensor("imu_gyro"),
        "quat": sensor("imu_quat"),
        "base_lin_vel": sensor("imu_vel"),
        "command": np.asarray(command, dtype=np.float64),
    }


def control_step(m: mujoco.MjModel, d: mujoco.MjData, targets: np.ndarray, decimation: int) -> None:
    """Hold `targets` for `decimation` physics steps, then bring the sensors up to date.

    mj_step evaluates sensors before it integrates, so after it `sensordata` is one substep
    older than `qpos`/`qvel`; a robot's IMU and encoders read the same instant, hence mj_forward.
    """
    d.ctrl[:] = targets
    for _ in range(decimation):
        mujoco.mj_step(m, d)
    mujoco.mj_forward(m, d)


def run_sim2sim(
    onnx_path: str | Path,
    command=(0.5, 0.0, 0.0),
    episodes: int = 10,
    seed: int = 0,
    settle_s: float = 1.0,
    max_tilt_cos: float = 0.5,
) -> dict[str, float]:
    """Episodes of the exported policy in MuJoCo C; the same figures as simrl.rl.evaluate."""
    policy = DeployPolicy(onnx_path)
    meta = policy.meta
    task = meta["task"]
    m = mujoco.MjModel.from_xml_path(str(ASSETS / MODELS[task]))
    d = mujoco.MjData(m)
    rng = np.random.default_rng(seed)
    decimation = int(meta["decimation"])
    episode_s = 20.0 if task == "quadruped" else 5.0
    steps = int(round(episode_s / meta["control_dt"]))
    settle = int(settle_s / meta["control_dt"])
    trunk = m.body("trunk").id if task == "quadruped" else -1
    returns, lin_errs, yaw_errs, falls = [], [], [], []
    for _ in range(episodes):
        mujoco.mj_resetData(m, d)
        if task == "quadruped":
            mujoco.mj_resetDataKeyframe(m, d, m.key("home").id)
            d.qpos[7:] *= rng.uniform(0.9, 1.1)
        else:
            d.qpos[:] = rng.uniform(-0.1, 0.1, m.nq)
        mujoco.mj_forward(m, d)
        policy.last_action[:] = 0.0
        lin, yaw, fell, ret = [], [], False, 0.0
        for t in range(steps):
            if task == "quadruped":
                readings = quadruped_readings(m, d, command)
            else:
                readings = {"joint_pos": d.qpos.copy(), "joint_vel": d.qvel.copy()}
            targets, _, _ = policy.act(readings)
            control_step(m, d, targets, decimation)
            if task == "quadruped":
                v_b = _rotate_inv(d.qpos[3:7], d.qvel[0:3])
                if t >= settle:
                    lin.append(np.linalg.norm(v_b[:2] - np.asarray(command[:2])))
                    yaw.append(abs(d.qvel[5] - command[2]))
                g_z = -(1 - 2 * (d.qpos[4] ** 2 + d.qpos[5] ** 2))
                trunk_contact = np.linalg.norm(d.cfrc_ext[trunk, 3:]) > 1.0
                fell = bool(g_z > -max_tilt_cos or trunk_contact)
            else:
                fell = bool(abs(d.qpos[1]) > 0.4 or abs(d.qpos[0]) > 2.4)
                ret += 1.0
            if fell or not np.isfinite(d.qpos).all():
                fell = True
                break
        falls.append(fell)
        lin_errs.append(np.mean(lin) if lin else np.nan)
        yaw_errs.append(np.mean(yaw) if yaw else np.nan)
        returns.append(ret if task != "quadruped" else t + 1)
    return {
        "episodes": episodes,
        "mean_steps": float(np.mean(returns)),
        "lin_vel_error": float(np.nanmean(lin_errs)) if task == "quadruped" else float("nan"),
        "yaw_rate_error": float(np.nanmean(yaw_errs)) if task == "quadruped" else float("nan"),
        "fall_share": float(np.mean(falls)),
    }
