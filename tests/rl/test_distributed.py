"""torchrun data-parallel training on the CPU (gloo): same weights everywhere, rank 0 writes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import torch

from simrl import ROOT

WORKER = Path(__file__).with_name("dist_worker.py")


def test_two_rank_gloo_training_keeps_ranks_in_sync(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
         str(WORKER), str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    p0 = torch.load(tmp_path / "params_rank0.pt")
    p1 = torch.load(tmp_path / "params_rank1.pt")
    assert p0.keys() == p1.keys()
    for k in p0:
        assert torch.equal(p0[k], p1[k]), f"rank weights differ in {k}"
    # the ranks simulated different worlds (seed + rank) ...
    assert not torch.equal(torch.load(tmp_path / "qpos_rank0.pt"), torch.load(tmp_path / "qpos_rank1.pt"))
    # ... and only rank 0 wrote a run dir with checkpoints
    assert (tmp_path / "rank0" / "model_3.pt").is_file()
    assert not (tmp_path / "rank1").exists()
