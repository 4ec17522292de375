"""simrl.train / evaluate / export: configs composed as the apps do, plain results."""

from __future__ import annotations

import json

import pytest

import simrl
from simrl.api import EvalResult, hydra_value, overrides_from
from simrl.config import compose
from simrl.errors import ConfigError


def test_keyword_values_become_the_same_overrides_as_the_command_line():
    odd = "/tmp/a dir/it's, [x]=1"
    values = {"num_envs": 8, "resume": None, "progress": False, "agent": {"save_interval": 5}}
    assert overrides_from(values) == ["num_envs=8", "resume=null", "progress=false", "agent.save_interval=5"]
    cfg = compose("train", ["task=quadruped", *overrides_from(
        {"log_root": odd, "task": {"cfg": {"lin_vel_x": (0.0, 1.5), "push_vel": 0.25}}})])
    assert cfg.log_root == odd  # quoted: any path survives
    assert list(cfg.task.cfg.lin_vel_x) == [0.0, 1.5] and cfg.task.cfg.push_vel == 0.25
    assert hydra_value(1e-4) == "0.0001" and hydra_value([1, "a"]) == "[1,'a']"


def test_train_evaluate_export_return_plain_results(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = simrl.train("cartpole", device="cpu", num_envs=16, max_iterations=2, progress=False,
                      cfg={"max_angle": 0.3})
    # train.yaml's run dir pattern, relative to the cwd
    assert run.run_dir.parent.resolve() == (tmp_path / "runs" / "cartpole").resolve()
    assert [m["iteration"] for m in run.history] == [1, 2]
    assert run.summary == json.loads((run.run_dir / "summary.json").read_text())
    assert run.checkpoint.name == "model_2.pt" and run.config["task"]["cfg"]["max_angle"] == 0.3
    steps, values = run.metric("mean_episode_length")
    assert steps == [m["env_steps"] for m in run.history] and len(values) == 2
    with pytest.raises(KeyError, match="no metric 'nope'.*mean_reward"):
        run.metric("nope")
    again = simrl.train("cartpole", device="cpu", num_envs=16, max_iterations=1, progress=False)
    assert again.run_dir != run.run_dir  # two runs in the same second get their own dirs

    evaluated = simrl.evaluate(run.run_dir, num_envs=4, progress=False, cfg={"max_angle": 0.01})
    assert isinstance(evaluated, EvalResult)
    assert evaluated.results[0]["fall_share"] == 1.0  # the override applied
    exported = simrl.export(run.run_dir, num_envs=4, num_check=20)
    assert exported.onnx.is_file() and exported.json.is_file()
    assert exported.report["max_abs_diff"] < 1e-4

    # `episodes` means episodes per command from a checkpoint and from an exported policy alike
    assert simrl.evaluate(run.run_dir, episodes=3, progress=False).results[0]["episodes"] == 3
    assert simrl.evaluate(exported.onnx, episodes=2).results[0]["episodes"] == 2
    assert simrl.evaluate(run.run_dir, num_envs=5, progress=False).results[0]["episodes"] == 5  # older name
    with pytest.raises(ConfigError, match="episodes=3 and num_envs=4 disagree"):
        simrl.evaluate(run.run_dir, episodes=3, num_envs=4)
    with pytest.raises(ConfigError, match="episodes must be an int >= 1"):
        simrl.evaluate(run.run_dir, episodes=0)


@pytest.mark.parametrize("play", [simrl.play, simrl.api.play])
def test_play_is_refused_naming_evaluate(play):
    """simrl.play is refused in one line naming simrl.evaluate (the metrics table) and the viewer."""
    from simrl.errors import UserError

    with pytest.raises(UserError) as e:
        play("runs/cartpole/x", episodes=3)
    assert str(e.value) == ("simrl.play was renamed simrl.evaluate (the metrics table); to watch a "
                            "policy use simrl-play or simrl.viewer")
    assert "play" not in simrl.__all__ and "evaluate" in simrl.__all__
