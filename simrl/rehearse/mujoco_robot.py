"""A robot simulated in MuJoCo C, in-process, behind the controller's `Robot` protocol.

The scene is rebuilt from policy.json as sim-to-sim does (or given: a terrain, a friction);
`send` sets each position actuator's PD (kp, kd and target, as a robot's motor drivers do) and
writes a motor actuator's command as its control value (cartpole's force), and the clock is the
simulation's: `sleep_until` steps the physics to that time, so a controller run is
deterministic and as fast as MuJoCo. Sim-to-sim (`simrl.rl.sim2sim`) is the controller driving
this robot.
Faults can be injected for tests: `freeze()` stops new state reports (a dead link), and
`poison` writes a value into the next reading. Robustness conditions: `delay_steps` applies
each command that many sends late (a slower link), `strength` makes every motor give that share
of the torque asked of it, up to that share of its limit (weaker motors); the limits are
scaled in the model itself, so a robot with `strength` below 1 needs a model of its own.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import mujoco
import numpy as np

from simrl.deploy.controller import JointCommand, RobotState, held_joints
from simrl.rehearse.scene import Readings, scene_model


def set_motor_pd(m: mujoco.MjModel, d: mujoco.MjData, actuators: np.ndarray, q, kp, kd,
                 strength: float = 1.0) -> None:
    """Make each of `actuators` that is a position servo (affine bias) a motor driver's PD:
    torque kp (q - qpos) - kd qvel, as a robot's joint servo applies a low-level command. An
    actuator without a bias (a motor) keeps its gains and takes `q` as its control value.
    `strength` scales the torque every one of them gives (a weaker motor)."""
    actuators = np.asarray(actuators)
    servo = m.actuator_biastype[actuators] == mujoco.mjtBias.mjBIAS_AFFINE
    pd = actuators[servo]
    kp = np.broadcast_to(np.asarray(kp, dtype=np.float64), actuators.shape)[servo]
    kd = np.broadcast_to(np.asarray(kd, dtype=np.float64), actuators.shape)[servo]
    m.actuator_gainprm[pd, 0] = strength * kp
    m.actuator_biasprm[pd, 1] = -strength * kp
    m.actuator_biasprm[pd, 2] = -strength * kd
    ctrl = np.array(np.broadcast_to(np.asarray(q, dtype=np.float64), actuators.shape))
    ctrl[~servo] *= strength  # a motor's control value is its force
    d.ctrl[actuators] = ctrl


class MujocoRobot:
    def __init__(self, meta: dict[str, Any], keyframe: bool = True,
                 model: mujoco.MjModel | None = None, delay_steps: int = 0, strength: float = 1.0):
        if isinstance(delay_steps, bool) or not isinstance(delay_steps, int) or delay_steps < 0:
            raise ValueError(f"delay_steps is a count of control steps >= 0, got {delay_steps!r}")
        if not 0.0 < strength <= 1.0:
            raise ValueError(f"strength is the share of torque the motors give, in (0, 1], got {strength!r}")
        self.meta = meta
        self.m = model if model is not None else scene_model(meta)[0]
        self.d = mujoco.MjData(self.m)
        spec = meta.get("deploy", {})
        key = -1
        if spec.get("keyframe"):
            key = mujoco.mj_name2id(self.m, mujoco.mjtObj.mjOBJ_KEY, spec["keyframe"])
        if keyframe and key >= 0:
            mujoco.mj_resetDataKeyframe(self.m, self.d, key)
        mujoco.mj_forward(self.m, self.d)
        self.read = Readings(self.m, meta)
        names = meta["action"]["actuator_names"]
        # the policy's actuators, then the held joints' (assembly names each actuator by its joint)
        held = held_joints(meta).names
        self.act = np.array([self.m.actuator(a).id for a in [*names, *held]], dtype=np.int64)
        self.delay_steps, self.strength = delay_steps, float(strength)
        self.pending: deque[JointCommand] = deque()  # sent, not yet applied (delay_steps)
        if strength != 1.0:  # the torque limits, where the model has them (actuator or joint)
            self.m.actuator_forcerange[self.act] *= strength
            joints = self.m.actuator_trnid[self.act, 0]
            self.m.jnt_actfrcrange[joints] *= strength
        self.seq = 0
        self.frozen = False
        self.poison: dict[str, tuple] = {}  # reading -> (index or slice, value): next report only
        self.sent: list[tuple[float, JointCommand]] = []  # every command, with the sim time
        self._state = self._report()

    # --- the Robot protocol -------------------------------------------------------------------
    def clock(self) -> float:
        return float(self.d.time)

    def sleep_until(self, t: float) -> None:
        dt = self.m.opt.timestep
        while self.d.time + 0.5 * dt < t:
            mujoco.mj_step(self.m, self.d)
        mujoco.mj_forward(self.m, self.d)  # sensors at the same instant as qpos (as a robot reads)
        if not self.frozen:
            self._state = self._report()

    def latest(self) -> RobotState | None:
        return self._state

    def send(self, cmd: JointCommand) -> None:
        self.sent.append((float(self.d.time), cmd))
        self.pending.append(cmd)
        # `delay_steps` sends late; until that many are queued (after a restart) the first one holds
        cmd = self.pending.popleft() if len(self.pending) > self.delay_steps else self.pending[0]
        set_motor_pd(self.m, self.d, self.act, np.nan_to_num(cmd.q), cmd.kp, cmd.kd, self.strength)

    def close(self) -> None:
        pass

    def restart(self) -> None:
        """Report the state as it is now (after the caller reset or moved the simulation)."""
        mujoco.mj_forward(self.m, self.d)
        self.frozen = False
        self.pending.clear()
        self._state = self._report()

    # --- fault injection ----------------------------------------------------------------------
    def freeze(self) -> None:
        """Stop reporting new states (the link or the robot's process died)."""
        self.frozen = True

    def _report(self) -> RobotState:
        self.seq += 1
        r = self.read(self.d, np.zeros(3))
        r.pop("command", None)
        for name, (i, value) in self.poison.items():
            r[name] = np.array(r[name], dtype=np.float64)
            r[name][i] = value
        self.poison = {}
        return RobotState(stamp=float(self.d.time), seq=self.seq, readings=r)
