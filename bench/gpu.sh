#!/usr/bin/env bash
# One command for a CUDA machine (under ten minutes on one GPU): the GPU figures of
# docs/benchmarks.md. Prints everything; paste the output into docs/benchmarks.md.
#   bash bench/gpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. .venv/bin/activate 2>/dev/null || true
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
echo "== sim layer: mjwarp env-steps/s, CUDA graphs on/off (and the CPU ratio) =="
python -m simrl.bench sim --num-worlds 1024 --steps 100 --repeats 1
echo "== quadruped task: env-steps/s at 1024 / 4096 / 16384 envs, CUDA graphs on/off =="
python -m simrl.bench env --num-worlds 1024 --steps 100 --repeats 1
echo "== PPO iteration time shares on the GPU =="
python -m simrl.bench iteration --device cuda --num-worlds 1024 4096 16384
echo "== wall time to the walking criterion at 4096 envs =="
start=$(date +%s)
python train.py device=cuda num_envs=4096 max_iterations=150 progress=false hydra.run.dir=runs/quadruped/gpu_bench
echo "train wall s: $(( $(date +%s) - start ))"
python play.py checkpoint=runs/quadruped/gpu_bench device=cuda num_envs=256 progress=false
