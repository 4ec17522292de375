"""Clips of any viewer source, headless (EGL or OSMesa): a GIF for docs and for machines with no
display or browser, an MP4 for `simrl-play video=true`. The camera tracks world 0's base."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mujoco
import numpy as np
from tqdm.auto import tqdm

from simrl.render import RenderError, _gl_hint
from simrl.viewer.geometry import camera_distance


def frames(source: Any, seconds: float, width: int = 480, height: int = 360, fps: float = 25.0,
           distance: float | None = None, progress: bool = True) -> list[np.ndarray]:
    """uint8 (height, width, 3) frames of world 0 every 1/fps s of simulated time."""
    m = source.model
    width, height = min(width, m.vis.global_.offwidth), min(height, m.vis.global_.offheight)
    try:
        renderer = mujoco.Renderer(m, height, width)
    except Exception as e:  # missing GL libraries surface as many exception types
        raise RenderError(f"could not create an offscreen OpenGL context ({e}). {_gl_hint()}") from e
    # software GL (llvmpipe, where there is no GPU) spends most of a frame on these two
    renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = False
    renderer.scene.flags[mujoco.mjtRndFlag.mjRND_REFLECTION] = False
    cam = mujoco.MjvCamera()
    cam.type = mujoco.mjtCamera.mjCAMERA_FREE
    cam.distance = distance or camera_distance(m)
    cam.azimuth, cam.elevation = 135.0, -20.0
    root = min(1, m.nbody - 1)
    every = frame_every(source, fps)
    steps = int(round(seconds / source.control_dt))
    out = []
    try:
        for t in tqdm(range(steps), desc="simrl: rendering", unit="step", disable=not progress, leave=False):
            source.step()
            if t % every:
                continue
            d = source.data(0)
            cam.lookat[:] = d.xpos[root]
            renderer.update_scene(d, camera=cam)
            out.append(renderer.render().copy())
    finally:
        renderer.close()
    return out


def frame_every(source: Any, fps: float) -> int:
    """Control steps between frames for about `fps` frames per simulated second."""
    return max(1, round(1.0 / (fps * source.control_dt)))


def write_gif(images: list[np.ndarray], path: str | Path, fps: float) -> Path:
    """A looping GIF of `images` at `path`."""
    import imageio.v2 as imageio

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    imageio.mimsave(str(path), images, format="GIF", duration=1.0 / fps, loop=0)
    return path


def record(source: Any, path: str | Path, seconds: float = 5.0, fps: float = 25.0, width: int = 480,
           height: int = 360, progress: bool = True) -> Path:
    """A clip of `source` at `path`: a GIF for a .gif path, else an MP4."""
    from simrl.render import write_video

    images = frames(source, seconds, width, height, fps, progress=progress)
    fps = 1.0 / (frame_every(source, fps) * source.control_dt)  # as drawn: every k-th step
    if str(path).lower().endswith(".gif"):
        return write_gif(images, path, fps)
    return write_video(images, Path(path), fps=fps)
