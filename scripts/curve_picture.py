"""The quadruped's learning curve over seeds, from the learning benchmark's table:
python scripts/curve_picture.py docs/learn/quadruped_300_trot.csv docs/media/quadruped_curve.png

The table is what `python -m simrl.bench learn seeds=3 iterations=300 ...` writes (one row per
seed and evaluated checkpoint); the plot shows each command's worst tracking error per seed, the
median over seeds, and the walking criterion's bound."""

import csv
import statistics
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

rows = list(csv.DictReader(open(sys.argv[1])))
by_seed: dict[str, list[tuple[int, float]]] = defaultdict(list)
for r in rows:
    by_seed[r["seed"]].append((int(r["iteration"]), float(r["worst_lin_vel_error"])))
its = sorted({i for pts in by_seed.values() for i, _ in pts})
fig, ax = plt.subplots(figsize=(6, 3.4), dpi=110)
for seed, pts in sorted(by_seed.items()):
    x, y = zip(*sorted(pts), strict=True)
    ax.plot(x, y, "o-", alpha=0.45, label=f"seed {seed}")
median = [statistics.median(v for s in by_seed.values() for i, v in s if i == it) for it in its]
ax.plot(its, median, "k-", lw=2, label="median")
ax.axhline(0.2, color="tab:red", ls="--", lw=1, label="criterion: 0.2 m/s")
ax.set_xlabel("PPO iteration (24,576 env steps each)")
ax.set_ylabel("worst-command lin-vel error (m/s)")
ax.set_title("Quadruped, flat ground, 2-core CPU: seeds 1-3")
ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(sys.argv[2])
print(f"wrote {sys.argv[2]}")
