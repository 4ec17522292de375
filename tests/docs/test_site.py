"""The documentation site builds in strict mode, and a broken link fails it naming the page."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build(root: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(out)],
                          cwd=root, capture_output=True, text=True, timeout=300,
                          env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"})


def test_site_builds_strictly(tmp_path):
    r = build(ROOT, tmp_path / "site")
    assert r.returncode == 0, r.stdout + r.stderr
    pages = list((tmp_path / "site").rglob("index.html"))
    assert len(pages) >= 25, len(pages)


def copy(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(ROOT / "docs", root / "docs", ignore=shutil.ignore_patterns("learn"))
    for name in ("mkdocs.yml", "CHANGELOG.md", "CONTRIBUTING.md"):
        shutil.copy(ROOT / name, root / name)
    return root


def test_a_link_to_a_missing_page_or_anchor_or_picture_fails_naming_the_page(tmp_path):
    for bad in ("[gone](no-such-page.md)", "[gone](install.md#no-such-heading)", "![gone](media/none.gif)"):
        root = copy(tmp_path / str(abs(hash(bad))))
        page = root / "docs" / "faq.md"
        page.write_text(page.read_text() + f"\n{bad}\n")
        r = build(root, root / "site")
        assert r.returncode != 0, bad
        assert "faq.md" in r.stdout + r.stderr, (bad, r.stdout + r.stderr)
