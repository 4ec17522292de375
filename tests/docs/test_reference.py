"""The reference pages of docs/reference/ are generated from the code (scripts/gen_reference.py):
a change that adds a RobotCfg field, a term, a config key or a policy.json key without
regenerating them fails here, naming the page."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_reference_pages_are_current():
    env = {k: v for k, v in os.environ.items() if k != "SIMRL_TASKS"}  # the built-in tasks only
    r = subprocess.run([sys.executable, "scripts/gen_reference.py", "--check"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=300)
    stale = r.stdout.strip().replace("\n", "; ")
    crash = (r.stderr.strip().splitlines() or ["scripts/gen_reference.py --check failed"])[-1]
    assert r.returncode == 0, stale or crash
