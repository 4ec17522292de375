"""Write the reference pages of docs/reference/ from the code:

    python scripts/gen_reference.py            # (re)write the pages
    python scripts/gen_reference.py --check    # exit 1, naming each stale page, instead of writing
    python scripts/gen_reference.py --gaps     # also list what the code leaves undocumented

robot-yaml.md (RobotCfg's fields and the shipped robot configs), terms.md (every term a task
config can name), config-keys.md (the keys of configs/train.yaml, eval.yaml, play.yaml and
export.yaml) and policy-json.md (the policy.json an export writes, from a real export of an
untrained quadruped policy). The output is deterministic: no timestamps, no absolute paths.
tests/docs/test_reference.py runs `--check`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reference import config_keys, policy_json, robot_yaml, terms  # noqa: E402
from reference.common import COMMAND, ROOT  # noqa: E402

OUT = Path("docs") / "reference"
# page -> (its generator, whether its gaps fail the run: a policy.json key without a meaning does)
PAGES = {
    "robot-yaml.md": (robot_yaml.page, False),
    "terms.md": (terms.page, False),
    "config-keys.md": (config_keys.page, False),
    "policy-json.md": (policy_json.page, True),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="name each stale page and exit 1; write nothing")
    parser.add_argument("--gaps", action="store_true", help="list fields, terms and keys with no docs")
    args = parser.parse_args(argv)
    os.chdir(ROOT)  # paths in the output are relative to the repository root
    failed = False
    for name, (generate, gaps_fail) in PAGES.items():
        path = OUT / name
        text, gaps = generate()
        if gaps_fail and gaps:
            failed = True
            for gap in gaps:
                print(f"{path}: {gap}")
        elif args.gaps:
            for gap in gaps:
                print(f"{path}: undocumented: {gap}")
        old = path.read_text() if path.is_file() else None
        if old == text:
            continue
        if args.check:
            failed = True
            print(f"{path} is {'missing' if old is None else 'stale'}: run `{COMMAND}` and commit it")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"wrote {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
