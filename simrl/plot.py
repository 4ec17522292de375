"""Training curves from run dirs: `python -m simrl.plot RUN_DIR... [-o curves.png]`.

Reads each run's metrics.csv, or a CSV file with a `seed` column (the learning benchmark's
learn.csv: one series per seed). With several runs (the seeds of a sweep) each metric is drawn
as their mean with a min-max band; `--separate` draws one line per run instead.
"""

from __future__ import annotations

import argparse
import csv
import math
from pathlib import Path

import numpy as np

from simrl.errors import ConfigError, MissingFileError, exit_on_user_error

DEFAULT_METRICS = ("mean_reward", "mean_episode_length", "Episode_Reward/track_lin_vel", "steps_per_s",
                   "worst_lin_vel_error", "worst_fall_share")


def _columns(rows: list[dict[str, str]]) -> dict[str, np.ndarray]:
    return {key: np.array([float(r[key]) if r.get(key) not in (None, "") else math.nan for r in rows])
            for key in rows[0]}


def read_runs(source: str | Path) -> list[tuple[str, dict[str, np.ndarray]]]:
    """(name, columns) per run: a run dir's metrics.csv, or each seed of a CSV with a seed column."""
    path = Path(source)
    if path.is_dir():
        path = path / "metrics.csv"
    if not path.is_file():
        raise MissingFileError(f"no metrics.csv in '{source}': pass run dirs written by train.py "
                               f"or a learn.csv of `python -m simrl.bench learn`")
    rows = list(csv.DictReader(open(path)))
    if not rows:
        raise ConfigError(f"'{path}' has no rows yet: plot the run after its first iteration")
    if "env_steps" not in rows[0]:
        raise ConfigError(f"'{path}' has no env_steps column: not a metrics.csv or learn.csv")
    if "seed" not in rows[0]:
        return [(path.parent.name if path.name == "metrics.csv" else path.stem, _columns(rows))]
    seeds = sorted({r["seed"] for r in rows}, key=float)
    return [(f"seed {s}", _columns([r for r in rows if r["seed"] == s])) for s in seeds]


def read_metrics(run_dir: str | Path) -> dict[str, np.ndarray]:
    """One run's columns (a run dir's metrics.csv)."""
    return read_runs(run_dir)[0][1]


def plot_runs(run_dirs: list[str | Path], out: str | Path, metrics=DEFAULT_METRICS,
              separate: bool = False) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = [run for d in run_dirs for run in read_runs(d)]
    wanted, metrics = list(metrics), [m for m in metrics if any(m in cols for _, cols in runs)]
    if not metrics:
        found = sorted({k for _, cols in runs for k in cols} - {"iteration", "env_steps"})
        raise ConfigError(f"none of the metrics {wanted} are in these runs; found: {found}")
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.4), squeeze=False)
    for ax, metric in zip(axes[0], metrics, strict=True):
        series = [(d, c["env_steps"], c[metric]) for d, c in runs if metric in c]
        if separate or len(series) == 1:
            for d, x, y in series:
                ax.plot(x, y, label=d, lw=1.2)
        else:
            n = min(len(x) for _, x, _ in series)
            x = series[0][1][:n]
            ys = np.stack([y[:n] for _, _, y in series])
            ax.plot(x, np.nanmean(ys, axis=0), lw=1.5, label=f"mean of {len(series)} runs")
            ax.fill_between(x, np.nanmin(ys, axis=0), np.nanmax(ys, axis=0), alpha=0.25)
        ax.set_title(metric, fontsize=9)
        ax.set_xlabel("env steps")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m simrl.plot", description=__doc__.split("\n")[0])
    p.add_argument("runs", nargs="+", help="run dirs (each with metrics.csv) or learn.csv files")
    p.add_argument("-o", "--out", default="curves.png")
    p.add_argument("-m", "--metrics", nargs="+", default=list(DEFAULT_METRICS))
    p.add_argument("--separate", action="store_true", help="one line per run, no mean/spread")
    args = p.parse_args(argv)
    path = plot_runs(args.runs, args.out, args.metrics, args.separate)
    print(f"wrote {path}")


if __name__ == "__main__":
    with exit_on_user_error():  # a bad run dir or metric: one line, no traceback
        main()
