"""The command line of `python -m simrl.bench` (and `simrl-bench`): a mode, then key=value words.

    python -m simrl.bench env robot=unitree_go1 num_worlds=[256,1024] steps=100

Values are read as YAML (`quick=true`, `num_worlds=[256,1024]`); a key a mode does not take is
refused naming the ones it does, and a `--flag` word is refused naming its key=value form.
"""

from __future__ import annotations

import shlex
import sys
from argparse import Namespace
from typing import Any

import yaml

from simrl.bench.export import run as run_export
from simrl.bench.graphs import run as run_graphs
from simrl.bench.iteration import run as run_iteration
from simrl.bench.launches import run as run_launches
from simrl.bench.ranks import run as run_ranks
from simrl.bench.throughput import run as run_throughput
from simrl.errors import ConfigError, UnknownNameError

PROG = "python -m simrl.bench"
# key -> (default, what it sets); every mode's namespace holds every key, a mode takes its own
KEYS: dict[str, tuple[Any, str]] = {
    "num_worlds": (None, "worlds (envs) per timing: N or a list [N,M,...] (default 1024, quick 64)"),
    "steps": (None, "control steps per timing (default 100, quick 10)"),
    "repeats": (3, "alternations of baseline and candidate, the median of each reported (quick: 1)"),
    "nthread": (0, "threads of the mujoco backend; 0: all CPUs"),
    "quick": (False, "true: small sizes and one repeat (a CI smoke run)"),
    "robot": (None, "a robot config (configs/robot) instead of the primitive quadruped"),
    "task": ("quadruped", "env: the task stepped (e.g. lift, reach); ranks: the task trained"),
    "terrain": (None, "env: the task on this terrain (configs/terrain, e.g. rough) next to flat; "
                      "graphs: the task on this terrain"),
    "device": ("auto", "auto | cpu | cuda | cuda:N"),
    "backend": ("auto", "auto | mujoco | mjwarp (auto: mjwarp on CUDA, else mujoco)"),
    "what": ("task", "sim (the sim layer alone) | task (the whole quadruped task)"),
    "ranks": (2, "torchrun processes"),
    "onnx": (None, "a policy.onnx to time (default: a random quadruped-shaped policy)"),
    "versus": ({}, "VALUE, one word per task config field: also the task with these fields, "
                   "alternated `repeats` times with the default, and the ratio"),
}
MODES: dict[str, tuple[str, tuple[str, ...]]] = {  # mode -> (what it times, the keys it takes)
    "sim": ("the sim layer vs a bare mujoco.batch loop (quadruped)",
            ("num_worlds", "steps", "repeats", "nthread", "quick")),
    "env": ("a task's step (obs, rewards, resets) vs a bare loop of its model",
            ("num_worlds", "steps", "repeats", "nthread", "quick", "robot", "task", "terrain")),
    "iteration": ("a PPO iteration split into physics/task/policy/update",
                  ("num_worlds", "repeats", "nthread", "quick", "device", "backend", "versus")),
    "export": ("policy inference latency: onnxruntime vs torch (TensorRT where it builds)",
               ("onnx", "quick")),
    "ranks": ("torchrun data parallelism: N ranks vs one, the same total envs",
              ("num_worlds", "repeats", "quick", "ranks", "task", "device")),
    "graphs": ("mjwarp with CUDA graphs on vs off, no CPU baseline",
               ("num_worlds", "steps", "repeats", "quick", "what", "device", "terrain")),
    "launches": ("Warp launches, host syncs, torch ops per env step",
                 ("num_worlds", "steps", "quick", "device")),
    "learn": ("learning speed over seeds (simrl.rl.learnbench: its own keys and train overrides)", ()),
}
INTS = {"steps": 1, "repeats": 1, "nthread": 0, "ranks": 1}  # key -> its least value
NAMES = ("robot", "task", "terrain", "device", "onnx")  # names and paths: taken as written
CHOICES = {"backend": ("auto", "mujoco", "mjwarp"), "what": ("sim", "task")}


def usage() -> str:
    lines = [f"usage: {PROG} [MODE] [key=value ...]   (MODE: sim by default)", ""]
    for mode, (what, keys) in MODES.items():
        lines.append(f"  {mode:<10} {what}")
        lines += [f"      {k + '.FIELD' if k == 'versus' else k}=  {KEYS[k][1]}" for k in keys]
    lines.append(f"\nexample: {PROG} env robot=unitree_go1 num_worlds=[256,1024] quick=true")
    return "\n".join(lines)


