"""Operator input for the controller: velocity commands and state requests.

Three sources, each `poll() -> (command or None, request or None)`, called once per cycle:

- `StdinCommands`: lines typed on a terminal (or piped): `stand`, `policy`, `damp`, `passive`,
  or three numbers `vx vy yaw_rate` (m/s, m/s, rad/s), e.g. `0.5 0 0`.
- `RemoteCommands`: the robot's own wireless remote, whose 40 bytes arrive in every LowState_
  (`wireless_remote`): left stick forward/sideways and right stick sideways scale to
  `max_command`; Start asks for stand, A for the policy, Select for damping, B for passive.
- `TopicCommands`: Unitree's `rt/wirelesscontroller` topic (WirelessController_: lx, ly, rx, ry,
  keys with the same button bits), for a joystick node or a script on the network.

The byte layout of the remote (buttons in bytes 2-3, stick floats at 4, 8, 12 and 20,
little-endian) is the one Unitree's SDK examples parse (unitree_sdk2_python,
example/wireless_controller).
"""

from __future__ import annotations

import queue
import struct
import sys
import threading
from typing import Any

import numpy as np

# button bits of the 16-bit key word (byte 2 low, byte 3 high)
BUTTONS = {"R1": 0, "L1": 1, "Start": 2, "Select": 3, "R2": 4, "L2": 5, "F1": 6, "F3": 7,
           "A": 8, "B": 9, "X": 10, "Y": 11, "Up": 12, "Right": 13, "Down": 14, "Left": 15}
REQUESTS = {"Start": "stand", "A": "policy", "Select": "damping", "B": "passive"}
WORDS = {"stand": "stand", "policy": "policy", "walk": "policy", "damp": "damping",
         "damping": "damping", "passive": "passive", "stop": "damping"}


def parse_remote(data: bytes | list[int]) -> tuple[dict[str, float], set[str]]:
    """Sticks {lx, rx, ry, ly} in [-1, 1] and the pressed buttons, from the 40 remote bytes."""
    raw = bytes(bytearray(data))
    if len(raw) < 24:
        raise ValueError(f"wireless_remote has {len(raw)} bytes, expected 40")
    keys = raw[2] | (raw[3] << 8)
    sticks = {name: struct.unpack_from("<f", raw, off)[0]
              for name, off in (("lx", 4), ("rx", 8), ("ry", 12), ("ly", 20))}
    return sticks, {b for b, bit in BUTTONS.items() if keys >> bit & 1}


def sticks_to_command(sticks: dict[str, float], max_command) -> np.ndarray:
    """(vx, vy, yaw rate): left stick up = forward, left stick left = +y, right stick left =
    turning left (counter-clockwise), each scaled to `max_command`; non-finite reads as 0."""
    v = np.array([sticks["ly"], -sticks["lx"], -sticks["rx"]], dtype=np.float64)
    v = np.clip(np.nan_to_num(v, nan=0.0, posinf=0.0, neginf=0.0), -1.0, 1.0)
    return v * np.asarray(max_command, dtype=np.float64)


class _Edges:
    """Requests on a button's press, not while it is held."""

    def __init__(self) -> None:
        self.held: set[str] = set()

    def __call__(self, pressed: set[str]) -> str | None:
        new, self.held = pressed - self.held, pressed
        return next((REQUESTS[b] for b in ("Select", "B", "Start", "A") if b in new), None)


class RemoteCommands:
    """The wireless remote's bytes from the robot's LowState_ (`robot.remote`)."""

    def __init__(self, robot: Any, max_command=(1.0, 0.5, 1.0)):
        self.robot, self.max_command, self.edges = robot, max_command, _Edges()

    def poll(self) -> tuple[np.ndarray | None, str | None]:
        data = getattr(self.robot, "remote", None)
        if data is None:
            return None, None
        sticks, pressed = parse_remote(data)
        return sticks_to_command(sticks, self.max_command), self.edges(pressed)


class TopicCommands:
    """Unitree's rt/wirelesscontroller topic (WirelessController_), on the robot's DDS domain."""

    def __init__(self, participant: Any, max_command=(1.0, 0.5, 1.0)):
        from cyclonedds.sub import DataReader
        from cyclonedds.topic import Topic

        from simrl.deploy.unitree import wireless_controller_type

        self.reader = DataReader(participant, Topic(participant, "rt/wirelesscontroller",
                                                    wireless_controller_type()))
        self.max_command, self.edges = max_command, _Edges()

    def poll(self) -> tuple[np.ndarray | None, str | None]:
        samples = self.reader.take(N=64)
        if not samples:
            return None, None
        s = samples[-1]
        sticks = {"lx": s.lx, "ly": s.ly, "rx": s.rx, "ry": s.ry}
        pressed = {b for b, bit in BUTTONS.items() if s.keys >> bit & 1}
        return sticks_to_command(sticks, self.max_command), self.edges(pressed)


class StdinCommands:
    """Lines from `stream` (stdin), read on a thread so the loop never waits for input."""

    def __init__(self, stream=None):
        self.lines: queue.Queue[str] = queue.Queue()
        self.errors: list[str] = []
        stream = stream or sys.stdin
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.put(line)

    def poll(self) -> tuple[np.ndarray | None, str | None]:
        command, request = None, None
        while not self.lines.empty():
            c, r = parse_line(self.lines.get_nowait())
            command = c if c is not None else command
            request = r if r is not None else request
        return command, request


def parse_line(line: str) -> tuple[np.ndarray | None, str | None]:
    """`stand` / `policy` / `damp` / `passive`, or `vx vy yaw_rate`; anything else is ignored
    with a message on stderr."""
    words = line.strip().lower().split()
    if not words:
        return None, None
    if words[0] in WORDS:
        return None, WORDS[words[0]]
    try:
        values = [float(w) for w in words]
    except ValueError:
        values = []
    if len(values) == 3 and all(np.isfinite(values)):
        return np.array(values), None
    print(f"simrl deploy: ignored '{line.strip()}': type stand, policy, damp, passive, or vx vy yaw_rate",
          file=sys.stderr)
    return None, None
