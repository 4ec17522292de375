"""The apps print a user's mistake as one `simrl: error:` line and exit non-zero, no traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest

from simrl import ROOT
from simrl.errors import ConfigError, UnknownNameError, exit_on_user_error


def run_app(*args: str, cwd=ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def assert_one_line_error(r: subprocess.CompletedProcess, *fragments: str) -> str:
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("simrl: error: ")]
    assert r.returncode != 0, r.stderr[-2000:]
    assert "Traceback" not in r.stderr and "HYDRA_FULL_ERROR" not in r.stderr, r.stderr[-2000:]
    assert len(errors) == 1, r.stderr[-2000:]
    for fragment in fragments:
        assert fragment in errors[0], errors[0]
    return errors[0]


@pytest.fixture(scope="module")
def cartpole_run(tmp_path_factory):
    """A one-iteration cartpole run dir (for eval/export errors)."""
    run_dir = tmp_path_factory.mktemp("cli") / "run"
    r = run_app("train.py", "task=cartpole", "device=cpu", "num_envs=8", "max_iterations=1",
                "progress=false", f"hydra.run.dir={run_dir}")
    assert r.returncode == 0, r.stderr[-2000:]
    return run_dir


@pytest.mark.parametrize("override, fragments", [
    ("num_envs=0", ["num_envs must be an int >= 1, got 0"]),
    ("resume=/nonexistent/run", ["no checkpoint or run dir at '/nonexistent/run'"]),
    ("device=cuda", ["device 'cuda' requested but this machine has", "device=cpu"]),
    ("task.cfg.max_angel=0.3", ["unknown CartpoleCfg keys ['max_angel']", "'max_angle'"]),
])
def test_train_user_errors(override, fragments, tmp_path):
    if override == "device=cuda":
        import torch

        if torch.cuda.is_available():
            pytest.skip("this machine has CUDA")
    r = run_app("train.py", "task=cartpole", "progress=false", "max_iterations=1",
                f"hydra.run.dir={tmp_path}", *(["device=cpu"] if "device" not in override else []),
                override)
    assert_one_line_error(r, *fragments)


def test_eval_and_export_user_errors(cartpole_run, tmp_path):
    junk = tmp_path / "model_1.pt"
    junk.write_bytes(b"this is not a checkpoint")
    assert_one_line_error(run_app("eval.py", f"checkpoint={junk}"), "could not read checkpoint", str(junk))
    assert_one_line_error(run_app("export.py", f"checkpoint={junk}"), "could not read checkpoint")
    assert_one_line_error(run_app("eval.py", f"checkpoint={cartpole_run}", "num_envs=2", "task.cfg.pushh=1"),
                          "unknown CartpoleCfg keys ['pushh']")


def test_eval_and_export_refuse_missing_inputs_with_user_errors(tmp_path):
    from simrl.config import compose
    from simrl.errors import MissingFileError
    from simrl.rl.app import export
    from simrl.rl.checkpoint import CheckpointError
    from simrl.rl.evaluation_app import evaluate_app

    with pytest.raises(ConfigError, match="eval needs checkpoint=PATH"):
        evaluate_app(compose("eval"))
    with pytest.raises(MissingFileError, match="no exported policy at"):
        evaluate_app(compose("eval", [f"policy={tmp_path / 'policy.onnx'}"]))
    not_onnx = tmp_path / "policy.onnx"
    not_onnx.write_text("not onnx")
    with pytest.raises(ConfigError, match="is not a policy exported by export.py"):
        evaluate_app(compose("eval", [f"policy={not_onnx}"]))
    with pytest.raises(CheckpointError, match="no checkpoint or run dir"):
        export(compose("export", [f"checkpoint={tmp_path / 'nope'}"]))


def test_eval_applies_task_cfg_overrides_without_plus(cartpole_run):
    r = run_app("eval.py", f"checkpoint={cartpole_run}", "num_envs=4", "progress=false",
                "task.cfg.max_angle=0.01")  # the pole falls at once: every episode ends early
    assert r.returncode == 0, r.stderr[-2000:]
    assert "simrl eval: " in r.stdout and "4 episodes per command" in r.stdout
    assert "episodes ended early 100.0%" in r.stdout


def test_play_refuses_the_metrics_table_keys_naming_simrl_eval(capsys):
    """play shows the robot: a key only the metrics table takes is refused before Hydra runs,
    in one line that gives the same arguments to the eval command."""
    r = run_app("play.py", "checkpoint=x", "episodes=3")
    assert r.returncode in (1, 2), r.stderr[-2000:]
    last = r.stderr.strip().splitlines()[-1]
    assert last == ("simrl: error: play shows the robot; the metrics table is simrl-eval: "
                    "python eval.py checkpoint=x episodes=3"), r.stderr[-2000:]
    assert_one_line_error(r)
    from simrl.cli import EVAL_ONLY_KEYS, refuse_eval_keys

    for key in EVAL_ONLY_KEYS:  # the console script's line names simrl-eval, quoting as a shell needs
        with pytest.raises(SystemExit) as e:
            refuse_eval_keys(["/usr/bin/simrl-play", "checkpoint=runs/a b", f"+{key}=[[0.5,0,0]]"])
        assert e.value.code == 1
        want = f"simrl-eval 'checkpoint=runs/a b' '+{key}=[[0.5,0,0]]'"
        assert capsys.readouterr().err == ("simrl: error: play shows the robot; the metrics table is "
                                           f"simrl-eval: {want}\n")
    refuse_eval_keys(["play.py", "checkpoint=x", "video=true", "--cfg", "job"])  # play's own: passes


def test_plot_and_bench_user_errors(tmp_path):
    assert_one_line_error(run_app("-m", "simrl.plot", str(tmp_path / "nope"), "-o", str(tmp_path / "c.png")),
                          "no metrics.csv in", "train.py")
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.csv").write_text("iteration,env_steps,mean_reward\n1,10,0.5\n")
    from simrl.plot import plot_runs

    with pytest.raises(ConfigError, match=r"none of the metrics \['rewardz'\].*found: \['mean_reward'\]"):
        plot_runs([run], tmp_path / "c.png", metrics=["rewardz"])



def test_zoo_bad_word_or_name_is_one_line():
    assert_one_line_error(run_app("-m", "simrl.zoo", "paht", "quadruped"), "list, path NAME or check NAME")
    assert_one_line_error(run_app("-m", "simrl.zoo", "path", "no_such_robot"), "no shipped policy", "valid:")

def test_bench_bad_device_is_one_line():
    assert_one_line_error(run_app("-m", "simrl.bench", "iteration", "device=cuda:7", "quick=true"),
                          "device 'cuda:7' requested")


def test_bench_flags_and_unknown_keys_are_one_line():
    """simrl.bench takes key=value words in every mode: a --flag names its key=value form, an
    unknown key the mode's keys."""
    flags = ("env", "--robot", "unitree_go1", "--num-worlds", "1024")
    assert_one_line_error(run_app("-m", "simrl.bench", *flags),
                          "simrl: error: python -m simrl.bench takes key=value words: --robot unitree_go1 "
                          "is robot=unitree_go1", "env robot=unitree_go1 num_worlds=1024")
    assert_one_line_error(run_app("-m", "simrl.bench", "launches", "robot=unitree_go1"),
                          "unknown key 'robot' for python -m simrl.bench launches; valid: num_worlds, "
                          "steps, quick, device")


