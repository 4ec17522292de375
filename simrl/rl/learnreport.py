"""The learning benchmark's report: each seed's rows (checkpoint, env steps, minutes, each
command's figures against the criterion), the median and worst seed, the table printed and the
CSV written (simrl.rl.learnbench runs the seeds)."""

from __future__ import annotations

import csv
import math
import statistics
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from simrl.rl.learnbench import LearnCfg


def training_time(run_dir: Path) -> dict[int, tuple[int, float]]:
    """iteration -> (env steps, training minutes so far) from the run's metrics.csv."""
    from simrl.plot import read_metrics  # the one reader of metrics.csv (a missing file: one line)

    cols = read_metrics(run_dir)
    minutes = np.cumsum(cols["collect_s"] + cols["learn_s"]) / 60
    return {int(it): (int(steps), float(m)) for it, steps, m in zip(cols["iteration"], cols["env_steps"],
                                                                     minutes, strict=True)}


def worst(values: list[float]) -> float:
    """The largest value; NaN where any is NaN (a NaN figure is never hidden by a finite one)."""
    if not values or any(math.isnan(v) for v in values):
        return math.nan
    return max(values)


def median(values: list[float]) -> float:
    """The median (of an even count, the higher middle value: the more cautious); NaN if any is."""
    if not values or any(math.isnan(v) for v in values):
        return math.nan
    return statistics.median_high(values)


def _label(cmd: list[float] | None) -> str:
    return "episodes" if cmd is None else ",".join(f"{c:g}" for c in cmd)


def seed_rows(cfg: LearnCfg, seed: int, run_dir: Path, evals: dict[int, list[dict[str, Any]]],
              sim2sim: dict[int, list[dict[str, Any]]] | None = None) -> list[dict[str, Any]]:
    """One CSV row per checkpoint: figures per command, the worst over commands, met or not
    (and the same of its sim-to-sim run, prefixed s2s_, where one was made)."""
    times = training_time(run_dir)
    rows = []
    for it, results in sorted(evals.items()):
        steps, minutes = times.get(it, (math.nan, math.nan))
        row: dict[str, Any] = {"seed": seed, "iteration": it, "env_steps": steps,
                               "train_minutes": round(minutes, 3)}
        for r in results:
            lab = _label(r.get("command"))
            if r.get("command") is not None:
                row[f"lin_vel_error@{lab}"] = r["lin_vel_error"]
            row[f"fall_share@{lab}"] = r["fall_share"]
            if "success" in r:
                row[f"success@{lab}"] = r["success"]
            row[f"mean_return@{lab}"] = r["mean_return"]
        tracked = [r["lin_vel_error"] for r in results if r.get("command") is not None]
        row["worst_lin_vel_error"] = worst(tracked)
        row["worst_fall_share"] = worst([r["fall_share"] for r in results])
        row["met"] = int(cfg.criterion.met(results))
        if sim2sim and it in sim2sim:
            s2s = sim2sim[it]
            tracked = [r["lin_vel_error"] for r in s2s if r.get("command") is not None]
            row["s2s_worst_lin_vel_error"] = worst(tracked)
            row["s2s_worst_fall_share"] = worst([r["fall_share"] for r in s2s])
            if all("success" in r for r in s2s):  # tasks with a success metric: the lowest
                row["s2s_success"] = min(r["success"] for r in s2s)
            row["s2s_met"] = int(cfg.criterion.met(s2s))
        rows.append(row)
    return rows


def first_met(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((r for r in rows if r["met"]), None)


def summarize(cfg: LearnCfg, rows: list[dict[str, Any]]) -> str:
    """The tables as markdown: every checkpoint, then time to criterion per seed and over seeds."""
    keys = [k for k in rows[0] if "@" in k and not k.startswith("mean_return")]
    lines = ["| seed | iteration | " + " | ".join(keys) + " | met |",
             "|---" * (len(keys) + 3) + "|"]
    for r in rows:
        vals = [f"{r[k]:.1%}" if k.startswith(("fall", "success")) else f"{r[k]:.3f}" for k in keys]
        met = "yes" if r["met"] else "no"
        lines.append(f"| {r['seed']} | {r['iteration']} | " + " | ".join(vals) + f" | {met} |")
    lines += ["", "| seed | first checkpoint meeting the criterion | env steps | training minutes |",
              "|---|---|---|---|"]
    firsts = []
    for seed in cfg.seeds:
        f = first_met([r for r in rows if r["seed"] == seed])
        firsts.append(f)
        cells = (f"{f['iteration']} | {f['env_steps'] / 1e6:.2f} M | {f['train_minutes']:.1f}" if f
                 else f"not by {cfg.iterations} | - | -")
        lines.append(f"| {seed} | {cells} |")
    met = [f["iteration"] for f in firsts if f]
    missed = len(firsts) - len(met)
    mid = median([*met, *[math.inf] * missed])
    lines += ["", f"over {len(cfg.seeds)} seeds {cfg.seeds}: median first checkpoint "
              f"{_it(mid, cfg)}, worst {_it(max([*met, *[math.inf] * missed]), cfg)}; "
              f"{len(met)} of {len(firsts)} seeds met the criterion by iteration {cfg.iterations}"]
    for it in cfg.sim2sim_at:
        at = [r for r in rows if r["iteration"] == it and "s2s_met" in r]
        errs = [round(r["s2s_worst_lin_vel_error"], 3) for r in at]
        falls = [f"{r['s2s_worst_fall_share']:.0%}" for r in at]
        success = [f"{r['s2s_success']:.1%}" for r in at if "s2s_success" in r]
        figures = (f"success per seed {success}" if success and len(success) == len(at) else
                   f"worst-command lin-vel error per seed {errs} m/s")
        lines.append(f"- sim-to-sim at {it} ({cfg.sim2sim_episodes} episodes per command, exported ONNX in "
                     f"MuJoCo C): {sum(r['s2s_met'] for r in at)}/{len(at)} seeds meet it; {figures}, "
                     f"falls {falls}")
    for it in cfg.checkpoints:
        at = [r for r in rows if r["iteration"] == it]
        errs = [r["worst_lin_vel_error"] for r in at]
        falls = [r["worst_fall_share"] for r in at]
        if not at:
            continue
        lin = "" if all(math.isnan(e) for e in errs) else (
            f"worst-command lin-vel error median {median(errs):.3f}, "
            f"worst {worst(errs):.3f} m/s; ")
        lines.append(f"- at {it}: {lin}worst-command falls median {median(falls):.1%}, "
                     f"worst {worst(falls):.1%}; {sum(r['met'] for r in at)}/{len(at)} seeds meet it")
    return "\n".join(lines)


def _it(value: float, cfg: LearnCfg) -> str:
    return f"not by {cfg.iterations}" if math.isinf(value) else f"{value:g}"


def write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