def flag_words(words: list[str]) -> list[tuple[str, str]]:
    """(the flag as written, its key=value form) for each `--flag [values]` in an old-style
    command line, and the words in between as they are."""
    out, i = [], 0
    while i < len(words):
        word, i = words[i], i + 1
        if not word.startswith("-"):
            out.append((word, word))
            continue
        name, eq, value = word.lstrip("-").partition("=")
        key = name.replace("-", "_")
        values = [value] if eq else []
        while not eq and key != "quick" and i < len(words):  # its values: up to the next flag or key
            nxt = words[i]
            if nxt.startswith("-") or ("=" in nxt and key != "versus"):
                break
            values.append(nxt)
            i += 1
            if key != "num_worlds":
                break
        written = " ".join([word, *values[1 if eq else 0:]])
        if key == "quick":
            out.append((written, "quick=true"))
        elif key == "versus":
            out.append((written, " ".join(f"versus.{v}" for v in values) or "versus.FIELD=VALUE"))
        elif len(values) > 1:
            out.append((written, f"{key}=[{','.join(values)}]"))
        else:
            out.append((written, f"{key}={values[0] if values else '<value>'}"))
    return out


def refuse_flags(words: list[str]) -> None:
    """A `--flag` word: one line naming its key=value form (and the whole command's)."""
    if not any(w.startswith("-") for w in words):
        return
    pairs = flag_words(words)
    old, new = next((o, n) for o, n in pairs if o.startswith("-"))
    whole = " ".join(n for _, n in pairs)
    raise ConfigError(f"{PROG} takes key=value words: {old} is {new} (the whole command: {PROG} {whole})")


def _yaml(key: str, text: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"{key}={text} is not a YAML value ({' '.join(str(e).split())})") from None


def _value(key: str, text: str) -> Any:
    """The value of `key=text`, checked against the key's type."""
    if key in NAMES:
        return None if text in ("null", "~") and KEYS[key][0] is None else text
    value = _yaml(key, text)
    bad = None
    if key in CHOICES and value not in CHOICES[key]:
        bad = " | ".join(CHOICES[key])
    elif key == "quick" and not isinstance(value, bool):
        bad = "true | false"
    elif key in INTS and not (type(value) is int and value >= INTS[key]):
        bad = f"an integer >= {INTS[key]}"
    elif key == "num_worlds":
        value = [value] if type(value) is int else value
        if not (value is None or (isinstance(value, list) and value
                                  and all(type(v) is int and v >= 1 for v in value))):
            bad = "an integer >= 1 or a list of them, e.g. num_worlds=[256,1024]"
    if bad:
        raise ConfigError(f"{key}={text}: {key} takes {bad}")
    return value


def parse(words: list[str]) -> Namespace:
    """The mode and every key (defaults filled in, sizes resolved) of a command line."""
    from simrl.sim.mujoco_backend import default_nthread

    refuse_flags(words)
    mode = "sim"
    if words and "=" not in words[0]:
        mode, words = words[0], words[1:]
        if mode not in MODES:
            raise UnknownNameError(f"unknown mode '{mode}' of {PROG}; valid: {', '.join(MODES)}")
    takes = MODES[mode][1]
    values: dict[str, Any] = {k: (dict(d) if isinstance(d, dict) else d) for k, (d, _) in KEYS.items()}
    for word in words:
        key, eq, text = word.partition("=")
        if not eq:
            hint = f"{word}=true" if word == "quick" else f"the mode comes first: {PROG} {word} ..." \
                if word in MODES else "e.g. num_worlds=1024"
            raise ConfigError(f"{PROG} {mode} takes key=value words, got '{word}' ({hint})")
        field = key.partition(".")[2] if key.startswith("versus.") else None
        if (field is None and key not in takes) or (field is not None and "versus" not in takes):
            elsewhere = [m for m, (_, ks) in MODES.items() if key.partition(".")[0] in ks]
            where = f" ({key} is a key of {', '.join(elsewhere)})" if elsewhere else ""
            raise UnknownNameError(f"unknown key '{key}' for {PROG} {mode}; valid: "
                                   f"{', '.join(takes) or 'none'}{where}")
        if field:
            values["versus"][field] = _yaml(key, text)
        elif key == "versus":
            got = _yaml(key, text)
            if not isinstance(got, dict):
                raise ConfigError(f"versus takes one versus.FIELD=VALUE word per field "
                                  f"(e.g. versus.height_scan_size=[1.6,1.0]), got {word}")
            values["versus"].update(got)
        else:
            values[key] = _value(key, text)
    args = Namespace(mode=mode, **values)
    args.num_worlds = args.num_worlds or ([64] if args.quick else [1024])
    args.steps = args.steps or (10 if args.quick else 100)
    args.repeats = 1 if args.quick else args.repeats
    args.nthread = args.nthread or default_nthread()
    return args


def main(argv: list[str] | None = None) -> None:
    """Run the mode the words name (`argv`: the words after the program, default sys.argv's)."""
    words = list(sys.argv[1:] if argv is None else argv)
    if {"-h", "--help"} & set(words) or words[:1] == ["help"]:
        print(usage())
        return
    if words[:1] == ["learn"]:  # its own key=value words (simrl.rl.learnbench)
        refuse_flags(words)
        from simrl.rl.learnbench import main as learn_main

        learn_main(words[1:])
        return
    args = parse(words)
    run = {"sim": run_throughput, "env": run_throughput, "iteration": run_iteration, "export": run_export,
           "ranks": run_ranks, "graphs": run_graphs, "launches": run_launches}[args.mode]
    run(args)
    print(f"rerun: {PROG} {shlex.join(words)}".strip())
