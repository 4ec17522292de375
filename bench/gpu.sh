#!/usr/bin/env bash
# The one-shot GPU check: every GPU figure of docs/benchmarks.md in one run, under ten minutes
# on one GPU including Warp's first kernel compile. Uses whatever `python` is on PATH (the
# machine's own torch; on an offline machine, wheels of the dependencies put on PYTHONPATH).
#
#   bash bench/gpu.sh              # on a CUDA machine
#   bash bench/gpu.sh --sweeps     # also the size sweeps (sim layer, 1k/16k worlds, rough terrain)
#   bash bench/gpu.sh --cpu        # the same steps on the CPU (Warp's CPU device, tiny sizes)
#   bash bench/gpu.sh --lift       # also Franka lift on mjwarp: iterations to 80% success (give it
#                                  # its own budget: SIMRL_GPU_BUDGET_S=900)
#
# The most informative steps come first: learning on the GPU (the quadruped, Menagerie Go1 and
# G1's walking recipe trained at 4096 envs, each evaluated against the walking criterion), then the PPO
# iteration's shares, graphs on/off and the launch budget at 4096 worlds; the size sweeps only
# with --sweeps, since the budget does not hold them all.
#
# Each step runs under `timeout`, and all of them within $SIMRL_GPU_BUDGET_S seconds (default
# 480: a step never outlives the budget, and a step with under 20 s left is skipped); a failed
# or skipped step is reported and the next one runs. Everything printed also goes to
# $SIMRL_GPU_RESULTS/gpu.log (default ./gpu-results/). Exit status: the number of failed steps.
set -uo pipefail
cd "$(dirname "$0")/.."

REHEARSE=0 SWEEPS=0 LIFT=0
for arg in "$@"; do
  case "$arg" in
    --cpu) REHEARSE=1 ;;
    --rehearse) echo "bench/gpu.sh: --rehearse is now --cpu (the GPU check's steps on the CPU)" >&2; exit 2 ;;
    --sweeps) SWEEPS=1 ;;
    --lift) LIFT=1 ;;
    *) echo "usage: bash bench/gpu.sh [--cpu] [--sweeps] [--lift]" >&2; exit 2 ;;
  esac
done
OUT_DIR="${SIMRL_GPU_RESULTS:-./gpu-results}"
mkdir -p "$OUT_DIR"
LOG="$OUT_DIR/gpu.log"
: > "$LOG"
exec > >(tee -a "$LOG") 2>&1
PY="${PYTHON:-python}"
export PYTHONUNBUFFERED=1

if [[ $REHEARSE == 1 ]]; then
  DEVICE=cpu SIZES="[4]" STEPS=2 REPEATS=1 ITER_ENVS=4 TRAIN_ENVS=8 ITERS=2 EVAL_ENVS=2
  TRAIN_SIM="sim=mjwarp" EVAL_EXTRA="task.cfg.episode_length_s=1.2" ROBOT_ITERS=1 G1_ITERS=2 G1_EVAL=2 G1_FIRST=2
  LIMIT_SHORT=300 LIMIT_LONG=600 ROUGH_SIZES="[4]" ROUGH_STEPS=2 SWEEP_SIZES="[4]" LIFT_ITERS=2 LIFT_EVAL=2
else
  DEVICE=cuda:0 SIZES="[4096]" STEPS=100 REPEATS=1 ITER_ENVS=4096 TRAIN_ENVS=4096
  ITERS=150 EVAL_ENVS=256 TRAIN_SIM="" EVAL_EXTRA="" ROBOT_ITERS=200 G1_ITERS=150 G1_EVAL=50 G1_FIRST=100
  LIMIT_SHORT=150 LIMIT_LONG=300 ROUGH_SIZES="[1024,4096]" ROUGH_STEPS=50 SWEEP_SIZES="[1024,4096,16384]"
  LIFT_ITERS=400 LIFT_EVAL=50
fi

BUDGET="${SIMRL_GPU_BUDGET_S:-$([[ $REHEARSE == 1 ]] && echo 1500 || echo 480)}"  # CPU: Warp compiles
FAILED=()
run_step() {  # run_step NAME LIMIT_S CMD...: time it, bound it, keep going on failure
  local name=$1 limit=$2; shift 2
  local left=$((BUDGET - SECONDS))
  echo
  if (( left < 20 )); then
    echo "== $name: skipped, ${left}s of the ${BUDGET}s budget left"
    FAILED+=("$name (skipped: budget)")
    return 0
  fi
  (( limit > left - 15 )) && limit=$((left - 15))
  echo "== $name (limit ${limit}s): $*"
  local t0=$SECONDS
  timeout --kill-after=5 "$limit" "$@"
  local rc=$?
  echo "-- $name: exit $rc after $((SECONDS - t0)) s"
  if [[ $rc != 0 ]]; then FAILED+=("$name (exit $rc)"); fi
  return 0
}

echo "simrl GPU check $(date -u +%FT%TZ)$([[ $REHEARSE == 1 ]] && echo ' (on the CPU)'), log: $LOG"
if [[ $REHEARSE == 0 ]]; then
  run_step "gpu" 30 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
fi
run_step "versions" 60 "$PY" -c "
import sys, torch, warp, mujoco, mujoco_warp
print('python', sys.version.split()[0], '| torch', torch.__version__, '| CUDA', torch.version.cuda,
      '| warp', warp.__version__, '| mujoco', mujoco.__version__, '| mujoco_warp', mujoco_warp.__version__)
