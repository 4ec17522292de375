"""Policies that ship with simrl: each an export (`policy.onnx` + `policy.json`) with a card in
`index.yaml` saying how it was trained (command, seed, commit, date) and what it measured
sim-to-sim, the figure `tests/zoo` holds it to. `simrl-demo` shows them; `simrl-play
policy=$(python -m simrl.zoo path unitree_go1)` does too."""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from simrl.errors import ConfigError, UnknownNameError

ROOT = Path(__file__).resolve().parent


@cache
def index() -> dict[str, dict[str, Any]]:
    """Every shipped policy's card, by name."""
    return yaml.safe_load((ROOT / "index.yaml").read_text())["policies"]


def card(name: str) -> dict[str, Any]:
    cards = index()
    if name not in cards:
        raise UnknownNameError(f"no shipped policy '{name}'; valid: {', '.join(sorted(cards))}")
    return cards[name]


def policy_path(name: str) -> Path:
    """The shipped `policy.onnx` of `name` (policy.json beside it)."""
    card(name)
    return ROOT / name / "policy.onnx"


def check(name: str) -> dict[str, float]:
    """The card's check run again: its sim-to-sim episodes (MuJoCo C + onnxruntime, the deploy
    controller), returning the figures the card states."""
    from simrl.rl.sim2sim import run_sim2sim

    c = card(name)["check"]
    r = run_sim2sim(policy_path(name), command=tuple(c.get("command", (0.0, 0.0, 0.0))),
                    episodes=int(c["episodes"]), seed=int(c.get("seed", 0)))
    return {k: float(r[k]) for k in c["expect"]}


def misses(name: str, measured: dict[str, float]) -> list[str]:
    """Where `measured` is off the card's figures by more than their tolerance (empty: it holds)."""
    c = card(name)["check"]
    out = []
    for key, want in c["expect"].items():
        tol = float(c.get("tolerance", {}).get(key, 0.0))
        if not abs(measured[key] - float(want)) <= tol:
            out.append(f"{name}: {key} {measured[key]:.4f}, the card says {want} +- {tol}")
    return out


def main(argv: list[str] | None = None) -> None:
    """`python -m simrl.zoo [list | path NAME | check NAME]`."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["path"] and len(args) == 2:
        print(policy_path(args[1]))
        return
    if args[:1] == ["check"] and len(args) == 2:
        measured = check(args[1])
        print(" | ".join(f"{k} {v:.4f}" for k, v in measured.items()))
        for line in misses(args[1], measured):
            print(line)
        return
    if args not in ([], ["list"]):
        raise ConfigError(f"python -m simrl.zoo takes list, path NAME or check NAME, got {' '.join(args)!r}")
    for name, c in index().items():
        print(f"{name:20s} {c['task']:10s} {c['summary']}")