def test_hydra_override_errors_stay_hydras(tmp_path):
    r = run_app("train.py", "device=cpu", f"hydra.run.dir={tmp_path}", "num_env=8")
    assert r.returncode != 0 and "num_env" in r.stderr and "simrl: error:" not in r.stderr


def test_only_user_errors_are_shortened(capsys):
    with pytest.raises(SystemExit) as e, exit_on_user_error():
        raise UnknownNameError("unknown task 'x'; valid: ['cartpole']")
    assert e.value.code == 1
    assert capsys.readouterr().err == "simrl: error: unknown task 'x'; valid: ['cartpole']\n"
    with pytest.raises(SystemExit), exit_on_user_error():
        raise ConfigError("two\nlines")
    assert capsys.readouterr().err == "simrl: error: two lines\n"
    with pytest.raises(ValueError, match="a bug"), exit_on_user_error():
        raise ValueError("a bug")  # not a user error: keeps its traceback


def test_robot_path_on_the_command_line(tmp_path):
    """`robot=/path/to/robot.yaml` loads that file (Hydra alone would look in configs/robot)."""
    import subprocess
    import sys

    import yaml

    from simrl import ROOT
    from simrl.config import compose

    fields = yaml.safe_load((ROOT / "configs" / "robot" / "quadruped.yaml").read_text())
    fields["name"] = "my_dog"
    path = tmp_path / "my dog.yaml"
    path.write_text(yaml.safe_dump(fields))
    assert compose("train", [f"robot={path}"]).task.cfg.robot == str(path)
    assert compose("train", ["robot=unitree_go1"]).robot.name == "unitree_go1"  # a shipped one: as before
    r = subprocess.run([sys.executable, "train.py", f"robot={path}", "num_envs=4", "max_iterations=1",
                        "agent.num_steps_per_env=2", "progress=false", f"hydra.run.dir={tmp_path / 'run'}"],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "name: my_dog" in (tmp_path / "run" / "config.yaml").read_text()
    r = subprocess.run([sys.executable, "train.py", f"robot={tmp_path / 'none.yaml'}", "max_iterations=1"],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 1 and "robot config" in r.stderr and "not found" in r.stderr, r.stderr
