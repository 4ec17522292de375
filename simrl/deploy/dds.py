"""A Unitree robot over its own middleware: Unitree SDK2's `rt/lowstate` and `rt/lowcmd` on DDS.

`UnitreeRobot(meta, network="eth0")` is the controller's `Robot`: it reads LowState_ (joint
encoders, IMU) and writes LowCmd_ (per motor: target, gains) with the CRC the robot checks, in
the layout of the robot config's motor table (`motors: {layout: unitree_go | unitree_hg, order:
[...]}`), mapping motors to the policy's joints by name. Motors the policy does not drive are
sent zero gains. The same code talks to `simrl-robot-sim` (a MuJoCo robot on the same topics)
over loopback, which is how the whole path is rehearsed before a robot.
"""

from __future__ import annotations

import socket
import time
from typing import Any

import numpy as np

from simrl.deploy.controller import JointCommand, RobotState, held_joints
from simrl.deploy.realtime import sleep_until

SUPPLIED = ("joint_pos", "joint_vel", "gyro", "quat")  # what LowState_ gives (plus the command)


def dds_config(network: str | None) -> str | None:
    """The CycloneDDS configuration that binds it to `network` (None: its own choice); refuses
    an interface this machine does not have, naming the ones it has."""
    if network is None:
        return None
    names = [name for _, name in socket.if_nameindex()]
    if network not in names:
        raise ValueError(f"network interface '{network}' does not exist here; this machine has "
                         f"{names}: pass one of them (lo to rehearse with simrl-robot-sim)")
    return (f'<CycloneDDS><Domain id="any"><General><Interfaces><NetworkInterface name="{network}"/>'
            "</Interfaces></General></Domain></CycloneDDS>")


_DOMAINS: dict[int, object] = {}  # configured domains, kept alive while their participants live


def participant(domain: int, network: str | None):
    """A DomainParticipant on `domain`, bound to `network` where given."""
    from cyclonedds.domain import Domain, DomainParticipant

    config = dds_config(network)
    if config is not None and domain not in _DOMAINS:
        _DOMAINS[domain] = Domain(domain, config)  # the participant below takes its config
    return DomainParticipant(domain)


def motor_map(meta: dict[str, Any]) -> tuple[str, np.ndarray]:
    """(layout, motor index of each policy joint, then of each held joint) from policy.json's
    robot config."""
    robot = meta.get("robot") or {}
    motors = (robot.get("config") or {}).get("motors")
    if not motors:
        raise ValueError(f"policy.json's robot '{robot.get('name')}' has no motor table: add `motors: "
                         "{layout, order}` to its robot yaml and export again")
    order, joints = list(motors["order"]), [*robot["joint_names"], *held_joints(meta).names]
    missing = [j for j in joints if j not in order]
    if missing:
        raise ValueError(f"the motor table of '{robot.get('name')}' lacks the policy joints {missing}: "
                         "this policy.json is for another robot than the motor table")
    if motors["layout"] not in ("unitree_go", "unitree_hg"):
        raise ValueError(f"motor layout '{motors['layout']}' is unknown; known: unitree_go, unitree_hg")
    return motors["layout"], np.array([order.index(j) for j in joints])


class UnitreeRobot:
    """The controller's `Robot` over Unitree SDK2 DDS (see the module docstring)."""

    def __init__(self, meta: dict[str, Any], network: str | None = None, domain: int = 0,
                 wait_s: float = 3.0):
        from simrl.deploy import unitree
        from simrl.deploy.runtime import required_readings

        self.layout, self.motor = motor_map(meta)  # the policy's joints' motors, then the held ones'
        self.num_policy = int(meta["num_actions"])
        lacking = [r for r in required_readings(meta) if r not in (*SUPPLIED, "command", "gravity")]
        if lacking:
            raise ValueError(f"this policy observes {lacking}, which a Unitree LowState_ does not carry "
                             f"(it gives {list(SUPPLIED)}): it cannot run on this interface")
        go = self.layout == "unitree_go"
        self._u = unitree
        self.state_type = unitree.GoLowState_ if go else unitree.HgLowState_
        self.cmd = unitree.lowcmd_go() if go else unitree.lowcmd_hg()
        if go:
            self.cmd.head, self.cmd.level_flag = list(unitree.GO_HEAD), unitree.GO_LEVEL_FLAG_LOW
        from cyclonedds.pub import DataWriter
        from cyclonedds.sub import DataReader
        from cyclonedds.topic import Topic

        self.dp = participant(domain, network)
        self.reader = DataReader(self.dp, Topic(self.dp, unitree.TOPIC_LOWSTATE, self.state_type))
        self.writer = DataWriter(self.dp, Topic(self.dp, unitree.TOPIC_LOWCMD, type(self.cmd)))
        self.seq = 0
        self.bad_crc = 0
        self.sent = 0
        self._state: RobotState | None = None
        self._machine = 0
        self._tick = 0
        self.remote: bytes | None = None
        deadline = time.monotonic() + wait_s
        while self.latest() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        if self._state is None:
            where = f"via interface '{network}'" if network else "on any interface"
            raise TimeoutError(f"no LowState_ on {unitree.TOPIC_LOWSTATE} in DDS domain {domain} {where} "
                               f"within {wait_s:g} s: is the robot on, in low-level mode, and on this "
                               "network (or simrl-robot-sim running)? No command was sent.")

    def clock(self) -> float:
        return time.monotonic()

    def sleep_until(self, t: float) -> None:
        sleep_until(t)

    def latest(self) -> RobotState | None:
        newest = None
        for s in self.reader.take(N=64):
            if not hasattr(s, "crc"):  # an InvalidSample: the robot's writer left
                continue
            if not self._u.check_crc(s):
                self.bad_crc += 1
                continue
            newest = s
        if newest is not None:
            self.seq += 1
            self.remote = bytes(bytearray(newest.wireless_remote))  # the robot's remote, as sent
            m = self.motor
            q = np.array([newest.motor_state[i].q for i in m])
            dq = np.array([newest.motor_state[i].dq for i in m])
            n = self.num_policy
            imu = newest.imu_state
            self._tick = int(newest.tick)
            if self.layout == "unitree_hg":
                self._machine = newest.mode_machine  # echoed in every LowCmd, as the SDK does
            readings = {"joint_pos": q[:n], "joint_vel": dq[:n],
                        "gyro": np.array(imu.gyroscope, dtype=np.float64),
                        "quat": np.array(imu.quaternion, dtype=np.float64)}
            if len(m) > n:  # the held joints' encoders
                readings["held_joint_pos"] = q[n:]
            self._state = RobotState(stamp=time.monotonic(), seq=self.seq, readings=readings)
        return self._state

    def send(self, cmd: JointCommand) -> None:
        c = self.cmd
        for motor, q, kp, kd in zip(self.motor, cmd.q, cmd.kp, cmd.kd, strict=True):
            mc = c.motor_cmd[int(motor)]
            mc.mode, mc.q, mc.dq, mc.tau, mc.kp, mc.kd = 1, float(q), 0.0, 0.0, float(kp), float(kd)
        # the tick of the state this command answers, in a field the robot ignores (reserve):
        # simrl-robot-sim measures state-to-command latency from it
        if self.layout == "unitree_hg":
            c.mode_machine = self._machine
            c.reserve[0] = self._tick
        else:
            c.reserve = self._tick
        self.writer.write(self._u.with_crc(c))
        self.sent += 1

    def close(self) -> None:
        pass
