"""Resume, bit for bit: 10 + 10 iterations against 20 straight, three ways, through train.py.

    python bench/resume.py --tasks cartpole quadruped --out runs/resume

For each task (its default env count on the CPU), trains 20 iterations straight; then
(a) 10 iterations, then `resume=<run> max_iterations=10` into a new run dir; (b) the 20-iteration
command stopped by SIGTERM once it has logged 10 iterations (it saves a final checkpoint), then
the same command again (it resumes itself); (c) the same with SIGKILL after 12 iterations and a
checkpoint every 5 (it resumes from model_10 and redoes 11-12). Each is compared with the
straight run: the final weights, normalizer and optimizer state bit for bit, and every
metrics.csv row but the wall-clock columns. Exit status 1 on any difference.
"""

from __future__ import annotations

import argparse
import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TIMING = {"steps_per_s", "collect_s", "learn_s"}


def metrics(run_dir: Path) -> list[dict]:
    with open(run_dir / "metrics.csv", newline="") as f:
        return [{k: v for k, v in r.items() if k not in TIMING} for r in csv.DictReader(f)]


def differences(a_dir: Path, b_dir: Path, it: int, rows_b: list[dict] | None = None) -> list[str]:
    from simrl.rl.checkpoint import learner_differences, load_checkpoint

    a, b = (load_checkpoint(d / f"model_{it}.pt") for d in (a_dir, b_dir))
    out = learner_differences(a, b)
    ra, rb = metrics(a_dir), rows_b if rows_b is not None else metrics(b_dir)
    if ra != rb:
        bad = next((i for i, (x, y) in enumerate(zip(ra, rb, strict=False)) if x != y), min(len(ra), len(rb)))
        out.append(f"metrics.csv rows differ from row {bad + 1} ({len(ra)} vs {len(rb)} rows)")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", nargs="+", default=["cartpole", "quadruped"])
    ap.add_argument("--out", default="runs/resume")
    a = ap.parse_args()
    out = Path(a.out).resolve()
    report, failed = [], False

    def train(run_dir: Path, *extra: str, wait: bool = True):
        cmd = [sys.executable, str(ROOT / "train.py"), f"task={task}", "progress=false", "device=cpu",
               f"hydra.run.dir={run_dir}", *extra]
        if wait:
            return subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True)
        return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop_after(proc, run_dir: Path, rows: int, sig: int) -> None:
        while proc.poll() is None:
            f = run_dir / "metrics.csv"
            if f.exists() and len(f.read_text().splitlines()) - 1 >= rows:
                break
            time.sleep(0.02)
        os.kill(proc.pid, sig)
        proc.wait()

    for task in a.tasks:
        base = out / task
        t0 = time.time()
        train(base / "straight", "max_iterations=20")
        t_straight = time.time() - t0
        # (a) 10, then resume= 10 more into a new run dir
        train(base / "split_a", "max_iterations=10")
        train(base / "split_b", "max_iterations=10", f"resume={base / 'split_a'}")
        rows = metrics(base / "split_a") + metrics(base / "split_b")
        diff_a = differences(base / "straight", base / "split_b", 20, rows)
        # (b) SIGTERM after 10 rows, then the same command
        p = train(base / "sigterm", "max_iterations=20", wait=False)
        stop_after(p, base / "sigterm", 10, signal.SIGTERM)
        stopped_b = len(metrics(base / "sigterm"))
        train(base / "sigterm", "max_iterations=20")
        diff_b = differences(base / "straight", base / "sigterm", 20)
        # (c) SIGKILL after 12 rows with a checkpoint every 5, then the same command
        p = train(base / "sigkill", "max_iterations=20", "agent.save_interval=5", wait=False)
        stop_after(p, base / "sigkill", 12, signal.SIGKILL)
        stopped_c = len(metrics(base / "sigkill"))
        train(base / "sigkill", "max_iterations=20", "agent.save_interval=5")
        diff_c = differences(base / "straight", base / "sigkill", 20)
        cases = (("10 + resume= 10", diff_a), (f"SIGTERM at {stopped_b}, same command again", diff_b),
                 (f"SIGKILL at {stopped_c} (checkpoint every 5), same command again", diff_c))
        for name, diff in cases:
            failed |= bool(diff)
            verdict = "bit-identical" if not diff else "DIFFERS: " + ", ".join(diff[:4])
            report.append(f"| {task} | {name} | {verdict} |")
        print(f"resume: {task} done ({t_straight:.0f} s for the straight run)", flush=True)
    lines = ["| task | 20 iterations as | final weights, optimizer state, metrics.csv rows vs 20 straight |",
             "|---|---|---|", *report, "", f"rerun: python bench/resume.py --tasks {' '.join(a.tasks)}"]
    print("\n".join(lines))
    (out / "resume.md").write_text("\n".join(lines) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
