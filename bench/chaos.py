"""Chaos: kill a training run with SIGKILL at random moments, start it again each time, and
check that it finishes as if it had never been killed.

    python bench/chaos.py --kills 20 --iterations 100 --out runs/chaos

Trains `--iterations` iterations of cartpole (checkpoint every iteration) once straight, then
the same command in another run dir, killed `--kills` times and started again after each kill
(the same command: a run dir that holds checkpoints resumes itself). The kills cycle through
three kinds of moment: at a random delay after launch (start-up included), a random moment
after the run has logged 1-4 more iterations (collection or update), and the instant a
checkpoint's temporary file appears (mid-write). After every kill it checks that each
checkpoint on disk loads; at the end, that metrics.csv holds every iteration exactly once and
that the final weights, normalizer and optimizer state equal the straight run's bit for bit.
Exit status 1 where any check fails. Writes chaos.md into `--out`.
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def rows(run_dir: Path) -> list[int]:
    path = run_dir / "metrics.csv"
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return [int(r["iteration"]) for r in csv.DictReader(f) if (r.get("iteration") or "").isdigit()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=20)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--num-envs", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0, help="seeds the kill moments")
    ap.add_argument("--out", default="runs/chaos")
    a = ap.parse_args()

    from simrl.rl.checkpoint import learner_differences, load_checkpoint

    out = Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(a.seed)

    def cmd(run_dir: Path) -> list[str]:
        return [sys.executable, str(ROOT / "train.py"), "task=cartpole", f"num_envs={a.num_envs}",
                f"max_iterations={a.iterations}", "agent.save_interval=1", "progress=false",
                "device=cpu", "seed=1", f"hydra.run.dir={run_dir}"]

    straight, chaos = out / "straight", out / "chaos"
    for d in (straight, chaos):
        if d.exists():
            raise SystemExit(f"chaos: {d} exists: pass another --out or remove it")
    t0 = time.time()
    subprocess.run(cmd(straight), cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t_straight = time.time() - t0
    print(f"chaos: straight run of {a.iterations} iterations took {t_straight:.1f} s", flush=True)

    kinds = ("random delay", "mid-iteration", "mid-checkpoint-write")
    log, failures = [], []
    for k in range(a.kills):
        kind = kinds[k % 3]
        before = rows(chaos)
        proc = subprocess.Popen(cmd(chaos), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        start = time.time()
        if kind == "random delay":
            time.sleep(rng.uniform(0.5, 15.0))
        elif kind == "mid-iteration":
            more = rng.randint(1, 4)
            while proc.poll() is None and len(rows(chaos)) < len(before) + more:
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 0.3))
        else:  # the first checkpoint write of this process (a killed one's stale .tmp is
            # removed by the restart before it trains, so wait for that first)
            while proc.poll() is None and any(chaos.glob("model_*.pt.tmp")):
                time.sleep(0.01)
            while proc.poll() is None and not any(chaos.glob("model_*.pt.tmp")):
                time.sleep(0.0005)
        tmp_seen = any(chaos.glob("model_*.pt.tmp"))
        finished = proc.poll() is not None
        if not finished:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        after = rows(chaos)
        ckpts = sorted(chaos.glob("model_*.pt"))
        bad = []
        for p in ckpts:
            try:
                load_checkpoint(p)
            except Exception as e:  # noqa: BLE001 - any failure to load is the finding
                bad.append(f"{p.name}: {e}")
        newest = max((int(p.stem.split("_")[1]) for p in ckpts), default=0)
        dup = len(after) != len(set(after))
        entry = (k + 1, kind, time.time() - start, len(after), newest, tmp_seen, finished, bad, dup)
        log.append(entry)
        print(f"chaos: kill {k + 1:2d} ({kind}) after {entry[2]:.2f} s: {len(after)} rows, newest "
              f"checkpoint {newest}, mid-write {tmp_seen}, unloadable {len(bad)}, duplicated rows {dup}"
              + (" (the run had finished)" if finished else ""), flush=True)
        if bad or dup:
            failures.append(f"kill {k + 1}: unloadable {bad}, duplicated rows {dup}")
        if finished:
            break

    t1 = time.time()
    final = subprocess.run(cmd(chaos), cwd=ROOT, capture_output=True, text=True)
    if final.returncode != 0:
        failures.append(f"final run failed: {final.stdout[-500:]} {final.stderr[-500:]}")
    its = rows(chaos)
    if its != list(range(1, a.iterations + 1)):
        failures.append(f"metrics.csv iterations are not 1..{a.iterations} once each "
                        f"({len(its)} rows, {len(set(its))} distinct)")
    ref = load_checkpoint(straight / f"model_{a.iterations}.pt")
    got = load_checkpoint(chaos / f"model_{a.iterations}.pt")
    differ = learner_differences(ref, got)
    if differ:
        failures.append(f"final weights differ from the straight run in {differ[:5]}")
    mid_write = sum(1 for e in log if e[5])
    lines = [
        f"# Chaos: cartpole, {a.num_envs} envs, {a.iterations} iterations, checkpoint every iteration",
        "",
        f"Command: `python bench/chaos.py --kills {a.kills} --iterations {a.iterations} "
        f"--num-envs {a.num_envs} --seed {a.seed}`",
        "",
        "| kill | moment | after launch (s) | rows in metrics.csv | newest checkpoint | "
        "a model_*.pt.tmp existed | unloadable checkpoints | duplicated rows |",
        "|---|---|---|---|---|---|---|---|",
        *[f"| {e[0]} | {e[1]} | {e[2]:.2f} | {e[3]} | {e[4]} | {'yes' if e[5] else 'no'} | {len(e[7])} | "
          f"{'yes' if e[8] else 'no'} |" for e in log],
        "",
        f"- kills: {len(log)} ({mid_write} while a checkpoint was being written); then one run to the end "
        f"({time.time() - t1:.1f} s)",
        f"- metrics.csv: {len(its)} rows, iterations 1..{a.iterations} each once: "
        f"{its == list(range(1, a.iterations + 1))}",
        "- final weights, normalizer and optimizer state equal to the straight run's bit for bit: "
        f"{not differ}",
        f"- verdict: {'PASS' if not failures else 'FAIL: ' + '; '.join(failures)}",
    ]
    report = "\n".join(lines)
    (out / "chaos.md").write_text(report + "\n")
    print(report)
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
