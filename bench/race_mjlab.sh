#!/usr/bin/env bash
# The same-GPU race with mjlab: mjlab 1.6.0's Mjlab-Velocity-Flat-Unitree-Go1 and -G1 against
# simrl's Menagerie Go1 (task=quadruped robot=unitree_go1) and G1 (task=humanoid
# robot=unitree_g1), all at the same number of envs (4096) and PPO iterations, one after the
# other on one GPU, then one table of env-steps/s of collection and of the whole iteration
# (bench/race_parse.py). docs/race_mjlab.md says how to get both installs onto an offline machine
# and every setup difference that moves the figure.
#
#   bash bench/race_mjlab.sh [ITERS] [--install] [--dry-run]
#
#   ITERS      PPO iterations per run (default 40: the first RACE_SKIP=5 are warm-up, the
#              other 35 are averaged; ~3.4 M env-steps per run at 4096 envs)
#   --install  first run simrl's .stash/install.sh and .stash-mjlab/install.sh (where their
#              site dirs are missing), timed as stages of the race
#   --dry-run  print the four training commands and exit
#
# Each side runs with its own install only: mjlab with PYTHONPATH=.stash-mjlab/site (mujoco and
# mujoco-warp 3.11, rsl-rl-lib 5.4.2), simrl with PYTHONPATH=.stash/site:<repo> (mujoco and
# mujoco-warp 4.0, rsl-rl-lib 5.5.1); torch is the machine's. Each keeps its own Warp kernel
# cache (.stash*/warp-cache), so a second race on the same machine skips the compiles.
#
# Environment: RACE_ENVS (4096), RACE_SKIP (5), RACE_OUT (./race-results; on the device machine
# put it under $OUT so the logs come back), RACE_BUDGET_S (480 from the script's start, installs
# included: no run starts with under 30 s of it left, none outlives it; a run cut short still
# counts the iterations it logged), RACE_RUN_LIMIT_S (150 per run),
# SIMRL_EXTRA / MJLAB_EXTRA (more Hydra overrides / tyro flags for every run of that side, e.g.
# SIMRL_EXTRA='agent.actor.hidden_dims=[512,256,128] agent.critic.hidden_dims=[512,256,128]' to
# give simrl's Go1 mjlab's network), PYTHON (python3). Everything printed also goes to
# $RACE_OUT/race.log; each run's output to $RACE_OUT/<run>.log.
set -uo pipefail
set -f  # the command lines below are split on spaces; Hydra's [..] lists must not glob
cd "$(dirname "$0")/.."
ROOT=$PWD

ITERS=40 INSTALL=0 DRY=0
for arg in "$@"; do
  case "$arg" in
    --install) INSTALL=1 ;;
    --dry-run) DRY=1 ;;
    ''|*[!0-9]*) echo "usage: bash bench/race_mjlab.sh [ITERS] [--install] [--dry-run]" >&2; exit 2 ;;
    *) ITERS=$arg ;;
  esac
done
ENVS=${RACE_ENVS:-4096}
SKIP=${RACE_SKIP:-5}
OUT=${RACE_OUT:-./race-results}
BUDGET=${RACE_BUDGET_S:-480}
RUN_LIMIT=${RACE_RUN_LIMIT_S:-150}
PY=${PYTHON:-python3}
read -r -a SIMRL_X <<< "${SIMRL_EXTRA:-}"
read -r -a MJLAB_X <<< "${MJLAB_EXTRA:-}"

# one environment per side: only its own site dir on PYTHONPATH
MJLAB_ENV=(env PYTHONPATH="$ROOT/.stash-mjlab/site" WARP_CACHE_PATH="$ROOT/.stash-mjlab/warp-cache"
           MUJOCO_GL=egl WANDB_MODE=disabled GIT_PYTHON_REFRESH=quiet PYTHONUNBUFFERED=1)
SIMRL_ENV=(env PYTHONPATH="$ROOT/.stash/site:$ROOT" WARP_CACHE_PATH="$ROOT/.stash/warp-cache"
           MENAGERIE_ROOT="$ROOT/.stash/menagerie" PYTHONUNBUFFERED=1)
