#!/usr/bin/env bash
# Install into .venv and run lint + the test suite (the README's test command).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
. .venv/bin/activate
pip install -q --upgrade pip >/dev/null 2>&1 || true
pip install -q torch==2.13.0            # first, so nothing pulls a multi-GB CUDA build
pip install -q -e '.[dev]'
# the viewer tests drive a real browser: Debian's Chromium where none is installed
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  SUDO=$([ "$(id -u)" = 0 ] && echo "" || echo sudo)
  $SUDO apt-get install -y -q chromium >/dev/null 2>&1 || { $SUDO apt-get update -q >/dev/null && $SUDO apt-get install -y -q chromium >/dev/null; }
fi
ruff check .
python -m pytest -q "$@"
