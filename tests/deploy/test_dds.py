"""The controller over Unitree SDK2's DDS topics against simrl-robot-sim, on loopback."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

pytest.importorskip("cyclonedds")

from simrl import ROOT  # noqa: E402
from simrl.deploy import DeployPolicy  # noqa: E402
from simrl.deploy.controller import Controller, limits_from_meta  # noqa: E402
from simrl.deploy.dds import UnitreeRobot, motor_map  # noqa: E402


@pytest.fixture
def server(quad_export):
    """simrl-robot-sim for the exported quadruped on loopback, on a domain of its own."""
    _, report = quad_export
    domain = random.randint(100, 200)
    proc = subprocess.Popen([sys.executable, "-m", "simrl.deploy.robot_server", f"policy={report['json']}",
                             "network=lo", f"domain={domain}", "seconds=60"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    yield proc, domain, report
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)


def test_stand_and_policy_over_dds_then_a_dead_server_means_damping(server):
    proc, domain, report = server
    policy = DeployPolicy(report["onnx"])
    robot = UnitreeRobot(policy.meta, network="lo", domain=domain, wait_s=30.0)
    ctl = Controller(policy, robot, limits_from_meta(policy.meta, stand_s=0.5))
    ctl.request("stand")
    ctl.run(cycles=1)
    ctl.request("policy")
    ctl.run(seconds=1.0)
    assert ctl.state == "policy", ctl.transitions
    assert robot.sent >= 45 and robot.bad_crc == 0
    q = robot.latest().readings["joint_pos"]
    assert np.isfinite(q).all()
    os.kill(proc.pid, signal.SIGKILL)  # the robot's side dies mid-episode
    t_kill = time.monotonic()
    ctl.run(seconds=0.2)
    (t_damp, _, to, why), = [t for t in ctl.transitions if t[2] == "damping"]
    assert "no new state" in why and t_damp - t_kill <= 3 * ctl.period + 0.01


def test_bad_input_is_one_line_and_no_command_is_sent(quad_export, tmp_path):
    _, report = quad_export
    meta = json.loads(open(report["json"]).read())
    with pytest.raises(ValueError, match="network interface 'eth9' does not exist here"):
        UnitreeRobot(meta, network="eth9")
    t0 = time.monotonic()
    with pytest.raises(TimeoutError, match=r"no LowState_ on rt/lowstate in DDS domain 201 .*No command"):
        UnitreeRobot(meta, network="lo", domain=201, wait_s=0.5)
    assert time.monotonic() - t0 < 5
    other = json.loads(json.dumps(meta))
    other["robot"]["config"]["motors"]["order"][0] = "FR_hip"  # a motor table of another robot
    with pytest.raises(ValueError, match=r"lacks the policy joints \['FR_hip_joint'\].*another robot"):
        motor_map(other)
    nomotors = json.loads(json.dumps(meta))
    nomotors["robot"]["config"]["motors"] = None
    with pytest.raises(ValueError, match="has no motor table"):
        motor_map(nomotors)
    assert motor_map(meta)[1].tolist() == list(range(12))
