"""The viewer's costs, measured here and now (no figures are kept in this file):

  frames   frame rate of the browser viewer for 1 and 16 worlds of a shipped policy, a headless
           Chromium connected (server side: step every world, send the poses)
  train    training throughput with the viewer attached (train.py viewer=true) against without,
           runs interleaved A B A B ... in one invocation (env steps/s from metrics.csv)
  demo     seconds from starting `python -m simrl.demo viewer=web` to its first frame

    python bench/viewer.py frames [policy=unitree_go1] [seconds=10]
    python bench/viewer.py train [task=quadruped] [iterations=20] [pairs=3]
    python bench/viewer.py demo [policy=unitree_go1]
"""

from __future__ import annotations

import csv
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def frames(policy: str = "unitree_go1", seconds: float = 10.0) -> None:
    seconds = float(seconds)
    from simrl import zoo
    from simrl.viewer.sources import DeploySource
    from simrl.viewer.web import WebViewer
    from tests.viewer.browser import free_port, page

    for worlds in (1, 16):
        source = DeploySource(zoo.policy_path(policy), num_envs=worlds)
        v = WebViewer(source, port=free_port(), realtime=False)
        with page() as pg:
            pg.goto(v.url)
            pg.wait_for_timeout(3000)
            thread = threading.Thread(target=v.run, kwargs={"seconds": seconds}, daemon=True)
            start = v.frames
            t0 = time.perf_counter()
            thread.start()
            thread.join()
            rate = (v.frames - start) / (time.perf_counter() - t0)
        v.close()
        print(f"{policy}: {worlds:2d} env(s): {rate:.1f} frames/s (policy steps of every world + "
              f"poses sent; control rate {1 / v.source.control_dt:.0f} Hz)")


def _steps_per_s(run_dir: Path) -> float:
    rows = list(csv.DictReader(open(run_dir / "metrics.csv")))[1:]  # the first iteration warms up
    return statistics.median(float(r["steps_per_s"]) for r in rows)


def train(task: str = "quadruped", iterations: int = 20, pairs: int = 3) -> None:
    iterations, pairs = int(iterations), int(pairs)
    results: dict[str, list[float]] = {"without": [], "with viewer": []}
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(int(pairs)):
            for label, extra in (("without", []), ("with viewer", ["viewer=true", "viewer_port=0"])):
                run = Path(tmp) / f"{k}_{label.replace(' ', '_')}"
                cmd = [sys.executable, str(ROOT / "train.py"), f"task={task}", f"max_iterations={iterations}",
                       "progress=false", "seed=1", f"hydra.run.dir={run}", *extra]
                subprocess.run(cmd, check=True, capture_output=True, cwd=ROOT)
                results[label].append(_steps_per_s(run))
    a, b = statistics.median(results["without"]), statistics.median(results["with viewer"])
    print(f"{task}, {iterations} iterations x {pairs} pairs, interleaved; median env steps/s: without "
          f"{a:.0f}, with the viewer attached {b:.0f}: ratio {b / a:.3f} ({100 * (1 - b / a):+.1f}% slower)")
    print(f"  runs without: {[round(x) for x in results['without']]}; with: "
          f"{[round(x) for x in results['with viewer']]}")


def demo(policy: str = "unitree_go1") -> None:
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "simrl.demo", f"robot={policy}", "viewer=web", "port=0",
                          "seconds=2"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    first = None
    for line in p.stdout:
        if first is None and "first frame" in line:
            first = time.perf_counter() - t0
            inside = re.search(r"\(([\d.]+) s to the first frame\)", line)
    p.wait()
    print(f"simrl-demo robot={policy}: first frame {first:.1f} s after the command started "
          f"({inside.group(1)} s of it after Python and simrl were imported)")


if __name__ == "__main__":
    mode, *rest = sys.argv[1:] or ["frames"]
    kwargs = dict(a.split("=", 1) for a in rest)
    {"frames": frames, "train": train, "demo": demo}[mode](**kwargs)
    print(f"rerun: python bench/viewer.py {' '.join(sys.argv[1:])}")
