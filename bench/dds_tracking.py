"""Velocity tracking over DDS loopback against in-process sim-to-sim, for one exported policy.

    python bench/dds_tracking.py runs/<run>/export/policy.onnx --episodes 20 [--out dds.json]
        [--commands '[[0.5,0,0],[0,0,0]]']   (default: 0.5 and 1.0 m/s forward, standing)
        [--harness]   (a humanoid: it stands up hanging from a gantry, then is lowered onto its feet)

Starts `simrl-robot-sim policy=<policy.json> network=lo trace=<tmp>` in another process (a
MuJoCo robot publishing Unitree SDK2 `LowState_` at 500 Hz and applying `LowCmd_` through its
motors' PD) and drives it from this one with the deploy controller over DDS
(`simrl.deploy.dds.UnitreeRobot`), as `simrl-deploy` would drive a robot. Each episode: the
server puts the robot back in its start pose at rest (SIGUSR1), the controller stands it up
(`--stand-s`), runs the policy at the command for the export's episode length (or until its
safety envelope stops it), then damps. The server's ground-truth trace (base velocity from the
IMU's velocimeter, the termination rule) gives each episode's lin-vel error after `--settle-s`
and whether it fell. Then the same policy, commands and number of episodes run in-process
(`simrl.rl.sim2sim.run_sim2sim`: the same controller on a simulated robot, no wire). Prints both,
their differences, the loop's timing and the state-to-command latency.

What differs between the two paths, by design: the wire (DDS serialization, a 500 Hz state
stream read at the controller's ticks, the wall clock), the server's 2 ms physics step (the
robot's rate) against the export's, and the start: standing up from the start pose over the wire
against the export's randomized reset pose in-process.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ((0.5, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 0.0))


def dds_episodes(onnx: str, commands, episodes: int, stand_s: float, domain: int, trace: Path,
                 harness: bool = False):
    """Run the episodes over DDS; returns per episode (command, t_policy, t_end, fault), the
    controller's timing summary and the server's last lines."""
    from simrl.deploy import DeployPolicy
    from simrl.deploy.controller import Controller, limits_from_meta
    from simrl.deploy.dds import UnitreeRobot

    meta_path = Path(onnx).with_name("policy.json")
    server = subprocess.Popen([sys.executable, "-m", "simrl.rehearse.robot_server", f"policy={meta_path}",
                               "network=lo", f"domain={domain}", f"trace={trace}", f"harness={harness}"],
                              cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    server.stdout.readline()  # its start line: publishing
    policy = DeployPolicy(onnx)
    length = float(policy.meta["deploy"]["episode_length_s"])
    robot = UnitreeRobot(policy.meta, network="lo", domain=domain)
    ctl = Controller(policy, robot, limits_from_meta(policy.meta, stand_s=stand_s))
    runs = []
    try:
        for command in commands:
            for e in range(episodes):
                server.send_signal(signal.SIGUSR1)  # start pose, at rest, motors passive
                ctl.request("passive")
                ctl.run(seconds=0.2)
                ctl.request("stand")
                ctl.run(seconds=stand_s + 0.1)
                if harness:  # stood up in the harness: lower it onto its feet, still standing
                    server.send_signal(signal.SIGUSR2)
                    ctl.run(seconds=0.5)
                ctl.request("policy")
                ctl.command[:] = command
                ctl.run(cycles=1)
                if ctl.state != "policy":
                    raise RuntimeError(f"the controller did not enter policy: {ctl.state} ({ctl.fault})")
                t_policy = ctl.transitions[-1][0]
                while ctl.state == "policy" and robot.clock() - t_policy < length:
                    ctl.run(seconds=min(1.0, length - (robot.clock() - t_policy)))
                fault = ctl.fault if ctl.state != "policy" else None
                runs.append((command, t_policy, robot.clock(), fault))
                print(f"  dds {command} episode {e + 1}/{episodes}" + (f": {fault}" if fault else ""),
                      flush=True)
                ctl.request("damping")
                ctl.run(cycles=2)
        summary = ctl.summary()
    finally:
        ctl.request("damping")
        ctl.run(cycles=2)
        server.send_signal(signal.SIGINT)
        try:
            out, _ = server.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            raise RuntimeError("simrl-robot-sim did not stop within 60 s of SIGINT: no trace") from None
    return runs, summary, out.strip().splitlines()[-1:], length


def score(runs, trace: Path, settle_s: float) -> dict[str, dict[str, float]]:
    """Per command: mean lin-vel error (episodes that lasted past the settling time) and fall
    share (the termination rule in the ground truth, or the controller's envelope stopping it)."""
    tr = np.load(trace)
    t, err_xy = tr["t"], np.stack([tr["vx"], tr["vy"]], axis=1)
    out: dict[str, dict[str, list]] = {}
    for command, t0, t1, fault in runs:
        inside = (t >= t0) & (t <= t1)
        fell = bool(tr["fell"][inside].any()) or fault is not None
        if fell:  # the episode ends at the first fallen sample, as in-process
            down = t[inside][tr["fell"][inside] > 0]
            t1 = down[0] if down.size else t1
        settled = (t >= t0 + settle_s) & (t <= t1)
        err = np.linalg.norm(err_xy[settled] - np.asarray(command[:2]), axis=1)
        row = out.setdefault(str(list(command)), {"lin": [], "fell": [], "fault": []})
        row["lin"].append(float(err.mean()) if err.size else np.nan)
        row["fell"].append(fell)
        row["fault"].append(fault is not None)
    return {c: {"lin_vel_error": float(np.nanmean(r["lin"])) if not np.isnan(r["lin"]).all() else np.nan,
                "fall_share": float(np.mean(r["fell"])), "fault_share": float(np.mean(r["fault"])),
                "episodes": len(r["lin"])} for c, r in out.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("policy")
    ap.add_argument("--episodes", type=int, default=20)
    ap.add_argument("--stand-s", type=float, default=1.0)
    ap.add_argument("--settle-s", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0, help="in-process sim-to-sim's seed")
    ap.add_argument("--out", default=None, help="write the figures as JSON here")
    ap.add_argument("--harness", action="store_true", help="stand up hanging, then lowered (humanoids)")
    ap.add_argument("--commands", default=None, help="JSON list of [vx, vy, wz] (default: 0.5, 1.0, 0 m/s)")
    a = ap.parse_args()
    commands = tuple(tuple(float(x) for x in c) for c in json.loads(a.commands)) if a.commands else COMMANDS
    from simrl.rl.sim2sim import run_sim2sim

    domain = random.randint(100, 230)
    with tempfile.TemporaryDirectory() as tmp:
        # the ground truth is kept beside --out (the raw data of the figures)
        trace = Path(a.out).with_suffix(".trace.npz") if a.out else Path(tmp) / "trace.npz"
        t_start = time.monotonic()
        runs, timing, server_line, length = dds_episodes(a.policy, commands, a.episodes, a.stand_s,
                                                         domain, trace, a.harness)
        wall = time.monotonic() - t_start
        dds = score(runs, trace, a.settle_s)
    local = {str(list(c)): run_sim2sim(a.policy, command=c, episodes=a.episodes, seed=a.seed,
                                       settle_s=a.settle_s) for c in commands}
    print(f"\n{a.episodes} episodes of {length:g} s per command; DDS loopback took {wall / 60:.1f} min")
    print("| command | DDS: lin-vel error | falls | in-process: lin-vel error | falls "
          "| difference (error, falls) |")
    print("|---|---:|---:|---:|---:|---|")
    for c in commands:
        k = str(list(c))
        w, p = dds[k], local[k]
        print(f"| {k} | {w['lin_vel_error']:.3f} m/s | {w['fall_share']:.1%} "
              f"| {p['lin_vel_error']:.3f} m/s | {p['fall_share']:.1%} "
              f"| {w['lin_vel_error'] - p['lin_vel_error']:+.3f} m/s, "
              f"{(w['fall_share'] - p['fall_share']) * 100:+.1f} points |")
    print("controller over DDS: " + ", ".join(f"{k} {v}" for k, v in timing.items()))
    print("\n".join(server_line))
    rerun = f"python bench/dds_tracking.py {a.policy} --episodes {a.episodes}" + (
        f" --commands '{a.commands}'" if a.commands else "") + (" --harness" if a.harness else "")
    if a.out:
        Path(a.out).write_text(json.dumps({"dds": dds, "in_process": local, "timing": timing,
                                           "server": server_line, "rerun": rerun,
                                           "episodes": [[list(c), t0, t1, f] for c, t0, t1, f in runs]},
                                          indent=1))
    print(f"rerun: {rerun}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
