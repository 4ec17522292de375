#!/usr/bin/env bash
# Install into .venv and run the main job: train the quadruped on the CPU default.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
. .venv/bin/activate
pip install -q torch==2.13.0
pip install -q -e .
python train.py "$@"
