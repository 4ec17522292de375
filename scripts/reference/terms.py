"""docs/reference/terms.md: every term a task config can name, by kind, from the env classes'
term tables (simrl.env.checks.term_tables): the library's (simrl/mdp) once, each task's own under it."""

from __future__ import annotations

import ast
import inspect
from collections import defaultdict
from pathlib import Path
from typing import Any

from .common import code, first_paragraph, header, one_line, prose, show

# kind (simrl.env.checks.KINDS) -> (its entries' kind in simrl.managers.entries.KEYS, what it is)
KINDS = {
    "observations": ("observation", "`f(env) -> (N, d)`: what a policy or critic reads, in groups."),
    "rewards": ("reward", "`f(env) -> (N,)`, times the entry's `weight` and the control step dt (a weight "
                "is per second), summed into the step's reward."),
    "terminations": ("termination", "`f(env) -> (N,)` bool: the episodes that end now."),
    "events": ("event", "`f(env, mask)`: randomization, starts and disturbances at startup, at each "
               "spawn (before the commands draw), reset or on an interval (simrl.managers.event)."),
    "commands": ("command", "A class: what each env's policy is asked to do, drawn at resets "
                 "(simrl.mdp.commands)."),
    "actions": ("action", "A class: how the policy's action columns become actuator targets "
                "(simrl.mdp.actions)."),
    "curriculum": ("curriculum", "A class: makes the task harder as the policy earns it "
                   "(simrl.mdp.curriculum)."),
    "metrics": (None, "`f(env) -> (N,)` read at each episode's end by evaluation (every one of the "
                "task's; the config names none)."),
    "tracking": (None, "`f(env) -> (N,)` read every step by evaluation and averaged over each episode's "
                 "settled steps (every one of the task's; the config names none)."),
}
CALL_ARGS = {"events": 2}  # arguments the manager passes itself: the env (and an event's mask)


def lambda_source(func: Any) -> str:
    """The expression of a lambda, from its module's source ("" where it cannot be found)."""
    try:
        tree = ast.parse(Path(inspect.getsourcefile(func)).read_text())
    except (OSError, TypeError, SyntaxError):
        return ""
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)
             and n.lineno == func.__code__.co_firstlineno]
    return one_line(ast.unparse(found[0].body)) if found else ""


def params(func: Any, kind: str) -> str:
    """The params an entry gives, as `name` (required) or `name=default`."""
    out = []
    for p in list(inspect.signature(func).parameters.values())[CALL_ARGS.get(kind, 1):]:
        if p.kind is p.VAR_KEYWORD:
            out.append(f"**{p.name}")
        elif p.kind is p.VAR_POSITIONAL:
            out.append(f"*{p.name}")
        else:
            out.append(p.name if p.default is p.empty else f"{p.name}={show(p.default)}")
    return ", ".join(out)


def describe(func: Any, kind: str) -> tuple[str, bool]:
    """(what the term is, whether that came from a docstring)."""
    doc = first_paragraph(func)
    read = getattr(func, "deploy_read", None) if kind == "observations" else None
    if callable(read):  # a read that depends on the params: shown with placeholders (`<body>`)
        params = list(inspect.signature(func).parameters.values())[1:]
        read = read({p.name: f"<{p.name}>" if p.default is p.empty else p.default for p in params})
    if isinstance(read, dict):
        reading = read["reading"] if isinstance(read["reading"], str) else ", ".join(read["reading"])
        text = read.get("doc") if isinstance(read.get("doc"), str) else ""
        suffix = f"Robot reading `{reading}`" + (f": {text}." if text and not doc else ".")
    elif kind == "observations":
        suffix = "Privileged: no robot reading (a critic's)."
    else:
        suffix = ""
    if doc:
        return prose(doc) + (" " + prose(suffix) if suffix else ""), True
    if func.__name__ == "<lambda>" and (expr := lambda_source(func)):
        return f"(no docstring) A lambda: `{expr}`." + (" " + prose(suffix) if suffix else ""), False
    return prose(suffix) or "*(no docstring)*", False


def where(func: Any) -> str:
    name = getattr(func, "__qualname__", type(func).__name__)
    return f"{func.__module__}.{name}" if name != "<lambda>" else f"a lambda in {func.__module__}"


def page() -> tuple[str, list[str]]:
    """(the page's text, the terms that have no docstring)."""
    from simrl.env.checks import KINDS as TABLES
    from simrl.env.checks import term_tables
    from simrl.envs import TASKS
    from simrl.managers.entries import KEYS
    from simrl.registry import task_classes

    assert set(TABLES) == set(KINDS), f"simrl.env.checks.KINDS changed: {sorted(TABLES)}; update {__file__}"
    # kind -> (name, func) -> the tasks whose tables hold it
    held: dict[str, dict[tuple[str, Any], list[str]]] = defaultdict(lambda: defaultdict(list))
    for task in sorted(TASKS):
        env_cls, cfg_cls = task_classes(task)
        for kind, attr in TABLES.items():
            for name, func in term_tables(env_cls, cfg_cls()).get(attr, {}).items():
                held[kind][(name, func)].append(task)
    lines = header("Terms", "Every term a task config can name, by kind: the library's shared terms "
                   "(simrl/mdp) once, then each task's own. An entry names its term with `func` (default: "
                   "the entry's name) and gives the term's parameters in `params`; a parameter without "
                   "a default is required. Parameters that name a body, joint, site or geom (`body`, "
                   "`joint`, `site`, ...) take names; they are resolved to ids once, at start-up. "
                   "Entries of the same name merge over the task's own (simrl.managers.entries).")
    missing = []
    for kind, (entry, what) in KINDS.items():
        lines += [f"## {kind}", "", what]
        if entry:
            keys = ", ".join(["func", "params", *KEYS[entry]])
            shape = f"{{group: {{name: {{{keys}}}}}}}" if kind == "observations" else f"{{name: {{{keys}}}}}"
            lines[-1] += f" Config entries: `{kind}: {shape}`."
        lines.append("")
        groups: dict[str, list[tuple[str, Any, list[str]]]] = defaultdict(list)
        for (name, func), tasks in held[kind].items():
            shared = func.__module__.startswith("simrl.mdp")
            groups["" if shared else ", ".join(tasks)].append((name, func, tasks))
        for label in sorted(groups):
            title = "Library terms (simrl/mdp), shared" if not label else f"Task {label}: its own"
            lines += [f"### {title}", ""]
            for name, func, tasks in sorted(groups[label], key=lambda t: t[0]):
                text, documented = describe(func, kind)
                if not documented:
                    missing.append(f"{kind}.{name} ({where(func)})")
                line = f"- **`{name}`**({code(params(func, kind)) if params(func, kind) else ''}): {text}"
                if not label:
                    line += " In: " + (", ".join(tasks) if len(tasks) < len(TASKS) else "every task") + "."
                if getattr(func, "__qualname__", name) not in (name, "<lambda>"):
                    line += f" (`{where(func)}`)"
                lines.append(line)
            lines.append("")
        if not groups:
            lines += ["*(none)*", ""]
    return "\n".join(lines).rstrip() + "\n", missing
