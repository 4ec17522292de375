"""Time the deploy loop on the computer it will run on: `python -m simrl.rehearse.loop_timing
policy.onnx --cycles 10000`.

Records 4 s of the policy driving its robot in MuJoCo (the controller, on the simulation's
clock), then replays those states on the wall clock at the control rate (`ReplayRobot`) for
`--cycles` cycles with the controller in its policy state, and prints the loop's period p50 /
p99 / max, compute p50 / p99 and overruns.
"""

from __future__ import annotations

import argparse

import numpy as np

from simrl.deploy.controller import Controller, limits_from_meta
from simrl.deploy.realtime import ReplayRobot
from simrl.rehearse.mujoco_robot import MujocoRobot


def record_states(policy, seconds: float = 4.0, command=(0.5, 0.0, 0.0)) -> list[dict[str, np.ndarray]]:
    """The readings of `seconds` of the policy driving its MuJoCo robot (controller, sim clock)."""
    robot = MujocoRobot(policy.meta)
    ctl = Controller(policy, robot, limits_from_meta(policy.meta, stand_s=0.2), command=np.asarray(command))
    ctl.request("stand")
    ctl.run(cycles=1)
    ctl.request("policy")
    states = []
    for _ in range(int(seconds / ctl.period)):
        ctl.run(cycles=1)
        states.append(robot.latest().readings)
    return states


def main() -> None:
    from simrl.deploy import DeployPolicy

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("policy")
    ap.add_argument("--cycles", type=int, default=10000)
    a = ap.parse_args()
    policy = DeployPolicy(a.policy)
    robot = ReplayRobot(record_states(policy), float(policy.meta["control_dt"]))
    # the replay times the loop, not the robot: no tilt or limit checks on the recorded states
    limits = limits_from_meta(policy.meta, stand_s=0.0, max_tilt_cos=None)
    limits.joint_pos[:] = [-np.inf, np.inf]
    limits.joint_vel[:] = np.inf
    ctl = Controller(policy, robot, limits, command=np.array([0.5, 0.0, 0.0]))
    ctl.request("stand")
    ctl.run(cycles=1)
    ctl.request("policy")
    ctl.run(cycles=2)
    ctl.clear_log()
    ctl.run(cycles=a.cycles)
    s = ctl.summary()
    print(f"simrl deploy loop: {a.cycles} cycles at {1 / ctl.period:.0f} Hz, state {s['state']} "
          f"(fault: {s['fault']}): period p50 {s['period_p50_ms']} ms, p99 {s['period_p99_ms']} ms, "
          f"max {s['period_max_ms']} ms; compute p50 {s['compute_p50_ms']} ms, p99 {s['compute_p99_ms']} ms; "
          f"overruns {s['overruns']}")
    print(f"rerun: python -m simrl.rehearse.loop_timing {a.policy} --cycles {a.cycles}")


if __name__ == "__main__":
    main()
