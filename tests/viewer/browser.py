"""Headless Chromium for the viewer tests (Debian's chromium, driven by Playwright)."""

from __future__ import annotations

import shutil
import socket
from contextlib import contextmanager

ARGS = ["--no-sandbox", "--disable-gpu-sandbox", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-quic",
        # WebGL in software, as a machine without a GPU draws it
        "--use-angle=swiftshader", "--enable-unsafe-swiftshader"]


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    assert path, "the viewer tests need Chromium: apt-get install chromium (scripts/test.sh does)"
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def page(width: int = 800, height: int = 600):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), headless=True, args=ARGS)
        try:
            yield browser.new_page(viewport={"width": width, "height": height})
        finally:
            browser.close()
