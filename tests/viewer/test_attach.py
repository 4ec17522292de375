"""The viewer beside a training run changes nothing the run computes."""

import threading
import time

import torch

from simrl.rl.app import train
from tests.conftest import compose_config
from tests.viewer.browser import free_port, page


def _weights(run_dir):
    ckpt = torch.load(sorted(run_dir.glob("model_*.pt"))[-1], map_location="cpu", weights_only=False)
    parts = ("actor_state_dict", "critic_state_dict")
    return {f"{part}.{k}": v for part in parts for k, v in ckpt[part].items()}


def test_a_watched_run_trains_bit_identically(tmp_path):
    args = ["task=cartpole", "num_envs=16", "max_iterations=5", "progress=false", "device=cpu", "seed=3"]
    train(compose_config("train", *args), tmp_path / "plain")
    port = free_port()
    seen = {}

    def browse():  # a browser watching while it trains
        try:
            with page() as pg:
                for _ in range(100):
                    try:
                        pg.goto(f"http://localhost:{port}")
                        break
                    except Exception:
                        time.sleep(0.1)
                pg.wait_for_timeout(1500)
                seen["title"] = pg.title()
        except Exception as e:  # reported by the assertion below
            seen["error"] = repr(e)

    watcher = threading.Thread(target=browse, daemon=True)
    watcher.start()
    trainer = train(compose_config("train", *args, "viewer=true", f"viewer_port={port}", "viewer_hz=50"),
                    tmp_path / "watched")
    watcher.join(60)
    assert trainer.iteration == 5
    a, b = _weights(tmp_path / "plain"), _weights(tmp_path / "watched")
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k
    assert "error" not in seen and "title" in seen, seen  # the page loaded while the run trained
