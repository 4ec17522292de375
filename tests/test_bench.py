"""Benchmarks in their quick mode: each prints measured, positive figures and its rerun line."""

from __future__ import annotations

import re

import pytest
import torch

from simrl.bench import bench_graphs, main


def _rows(out: str, first: str) -> list[list[float]]:
    """Numeric table rows whose first column is `first`."""
    rows = []
    for line in out.splitlines():
        cells = line.split()
        if cells and cells[0] == first and all(re.fullmatch(r"[\d,.]+%?", c) for c in cells):
            rows.append([float(c.replace(",", "").rstrip("%")) for c in cells])
    return rows


@pytest.mark.parametrize("mode", ["sim", "env"])
def test_throughput_modes_print_ratios_against_the_bare_loop(mode, capsys):
    main([mode, "--quick", "--num-worlds", "32"])
    out = capsys.readouterr().out
    (row,) = _rows(out, "32")
    bare, ours, ratio = row[1:4]
    assert bare > 0 and ours > 0 and ratio == pytest.approx(ours / bare, rel=0.01)
    assert f"rerun: python -m simrl.bench {mode} --quick --num-worlds 32" in out
    if mode == "env":
        share = float(re.search(r"physics share of the task step .*?: ([\d.]+)", out).group(1))
        assert 0 < share < 1


def test_iteration_mode_splits_the_iteration_into_shares(capsys):
    main(["iteration", "--quick", "--num-worlds", "32", "--device", "cpu"])
    (row,) = _rows(capsys.readouterr().out, "32")
    s_per_iter, steps_per_s, *shares = row[1:]
    assert s_per_iter > 0 and steps_per_s > 0
    assert sum(shares) == pytest.approx(100, abs=3)  # physics, task, policy+storage, update


def test_export_mode_times_onnxruntime_against_torch(capsys):
    main(["export", "--quick"])
    out = capsys.readouterr().out
    ort_row = re.search(r"onnxruntime \(CPU\)\s+([\d.]+)\s+([\d.]+)", out)
    torch_row = re.search(r"torch eager \(CPU\)\s+([\d.]+)\s+([\d.]+)", out)
    assert 0 < float(ort_row.group(1)) <= float(ort_row.group(2))
    assert 0 < float(torch_row.group(1)) <= float(torch_row.group(2))
    if not torch.cuda.is_available():
        assert "TensorRT fp16: no figure (cannot build a TensorRT engine here" in out


@pytest.mark.mjwarp
@pytest.mark.parametrize("what", ["sim", "task"])
def test_graphs_on_and_off_on_warps_cpu_device(what, capsys):
    """The GPU tables' code path, run on Warp's CPU device (graph capture works there too)."""
    (row,) = bench_graphs(what, [4], steps=2, repeats=1, device="cpu")
    assert row["graphs_on"] > 0 and row["graphs_off"] > 0
    assert row["ratio"] == pytest.approx(row["graphs_on"] / row["graphs_off"])
    assert _rows(capsys.readouterr().out, "4")


def test_ranks_mode_compares_torchrun_ranks_with_one(capsys):
    main(["ranks", "--quick", "--task", "cartpole", "--num-worlds", "64", "--device", "cpu"])
    out = capsys.readouterr().out
    one, two = _rows(out, "1"), _rows(out, "2")
    assert one[0][1] == 64 and two[0][1] == 32 and one[0][2] > 0 and two[0][2] > 0
    ratio = float(re.search(r"ratio 2 ranks / 1 rank: ([\d.]+)", out).group(1))
    assert ratio == pytest.approx(two[0][2] / one[0][2], abs=0.01)


def test_ranks_mode_refuses_totals_it_cannot_split(capsys):
    with pytest.raises(SystemExit):
        main(["ranks", "--num-worlds", "63", "--device", "cpu"])
    assert "a multiple of --ranks 2" in capsys.readouterr().err


def test_env_mode_on_a_menagerie_robot_compares_with_its_own_bare_loop(capsys):
    main(["env", "--quick", "--num-worlds", "16", "--robot", "unitree_go1"])
    out = capsys.readouterr().out
    assert "robot unitree_go1" in out and "quadruped task (mujoco)" in out
    (row,) = _rows(out, "16")
    assert row[1] > 0 and row[2] > 0 and row[3] == pytest.approx(row[2] / row[1], rel=0.01)
