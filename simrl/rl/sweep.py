"""A Hydra callback that tabulates a sweep: one row per run, its overrides and final metrics.

Enabled in configs/train.yaml (hydra.callbacks); writes <sweep dir>/summary.md and summary.csv.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

COLUMNS = ("iteration", "env_steps", "mean_reward", "mean_episode_length")


def summarize(sweep_dir: str | Path) -> list[dict[str, Any]]:
    """Rows for every run dir under sweep_dir that wrote a summary.json."""
    rows = []
    for summary in sorted(Path(sweep_dir).glob("*/summary.json")):
        run = summary.parent
        overrides_file = run / ".hydra" / "overrides.yaml"
        overrides = ""
        if overrides_file.is_file():
            lines = [ln[2:].strip() for ln in overrides_file.read_text().splitlines() if ln.startswith("- ")]
            overrides = " ".join(lines)
        rows.append({"run": run.name, "overrides": overrides, **json.loads(summary.read_text())})
    return rows


def write_tables(sweep_dir: str | Path) -> Path | None:
    rows = summarize(sweep_dir)
    if not rows:
        return None
    sweep_dir = Path(sweep_dir)
    keys = ["run", "overrides", *COLUMNS]
    with open(sweep_dir / "summary.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    fmt = lambda v: f"{v:.3f}" if isinstance(v, float) else str(v)  # noqa: E731
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(fmt(r.get(k, "")) for k in keys) + " |" for r in rows]
    (sweep_dir / "summary.md").write_text("\n".join(lines) + "\n")
    return sweep_dir / "summary.md"


class SweepSummary(Callback):
    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        path = write_tables(config.hydra.sweep.dir)
        if path:
            print(f"simrl: sweep summary {path}")
