"""Wall-clock pieces of the deploy loop: a precise sleep, and a robot that replays recorded
states in real time (to time the controller and policy on the target computer, no robot needed:
`python -m simrl.rehearse.loop_timing`)."""

from __future__ import annotations

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
