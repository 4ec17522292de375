"""Run an exported policy on a Unitree robot: `simrl-deploy policy=policy.onnx network=eth0`.

    simrl-deploy policy=<policy.onnx> network=<interface> [domain=0] [input=stdin|remote|topic]
                 [log=deploy_log.csv] [max_command=1.0,0.5,1.0] [seconds=0]

Starts in `passive` (damping only). From the terminal (input=stdin, the default): `stand`, then
`policy`, velocity commands as `vx vy yaw_rate`, `damp` to stop; with input=remote the robot's
wireless remote (Start: stand, A: policy, Select: damp, B: passive, sticks: velocity); with
input=topic the rt/wirelesscontroller topic. Ctrl-C damps and exits; every cycle is logged to
`log` and a timing summary is printed. Rehearse against `simrl-robot-sim` with network=lo
before a robot (docs/deploy.md).
"""

from __future__ import annotations

import sys

KEYS = ("policy", "network", "domain", "input", "log", "max_command", "seconds")


def main(argv: list[str] | None = None) -> None:
    args: dict[str, str] = {}
    for a in sys.argv[1:] if argv is None else argv:
        key, sep, value = a.partition("=")
        if not sep or key not in KEYS:
            valid = ", ".join(k + "=" for k in KEYS)
            raise SystemExit(f"simrl-deploy: unknown argument '{a}'; valid: {valid}")
        args[key] = value
    if "policy" not in args:
        raise SystemExit("simrl-deploy: pass policy=<policy.onnx> (policy.json beside it)")
    from simrl.deploy import DeployPolicy
    from simrl.deploy.commands import RemoteCommands, StdinCommands, TopicCommands
    from simrl.deploy.controller import Controller, limits_from_meta
    from simrl.deploy.dds import UnitreeRobot

    try:
        policy = DeployPolicy(args["policy"])
        robot = UnitreeRobot(policy.meta, network=args.get("network"), domain=int(args.get("domain", 0)))
    except (ValueError, TimeoutError, FileNotFoundError, KeyError) as e:
        raise SystemExit(f"simrl-deploy: error: {e}") from None
    max_command = [float(x) for x in args.get("max_command", "1.0,0.5,1.0").split(",")]
    source = args.get("input", "stdin")
    inputs = {"stdin": lambda: StdinCommands(), "remote": lambda: RemoteCommands(robot, max_command),
              "topic": lambda: TopicCommands(robot.dp, max_command)}
    if source not in inputs:
        raise SystemExit(f"simrl-deploy: input must be one of {list(inputs)}, got '{source}'")
    ctl = Controller(policy, robot, limits_from_meta(policy.meta), log_path=args.get("log", "deploy_log.csv"))
    ctl.inputs.append(inputs[source]())
    print(f"simrl-deploy: {policy.meta['task']} policy on {robot.layout} motors {robot.motor.tolist()}; "
          f"passive now. Input: {source} (stand, policy, damp, passive, or vx vy yaw_rate). Ctrl-C exits.",
          flush=True)
    seconds = float(args.get("seconds", 0)) or None
    state = ctl.state
    try:
        while seconds is None or ctl.cycles * ctl.period < seconds:
            ctl.run(cycles=1)
            if ctl.state != state:
                t, frm, to, why = ctl.transitions[-1]
                print(f"simrl-deploy: {frm} -> {to}" + (f" ({why})" if why else ""), flush=True)
                state = ctl.state
    except KeyboardInterrupt:
        ctl.request("damping")
        ctl.run(cycles=3)
    finally:
        ctl.close()


if __name__ == "__main__":
    main()
