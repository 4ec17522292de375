"""Pages rendered from data are current, and a result without its provenance is refused."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def gen_docs():
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_status_table_and_zoo_page_are_current():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--check"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("drop", ["command", "date", "commit"])
def test_a_result_without_command_commit_or_date_is_refused(tmp_path, drop):
    g = gen_docs()
    rows = (ROOT / "docs" / "results.yaml").read_text()
    import yaml

    data = yaml.safe_load(rows)
    del data["rows"][1][drop]
    bad = tmp_path / "results.yaml"
    bad.write_text(yaml.safe_dump(data))
    with pytest.raises(g.RowError, match=rf"row 2 \(.*\): no {drop}"):
        g.rows(bad)
