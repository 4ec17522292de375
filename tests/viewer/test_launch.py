"""simrl-play and simrl-demo: what they show, and one line for each kind of bad input."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import imageio.v2 as imageio
import pytest

from simrl.errors import ConfigError
from simrl.viewer.launch import play
from tests.conftest import compose_config
from tests.viewer.browser import free_port

ROOT = Path(__file__).resolve().parents[2]


def test_play_video_of_a_checkpoint_and_of_its_export(quad_export, tmp_path):
    run_dir, report = quad_export
    mp4 = play(compose_config("play", f"checkpoint={run_dir}", "video=true", "video_s=0.5", "progress=false"))
    assert mp4 == run_dir / "videos" / "play.mp4" and mp4.stat().st_size > 1000
    gif = play(compose_config("play", f"policy={report['onnx']}", "video=true", "progress=false",
                              f"video_path={tmp_path}/b.gif", "video_s=0.5"))
    frames = imageio.mimread(gif)
    assert len(frames) >= 5 and frames[0].std() > 0


@pytest.mark.parametrize("args, message", [
    (["num_envs=2", "env=2"], "env=2 is past the 2 envs shown"),
    (["robot=unitree_go1"], "drives robot 'quadruped', not 'unitree_go1'"),
    (["viewer=nope"], "unknown viewer 'nope'; valid: web, native"),
])
def test_play_refuses_bad_input_in_one_line(quad_export, args, message):
    run_dir, report = quad_export
    for source in (f"checkpoint={run_dir}", f"policy={report['onnx']}"):
        with pytest.raises(ConfigError, match=message) as e:
            play(compose_config("play", source, *args))
        assert "\n" not in str(e.value)


def test_play_refuses_both_sources_and_native_without_display(quad_export, monkeypatch):
    run_dir, report = quad_export
    with pytest.raises(ConfigError, match="not both"):
        play(compose_config("play", f"checkpoint={run_dir}", f"policy={report['onnx']}"))
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(ConfigError, match="viewer=native needs a display"):
        play(compose_config("play", f"policy={report['onnx']}", "viewer=native"))


def test_a_port_in_use_moves_to_the_next_and_says_so(quad_export, capsys):
    from simrl.viewer.sources import DeploySource
    from simrl.viewer.web import WebViewer

    port = free_port()
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", port))
        busy.listen()
        v = WebViewer(DeploySource(quad_export[1]["onnx"]), port=port, plots=True)
        try:
            assert v.port != port
            assert f"port {port} is in use; serving on {v.port}" in capsys.readouterr().out
        finally:
            v.close()


def demo(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "simrl.demo", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_demo_without_a_display_writes_a_gif_and_says_where(tmp_path):
    r = demo("robot=quadruped", "seconds=1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    gif = tmp_path / "simrl-demo-quadruped.gif"
    assert f"wrote {gif}" in r.stdout
    frames = imageio.mimread(gif)
    assert len(frames) >= 10 and frames[-1].std() > 0


@pytest.mark.parametrize("args, message", [
    (["robot=nope"], "no shipped policy 'nope'; valid: "),
    (["robots=go1"], "simrl-demo takes key=value arguments, not 'robots=go1'; keys: robot,"),
    (["viewer=x"], "unknown viewer 'x'; valid: auto, web, native, gif"),
])
def test_demo_refuses_bad_input_in_one_line(tmp_path, args, message):
    r = demo(*args, cwd=tmp_path)
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert message in last and last.startswith("simrl: error:"), r.stderr