if torch.cuda.is_available(): print('device', torch.cuda.get_device_name(0))
"
# learning first: train at 4096 envs, then evaluate against the walking criterion (simrl.evaluate:
# lin-vel error <= 0.2 m/s and <= 5% falls on each of eval.yaml's commands)
train_and_check() {  # train_and_check NAME RUN_DIR TRAIN_OVERRIDES...
  local name=$1 dir=$2; shift 2
  rm -rf "$dir"
  local t0=$SECONDS
  local failed=${#FAILED[@]}
  run_step "train $name" "$LIMIT_LONG" "$PY" train.py device="$DEVICE" $TRAIN_SIM \
    num_envs="$TRAIN_ENVS" progress=false hydra.run.dir="$dir" "$@"
  echo "train $name wall s (incl. start-up): $((SECONDS - t0))"
  if (( ${#FAILED[@]} > failed )); then  # no checkpoint to evaluate
    echo "== eval $name: skipped, its training failed"
    FAILED+=("eval $name (skipped: training failed)")
    return 0
  fi
  run_step "eval $name: tracking, falls, criterion" "$LIMIT_SHORT" "$PY" -c "
import sys, simrl
from simrl.rl.learnbench import Criterion
r = simrl.evaluate(sys.argv[1], *sys.argv[2:]).results
miss = Criterion().failures(r)
print('walking criterion:', 'met' if not miss else 'not met: ' + '; '.join(miss))
" "$dir" device="$DEVICE" num_envs="$EVAL_ENVS" progress=false $EVAL_EXTRA
}
train_and_check quadruped "$OUT_DIR/train" max_iterations="$ITERS"
train_and_check "Menagerie Go1" "$OUT_DIR/train_go1" robot=unitree_go1 max_iterations="$ROBOT_ITERS"

run_step "PPO iteration shares" "$LIMIT_SHORT" "$PY" -m simrl.bench iteration backend=mjwarp \
  device="$DEVICE" num_worlds="$ITER_ENVS" $([[ $REHEARSE == 1 ]] && echo quick=true)
run_step "quadruped task, graphs on/off" "$LIMIT_SHORT" "$PY" -m simrl.bench graphs what=task \
  device="$DEVICE" num_worlds="$SIZES" steps="$STEPS" repeats="$REPEATS"
run_step "launches and syncs per env step" "$LIMIT_SHORT" "$PY" -m simrl.bench launches \
  device="$DEVICE" num_worlds="$ITER_ENVS" steps=3
# G1 (legs) with the humanoid walking recipe, evaluated at 0.5 m/s and standing every
# $G1_EVAL iterations: the first checkpoint that meets the criterion, its env steps and minutes
rm -rf "$OUT_DIR/learn_g1"
run_step "learn Unitree G1 walking recipe (to the criterion)" "$LIMIT_LONG" "$PY" -m simrl.bench learn \
  task=humanoid experiment=g1_walk seeds=1 iterations="$G1_ITERS" eval_every="$G1_EVAL" \
  first_eval="$G1_FIRST" eval_envs="$EVAL_ENVS" 'commands=[[0.5,0,0],[0,0,0]]' \
  device="$DEVICE" num_envs="$TRAIN_ENVS" $TRAIN_SIM $EVAL_EXTRA out="$OUT_DIR/learn_g1"

if [[ $LIFT == 1 ]]; then
  # Franka Panda lift (a fixed-base arm and a free cube) on mjwarp: the learning benchmark's
  # first checkpoint with >= 80% success, its env steps and training minutes
  rm -rf "$OUT_DIR/learn_lift"
  run_step "learn Franka lift (to 80% success)" "$LIMIT_LONG" "$PY" -m simrl.bench learn task=lift seeds=1 \
    iterations="$LIFT_ITERS" eval_every="$LIFT_EVAL" eval_envs="$EVAL_ENVS" min_success=0.8 \
    device="$DEVICE" num_envs="$TRAIN_ENVS" $TRAIN_SIM $EVAL_EXTRA out="$OUT_DIR/learn_lift"
fi

if [[ $SWEEPS == 1 ]]; then
  # CUDA graphs on vs off over sizes, the sim layer alone and the quadruped task
  run_step "sim layer, graphs on/off" "$LIMIT_LONG" "$PY" -m simrl.bench graphs what=sim \
    device="$DEVICE" num_worlds="$SWEEP_SIZES" steps="$STEPS" repeats="$REPEATS"
  run_step "quadruped task sizes, graphs on/off" "$LIMIT_SHORT" "$PY" -m simrl.bench graphs what=task \
    device="$DEVICE" num_worlds="$SWEEP_SIZES" steps="$STEPS" repeats="$REPEATS"
  # the rough terrain compiles its own kernels (~2 min on an H200): two sizes, half the steps
  run_step "rough-terrain task, graphs on/off" "$LIMIT_LONG" "$PY" -m simrl.bench graphs what=task \
    terrain=rough device="$DEVICE" num_worlds="$ROUGH_SIZES" steps="$ROUGH_STEPS" repeats="$REPEATS"
fi

echo
if [[ ${#FAILED[@]} == 0 ]]; then
  echo "simrl GPU check: all steps passed (log: $LOG)"
else
  echo "simrl GPU check: ${#FAILED[@]} step(s) failed: ${FAILED[*]} (log: $LOG)"
fi
exit "${#FAILED[@]}"