mjlab_cmd() {  # mjlab_cmd TASK_ID LOG_ROOT: mjlab's own `train` entry point (tyro flags)
  echo "${MJLAB_ENV[*]} $PY -m mjlab.scripts.train $1 --env.scene.num-envs $ENVS" \
    "--agent.max-iterations $ITERS --agent.logger tensorboard --agent.upload-model False" \
    "--agent.run-name race --log-root $2 ${MJLAB_X[*]:-}"
}
simrl_cmd() {  # simrl_cmd TASK ROBOT RUN_DIR
  echo "${SIMRL_ENV[*]} $PY train.py device=cuda:0 task=$1 robot=$2 num_envs=$ENVS" \
    "max_iterations=$ITERS progress=false hydra.run.dir=$3 ${SIMRL_X[*]:-}"
}
# name | side | task label | command (the order of the race)
RUNS=(
  "mjlab_go1|mjlab|Go1 flat|$(mjlab_cmd Mjlab-Velocity-Flat-Unitree-Go1 "$OUT/mjlab_go1")"
  "simrl_go1|simrl|Go1 flat|$(simrl_cmd quadruped unitree_go1 "$OUT/simrl_go1")"
  "mjlab_g1|mjlab|G1 flat|$(mjlab_cmd Mjlab-Velocity-Flat-Unitree-G1 "$OUT/mjlab_g1")"
  "simrl_g1|simrl|G1 flat|$(simrl_cmd humanoid unitree_g1 "$OUT/simrl_g1")"
)

if [[ $DRY == 1 ]]; then
  for r in "${RUNS[@]}"; do IFS='|' read -r name _ _ cmd <<< "$r"; echo "# $name"; echo "$cmd"; done
  exit 0
fi

mkdir -p "$OUT"
exec > >(tee "$OUT/race.log") 2>&1
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
T0=$(now)
left() { awk -v a="$T0" -v b="$(now)" -v B="$BUDGET" 'BEGIN { printf "%d", B - (b - a) }'; }
echo "race: mjlab vs simrl, $ENVS envs, $ITERS iterations per run (first $SKIP warm-up)," \
  "budget ${BUDGET}s, $(date -u +%FT%TZ), results in $OUT"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null \
  || echo "nvidia-smi: not found (no GPU?)"

if [[ $INSTALL == 1 ]]; then
  for s in .stash .stash-mjlab; do
    if [[ -d $s/site ]]; then echo "== install $s: $s/site already there"; continue; fi
    [[ -f $s/install.sh ]] || { echo "== install $s: no $s/install.sh (stash every part first)"; exit 1; }
    t=$(now)
    echo "== install $s"
    bash "$s/install.sh" || { echo "-- install $s failed after $(since "$t") s"; exit 1; }
    echo "-- install $s: $(since "$t") s"
  done
fi
for s in .stash .stash-mjlab; do
  [[ -d $s/site ]] || { echo "no $s/site: install first (docs/race_mjlab.md, or pass --install)"; exit 1; }
done

: > "$OUT/runs.tsv"  # name side task path rc wall_s, for race_parse.py
for r in "${RUNS[@]}"; do
  IFS='|' read -r name side task cmd <<< "$r"
  budget_left=$(left)
  echo
  if (( budget_left < 30 )); then
    echo "== $name: skipped, ${budget_left}s of the ${BUDGET}s budget left"
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$side" "$task" "-" "skipped" "-" >> "$OUT/runs.tsv"
    continue
  fi
  limit=$(( RUN_LIMIT < budget_left - 5 ? RUN_LIMIT : budget_left - 5 ))
  rm -rf "${OUT:?}/$name"  # simrl resumes a run dir that holds checkpoints: start fresh
  echo "== $name (limit ${limit}s): $cmd"
  t=$(now)
  # shellcheck disable=SC2086  # the command line is split on purpose
  timeout --kill-after=10 "$limit" $cmd > "$OUT/$name.log" 2>&1
  rc=$?
  wall=$(since "$t")
  grep -E "Learning iteration|Collection time|simrl: |Error|error:|Traceback" "$OUT/$name.log" \
    | sed 's/\x1b\[[0-9;]*m//g' | tail -4
  echo "-- $name: exit $rc after $wall s (log: $OUT/$name.log)"
  path=$OUT/$name.log
  [[ $side == simrl ]] && path=$OUT/$name/metrics.csv
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$side" "$task" "$path" "$rc" "$wall" >> "$OUT/runs.tsv"
done

echo
t=$(now)
"$PY" bench/race_parse.py "$OUT" --skip "$SKIP" --envs "$ENVS"
rc=$?  # 1: a run logged no iteration past the warm-up
echo "race: table in $(since "$t") s; whole race $(since "$T0") s (log: $OUT/race.log)"
exit $rc
