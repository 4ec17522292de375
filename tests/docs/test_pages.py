"""What a newcomer reads: a short README with a rendered picture, and user-facing pages that
speak about simrl, not about how its work was organised."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
USER_PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md",
              *(p for p in (ROOT / "docs").rglob("*.md") if "learn" not in p.parts)]
PROCESS = re.compile(r"\b(session|sessions|the issue|issue asks|numbered day|[Dd]ay \d+|shared/offline)\b")


def test_readme_is_short_and_opens_with_a_rendered_picture():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 150
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert pictures, "no picture in the README"
    for p in pictures:
        path = ROOT / p
        assert path.is_file(), f"README.md: picture {p} is missing"
        assert path.stat().st_size < 2_000_000, f"README.md: {p} is over 2 MB"
    assert not re.search(r"\b[0-9a-f]{7,40}\b", text.split("<!-- status:begin")[0]), "a commit hash in prose"


def test_pictures_in_the_docs_are_light():
    for p in (ROOT / "docs" / "media").iterdir():
        assert p.stat().st_size < 2_000_000, f"{p.name} is over 2 MB: render it shorter or smaller"


def test_no_page_speaks_of_the_projects_work_process():
    for page in USER_PAGES:
        for n, line in enumerate(page.read_text().splitlines(), 1):
            m = PROCESS.search(line)
            assert not m, f"{page.relative_to(ROOT)}:{n}: '{m.group(0)}' speaks of the work, not of simrl"


def test_readme_links_point_at_files():
    text = (ROOT / "README.md").read_text()
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if not target.startswith("http"):
            assert (ROOT / target).exists(), f"README.md links to {target}, which is missing"
