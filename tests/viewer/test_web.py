"""The browser viewer in a real (headless) Chromium: a shipped policy is drawn where the sim
says its robot is, and the forward key raises the commanded velocity."""

import io
import threading
import time

import numpy as np
import pytest
from PIL import Image

from simrl import zoo
from simrl.viewer.sources import DeploySource
from simrl.viewer.web import WebViewer
from tests.viewer.browser import free_port, page


def project(camera, point: np.ndarray, width: int, height: int) -> tuple[float, float]:
    """Pixel of a world point in the browser's view (viser's camera: OpenCV axes, vertical fov)."""
    w, x, y, z = camera.wxyz
    rot = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                    [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                    [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
    p = rot.T @ (point - camera.position)
    f = 0.5 * height / np.tan(camera.fov / 2)
    return width / 2 + f * p[0] / p[2], height / 2 + f * p[1] / p[2]


def wait_for(cond, seconds: float = 60.0) -> None:
    end = time.time() + seconds
    while not cond():
        assert time.time() < end, "timed out waiting for the viewer"
        time.sleep(0.1)


@pytest.fixture
def viewer():
    source = DeploySource(zoo.policy_path("quadruped"), num_envs=1, command=(0.0, 0.0, 0.0))
    v = WebViewer(source, port=free_port(), plots=False)
    thread = threading.Thread(target=v.run, daemon=True)
    thread.start()
    yield v
    v.close()
    thread.join(10)


def shot(pg) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(pg.screenshot())).convert("RGB"), dtype=np.int16)


def test_browser_draws_the_robot_where_the_sim_has_it_and_keys_steer(viewer):
    width, height = 800, 600
    with page(width, height) as pg:
        pg.goto(viewer.url)
        wait_for(lambda: len(viewer.server.get_clients()) == 1)
        client = next(iter(viewer.server.get_clients().values()))
        viewer.press("P")  # hold still for a like-for-like pair of pictures
        # the camera settles on the followed robot (the client reports where it looks)
        wait_for(lambda: np.linalg.norm(client.camera.look_at - viewer.bases[0]) < 0.05, 30)
        pg.wait_for_timeout(3000)  # meshes uploaded and drawn
        with_robot = shot(pg)
        u, v = project(client.camera, viewer.bases[0], width, height)
        for _, h in viewer.handles:
            h.visible = False
        pg.wait_for_timeout(1500)
        empty = shot(pg)
        for _, h in viewer.handles:
            h.visible = True
        diff = np.abs(with_robot - empty).sum(-1)
        assert (diff > 30).mean() > 0.002, "the robot changed no pixels: nothing drawn"
        ys, xs = np.nonzero(diff > 30)
        # the base projects inside the drawn robot's pixels (within a few pixels of them)
        assert 0 <= u < width and 0 <= v < height
        assert np.min(np.hypot(xs - u, ys - v)) < 6, (u, v, xs.mean(), ys.mean())
        viewer.press("P")

        before = viewer.source.controllers[0].command[0]
        pg.mouse.click(100, 500)  # focus the canvas, as a user's first click does
        pg.keyboard.press("i")
        wait_for(lambda: viewer.source.controllers[0].command[0] > before, 10)
        assert viewer.source.controllers[0].command[0] == pytest.approx(before + 0.25)
