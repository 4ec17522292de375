"""The native MuJoCo viewer (`mujoco.viewer.launch_passive`) over any viewer source, where a
display exists: the followed world drawn at the control rate, the same keys as the web viewer."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from simrl.viewer.keys import HELP, Controls

# GLFW key codes of the viewer's keys (letters are their ASCII capitals)
GLFW_NAMES = {32: "space", **{ord(c): c for c in "IJKLUOPNRF"}}


def run_native(source: Any, seconds: float | None = None, follow: int = 0) -> Controls:
    """Step `source` in real time in MuJoCo's window until it closes (or `seconds` pass)."""
    import mujoco.viewer

    controls = Controls(None if source.command is None else np.array(source.command, dtype=float),
                        source.command_ranges, num_worlds=source.num_worlds, follow=follow)
    pressed: list[str] = []

    def on_key(code: int) -> None:  # the viewer's thread: queue, the loop applies
        if code in GLFW_NAMES:
            pressed.append(GLFW_NAMES[code])

    shown = mujoco.MjData(source.model)
    print(f"simrl play: native viewer; keys: {HELP}")
    with mujoco.viewer.launch_passive(source.model, shown, key_callback=on_key) as viewer:
        start = time.perf_counter()
        while viewer.is_running() and (seconds is None or time.perf_counter() - start < seconds):
            t0 = time.perf_counter()
            while pressed:
                controls.press(pressed.pop(0))
            if controls.pending_reset:
                source.reset()
                controls.pending_reset = False
            if controls.changed and controls.command is not None:
                source.set_command(controls.command)
                controls.changed = False
            if not controls.paused or controls.pending_steps:
                source.step()
                controls.pending_steps = 0
            d = source.data(controls.follow)
            with viewer.lock():
                shown.qpos[:], shown.qvel[:], shown.time = d.qpos, d.qvel, d.time
                mujoco.mj_forward(source.model, shown)
            viewer.sync()
            time.sleep(max(0.0, source.control_dt - (time.perf_counter() - t0)))
    return controls
