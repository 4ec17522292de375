"""One table for the mjlab/simrl race (bench/race_mjlab.sh): env-steps/s of collection and of
the whole PPO iteration per run, from each side's own per-iteration timings.

    python3 bench/race_parse.py RACE_DIR [--skip 5] [--envs 4096]   # RACE_DIR/runs.tsv
    python3 bench/race_parse.py FILE [FILE ...] [--skip 5]         # a mjlab console log or a
                                                                   # simrl metrics.csv each

Both sides time an iteration the same way, with rsl-rl's own `OnPolicyRunner.learn` clock:
collection = the rollout (policy act + env.step + storage, num_steps_per_env times), learning =
returns + the PPO update. Sources:

* mjlab: what rsl-rl-lib 5.4.2's `Logger.log` prints each iteration (rsl_rl/utils/logger.py):
  "Learning iteration {it}/{total}", "Total steps: N" (cumulative: its increments are the
  env-steps of each iteration, num_envs * num_steps_per_env), "Collection time: X.XXXs",
  "Learning time: X.XXXs" (printed to the millisecond).
* simrl: the run's metrics.csv (simrl/rl/runner.py): env_steps (cumulative), collect_s, learn_s.

The first `--skip` iterations (Warp/cuBLAS warm-up, first graph launches) are left out; over
the rest, collection env-steps/s = sum(env-steps) / sum(collection s), iteration env-steps/s =
sum(env-steps) / sum(collection s + learning s). A run cut short (time limit) counts the
iterations it logged. Standard library only.
"""

from __future__ import annotations

import argparse
import csv
import re
import statistics
import sys
from pathlib import Path

ANSI = re.compile(r"\x1b\[[0-9;]*m")
MJLAB_FIELDS = {
    "it": re.compile(r"Learning iteration (\d+)/(\d+)"),
    "total": re.compile(r"Total steps:\s+(\d+)"),
    "collect": re.compile(r"Collection time:\s+([0-9.]+)s"),
    "learn": re.compile(r"Learning time:\s+([0-9.]+)s"),
}


def mjlab_iterations(path: Path) -> list[tuple[int, float, float]]:
    """(env-steps, collection s, learning s) per iteration from rsl-rl's console blocks."""
    rows, block = [], {}
    last_total = 0
    for line in ANSI.sub("", path.read_text(errors="replace")).splitlines():
        for key, rx in MJLAB_FIELDS.items():
            m = rx.search(line)
            if m:
                if key == "it":
                    block = {}
                block[key] = m.group(1)
                break
        if {"it", "total", "collect", "learn"} <= block.keys():
            total = int(block["total"])
            rows.append((total - last_total, float(block["collect"]), float(block["learn"])))
            last_total = total
            block = {}
    return rows


def simrl_iterations(path: Path) -> list[tuple[int, float, float]]:
    """(env-steps, collect_s, learn_s) per iteration from a simrl run's metrics.csv."""
    rows, last_total = [], 0
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            try:
                total = int(float(r["env_steps"]))
                rows.append((total - last_total, float(r["collect_s"]), float(r["learn_s"])))
            except (KeyError, TypeError, ValueError):  # a torn last line
                break
            last_total = total
    return rows


def summarize(rows: list[tuple[int, float, float]], skip: int) -> dict[str, float] | None:
    kept = rows[skip:]
    if not kept:
        return None
    steps = sum(r[0] for r in kept)
    collect = sum(r[1] for r in kept)
    learn = sum(r[2] for r in kept)
    return {
        "logged": len(rows),
        "kept": len(kept),
        "steps_per_iter": statistics.median(r[0] for r in kept),
        "collect_sps": steps / collect if collect > 0 else float("nan"),
        "iter_sps": steps / (collect + learn) if collect + learn > 0 else float("nan"),
        "collect_s": collect / len(kept),
        "learn_s": learn / len(kept),
    }


def runs_from_dir(d: Path) -> list[dict[str, str]]:
    names = ["name", "side", "task", "path", "rc", "wall_s"]
    with open(d / "runs.tsv") as f:
        return [dict(zip(names, line.rstrip("\n").split("\t"), strict=False)) for line in f if line.strip()]


def runs_from_files(files: list[str]) -> list[dict[str, str]]:
    out = []
    for f in files:
        side = "simrl" if f.endswith(".csv") else "mjlab"
        out.append({"name": Path(f).parent.name if side == "simrl" else Path(f).stem, "side": side,
                    "task": "-", "path": f, "rc": "-", "wall_s": "-"})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", help="a race dir holding runs.tsv, or log/metrics files")
    ap.add_argument("--skip", type=int, default=5, help="warm-up iterations left out (default 5)")
    ap.add_argument("--envs", type=int, default=None, help="num_envs, to check the step counts")
    args = ap.parse_args(argv)
    first = Path(args.paths[0])
    runs = runs_from_dir(first) if first.is_dir() else runs_from_files(args.paths)

    head = (f"{'run':<10} {'task':<9} {'iters':>5} {'kept':>4} {'steps/iter':>10} "
            f"{'collect steps/s':>15} {'iteration steps/s':>17} {'collect s/it':>12} "
            f"{'learn s/it':>10} {'wall s':>7}  note")
    print(head)
    print("-" * len(head))
    bad = 0
    for run in runs:
        path, note = Path(run["path"]), []
        if run["rc"] not in ("0", "-"):
            note.append("skipped" if run["rc"] == "skipped" else f"exit {run['rc']}"
                        + (" (time limit)" if run["rc"] in ("124", "137") else ""))
        rows = []
        if run["rc"] != "skipped":
            if not path.is_file():
                note.append(f"no {path}")
            else:
                rows = (simrl_iterations if run["side"] == "simrl" else mjlab_iterations)(path)
        s = summarize(rows, args.skip)
        if s and args.envs and s["steps_per_iter"] % args.envs:
            note.append(f"steps/iter not a multiple of {args.envs} envs")
        if s is None:
            bad += 1
            note.append(f"{len(rows)} iterations logged, none after the {args.skip} warm-up ones")
            print(f"{run['name']:<10} {run['task']:<9} {len(rows):>5} {0:>4} {'-':>10} {'-':>15} "
                  f"{'-':>17} {'-':>12} {'-':>10} {run['wall_s']:>7}  {'; '.join(note)}")
            continue
        print(f"{run['name']:<10} {run['task']:<9} {s['logged']:>5} {s['kept']:>4} "
              f"{s['steps_per_iter']:>10,.0f} {s['collect_sps']:>15,.0f} {s['iter_sps']:>17,.0f} "
              f"{s['collect_s']:>12.3f} {s['learn_s']:>10.3f} {run['wall_s']:>7}  {'; '.join(note)}")
    print(f"(means over the iterations after the first {args.skip}: env-steps / seconds summed; "
          "wall s: the whole command, start-up and Warp compile included)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
