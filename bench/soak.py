"""Soak: train the main job for a long time and check it stays healthy.

    python bench/soak.py --minutes 120 --num-envs 1024 --out runs/soak

Runs `train.py` (quadruped, CPU default) in a subprocess for `--minutes` of training, samples
the trainer's resident memory every `--sample-s` seconds, and at the end prints, from its
`metrics.csv` and the samples: resident memory at 10 minutes and its growth after that (max and
last), non-finite values in any logged metric, and env-steps/s over the first and the last
10 minutes of training. Exit status 1 where a bar is missed: growth > 5%, any non-finite value,
or the first and last 10 minutes more than 10% apart. Writes `soak.csv` (the memory samples)
and `soak.md` (the report) into `--out`.
"""

from __future__ import annotations

import argparse
import csv
import math
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def rss_mb(pid: int) -> float | None:
    """Resident memory of `pid` and its children's threads (VmRSS), MiB; None once it exited."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def window_rate(rows: list[dict], lo_s: float, hi_s: float) -> tuple[float, int]:
    """env-steps/s over the iterations whose training clock ends in [lo_s, hi_s)."""
    steps = secs = 0.0
    n = 0
    clock = 0.0
    prev_steps = 0.0
    for r in rows:
        dt = float(r["collect_s"]) + float(r["learn_s"])
        clock += dt
        env_steps = float(r["env_steps"])
        if lo_s <= clock < hi_s:
            steps += env_steps - prev_steps
            secs += dt
            n += 1
        prev_steps = env_steps
    return (steps / secs if secs else float("nan")), n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=120.0)
    ap.add_argument("--num-envs", type=int, default=1024)
    ap.add_argument("--task", default="quadruped")
    ap.add_argument("--sample-s", type=float, default=10.0)
    ap.add_argument("--window-min", type=float, default=10.0)
    ap.add_argument("--out", default="runs/soak")
    ap.add_argument("extra", nargs="*", help="further train.py overrides")
    a = ap.parse_args()
    out = Path(a.out).resolve()
    run_dir = out / "run"
    out.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, str(ROOT / "train.py"), f"task={a.task}", f"num_envs={a.num_envs}",
           f"max_minutes={a.minutes}", "max_iterations=1000000", "progress=false", "device=cpu",
           f"hydra.run.dir={run_dir}", *a.extra]
    print("soak:", " ".join(cmd), flush=True)
    t0 = time.time()
    log = open(out / "train.out", "w")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    samples = []
    with open(out / "soak.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["wall_s", "rss_mb", "iterations"])
        while proc.poll() is None:
            mb = rss_mb(proc.pid)
            metrics = run_dir / "metrics.csv"
            its = max(0, len(metrics.read_text().splitlines()) - 1) if metrics.exists() else 0
            if mb is not None:
                samples.append((time.time() - t0, mb, its))
                w.writerow([f"{samples[-1][0]:.1f}", f"{mb:.1f}", its])
                f.flush()
            time.sleep(a.sample_s)
    rc = proc.returncode
    rows = list(csv.DictReader(open(run_dir / "metrics.csv")))
    train_s = sum(float(r["collect_s"]) + float(r["learn_s"]) for r in rows)
    win = 60.0 * a.window_min
    first, n_first = window_rate(rows, 0.0, win)
    last, n_last = window_rate(rows, train_s - win, train_s + 1.0)
    # memory: the sample when training's clock passed the first window (its iteration count)
    it_at_win = next((i + 1 for i, _ in enumerate(rows)
                      if sum(float(r["collect_s"]) + float(r["learn_s"]) for r in rows[: i + 1]) >= win),
                     len(rows))
    after = [s for s in samples if s[2] >= it_at_win]
    base = after[0][1] if after else float("nan")
    peak = max((s[1] for s in after), default=float("nan"))
    end = after[-1][1] if after else float("nan")
    bad = [(r["iteration"], k) for r in rows for k, v in r.items()
           if v not in ("", None) and k != "iteration" and not math.isfinite(float(v))]
    growth = (peak - base) / base
    drift = abs(last - first) / first
    ok = rc == 0 and growth <= 0.05 and not bad and drift <= 0.10
    lines = [
        f"# Soak: {a.task}, {a.num_envs} envs, {a.minutes:g} minutes of training (CPU default)",
        "",
        f"Command: `python bench/soak.py --minutes {a.minutes:g} --num-envs {a.num_envs} "
        f"--task {a.task}`",
        "",
        f"- train.py exit status {rc}; {len(rows)} iterations, "
        f"{float(rows[-1]['env_steps']) / 1e6:.1f} M env steps, "
        f"{train_s / 60:.1f} min of training, {(time.time() - t0) / 60:.1f} min wall",
        f"- resident memory at {a.window_min:g} min of training (iteration {it_at_win}): {base:.0f} MiB; "
        f"peak after it {peak:.0f} MiB (+{100 * growth:.2f}%), at the end {end:.0f} MiB "
        f"(+{100 * (end - base) / base:.2f}%); bar: <= +5%",
        f"- non-finite values in metrics.csv: {len(bad)}" + (f" (first: {bad[:3]})" if bad else ""),
        f"- env-steps/s, first {a.window_min:g} min: {first:,.0f} ({n_first} iterations); last "
        f"{a.window_min:g} min: {last:,.0f} ({n_last} iterations); ratio last/first "
        f"{last / first:.3f}; bar: within 10%",
        f"- verdict: {'PASS' if ok else 'FAIL'}",
    ]
    report = "\n".join(lines)
    (out / "soak.md").write_text(report + "\n")
    print(report)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
