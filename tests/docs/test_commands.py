"""Every command block of the quickstart and the tutorials runs, as written, in a fresh folder.

The pages' commands are run by bash one line at a time, shrunk by the overrides in SHRINK
(appended here, never written into the pages) so a page costs seconds, not the minutes a real
run takes. A code block whose first line is `# file: <path>` is written to that path first, so
a tutorial's robot yaml or task module is the one its commands use. Set-up lines (SKIP) are
not run: the test runs inside the installed package.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "docs" / "quickstart.md", *sorted((ROOT / "docs" / "tutorials").glob("*.md"))]
SHRINK = {
    "simrl-train": ["max_iterations=2", "num_envs=16", "progress=false", "agent.num_steps_per_env=8"],
    "simrl-eval": ["episodes=2", "progress=false"],
    "simrl-export": ["num_envs=8", "num_check=50"],
    "simrl-play": ["seconds=1", "video_s=0.3", "progress=false"],
    "simrl-demo": ["seconds=1"],
}
SKIP = ("pip ", "python -m venv", "git clone", "cd ", ". .venv", "export ")
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def blocks(page: Path) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(page.read_text())]


def commands(page: Path) -> list[str]:
    out = []
    for lang, body in blocks(page):
        if lang != "bash":
            continue
        for line in body.splitlines():
            line = line.strip()
            if line and not line.startswith("#") and not line.startswith(SKIP):
                out.append(line)
    return out


def shrunk(line: str) -> str:
    """The command with its app's SHRINK overrides appended (before its trailing comment)."""
    words = shlex.split(line, comments=True)
    app = next((w for w in words if "=" not in w), None)
    return shlex.join(words + SHRINK.get(app, []))


def test_every_page_has_commands_and_every_command_an_app():
    for page in PAGES:
        cmds = commands(page)
        assert cmds, f"{page.name}: no command block"
        for line in cmds:
            app = next((w for w in shlex.split(line, comments=True) if "=" not in w), None)
            assert app in SHRINK, f"{page.name}: '{line}' runs {app}, which this test does not shrink"


def test_the_python_snippets_of_the_readme_and_quickstart_run(tmp_path):
    """As written, in a fresh interpreter (a short cartpole run included)."""
    for page in (ROOT / "README.md", ROOT / "docs" / "quickstart.md"):
        for lang, body in blocks(page):
            if lang != "python":
                continue
            r = subprocess.run([sys.executable, "-c", body], cwd=tmp_path, capture_output=True, text=True,
                               timeout=600, env={**os.environ, "PYTHONPATH": str(ROOT)})
            assert r.returncode == 0, f"{page.name}: python block failed:\n{r.stderr[-3000:]}"


@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_page_commands_run(page, tmp_path):
    for _lang, body in blocks(page):
        first, _, rest = body.partition("\n")
        if first.startswith("# file: "):
            target = tmp_path / first.removeprefix("# file: ").strip()
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(rest)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(ROOT)}
    env.pop("DISPLAY", None)
    for line in commands(page):
        cmd = shrunk(line)
        r = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=900)
        assert r.returncode == 0, f"{page.name}: `{line}` failed:\n{(r.stdout + r.stderr)[-3000:]}"
