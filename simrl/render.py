"""Frames and videos from any world of a Sim (either backend), headless through EGL.

A world's state is copied into a host MjData (`sim.get_mjdata`) and drawn by MuJoCo's
offscreen `mujoco.Renderer`; several worlds can share one scene, side by side.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import mujoco
import numpy as np

from simrl.errors import UserError
from simrl.sim import Sim


class RenderError(UserError, RuntimeError):
    """Offscreen rendering is not available (no display, no EGL/OSMesa)."""


def _gl_hint() -> str:
    return (
        "Offscreen rendering needs EGL "
        "(Debian: apt-get install libegl1 libgl1; then MUJOCO_GL=egl) or OSMesa "
        "(apt-get install libosmesa6; MUJOCO_GL=osmesa), set before mujoco is imported."
    )


class Renderer:
    """Draws worlds of `sim` from a camera; one instance per image size."""

    def __init__(self, sim: Sim, width: int = 640, height: int = 480):
        model = sim.model
        if width > model.vis.global_.offwidth or height > model.vis.global_.offheight:
            raise RenderError(
                f"image {width}x{height} exceeds the model's offscreen buffer "
                f"{model.vis.global_.offwidth}x{model.vis.global_.offheight}: raise "
                "<visual><global offwidth=... offheight=.../> in the MJCF, or render smaller"
            )
        missing = os.environ.get("SIMRL_GL_MISSING")
        if missing:
            raise RenderError(f"no offscreen OpenGL: {missing}. {_gl_hint()}")
        try:
            self.renderer = mujoco.Renderer(model, height, width)
        except Exception as e:  # missing GL libraries surface as many exception types
            raise RenderError(f"could not create an offscreen OpenGL context ({e}). {_gl_hint()}") from e
        self.sim = sim
        self.data = mujoco.MjData(model)
        self.extra = mujoco.MjData(model)
        self.option = mujoco.MjvOption()

    def frame(self, world: int = 0, camera: str | int = -1, worlds: Sequence[int] = (),
              spacing: float = 1.0) -> np.ndarray:
        """uint8 (height, width, 3) image of `world`; `worlds` are drawn beside it (y offset)."""
        data = self.sim.get_mjdata(world, self.data)
        r = self.renderer
        r.update_scene(data, camera=camera, scene_option=self.option)
        for k, other in enumerate(worlds, start=1):
            extra = self.sim.get_mjdata(other, self.extra)
            if self.sim.model.nq >= 7 and self.sim.model.jnt_type[0] == mujoco.mjtJoint.mjJNT_FREE:
                extra.qpos[1] = data.qpos[1] + k * spacing
                mujoco.mj_kinematics(self.sim.model, extra)
            mujoco.mjv_addGeoms(self.sim.model, extra, self.option, mujoco.MjvPerturb(),
                                mujoco.mjtCatBit.mjCAT_DYNAMIC, r.scene)
        return r.render()

    def close(self) -> None:
        self.renderer.close()


def render_frame(sim: Sim, world: int = 0, width: int = 640, height: int = 480,
                 camera: str | int = -1) -> np.ndarray:
    r = Renderer(sim, width, height)
    try:
        return r.frame(world, camera)
    finally:
        r.close()


def write_video(frames: Sequence[np.ndarray], path: str | Path, fps: float) -> Path:
    """Encode frames (uint8 HxWx3) to MP4 with imageio-ffmpeg (H.264)."""
    import imageio.v2 as imageio

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with imageio.get_writer(str(path), fps=fps, codec="libx264", quality=7,
                            macro_block_size=8, ffmpeg_log_level="error") as w:
        for f in frames:
            w.append_data(f)
    return path


def default_camera(sim: Sim) -> str | int:
    """The model's tracking camera when it has one ('track' or 'side'), else the free camera."""
    for name in ("track", "side"):
        if mujoco.mj_name2id(sim.model, mujoco.mjtObj.mjOBJ_CAMERA, name) >= 0:
            return name
    return -1
