"""Every shipped policy still runs sim-to-sim to the figures its card states: a change to the
deploy runtime, the controller, the scene assembly or a robot config that breaks an old export
fails here."""

import json
import subprocess
import sys

import pytest

from simrl import zoo


@pytest.mark.parametrize("name", sorted(zoo.index()))
def test_shipped_policy_holds_its_card(name):
    measured = zoo.check(name)
    assert not zoo.misses(name, measured), zoo.misses(name, measured)


@pytest.mark.parametrize("name", sorted(zoo.index()))
def test_card_says_how_it_was_made(name):
    card = zoo.card(name)
    for key in ("task", "robot", "summary", "train", "export", "seed", "commit", "date", "machine",
                "sim2sim"):
        assert card.get(key) not in (None, ""), f"{name}: card has no {key}"
    meta = json.loads(zoo.policy_path(name).with_name("policy.json").read_text())
    assert meta["task"] == card["task"]
    assert (meta.get("robot") or {}).get("name") == card["robot"]
    onnx = zoo.policy_path(name)
    size = onnx.stat().st_size + onnx.with_name("policy.json").stat().st_size
    assert size < 2_000_000, f"{name}: {size} bytes"


def test_unknown_name_lists_the_shipped_ones():
    from simrl.errors import UnknownNameError

    with pytest.raises(UnknownNameError, match="valid: .*quadruped"):
        zoo.card("no_such_robot")


def test_the_command_line_prints_a_shipped_policys_path_and_lists_them():
    def zoo_cli(*words):
        return subprocess.run([sys.executable, "-m", "simrl.zoo", *words], capture_output=True, text=True,
                              timeout=120)

    r = zoo_cli("path", "unitree_g1_walk")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(zoo.policy_path("unitree_g1_walk"))
    listed = zoo_cli().stdout
    assert all(name in listed for name in zoo.index())
