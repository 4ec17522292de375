#!/usr/bin/env bash
# Install into .venv and run lint + the test suite (the README's test command).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
. .venv/bin/activate
pip install -q --upgrade pip >/dev/null 2>&1 || true
pip install -q torch==2.13.0            # first, so nothing pulls a multi-GB CUDA build
pip install -q -e '.[dev]'
ruff check .
python -m pytest -q "$@"
