"""Pages rendered from data: the status table (README.md and docs/status.md) from
docs/results.yaml, and the shipped policies (docs/zoo.md) from simrl/zoo/index.yaml.

    python scripts/gen_docs.py            # write them
    python scripts/gen_docs.py --check    # exit 1 naming each page that is out of date

A results row without a command, commit or date (or any other field) is refused, naming it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results.yaml"
FIELDS = ("task", "robot", "does", "figure", "cpu", "gpu", "sim2sim", "hardware", "seeds", "command",
          "commit", "date", "machine")
BEGIN, END = "<!-- status:begin (scripts/gen_docs.py) -->", "<!-- status:end -->"


class RowError(ValueError):
    pass


def rows(path: Path = RESULTS) -> list[dict]:
    """The results rows, each checked for every field."""
    data = yaml.safe_load(path.read_text())
    out = []
    for i, row in enumerate(data["rows"], 1):
        missing = [f for f in FIELDS if row.get(f) in (None, "")]
        if missing:
            raise RowError(f"{path.name} row {i} ({row.get('task')} / {row.get('robot')}): no "
                           f"{', '.join(missing)}: every result needs its command, commit and date")
        out.append(row)
    return out


def cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def readme_table(results: list[dict]) -> str:
    lines = ["| task | robot | what it does today | CPU time to it | GPU | sim-to-sim | on a real robot |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append("| " + " | ".join(cell(r[k]) for k in ("task", "robot", "does", "cpu", "gpu", "sim2sim",
                                                            "hardware")) + " |")
    return "\n".join(lines)


def status_page(results: list[dict]) -> str:
    out = ["# Status", "",
           "What each task and robot does today, measured; rendered from `docs/results.yaml` by",
           "`python scripts/gen_docs.py` (do not edit by hand). Sim-to-sim is the exported policy",
           "run by `simrl.deploy` in MuJoCo C; no policy has run on a real robot yet.", "",
           readme_table(results), "", "## Figures, seeds and commands", ""]
    for r in results:
        out += [f"### {r['task']} / {r['robot']}", "", f"- **Figure**: {r['figure']}",
                f"- **Seeds**: {r['seeds']}", f"- **Command**: `{r['command']}`",
                f"- **Measured**: {r['date']}, commit `{r['commit']}`, {r['machine']}", ""]
    return "\n".join(out)


def zoo_page() -> str:
    cards = yaml.safe_load((ROOT / "simrl" / "zoo" / "index.yaml").read_text())["policies"]
    out = ["# Shipped policies", "",
           "Policies that come with simrl (`simrl/zoo`), rendered from `simrl/zoo/index.yaml` by",
           "`python scripts/gen_docs.py`. `simrl-demo robot=<name>` shows one; `tests/zoo` runs each",
           "through the deploy controller on every change and holds it to its card.", "",
           "| name | task | what it is | trained with | seed | commit | date |",
           "|---|---|---|---|---|---|---|"]
    for name, c in cards.items():
        out.append(f"| `{name}` | {c['task']} | {cell(c['summary'])} | `{cell(c['train'])}` | "
                   f"{c['seed']} | `{c['commit']}` | {c['date']} |")
    out += ["", "## Sim-to-sim figures", ""]
    for name, c in cards.items():
        out += [f"### {name}", "", "| condition | figures |", "|---|---|"]
        out += [f"| {cond} | " + ", ".join(f"{k} {v}" for k, v in figs.items()) + " |"
                for cond, figs in c["sim2sim"].items()]
        out += ["", f"Measured on {c['machine']}.", ""]
    return "\n".join(out)


def readme(results: list[dict]) -> str:
    text = (ROOT / "README.md").read_text()
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    if not rest:
        raise RowError(f"README.md has no {BEGIN} ... {END} block for the status table")
    return f"{head}{BEGIN}\n{readme_table(results)}\n{END}{tail}"


def pages() -> dict[Path, str]:
    results = rows()
    return {ROOT / "README.md": readme(results), ROOT / "docs" / "status.md": status_page(results) + "\n",
            ROOT / "docs" / "zoo.md": zoo_page() + "\n"}


def main(argv: list[str]) -> int:
    try:
        want = pages()
    except RowError as e:
        print(f"gen_docs: {e}", file=sys.stderr)
        return 1
    stale = [p for p, text in want.items() if not p.is_file() or p.read_text() != text]
    if "--check" in argv:
        for p in stale:
            print(f"gen_docs: {p.relative_to(ROOT)} is out of date: run python scripts/gen_docs.py",
                  file=sys.stderr)
        return 1 if stale else 0
    for p in stale:
        p.write_text(want[p])
        print(f"wrote {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
