"""docs/reference/config-keys.md: every key of the apps' configs (configs/train.yaml, eval.yaml,
play.yaml, export.yaml) with its default and the comment beside it, read from the YAML text."""

from __future__ import annotations

import re
from typing import Any

import yaml

from .common import ROOT, cell, header, one_line, show

FILES = {"train": ("train.py", "simrl-train"), "eval": ("eval.py", "simrl-eval"),
         "play": ("play.py", "simrl-play"), "export": ("export.py", "simrl-export")}
KEY = re.compile(r"^(?P<indent> *)(?P<dash>- +)?(?P<key>[^\s:#][^:#]*?):(?:\s+(?P<rest>.*))?$")


def split_comment(text: str) -> tuple[str, str]:
    """(value, comment) of a line's text: a comment starts at a `#` after whitespace, outside quotes."""
    quote = None
    for i, ch in enumerate(text):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or text[i - 1].isspace()):
            return text[:i].strip(), text[i + 1:].strip()
    return text.strip(), ""


def parse(text: str) -> tuple[list[str], list[dict[str, Any]], list[str]]:
    """(the file's opening comment lines, its keys in order, its other standalone comments).
    A key is {name (dotted), comment, group (a defaults-list entry)}; a comment line indented under
    a key's trailing comment continues it."""
    head, keys, notes, stack = [], [], [], []  # stack: (indent, name) of the open mappings
    last = None
    for line in text.splitlines():
        if not line.strip():
            last = None
            continue
        if line.lstrip().startswith("#"):
            comment = line.lstrip()[1:].strip()
            if not keys:
                head.append(comment)
            elif last is not None and line.startswith(" "):
                last["comment"] = one_line(f"{last['comment']} {comment}")
            else:
                notes.append(comment)
            continue
        m = KEY.match(line)
        if not m:  # a list item under a key (its value comes from the parsed YAML)
            continue
        indent = len(m["indent"]) + len(m["dash"] or "")
        value, comment = split_comment(m["rest"] or "")
        if m["dash"]:  # a defaults-list entry: `- group: option`
            last = {"name": m["key"], "comment": comment, "group": True, "value": value}
            keys.append(last)
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        name = ".".join([n for _, n in stack] + [m["key"]])
        last = {"name": name, "comment": comment, "group": False, "leaf": bool(value)}
        keys.append(last)
        stack.append((indent, m["key"]))
    return head, keys, notes


def lookup(data: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        data = data[part]
    return data


def page() -> tuple[str, list[str]]:
    """(the page's text, the keys that have no comment)."""
    lines = header("Config keys", "Every key of the apps' configs, with its default and the comment "
                   "beside it in the YAML. Set one on the command line as `key=value` (Hydra), e.g. "
                   "`python train.py task=quadruped num_envs=4096`; a nested key by its dotted name. "
                   "Config groups pick a file of `configs/<group>/`: `robot=unitree_go1`.")
    missing = []
    for stem, (script, command) in FILES.items():
        text = (ROOT / "configs" / f"{stem}.yaml").read_text()
        data = yaml.safe_load(text)
        head, keys, notes = parse(text)
        lines += [f"## `configs/{stem}.yaml`", "", f"Used by `python {script}` and `{command}`."]
        lines += ["", *[f"    {h}" for h in head]] if head else []
        groups = [k for k in keys if k["group"] and k["name"] != "_self_"]
        if groups:
            lines += ["", "Config groups (its `defaults` list):", "", "| group | default | meaning |",
                      "| --- | --- | --- |"]
            lines += [f"| `{k['name']}` | `{k['value']}` | {cell(k['comment'])} |" for k in groups]
        lines += ["", "| key | default | meaning |", "| --- | --- | --- |"]
        for k in keys:
            if k["group"] or k["name"] == "defaults":
                continue
            value = lookup(data, k["name"])
            if isinstance(value, dict) and value:  # a mapping: its keys have their own rows
                continue
            if not k["comment"] and not k["name"].startswith("hydra."):
                missing.append(f"configs/{stem}.yaml: {k['name']}")
            lines.append(f"| `{k['name']}` | `{cell(show(value))}` | {cell(k['comment'])} |")
        lines += ["", *[f"Note: {cell(n)}" for n in notes], ""] if notes else [""]
    return "\n".join(lines).rstrip() + "\n", missing
