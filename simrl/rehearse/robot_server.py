"""A MuJoCo robot on Unitree SDK2's wire: `simrl-robot-sim robot=unitree_go1 network=lo`.

Publishes `rt/lowstate` (LowState_ with the robot's motor states and IMU, CRC set) at `rate` Hz
on the wall clock and applies each `rt/lowcmd` it receives (CRC checked; a bad one is dropped and
counted) through the motors' PD: per motor target, kp and kd, zero gains for a motor in mode 0.
The physics steps at 1/rate. The robot (a configs/robot name or yaml, or `policy=<policy.json>`
to rebuild an export's scene) must have a motor table. A controller on the same DDS domain and
interface (`simrl.deploy.dds.UnitreeRobot`) drives it exactly as it would drive the robot.

    simrl-robot-sim robot=unitree_go1 network=lo [domain=0] [rate=500] [seconds=0: forever]
                    [trace=<file.npz>] [harness=false]

For rehearsals that need many episodes (`bench/dds_tracking.py`), SIGUSR1 puts the robot back in
its start pose at rest with its motors passive (the operator picking it up and setting it down),
and `trace=` records the simulation's ground truth, which a robot does not report, at 50 Hz
(monotonic time, base velocity in the base frame from the IMU's velocimeter, yaw rate, and
whether the policy's termination rule holds: a fall), written at exit. With `harness=true` the
base hangs at its start pose (as a humanoid hangs from a gantry while it stands up) from each
start until SIGUSR2 lowers it onto its feet.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path
from typing import Any

import mujoco
import numpy as np

from simrl.deploy.realtime import sleep_until
from simrl.rehearse.mujoco_robot import set_motor_pd
from simrl.rehearse.scene import fell


class RobotServer:
    def __init__(self, robot: str | dict | None = None, policy: str | None = None, network: str | None = None,
                 domain: int = 0, rate: float = 500.0, trace: str | None = None, harness: bool = False):
        from simrl.deploy import unitree
        from simrl.deploy.dds import participant
        from simrl.scene import DEFAULT_KEY, assemble, load_robot

        meta: dict[str, Any] = {}
        if policy is not None:
            meta = json.loads(Path(policy).read_text())
            robot = meta["robot"]["config"]
        cfg = load_robot(robot)
        if not cfg.motors:
            raise ValueError(f"robot '{cfg.name}' has no motor table (`motors: {{layout, order}}` in its "
                             "yaml): the server does not know which motor is which joint")
        scene = assemble(cfg)
        self.m, self.d = scene.model, mujoco.MjData(scene.model)
        self.m.opt.timestep = 1.0 / rate
        self.key = self.m.key(DEFAULT_KEY).id  # assemble's start pose
        mujoco.mj_resetDataKeyframe(self.m, self.d, self.key)
        mujoco.mj_forward(self.m, self.d)
        self.rate = rate
        self.go = cfg.motors["layout"] == "unitree_go"
        order = cfg.motors["order"]
        joints = [self.m.joint(j) for j in order]
        self.qadr = np.array([j.qposadr[0] for j in joints])
        self.dadr = np.array([j.dofadr[0] for j in joints])
        by_joint = {int(self.m.actuator_trnid[a, 0]): a for a in range(self.m.nu)}
        self.act = np.array([by_joint[j.id] for j in joints])  # the actuator driving each motor
        self.effort = np.abs(self.m.actuator_forcerange[self.act]).max(axis=1)
        sensor = {name: (self.m.sensor(name).adr[0], self.m.sensor(name).dim[0])
                  for name in ("imu_gyro", "imu_quat", "imu_acc", "imu_vel") if self._has_sensor(name)}
        self.sensor = sensor
        self.resets = 0
        self._reset_requested = False
        self.harness = harness and scene.root_qpos is not None  # a free base held until release()
        self._held = self.harness
        self.trace_path = trace
        self.trace: list[tuple] = []
        self._termination = (meta.get("deploy") or {}).get("termination") or {}
        self._contact_bodies = [self.m.body(b).id for b in self._termination.get("contact_bodies", [])]
        self._root_qpos, self._root_dof = scene.root_qpos, scene.root_dof
        self._u = unitree
        self.state = unitree.lowstate_go() if self.go else unitree.lowstate_hg()
        if self.go:
            self.state.head, self.state.level_flag = list(unitree.GO_HEAD), unitree.GO_LEVEL_FLAG_LOW
        from cyclonedds.pub import DataWriter
        from cyclonedds.sub import DataReader
        from cyclonedds.topic import Topic

        self.dp = participant(domain, network)
        cmd_type = unitree.GoLowCmd_ if self.go else unitree.HgLowCmd_
        self.writer = DataWriter(self.dp, Topic(self.dp, unitree.TOPIC_LOWSTATE, type(self.state)))
        self.reader = DataReader(self.dp, Topic(self.dp, unitree.TOPIC_LOWCMD, cmd_type))
        self.commands = self.bad_crc = self.published = 0
        self._sent_at: dict[int, float] = {}  # tick -> when its state was published
        self.latency: list[float] = []  # state published -> the command answering it received
        self._passive()

    def _has_sensor(self, name: str) -> bool:
        return mujoco.mj_name2id(self.m, mujoco.mjtObj.mjOBJ_SENSOR, name) >= 0

    def request_reset(self) -> None:
        """Start pose at rest, motors passive, at the next physics step (safe from a signal)."""
        self._reset_requested = True

    def release(self) -> None:
        """Lower the robot from its harness onto its feet (safe from a signal)."""
        self._held = False

    def _reset(self) -> None:
        mujoco.mj_resetDataKeyframe(self.m, self.d, self.key)
        mujoco.mj_forward(self.m, self.d)
        self._passive()
        self.resets += 1
        self._reset_requested = False
        self._held = self.harness

    def _hold(self) -> None:
        """The harness: the free base back at its start pose, at rest (the joints move freely)."""
        q, dof = self._root_qpos, self._root_dof
        self.d.qpos[q : q + 7] = self.m.key_qpos[self.key, q : q + 7]
        self.d.qvel[dof : dof + 6] = 0.0

    def _sense(self, name: str) -> np.ndarray:
        adr, dim = self.sensor[name]
        return self.d.sensordata[adr : adr + dim]

    def _record(self) -> None:
        """One row of ground truth: time, base vx vy (base frame), yaw rate, fallen, episode."""
        vel = self._sense("imu_vel") if "imu_vel" in self.sensor else np.full(3, np.nan)
        gyro = self._sense("imu_gyro") if "imu_gyro" in self.sensor else np.full(3, np.nan)
        r = {"quat": self._sense("imu_quat")} if "imu_quat" in self.sensor else {}
        down = fell(self.m, self.d, r, self._termination, self._root_qpos, self._contact_bodies)
        self.trace.append((time.monotonic(), vel[0], vel[1], gyro[2], float(down), self.resets))

    def write_trace(self) -> None:
        if self.trace_path:
            cols = np.array(self.trace, dtype=np.float64).reshape(-1, 6)
            np.savez(self.trace_path, t=cols[:, 0], vx=cols[:, 1], vy=cols[:, 2], yaw_rate=cols[:, 3],
                     fell=cols[:, 4], episode=cols[:, 5])

    def _passive(self) -> None:
        set_motor_pd(self.m, self.d, self.act, self.d.ctrl[self.act], 0.0, 0.0)

    def apply(self, cmd: Any) -> None:
        """A LowCmd_ through the motors' PD: target q, kp, kd per motor (mode 0: no torque)."""
        mc = [cmd.motor_cmd[i] for i in range(len(self.act))]
        on = np.array([c.mode != 0 for c in mc])
        set_motor_pd(self.m, self.d, self.act, np.where(on, [c.q for c in mc], 0.0),
                     np.where(on, [c.kp for c in mc], 0.0), np.where(on, [c.kd for c in mc], 0.0))

    def publish(self, tick_ms: int) -> None:
        s, d = self.state, self.d
        for i, (q, v) in enumerate(zip(self.qadr, self.dadr, strict=True)):
            ms = s.motor_state[i]
            ms.q, ms.dq = float(d.qpos[q]), float(d.qvel[v])
            ms.tau_est = float(d.actuator_force[self.act[i]])
        imu = s.imu_state
        fields = (("imu_gyro", "gyroscope"), ("imu_quat", "quaternion"), ("imu_acc", "accelerometer"))
        for name, field in fields:
            if name in self.sensor:
                adr, dim = self.sensor[name]
                setattr(imu, field, [float(x) for x in d.sensordata[adr : adr + dim]])
        s.tick = tick_ms & 0xFFFFFFFF
        self.writer.write(self._u.with_crc(s))
        self.published += 1

    def run(self, seconds: float = 0.0) -> None:
        period = 1.0 / self.rate
        every = max(1, round(self.rate / 50))  # trace rows at 50 Hz
        t0 = time.monotonic()
        k = 0
        while not seconds or time.monotonic() - t0 < seconds:
            if self._reset_requested:
                self._reset()
            newest = None
            for c in self.reader.take(N=64):
                if not hasattr(c, "crc"):  # an InvalidSample: a writer left (the controller exited)
                    continue
                if self._u.check_crc(c):
                    newest = c
                    tick = int(c.reserve if self.go else c.reserve[0])  # simrl-deploy echoes it
                    sent = self._sent_at.pop(tick, None)
                    if sent is not None:
                        self.latency.append(time.monotonic() - sent)
                else:
                    self.bad_crc += 1
            if newest is not None:
                self.commands += 1
                self.apply(newest)
            mujoco.mj_step(self.m, self.d)
            if self._held:
                self._hold()
            mujoco.mj_forward(self.m, self.d)  # sensors at the new state, as the robot reads them
            tick = int(k * period * 1000)
            self.publish(tick)
            self._sent_at[tick] = time.monotonic()
            if self.trace_path and k % every == 0:
                self._record()
            if len(self._sent_at) > 1000:  # ticks no command answered
                self._sent_at.pop(next(iter(self._sent_at)))
            k += 1
            sleep_until(t0 + k * period)


