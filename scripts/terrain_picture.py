"""A picture of the rough-terrain grid (levels along x, tile types along y) with the quadruped
on it: python scripts/terrain_picture.py docs/media/rough_terrain.png"""

import sys

import simrl  # first: it picks offscreen GL (EGL) before mujoco loads  # isort: skip
import imageio.v2 as imageio
import mujoco

from simrl.render import Renderer

env = simrl.make("quadruped", 4, device="cpu", cfg={"terrain": {"name": "grid"}})
r = Renderer(env.sim, 640, 360)
r.renderer.scene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = False
cam = mujoco.MjvCamera()
cam.lookat[:] = [0.0, 0.0, 0.0]
cam.distance, cam.azimuth, cam.elevation = 45.0, 135.0, -35.0
imageio.imwrite(sys.argv[1], r.frame(0, cam))
print(f"wrote {sys.argv[1]}")
