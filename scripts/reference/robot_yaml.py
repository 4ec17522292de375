"""docs/reference/robot-yaml.md: every field of RobotCfg (simrl/scene/robot.py) with the comments
beside it in the source, and the robot configs that ship (configs/robot/*.yaml)."""

from __future__ import annotations

import dataclasses
import inspect
import re

import yaml

from .common import ROOT, cell, clause, code, header, one_line, prose, show


def field_comments(cls: type) -> dict[str, str]:
    """Each dataclass field's explanation: the comment lines just above it, then its trailing
    comment. A blank line ends a comment block; so does a field."""
    names = {f.name for f in dataclasses.fields(cls)}
    out: dict[str, str] = {}
    block: list[str] = []
    for line in inspect.getsource(cls).splitlines():
        if line.startswith("    def "):
            break
        stripped = line.strip()
        if not stripped:
            block = []
        elif stripped.startswith("#"):
            block.append(stripped.lstrip("#").strip())
        elif (m := re.match(r"    (\w+): ", line)) and m.group(1) in names:
            trailing = line.split("  # ", 1)[1] if "  # " in line else ""
            out[m.group(1)] = one_line(" ".join(block) + (" — " if block and trailing else "") + trailing)
            block = []
    return out


def default_of(f: dataclasses.Field) -> str:
    if f.default is not dataclasses.MISSING:
        return code(show(f.default))
    if f.default_factory is not dataclasses.MISSING:
        return code(show(f.default_factory()))
    return "**required**"


def summary(path) -> str:
    """The first clause of a robot config's opening comment."""
    lines = []
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    return clause(one_line(" ".join(lines)))


def page() -> tuple[str, list[str]]:
    """(the page's text, the fields that have no explanation in the source)."""
    from simrl.scene import robot

    cls = robot.RobotCfg
    notes = field_comments(cls)
    lines = header("Robot config (`configs/robot/*.yaml`)",
                   "A robot config is a YAML file whose keys are the fields of `RobotCfg` "
                   "(simrl/scene/robot.py); `robot=<name>` picks `configs/robot/<name>.yaml`, and a path "
                   "to any YAML file works too. An unknown or missing field is refused, naming it.")
    lines += [one_line(inspect.cleandoc(robot.__doc__).split("\n\n")[0]), "",
              inspect.cleandoc(cls.__doc__).split("\n\n", 1)[1].strip(), "",
              f"`PerJoint` is `{robot.PerJoint}`.", "", "## Fields", ""]
    missing = []
    for f in dataclasses.fields(cls):
        if not notes.get(f.name):
            missing.append(f"RobotCfg.{f.name}")
        lines += [f"### `{f.name}`", "", f"Type {code(str(f.type))}; default {default_of(f)}.", "",
                  prose(notes.get(f.name, "")) or "*(no comment in the source)*", ""]
    lines += ["Allowed values checked at load: `collision` one of "
              f"{', '.join(code(c) for c in robot.COLLISIONS)}; `cone` one of "
              f"{', '.join(code(c) for c in robot.CONES)} or `null`.", "",
              "## Shipped robot configs", "",
              "| config | `name` | `source` | policy joints | held joints | what it is |",
              "| --- | --- | --- | --- | --- | --- |"]
    for path in sorted((ROOT / "configs" / "robot").glob("*.yaml")):
        values = yaml.safe_load(path.read_text()) or {}
        lines.append(f"| `{path.stem}` | `{values.get('name', path.stem)}` | `{values.get('source')}` | "
                     f"{len(values.get('joints') or [])} | {len(values.get('held_joints') or [])} | "
                     f"{cell(summary(path))} |")
    return "\n".join(lines) + "\n", missing