def _flag(value: str) -> bool:
    if value.lower() not in ("true", "false", "1", "0"):
        raise SystemExit(f"simrl-robot-sim: harness is true or false, got '{value}'")
    return value.lower() in ("true", "1")


def main(argv: list[str] | None = None) -> None:
    """`simrl-robot-sim key=value ...`: robot, policy, network, domain, rate, seconds."""
    args: dict[str, str] = {}
    for a in sys.argv[1:] if argv is None else argv:
        key, sep, value = a.partition("=")
        if not sep or key not in ("robot", "policy", "network", "domain", "rate", "seconds", "trace",
                                  "harness"):
            raise SystemExit(f"simrl-robot-sim: unknown argument '{a}'; use robot=<name or yaml> or "
                             "policy=<policy.json>, network=<interface>, domain=N, rate=Hz, seconds=S, "
                             "trace=<file.npz>, harness=true|false")
        args[key] = value
    if "robot" not in args and "policy" not in args:
        raise SystemExit("simrl-robot-sim: pass robot=<configs/robot name or yaml> or policy=<policy.json>")
    try:
        server = RobotServer(robot=args.get("robot"), policy=args.get("policy"), network=args.get("network"),
                             domain=int(args.get("domain", 0)), rate=float(args.get("rate", 500)),
                             trace=args.get("trace"), harness=_flag(args.get("harness", "false")))
    except (ValueError, KeyError) as e:
        raise SystemExit(f"simrl-robot-sim: error: {e}") from None
    print(f"simrl-robot-sim: {server.m.nu} motors, lowstate at {server.rate:g} Hz on domain "
          f"{args.get('domain', 0)}, interface {args.get('network', 'any')}", flush=True)
    signal.signal(signal.SIGUSR1, lambda *_: server.request_reset())
    signal.signal(signal.SIGUSR2, lambda *_: server.release())
    # Ctrl-C and SIGTERM stop it cleanly (the summary, the trace), also where it was started in
    # the background, which leaves SIGINT ignored and Python's handler uninstalled
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        server.run(float(args.get("seconds", 0)))
    except KeyboardInterrupt:
        pass
    server.write_trace()
    lat = np.array(server.latency) * 1e3
    timing = ""
    if lat.size:
        p50, p99 = np.percentile(lat, [50, 99])
        timing = (f"; state-to-command latency p50 {p50:.2f} ms, p99 {p99:.2f} ms, max {lat.max():.2f} ms "
                  f"over {lat.size} commands")
    print(f"simrl-robot-sim: {server.published} states published, {server.commands} commands applied, "
          f"{server.bad_crc} dropped for a bad CRC{timing}"
          + (f"; {server.resets} resets" if server.resets else ""), flush=True)


if __name__ == "__main__":
    main()
