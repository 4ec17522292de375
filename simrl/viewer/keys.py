"""The keyboard of both viewers (web and native): steer the velocity command, pause, step, reset,
follow another world. WASD, QE and the arrows stay with the web viewer's camera."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

STEP = (0.25, 0.25, 0.5)  # per key press: m/s forward, m/s sideways, rad/s yaw

# key -> (action, argument); letters as the web viewer's hotkeys name them
KEYS: dict[str, tuple[str, object]] = {
    "I": ("command", (0, +1)),  # forward faster
    "K": ("command", (0, -1)),  # slower / backwards
    "J": ("command", (2, +1)),  # turn left
    "L": ("command", (2, -1)),  # turn right
    "U": ("command", (1, +1)),  # step left
    "O": ("command", (1, -1)),  # step right
    "space": ("stop", None),  # command zero: stand
    "P": ("pause", None),
    "N": ("step", None),  # one control step while paused
    "R": ("reset", None),
    "F": ("follow", +1),  # follow the next env
}

HELP = ("I/K forward/back, J/L turn, U/O sideways, space stop, P pause, N step, R reset, "
        "F next env")


@dataclass
class Controls:
    """What the keys and on-screen controls change; the viewer's loop applies it."""

    command: np.ndarray | None  # (3,) or None where the task tracks no command
    ranges: list | None
    num_worlds: int = 1
    paused: bool = False
    follow: int = 0
    pending_steps: int = 0
    pending_reset: bool = False
    changed: bool = field(default=False)

    def press(self, key: str) -> None:
        """Apply one key (a name of KEYS); keys for a command do nothing where there is none."""
        if key not in KEYS:
            return
        action, arg = KEYS[key]
        if action == "command" and self.command is not None:
            axis, sign = arg
            self.set_command_axis(axis, self.command[axis] + sign * STEP[axis])
        elif action == "stop" and self.command is not None:
            self.command = np.zeros(3)
            self.changed = True
        elif action == "pause":
            self.paused = not self.paused
        elif action == "step":
            self.pending_steps += 1
        elif action == "reset":
            self.pending_reset = True
        elif action == "follow":
            self.follow = (self.follow + int(arg)) % self.num_worlds

    def set_command_axis(self, axis: int, value: float) -> None:
        """One command component, kept inside its trained range."""
        lo, hi = self.ranges[axis] if self.ranges else (-np.inf, np.inf)
        command = self.command.copy()
        command[axis] = float(np.clip(value, lo, hi))
        self.command = command
        self.changed = True
