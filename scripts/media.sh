#!/usr/bin/env bash
# The pictures in README.md and docs/ (docs/media), rendered by the project from its shipped
# policies: bash scripts/media.sh   (needs EGL or OSMesa for offscreen rendering; ~2 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
out=docs/media
mkdir -p "$out"
simrl-demo robot=unitree_go1 gif="$out/go1.gif" seconds=4 'command=[0.8,0,0]'
simrl-demo robot=quadruped gif="$out/quadruped.gif" seconds=3 'command=[0.8,0,0.5]'
simrl-demo robot=franka_panda gif="$out/panda_reach.gif" seconds=4
python scripts/terrain_picture.py "$out/rough_terrain.png"

python scripts/curve_picture.py docs/learn/quadruped_300_trot.csv "$out/quadruped_curve.png"
ls -la "$out"
