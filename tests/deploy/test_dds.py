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
    proc = subprocess.Popen([sys.executable, "-m", "simrl.rehearse.robot_server", f"policy={report['json']}",
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
    ctl.run(seconds=0.2)
    (_, _, _, why), = [t for t in ctl.transitions if t[2] == "damping"]
    assert "no new state" in why
    # counted in control cycles (a loaded machine delays cycles, not the rule): the first cycle
    # in damping is at most 3 after the last one that saw a new state
    rows = ctl.log.rows
    first_damping = next(i for i, r in enumerate(rows) if r[3] == "damping")
    last_new = max(i for i in range(1, first_damping) if rows[i][5] != rows[i - 1][5])
    assert first_damping - last_new <= 3


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
    needs_more = json.loads(json.dumps(meta))  # a policy that observes a base velocity estimate
    needs_more["obs_terms"].append({**needs_more["obs_terms"][0], "name": "base_lin_vel",
                                    "read": {"reading": "base_lin_vel"}})
    with pytest.raises(ValueError, match=r"observes \['base_lin_vel'\], which a Unitree LowState_ does not"):
        UnitreeRobot(needs_more, network="lo", domain=202)


def test_a_tampered_policy_onnx_is_refused(quad_export, tmp_path):
    import shutil
    from pathlib import Path

    _, report = quad_export
    meta = json.loads(open(report["json"]).read())
    assert len(meta["onnx_sha256"]) == 64
    for name in ("policy.onnx", "policy.json"):
        shutil.copy(Path(report["onnx"]).with_name(name), tmp_path / name)
    DeployPolicy(tmp_path / "policy.onnx")  # an intact copy loads
    data = bytearray((tmp_path / "policy.onnx").read_bytes())
    data[-100] ^= 0xFF  # one flipped byte
    (tmp_path / "policy.onnx").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="not the .* policy.json pinned at export"):
        DeployPolicy(tmp_path / "policy.onnx")


def test_simrl_deploy_from_the_terminal_against_the_robot_server(server):
    """The console app: passive, then `stand`, `policy` and a velocity typed on stdin."""
    proc, domain, report = server
    app = subprocess.Popen([sys.executable, "-m", "simrl.deploy.run", f"policy={report['onnx']}",
                            "network=lo", f"domain={domain}", "seconds=3", "log=/dev/null"], cwd=ROOT,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    first = app.stdout.readline()  # after start-up (imports, DDS discovery): the loop starts passive
    app.stdin.write("stand\n")
    app.stdin.flush()
    time.sleep(0.5)
    app.stdin.write("policy\n0.5 0 0\n")
    app.stdin.flush()
    out, _ = app.communicate(timeout=60)
    out = first + out
    assert app.returncode == 0, out
    assert "passive now" in out and "passive -> stand" in out and "stand -> policy" in out, out
    assert "simrl deploy: cycles" in out  # the summary at exit
    proc.send_signal(signal.SIGINT)
    server_out, _ = proc.communicate(timeout=20)
    assert "dropped for a bad CRC; state-to-command latency p50" in server_out, server_out


def test_the_wireless_remote_bytes_as_unitree_lays_them_out():
    import struct

    from simrl.deploy.commands import _Edges, parse_line, parse_remote, sticks_to_command

    data = bytearray(40)
    data[2], data[3] = 0b0000_0100, 0b0000_0001  # Start (byte 2 bit 2) and A (byte 3 bit 0)
    for off, v in ((4, -0.5), (8, 0.25), (12, 0.1), (20, 1.0)):  # lx, rx, ry, ly
        struct.pack_into("<f", data, off, v)
    sticks, pressed = parse_remote(data)
    assert sticks == pytest.approx({"lx": -0.5, "rx": 0.25, "ry": 0.1, "ly": 1.0})
    assert pressed == {"Start", "A"}
    assert sticks_to_command(sticks, (1.0, 0.5, 1.0)).tolist() == pytest.approx([1.0, 0.25, -0.25])
    edges = _Edges()
    assert edges({"Start"}) == "stand" and edges({"Start"}) is None  # on the press, not the hold
    assert edges({"Start", "A"}) == "policy" and edges({"Select"}) == "damping"
    assert parse_line("0.5 0 0.2")[0].tolist() == [0.5, 0.0, 0.2] and parse_line("damp") == (None, "damping")
    assert parse_line("go fast") == (None, None)


def test_robot_server_resets_to_its_start_pose_and_traces_the_ground_truth(quad_export, tmp_path):
    """With its motors passive the robot collapses (the termination rule holds in the trace);
    a reset (SIGUSR1's handler) puts it back in its start pose: a new episode, upright."""
    from simrl.rehearse.robot_server import RobotServer

    _, report = quad_export
    trace = tmp_path / "trace.npz"
    server = RobotServer(policy=report["json"], network="lo", domain=random.randint(100, 200),
                         trace=str(trace))
    server.run(seconds=1.5)
    server.request_reset()
    server.run(seconds=0.3)
    server.write_trace()
    tr = np.load(trace)
    first, second = tr["episode"] == 0, tr["episode"] == 1
    assert server.resets == 1 and first.sum() > 50 and second.sum() > 5
    assert tr["fell"][first][0] == 0 and tr["fell"][first][-1] == 1  # collapsed while passive
    assert tr["fell"][second][0] == 0  # back on its feet
    assert np.all(np.diff(tr["t"]) > 0) and np.isfinite(tr["vx"]).all()


def test_the_robot_server_stops_cleanly_on_sigint_even_started_with_it_ignored(quad_export, tmp_path):
    """A background start (nohup, `&`) leaves SIGINT ignored: the server installs its own
    handler, so SIGINT (and SIGTERM) still end it with its summary and trace."""
    _, report = quad_export
    trace = tmp_path / "trace.npz"
    proc = subprocess.Popen([sys.executable, "-m", "simrl.rehearse.robot_server", f"policy={report['json']}",
                             "network=lo", f"domain={random.randint(100, 200)}", f"trace={trace}"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert "lowstate at 500 Hz" in proc.stdout.readline()
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "states published" in out, out
    assert np.load(trace)["t"].size > 5


def test_the_harness_holds_the_base_at_its_start_pose_until_released(quad_export):
    """harness=true: with its motors passive the base still hangs where it started (a gantry)
    and never falls; after release() it drops as without one; a reset hangs it again."""
    from simrl.rehearse.robot_server import RobotServer

    server = RobotServer(policy=quad_export[1]["json"], network="lo", domain=random.randint(100, 200),
                         harness=True)
    q = server._root_qpos
    start = server.m.key_qpos[server.key, q : q + 7].copy()
    server.run(seconds=0.5)
    assert np.allclose(server.d.qpos[q : q + 7], start) and not server.d.qvel[:6].any()
    server.release()
    server.run(seconds=0.5)
    assert server.d.qpos[q + 2] < start[2] - 0.02  # passive joints: it sags once lowered
    server.request_reset()
    server.run(seconds=0.3)
    assert np.allclose(server.d.qpos[q : q + 7], start)
