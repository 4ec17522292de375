"""`simrl-demo` (python -m simrl.demo): a shipped policy in the browser viewer, steerable from the
keyboard, with no training and no GPU. `simrl-demo robot=<name>` picks another shipped policy;
with no display (or `gif=<path>`) it writes a GIF and says where.

    simrl-demo                          # Go1 trotting at http://localhost:8080
    simrl-demo robot=quadruped num_envs=4
    simrl-demo gif=go1.gif seconds=4
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from simrl.errors import ConfigError, exit_on_user_error

DEFAULTS: dict[str, Any] = {"robot": "unitree_go1", "num_envs": 1, "port": 8080, "host": "127.0.0.1",
                            "viewer": "auto", "gif": None, "seconds": None, "command": None}
VIEWERS = ("auto", "web", "native", "gif")


def parse(argv: list[str]) -> dict[str, Any]:
    """key=value arguments over DEFAULTS; an unknown key or a bare word is refused."""
    import yaml

    out = dict(DEFAULTS)
    for arg in argv:
        key, eq, value = arg.partition("=")
        if not eq or key not in DEFAULTS:
            raise ConfigError(f"simrl-demo takes key=value arguments, not '{arg}'; keys: "
                              f"{', '.join(DEFAULTS)}")
        out[key] = yaml.safe_load(value) if value else None
    if out["viewer"] not in VIEWERS:
        raise ConfigError(f"unknown viewer '{out['viewer']}'; valid: {', '.join(VIEWERS)}")
    return out


def run(args: dict[str, Any]) -> Any:
    import simrl.zoo as zoo
    from simrl.viewer.launch import has_display
    from simrl.viewer.sources import DeploySource

    t0 = time.perf_counter()
    card = zoo.card(str(args["robot"]))
    command = args["command"] or card.get("demo_command", [0.5, 0.0, 0.0])
    worlds = int(args["num_envs"])
    if worlds < 1:
        raise ConfigError(f"num_envs must be >= 1, got {worlds}")
    viewer = args["viewer"]
    if viewer == "auto":
        viewer = "gif" if args["gif"] or not has_display() else "web"
    print(f"simrl demo: {args['robot']}: {card['summary']}")
    source = DeploySource(zoo.policy_path(args["robot"]), num_envs=worlds, command=command)
    if viewer == "gif":
        from simrl.viewer.record import record

        path = Path(args["gif"] or f"simrl-demo-{args['robot']}.gif")
        why = "" if args["gif"] else " (no display here: viewer=web serves the browser viewer anyway)"
        out = record(source, path, seconds=float(args["seconds"] or 4.0), fps=15.0, width=360, height=270)
        print(f"simrl demo: wrote {out.resolve()}{why}")
        return out
    if viewer == "native":
        from simrl.viewer.native import run_native

        return run_native(source, seconds=args["seconds"])
    from simrl.viewer.web import WebViewer

    web = WebViewer(source, port=int(args["port"]), host=str(args["host"]))
    print(f"simrl demo: open {web.url} ({time.perf_counter() - t0:.1f} s to the first frame); "
          "I/K/J/L steer, Ctrl+C stops")
    if has_display():
        import webbrowser

        webbrowser.open(web.url)
    try:
        web.run(seconds=args["seconds"])
    except KeyboardInterrupt:
        print("simrl demo: stopped")
    finally:
        web.close()
    return web


def main(argv: list[str] | None = None) -> None:
    with exit_on_user_error():
        run(parse(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    main()
