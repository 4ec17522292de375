"""Wall-clock pieces of the deploy loop: a precise sleep, and a robot that replays recorded
states in real time (to time the controller and policy on the target computer, no robot needed).

    python -m simrl.deploy.realtime policy.onnx --cycles 10000

records 200 states of the policy walking in MuJoCo, replays them at the control rate for
`--cycles` cycles with the controller in its policy state, and prints the loop's period p50 /
p99 / max, compute p50 / p99 and overruns.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from simrl.deploy.controller import JointCommand, RobotState


def sleep_until(t: float, spin_s: float = 0.0005) -> None:
    """Return at time.monotonic() >= t: the OS sleep until `spin_s` before, then a busy wait
    (an OS sleep alone overshoots by its timer slack, ~0.05-1 ms)."""
    while True:
        left = t - time.monotonic()
        if left <= 0:
            return
        if left > spin_s:
            time.sleep(left - spin_s)


class ReplayRobot:
    """States from a recording, one new report per clock tick of `period`, on the wall clock."""

    def __init__(self, states: list[dict[str, np.ndarray]], period: float):
        self.states, self.period = states, period
        self.t0 = time.monotonic()
        self.sent = 0

    def clock(self) -> float:
        return time.monotonic()

    def sleep_until(self, t: float) -> None:
        sleep_until(t)

    def latest(self) -> RobotState:
        k = int((time.monotonic() - self.t0) / self.period)
        return RobotState(stamp=self.t0 + k * self.period, seq=k, readings=self.states[k % len(self.states)])

    def send(self, cmd: JointCommand) -> None:
        self.sent += 1

    def close(self) -> None:
        pass


def record_states(policy, seconds: float = 4.0, command=(0.5, 0.0, 0.0)) -> list[dict[str, np.ndarray]]:
    """The readings of `seconds` of the policy driving its MuJoCo robot (controller, sim clock)."""
    from simrl.deploy.controller import Controller, limits_from_meta
    from simrl.deploy.mujoco_robot import MujocoRobot

    robot = MujocoRobot(policy.meta)
    ctl = Controller(policy, robot, limits_from_meta(policy.meta, stand_s=0.2), command=np.asarray(command))
    ctl.request("stand")
    ctl.run(cycles=1)
    ctl.request("policy")
    states = []
    for _ in range(int(seconds / ctl.period)):
        ctl.run(cycles=1)
        states.append(robot.latest().readings)
    return states


def main() -> None:
    from simrl.deploy import DeployPolicy
    from simrl.deploy.controller import Controller, limits_from_meta

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("policy")
    ap.add_argument("--cycles", type=int, default=10000)
    a = ap.parse_args()
    policy = DeployPolicy(a.policy)
    states = record_states(policy)
    robot = ReplayRobot(states, float(policy.meta["control_dt"]))
    # the recorded states pass the checks; a replay's stand is instant (its pose is the recording's)
    ctl = Controller(policy, robot, limits_from_meta(policy.meta, stand_s=0.0), command=np.array([0.5, 0, 0]))
    ctl.request("stand")
    ctl.run(cycles=1)
    ctl.request("policy")
    ctl.run(cycles=2)
    ctl.log.rows.clear()
    ctl.cycles = ctl.overruns = 0
    ctl._t_prev = None
    ctl.run(cycles=a.cycles)
    s = ctl.summary()
    print(f"simrl deploy loop: {a.cycles} cycles at {1 / ctl.period:.0f} Hz, state {s['state']} "
          f"(fault: {s['fault']}): period p50 {s['period_p50_ms']} ms, p99 {s['period_p99_ms']} ms, "
          f"max {s['period_max_ms']} ms; compute p50 {s['compute_p50_ms']} ms, p99 {s['compute_p99_ms']} ms; "
          f"overruns {s['overruns']}")
    print(f"rerun: python -m simrl.deploy.realtime {a.policy} --cycles {a.cycles}")


if __name__ == "__main__":
    main()
