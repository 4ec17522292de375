"""A run's `metrics.csv`: one row per iteration, appended; its header widens as new columns
first get a value; a resumed run cuts it back to its checkpoint's iteration. Every rewrite
replaces the file atomically."""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any


def append_csv(path: Path, row: dict[str, Any]) -> None:
    """Append `row` to the CSV at `path`; a key the header lacks widens the whole file.

    Columns appear when they first have a value (episode terms once an episode has ended), so
    the header is the union of every row's keys; earlier rows leave the new columns empty.
    """
    fields: list[str] = []
    if path.exists():
        with open(path, newline="") as f:
            fields = next(csv.reader(f), [])
    added = [k for k in row if k not in fields]
    if fields and added:  # rewrite with the wider header, atomically
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        _rewrite_csv(path, fields + added, rows + [row])
        return
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields or list(row))
        if not fields:
            w.writeheader()
        w.writerow(row)


def truncate_csv(path: Path, last_iteration: int) -> None:
    """Keep a metrics CSV's rows up to `last_iteration` (and drop a torn last line), atomically:
    a run resumed in its own dir logs the iterations after its checkpoint once."""
    if not path.is_file():
        return
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        fields = reader.fieldnames or []
        rows = [r for r in reader if None not in r.values() and None not in r
                and r.get("iteration", "").isdigit() and int(r["iteration"]) <= last_iteration]
    _rewrite_csv(path, fields, rows)


def _rewrite_csv(path: Path, fields: list[str], rows: list[dict]) -> None:
    """Write `rows` under header `fields` to a temporary file, then replace `path` with it."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, path)
