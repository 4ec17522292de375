"""The browser viewer (viser): any source's worlds drawn from its MjModel, posed at the control
rate, steered from on-screen controls and the keyboard, with reward and observation plots of
the followed world and a camera that tracks it.

Geometry goes to the browser once (one instanced mesh per geom, an instance per world); each
frame sends only the geoms' positions and orientations. Worlds on a plane stand side by side
`spacing` apart; on a terrain they are where the sim put them.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any

import numpy as np

from simrl.viewer.geometry import camera_distance, geom_meshes, has_plane, xmat_to_wxyz
from simrl.viewer.keys import HELP, KEYS, Controls

PLOT_EVERY = 5  # frames between plot updates
PLOT_STEPS = 200  # control steps shown
AXES = ("forward m/s", "sideways m/s", "yaw rad/s")
CAMERA_OFFSET = np.array([-1.5, -1.5, 0.85])  # from the followed base: behind, to the side, above


class WebViewer:
    """Serve `source` at http://host:port; `run()` steps it in real time until `stop()`."""

    def __init__(self, source: Any, port: int = 8080, host: str = "127.0.0.1", worlds: int | None = None,
                 spacing: float = 1.5, follow: int = 0, plots: bool = True, realtime: bool = True):
        import viser

        self.source = source
        self.shown = int(min(worlds or source.num_worlds, source.num_worlds))
        self.realtime = realtime
        self.server = viser.ViserServer(host=host, port=port, verbose=False)
        self.port = self.server.get_port()
        if port and self.port != port:
            print(f"simrl viewer: port {port} is in use; serving on {self.port} instead (port=... picks one)")
        self.url = f"http://{'localhost' if host in ('0.0.0.0', '127.0.0.1') else host}:{self.port}"
        self.controls = Controls(None if source.command is None else np.array(source.command, dtype=float),
                                 source.command_ranges, num_worlds=self.shown, follow=follow)
        self.lock = threading.RLock()  # a slider set from a key calls back into it
        self._stop = threading.Event()
        self.frames = 0
        self.fps = 0.0
        self.offsets = self._offsets(spacing)
        # the camera's offset from the followed base, scaled to the robot (a hand is small)
        self.camera_offset = CAMERA_OFFSET * camera_distance(source.model) / 2.2
        self._placed: dict[int, int] = {}  # client id -> frames it has been followed
        self._draw_scene()
        self._gui(plots)
        self.update()

    # --- scene ----------------------------------------------------------------------------------
    def _offsets(self, spacing: float) -> np.ndarray:
        n = self.shown
        if self.source.on_terrain or n == 1:
            return np.zeros((n, 3))
        cols = int(np.ceil(np.sqrt(n)))
        k = np.arange(n)
        return np.stack([(k // cols) * spacing, (k % cols) * spacing, np.zeros(n)], 1)

    def _draw_scene(self) -> None:
        scene, m = self.server.scene, self.source.model
        scene.set_up_direction("+z")
        if has_plane(m):
            scene.add_grid("/ground", width=40.0, height=40.0, cell_size=0.5, section_size=2.0,
                           plane="xy", position=(0.0, 0.0, 0.0))
        self.meshes = geom_meshes(m)
        self.handles = []
        pos, quat = self._poses()
        for k, g in enumerate(self.meshes):
            if g.static:
                d = self.source.data(0)
                scene.add_mesh_simple(f"/static/g{g.geom}", g.vertices, g.faces, color=g.rgb,
                                      opacity=None if g.opacity >= 1 else g.opacity,
                                      position=d.geom_xpos[g.geom], wxyz=xmat_to_wxyz(d.geom_xmat[g.geom]))
                continue
            h = scene.add_batched_meshes_simple(f"/worlds/g{g.geom}", g.vertices, g.faces,
                                                batched_wxyzs=quat[k], batched_positions=pos[k],
                                                batched_colors=g.rgb, lod="off")
            self.handles.append((k, h))

    def _poses(self) -> tuple[np.ndarray, np.ndarray]:
        """(geoms, worlds, 3) positions with the worlds' offsets and (geoms, worlds, 4) wxyz."""
        ids = [g.geom for g in self.meshes]
        pos = np.empty((len(ids), self.shown, 3))
        quat = np.empty((len(ids), self.shown, 4))
        self.bases = np.empty((self.shown, 3))
        for w in range(self.shown):
            d = self.source.data(w)
            pos[:, w] = d.geom_xpos[ids] + self.offsets[w]
            quat[:, w] = xmat_to_wxyz(d.geom_xmat[ids])
            self.bases[w] = d.xpos[min(1, self.source.model.nbody - 1)] + self.offsets[w]
        return pos, quat

    def update(self) -> None:
        """Send this frame's poses, move the tracking camera, refresh the plots."""
        pos, quat = self._poses()
        with self.server.atomic():
            for k, h in self.handles:
                h.batched_positions = pos[k]
                h.batched_wxyzs = quat[k]
        self._track()
        self.frames += 1
        if self.plots and self.frames % PLOT_EVERY == 0:
            self._plot()

    def _track(self) -> None:
        """Aim each client's camera at the followed base, keeping the client's own offset from
        it (its orbit and zoom); absolute targets, so late camera reports cannot drift it."""
        base = self.bases[self.controls.follow].copy()
        if not self.follow_box.value:
            return
        for cid, client in self.server.get_clients().items():
            seen = self._placed.get(cid, 0)
            self._placed[cid] = seen + 1
            first = seen < 50  # a new client's first second: it may still reset to its default view
            if not first and np.linalg.norm(client.camera.look_at - base) < 1e-3:
                continue
            offset = client.camera.position - client.camera.look_at
            if first or not 0.2 < np.linalg.norm(offset) < 30.0:
                offset = self.camera_offset
            with client.atomic():  # position first: the client moves its target with it
                client.camera.position = base + offset
                client.camera.look_at = base

    # --- controls -------------------------------------------------------------------------------
    def _gui(self, plots: bool) -> None:
        gui, c = self.server.gui, self.controls
        with gui.add_folder("Simulation"):
            self.pause_box = gui.add_checkbox("Pause (P)", initial_value=False)
            self.pause_box.on_update(lambda _: setattr(c, "paused", self.pause_box.value))
            gui.add_button("Step (N)").on_click(lambda _: self.press("N"))
            gui.add_button("Reset (R)").on_click(lambda _: self.press("R"))
            self.world_slider = gui.add_slider("Followed env (F)", min=0, max=max(self.shown - 1, 1),
                                               step=1, initial_value=c.follow, disabled=self.shown == 1)
            self.world_slider.on_update(lambda _: setattr(c, "follow", int(self.world_slider.value)))
            self.follow_box = gui.add_checkbox("Camera follows", initial_value=True)
            self.rate_text = gui.add_markdown("")
        self.sliders = []
        if c.command is not None:
            with gui.add_folder("Velocity command"):
                for axis, (label, (lo, hi)) in enumerate(zip(AXES, c.ranges, strict=True)):
                    s = gui.add_slider(label, min=float(lo), max=float(hi) if hi > lo else float(lo) + 1e-3,
                                       step=0.05, initial_value=float(np.clip(c.command[axis], lo, hi)),
                                       disabled=hi <= lo)
                    s.on_update(lambda _, a=axis, s=s: self._slider(a, s.value))
                    self.sliders.append(s)
                gui.add_button("Stop (space)").on_click(lambda _: self.press("space"))
        gui.add_markdown(f"Keys: {HELP}")
        for key in KEYS:
            gui.add_command(f"simrl: {key}", hotkey=key).on_trigger(lambda _, k=key: self.press(k))
        self.plots = plots
        if plots:
            self._history: deque = deque(maxlen=PLOT_STEPS)
            sig = self.source.signals(c.follow)
            self.reward_names = list(sig["reward"])
            self.obs_names = list(sig["observation"])
            with gui.add_folder("Plots"):
                self.reward_plot = None
                if self.reward_names:
                    self.reward_plot = gui.add_uplot(
                        self._series_data(len(self.reward_names)), self._series(["step", *self.reward_names]),
                        title="reward terms (x dt)", aspect=1.4)
                self.obs_pick = gui.add_dropdown("observation", self.obs_names or ["(none)"])
                width = len(next(iter(sig["observation"].values()), []))
                self.obs_plot = gui.add_uplot(self._series_data(max(width, 1)),
                                              self._series(["step", *[str(i) for i in range(max(width, 1))]]),
                                              title="observation term", aspect=1.4)
                self.obs_pick.on_update(lambda _: self._rebuild_obs_plot())

    def _slider(self, axis: int, value: float) -> None:
        with self.lock:
            if self.controls.command is not None and self.controls.command[axis] != value:
                self.controls.set_command_axis(axis, value)

    def press(self, key: str) -> None:
        """A key press (one of keys.KEYS), from the keyboard, a button or a test."""
        with self.lock:
            self.controls.press(key)
        if key == "P":
            self.pause_box.value = self.controls.paused
        if key == "F":
            self.world_slider.value = self.controls.follow

    # --- plots ----------------------------------------------------------------------------------
    @staticmethod
    def _series(labels: list[str]) -> tuple:
        colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                  "#bcbd22", "#17becf"]
        return tuple({"label": n} if i == 0 else {"label": n, "stroke": colors[(i - 1) % len(colors)]}
                     for i, n in enumerate(labels))

    @staticmethod
    def _series_data(n: int) -> tuple:
        return tuple(np.zeros(1) for _ in range(n + 1))

    def _rebuild_obs_plot(self) -> None:
        self._history.clear()

    def _plot(self) -> None:
        sig = self.source.signals(self.controls.follow)
        self._history.append(sig)
        x = np.arange(len(self._history), dtype=np.float64)
        if self.reward_plot is not None:
            cols = [np.array([h["reward"][n][0] for h in self._history]) for n in self.reward_names]
            self.reward_plot.data = (x, *cols)
        name = self.obs_pick.value
        if name in sig["observation"]:
            values = np.stack([h["observation"][name] for h in self._history if name in h["observation"]])
            if values.shape[1] + 1 != len(self.obs_plot.series):
                self.obs_plot.series = self._series(["step", *[str(i) for i in range(values.shape[1])]])
            self.obs_plot.data = (np.arange(len(values), dtype=np.float64), *values.T)

    # --- the loop -------------------------------------------------------------------------------
    def tick(self) -> None:
        """Apply the controls, advance one control step unless paused, draw."""
        with self.lock:
            c = self.controls
            if c.pending_reset:
                self.source.reset()
                c.pending_reset = False
            command = None
            if c.changed and c.command is not None:
                command = c.command.copy()
                self.source.set_command(command)
                c.changed = False
            advance = not c.paused or c.pending_steps > 0
            c.pending_steps = max(0, c.pending_steps - 1) if c.paused else 0
        if command is not None:
            for slider, v in zip(self.sliders, command, strict=True):
                if slider.value != v:
                    slider.value = float(v)
        if advance:
            self.source.step()
        self.update()

    def run(self, seconds: float | None = None) -> None:
        """Tick at the control rate (as fast as it can where slower) until `stop()` or `seconds`."""
        dt = self.source.control_dt
        start = last = time.perf_counter()
        next_t = start
        while not self._stop.is_set() and (seconds is None or time.perf_counter() - start < seconds):
            self.tick()
            now = time.perf_counter()
            rate = 1.0 / max(now - last, 1e-6)
            self.fps = 0.9 * self.fps + 0.1 * rate if self.frames > 1 else rate
            last = now
            if self.frames % 25 == 0:
                self.rate_text.content = f"{self.fps:.0f} frames/s (control rate {1 / dt:.0f} Hz)"
            next_t += dt
            if self.realtime and next_t > now:
                time.sleep(next_t - now)
            else:
                next_t = now

    def stop(self) -> None:
        self._stop.set()

    def close(self) -> None:
        self.stop()
        self.server.stop()

    def embed(self, height: int = 520):
        """The viewer inline in a Jupyter notebook (an IFrame of its address)."""
        from IPython.display import IFrame

        return IFrame(self.url, width="100%", height=height)
