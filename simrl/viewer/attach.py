"""The browser viewer beside a training run (`train.py viewer=true`): world 0 (and the next few)
read at a low rate in a background thread. It draws no random numbers and writes nothing the
run reads, so the run's weights are the same with and without it."""

from __future__ import annotations

import threading
from typing import Any

from simrl.viewer.sources import WatchSource


def watch_training(env: Any, port: int = 8080, rate_hz: float = 10.0, worlds: int = 1,
                   host: str = "127.0.0.1") -> Any:
    """A viewer of `env`'s first `worlds` worlds at `rate_hz`, running until its `close()`."""
    from simrl.viewer.web import WebViewer

    viewer = WebViewer(WatchSource(env, rate_hz), port=port, host=host, worlds=worlds, plots=False)
    threading.Thread(target=viewer.run, daemon=True, name="simrl-viewer").start()
    print(f"simrl train: watching world 0 at {rate_hz:g} Hz: open {viewer.url}")
    return viewer
