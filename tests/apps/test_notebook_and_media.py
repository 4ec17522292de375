"""The quickstart notebook runs; videos, frames and plots are real; rendering errors are clear."""

from __future__ import annotations

import os
import subprocess
import sys

import nbformat
import numpy as np
import pytest
import torch
from nbclient import NotebookClient

from simrl import ROOT
from simrl.registry import make


@pytest.mark.slow
def test_quickstart_notebook_executes(tmp_path):
    nb = nbformat.read(ROOT / "notebooks" / "quickstart.ipynb", as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.get("outputs") for c in code), "strip outputs"
    source = "\n".join(c.source for c in code)
    assert "simrl.rl" not in source and "hydra" not in source, "the notebook uses the simrl API only"
    NotebookClient(nb, timeout=900, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    (run,) = (tmp_path / "runs" / "cartpole").iterdir()  # train.yaml's run dir pattern
    assert (run / "export" / "policy.onnx").is_file() and (run / "model_40.pt").is_file()
    outputs = "".join(o.get("text", "") for c in code for o in c.outputs)
    assert "Traceback" not in outputs
    html = "".join(o.get("data", {}).get("text/html", "") for c in code for o in c.outputs)
    assert "<iframe" in html and "localhost:" in html  # the viewer, inline


def test_render_frame_is_not_blank():
    env = make("quadruped", 2, device="cpu", seed=0)
    frame = env.render(world=0, width=160, height=120)
    assert frame.shape == (120, 160, 3) and frame.dtype == np.uint8
    assert frame.std() > 5.0  # a real image, not a flat fill


def test_video_has_expected_frames_and_size(tmp_path):
    import imageio.v2 as imageio

    from simrl.render import Renderer, write_video

    env = make("cartpole", 3, device="cpu", seed=0)
    r = Renderer(env.sim, 160, 120)
    frames = []
    for _ in range(12):
        env.step(torch.ones(3, 1))
        frames.append(r.frame(0, "side", worlds=[1, 2]))
    path = write_video(frames, tmp_path / "clip.mp4", fps=50)
    with imageio.get_reader(str(path)) as reader:
        video = np.stack(list(reader.iter_data()))
    assert video.shape[0] == 12 and video.shape[1:3] == (120, 160)
    assert video.std() > 5.0 and not np.allclose(video[0], video[-1])


def test_plot_command_writes_png(tmp_path):
    from simrl.plot import main

    runs = []
    for seed in (1, 2):
        d = tmp_path / f"run{seed}"
        d.mkdir()
        rows = ["iteration,env_steps,mean_reward,mean_episode_length,steps_per_s"]
        rows += [f"{i},{i * 100},{i * seed * 0.1},{10 + i},{1000}" for i in range(1, 11)]
        (d / "metrics.csv").write_text("\n".join(rows) + "\n")
        runs.append(str(d))
    out = tmp_path / "curves.png"
    main([*runs, "-o", str(out)])
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 5000


def test_rendering_without_gl_is_a_clear_error():
    # a machine without GL libraries: find_library finds nothing (as on a bare container)
    code = ("import ctypes.util; ctypes.util.find_library = lambda name: None\n"
            "import simrl, torch; from simrl.registry import make; from simrl.render import RenderError\n"
            "env = make('cartpole', 1, device='cpu')\n"
            "try:\n    env.render()\nexcept RenderError as e:\n    print('RENDER_ERROR', e)\n")
    env = {**os.environ, "MUJOCO_GL": "osmesa", "PYOPENGL_PLATFORM": "osmesa"}
    env.pop("DISPLAY", None)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-1500:]
    assert "RENDER_ERROR" in r.stdout and "MUJOCO_GL=osmesa" in r.stdout
    assert "libOSMesa was not found" in r.stdout and "apt-get install" in r.stdout
