"""State-to-command latency over DDS loopback: simrl-robot-sim and simrl-deploy in two processes.

    python bench/deploy_latency.py runs/<run>/export/policy.onnx --seconds 60

Starts `simrl-robot-sim` for the export's robot on `lo` (lowstate at 500 Hz), then `simrl-deploy`
on the same domain, types `stand`, then `policy` and `0.5 0 0` into it, lets it run for
`--seconds`, and stops both. Prints the server's summary (states published, commands applied,
bad CRCs, state-to-command latency p50/p99/max: from publishing a state to receiving the command
computed from it) and the controller's (period and compute percentiles, overruns, faults).
"""

from __future__ import annotations

import argparse
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("policy")
    ap.add_argument("--seconds", type=float, default=60.0)
    a = ap.parse_args()
    meta = Path(a.policy).with_name("policy.json")
    domain = random.randint(100, 230)
    server = subprocess.Popen([sys.executable, "-m", "simrl.rehearse.robot_server", f"policy={meta}",
                               "network=lo", f"domain={domain}"], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    server.stdout.readline()  # its start line: publishing
    app = subprocess.Popen([sys.executable, "-m", "simrl.deploy.run", f"policy={a.policy}", "network=lo",
                            f"domain={domain}", f"seconds={a.seconds + 3}", "log=/dev/null"], cwd=ROOT,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    app.stdout.readline()  # passive now
    app.stdin.write("stand\n")
    app.stdin.flush()
    time.sleep(2.5)
    app.stdin.write("policy\n0.5 0 0\n")
    app.stdin.flush()
    out, _ = app.communicate(timeout=a.seconds + 120)
    server.send_signal(signal.SIGINT)
    server_out, _ = server.communicate(timeout=30)
    print(out.strip())
    print(server_out.strip())
    print(f"rerun: python bench/deploy_latency.py {a.policy} --seconds {a.seconds:g}")
    return 0 if app.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
