"""Env throughput of two source trees, alternated in one run (A B A B ...), on the CPU default.

    python bench/env_ab.py /tmp/simrl_old .                 # quadruped, Go1, lift; 3 rounds
    python bench/env_ab.py /tmp/simrl_old . --envs 512 --steps 100 --rounds 5

Each measurement is a fresh interpreter on one tree's code (its folder first on the path) that
builds the task with `simrl.make`, steps it under seeded random actions (resets included) and
prints env-steps/s over the timed steps. Printed: each tree's median per task and the ratio B/A,
pair by pair, so the machine's drift hits both alike.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

CASES = {"quadruped": ("quadruped", None), "go1": ("quadruped", "unitree_go1"), "lift": ("lift", None)}
_CODE = """
import sys, time, torch, simrl
task, robot, n, steps = sys.argv[1], sys.argv[2] or None, int(sys.argv[3]), int(sys.argv[4])
env = simrl.make(task, n, device="cpu", seed=0, robot=robot)
gen = torch.Generator().manual_seed(0)
acts = [torch.randn(n, env.num_actions, generator=gen) for _ in range(8)]
env.reset(seed=0)
for k in range(10):
    env.step(acts[k % 8])
t = time.perf_counter()
for k in range(steps):
    env.step(acts[k % 8])
print(n * steps / (time.perf_counter() - t))
"""


def rate(tree: Path, task: str, robot: str | None, n: int, steps: int) -> float:
    env = dict(os.environ, PYTHONPATH=str(tree.resolve()))
    out = subprocess.run([sys.executable, "-P", "-c", _CODE, task, robot or "", str(n), str(steps)],
                         env=env, cwd=tree, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("a", type=Path, help="baseline tree")
    p.add_argument("b", type=Path, help="candidate tree")
    p.add_argument("--envs", type=int, default=256)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    args = p.parse_args()
    print(f"{args.envs} envs, {args.steps} timed steps, {args.rounds} rounds (A B alternated)")
    print(f"{'case':>10} {'A env-steps/s':>14} {'B env-steps/s':>14} {'B/A (median of pairs)':>22}")
    for case in args.cases:
        task, robot = CASES[case]
        pairs = []
        for _ in range(args.rounds):
            ra = rate(args.a, task, robot, args.envs, args.steps)
            rb = rate(args.b, task, robot, args.envs, args.steps)
            pairs.append((ra, rb))
        a, b = (statistics.median(x) for x in zip(*pairs, strict=True))
        ratio = statistics.median(rb / ra for ra, rb in pairs)
        print(f"{case:>10} {a:>14,.0f} {b:>14,.0f} {ratio:>22.3f}", flush=True)
    print("rerun: python bench/env_ab.py " + " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()
