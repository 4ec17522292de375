"""How an exported velocity policy holds up sim-to-sim (the deploy controller driving MuJoCo C)
when the world differs from training's: pushes, ground friction, a slower link, weaker motors.

    python bench/robustness.py <export>/policy.onnx [--episodes 20] [--out robustness.json]

Each condition runs the same episodes (seed, count) at every command; the nominal row is the
baseline measured in the same run. Falls and lin-vel error per command; a limit column says
what the row must stay under (pushes <= 10% falls, the rest <= 5%).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

CONDITIONS = {  # name: (run_sim2sim keywords, the most falls the row may have)
    "nominal": ({}, 0.05),
    "pushes 0.5 m/s every 4 s": ({"push_vel": 0.5, "push_interval_s": 4.0}, 0.10),
    "friction 0.4": ({"friction": 0.4}, 0.05),
    "friction 1.2": ({"friction": 1.2}, 0.05),
    "+1 control step of delay": ({"delay_steps": 1}, 0.05),
    "motors 30% weaker": ({"motor_strength": 0.7}, 0.05),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("policy")
    ap.add_argument("--episodes", type=int, default=20, help="per condition and command")
    ap.add_argument("--commands", default="[[0.5,0,0],[0,0,0]]", help="JSON list of [vx, vy, wz]")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="write the rows as JSON here")
    args = ap.parse_args()
    from simrl.rl.sim2sim import run_sim2sim

    commands = [tuple(float(x) for x in c) for c in json.loads(args.commands)]
    rows, t0 = [], time.perf_counter()
    head = "".join(f"{f'{list(c)}: error, falls':>33}" for c in commands)
    print(f"{'condition':<28}{head}  limit")
    for name, (kw, limit) in CONDITIONS.items():
        cells = []
        for c in commands:
            r = run_sim2sim(args.policy, command=c, episodes=args.episodes, seed=args.seed, **kw)
            cells.append({"command": list(c), "lin_vel_error": r["lin_vel_error"],
                          "yaw_rate_error": r["yaw_rate_error"], "fall_share": r["fall_share"]})
        held = all(cell["fall_share"] <= limit for cell in cells)
        rows.append({"condition": name, "limit_fall_share": limit, "held": held, "cells": cells})
        line = "".join(f"{c['lin_vel_error']:>22.3f} m/s {100 * c['fall_share']:>5.1f}%" for c in cells)
        print(f"{name:<28}{line}  <= {100 * limit:.0f}% {'ok' if held else 'MISSED'}")
    print(f"{len(CONDITIONS) * len(commands) * args.episodes} episodes in {time.perf_counter() - t0:.0f} s; "
          f"rerun: python bench/robustness.py {' '.join(sys.argv[1:])}")
    if args.out:
        report = {"policy": args.policy, "episodes": args.episodes, "seed": args.seed, "rows": rows}
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
    return 0 if all(r["held"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
