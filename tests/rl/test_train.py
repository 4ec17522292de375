"""Training: it learns, run dirs, resume, SIGTERM, determinism, checkpoint and config errors."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from hydra import compose, initialize_config_dir

from simrl import CONFIGS, ROOT
from simrl.errors import ConfigError
from simrl.registry import make
from simrl.rl.app import build_env, train
from simrl.rl.checkpoint import CheckpointError, latest_checkpoint
from simrl.rl.runner import Trainer


def cfg_for(*overrides: str):
    with initialize_config_dir(config_dir=str(CONFIGS), version_base=None):
        return compose("train", overrides=["progress=false", "device=cpu", *overrides])


@pytest.fixture(scope="module")
def cartpole_run(tmp_path_factory):
    """A short cartpole training: 40 iterations of 128 envs (a few seconds)."""
    run_dir = tmp_path_factory.mktemp("cartpole_run")
    trainer = train(cfg_for("task=cartpole", "num_envs=128", "max_iterations=40", "seed=1"), run_dir)
    return run_dir, trainer


def test_cartpole_return_rises(cartpole_run):
    _, trainer = cartpole_run
    h = trainer.history
    early = sum(m["mean_reward"] for m in h[:3]) / 3
    late = sum(m["mean_reward"] for m in h[-3:]) / 3
    assert late > 1.5 * early, f"return did not rise: {early:.2f} -> {late:.2f}"
    assert h[-1]["mean_episode_length"] > h[0]["mean_episode_length"]


def test_run_dir_holds_config_checkpoints_and_logs(cartpole_run):
    run_dir, trainer = cartpole_run
    names = {p.name for p in run_dir.iterdir()}
    assert {"config.yaml", "metrics.csv", "summary.json", "model_40.pt"} <= names
    assert any(n.startswith("events.out.tfevents") for n in names)
    assert not any(n.endswith(".tmp") for n in names)
    rows = list(csv.DictReader(open(run_dir / "metrics.csv")))
    assert len(rows) == 40 and float(rows[-1]["env_steps"]) == 40 * 32 * 128
    assert latest_checkpoint(run_dir).name == "model_40.pt"


def test_resume_continues_iterations_and_state(cartpole_run, tmp_path):
    run_dir, _ = cartpole_run
    ckpt = torch.load(run_dir / "model_40.pt", weights_only=False)
    resumed = train(
        cfg_for("task=cartpole", "num_envs=128", "max_iterations=0", f"resume={run_dir}"), tmp_path
    )
    assert resumed.iteration == 40
    state = resumed.alg.save()
    for key in ("actor_state_dict", "critic_state_dict"):
        for name, value in ckpt[key].items():
            assert torch.equal(state[key][name], value), name
    # the optimizer state and normalizer statistics come back too
    assert state["optimizer_state_dict"]["state"].keys() == ckpt["optimizer_state_dict"]["state"].keys()
    more = train(cfg_for("task=cartpole", "num_envs=128", "max_iterations=2", f"resume={run_dir}"),
                 tmp_path / "more")
    assert more.iteration == 42 and (tmp_path / "more" / "model_42.pt").is_file()


def test_same_seed_same_losses():
    def losses(seed):
        torch.manual_seed(seed)
        env = make("cartpole", 32, device="cpu", seed=seed)
        cfg = cfg_for("task=cartpole")
        from omegaconf import OmegaConf

        t = Trainer(env, OmegaConf.to_container(cfg.agent, resolve=True))
        t.learn(3, progress=False)
        return [(m["Loss/value"], m["Loss/surrogate"]) for m in t.history]

    a, b = losses(4), losses(4)
    assert a == b
    assert losses(5) != a


def test_sigterm_saves_a_final_checkpoint_and_resume_works(tmp_path):
    run_dir = tmp_path / "run"
    cmd = [sys.executable, str(ROOT / "train.py"), "task=cartpole", "num_envs=32",
           "max_iterations=100000", "progress=false", "device=cpu", f"hydra.run.dir={run_dir}"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    metrics = run_dir / "metrics.csv"
    deadline = time.time() + 120
    while time.time() < deadline and (not metrics.exists() or len(metrics.read_text().splitlines()) < 4):
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out.decode()[-2000:]
    done = len(metrics.read_text().splitlines()) - 1
    last = latest_checkpoint(run_dir)
    assert last.name == f"model_{done}.pt"
    assert torch.load(last, weights_only=False)["iter"] == done
    resumed = train(cfg_for("task=cartpole", "num_envs=32", "max_iterations=1", f"resume={run_dir}"),
                    tmp_path / "resumed")
    assert resumed.iteration == done + 1


def test_max_minutes_stops_training_with_a_checkpoint(tmp_path):
    """A time budget ends the run at the first iteration past it, saved like any other end."""
    trainer = train(cfg_for("task=cartpole", "num_envs=32", "max_iterations=1000",
                            "max_minutes=0.0001"), tmp_path)  # 6 ms: the first iteration
    assert trainer.iteration == 1 and len(trainer.history) == 1
    assert latest_checkpoint(tmp_path).name == "model_1.pt"
    with pytest.raises(ConfigError, match=r"max_minutes must be > 0"):
        train(cfg_for("task=cartpole", "num_envs=32", "max_minutes=0"), tmp_path / "zero")


# --- bad input ---------------------------------------------------------------------------------
def test_checkpoint_of_another_task_is_refused(cartpole_run):
    run_dir, _ = cartpole_run
    with pytest.raises(CheckpointError, match="trained on task 'cartpole', not 'quadruped'"):
        train(cfg_for("task=quadruped", "num_envs=4", "max_iterations=0", f"resume={run_dir}"),
              run_dir.parent / "wrong_task")


def test_checkpoint_of_another_obs_size_is_refused(cartpole_run, tmp_path):
    run_dir, _ = cartpole_run
    env = make("cartpole", 4, device="cpu",
               cfg={"observations": {"policy": [{"name": "cart_pos"}, {"name": "pole_angle"}]}})
    from omegaconf import OmegaConf

    t = Trainer(env, OmegaConf.to_container(cfg_for("task=cartpole").agent, resolve=True))
    with pytest.raises(CheckpointError, match=r"expects observations \{'policy': 4\}.*\{'policy': 2\}"):
        t.load(run_dir)


def test_corrupt_and_missing_checkpoints(tmp_path):
    bad = tmp_path / "model_3.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="could not read checkpoint"):
        train(cfg_for("task=cartpole", "num_envs=4", f"resume={bad}"), tmp_path / "a")
    empty = tmp_path / "empty_run"
    empty.mkdir()
    with pytest.raises(CheckpointError, match="holds no checkpoint"):
        train(cfg_for("task=cartpole", "num_envs=4", f"resume={empty}"), tmp_path / "b")


def test_unknown_override_and_task_names_are_clear(tmp_path):
    run = [sys.executable, str(ROOT / "train.py"), "device=cpu", f"hydra.run.dir={tmp_path}"]
    r = subprocess.run(run + ["num_env=8"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode != 0 and "num_env" in r.stderr
    r = subprocess.run(run + ["task=quadrupod"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode != 0 and "quadrupod" in r.stderr and "cartpole" in r.stderr
    r = subprocess.run(run + ["sim=physx"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode != 0 and "mjwarp" in r.stderr


def test_bad_device_and_num_envs(tmp_path):
    from simrl.errors import ConfigError

    with pytest.raises(ConfigError, match="requested but this machine has"):
        train(cfg_for("task=cartpole", "device=cuda:7"), tmp_path)
    with pytest.raises(ConfigError, match="num_envs must be an int >= 1, got -2"):
        train(cfg_for("task=cartpole", "num_envs=-2"), tmp_path)


def test_task_cfg_fields_override_without_plus_and_unknown_ones_list_the_valid(tmp_path):
    from simrl.errors import UnknownNameError

    cfg = cfg_for("task=quadruped", "task.cfg.push_vel=0.5", "task.cfg.lin_vel_x=[0.0,1.0]")
    assert cfg.task.cfg.push_vel == 0.5 and list(cfg.task.cfg.lin_vel_x) == [0.0, 1.0]
    assert cfg.task.cfg.resample_s == 5.0  # every other field shows its dataclass default
    env, _ = build_env(cfg_for("task=quadruped", "num_envs=2", "task.cfg.push_vel=0.5"))
    assert env.cfg.push_vel == 0.5 and env.cfg.resample_s == 5.0
    with pytest.raises(UnknownNameError, match=r"unknown QuadrupedCfg keys \['push_velocity'\]; "
                                               r"valid: .*'push_vel'"):
        build_env(cfg_for("task=quadruped", "num_envs=2", "task.cfg.push_velocity=0.5"))


def test_task_cfg_node_is_the_dataclass_defaults():
    """One source of truth: the composed task.cfg is asdict(Cfg()) for every task."""
    import dataclasses

    from omegaconf import OmegaConf

    from simrl.registry import TASKS, task_classes

    for task in TASKS:
        _, cfg_cls = task_classes(task)
        node = OmegaConf.to_container(cfg_for(f"task={task}").task.cfg)
        want = OmegaConf.to_container(OmegaConf.create(dataclasses.asdict(cfg_cls())))
        assert node == want, task


def test_logger_setting_picks_the_writer_and_refuses_missing_packages(tmp_path):
    import importlib.util

    from simrl.errors import ConfigError
    from simrl.rl.app import make_writer

    assert make_writer(cfg_for("task=cartpole"), tmp_path) is None  # TensorBoard: the Trainer's own
    for name in ("wandb", "neptune"):
        assert importlib.util.find_spec(name) is None, f"{name} is installed: this test needs it absent"
        msg = f"logger={name} needs the '{name}' package.*pip install {name}"
        with pytest.raises(ConfigError, match=msg):
            make_writer(cfg_for("task=cartpole", f"logger={name}"), tmp_path)
    with pytest.raises(ConfigError, match="unknown logger 'mlflow'; valid: tensorboard, wandb, neptune"):
        make_writer(cfg_for("task=cartpole", "logger=mlflow"), tmp_path)


def test_wandb_logger_receives_the_metrics(tmp_path):
    """logger=wandb goes through rsl-rl's WandbLogWriter (a stand-in wandb module records calls)."""
    stub = tmp_path / "stub"
    stub.mkdir()
    (stub / "wandb.py").write_text(
        "import json, os\n"
        "LOG = os.environ['WANDB_STUB_LOG']\n"
        "def _rec(*a, **k):\n"
        "    open(LOG, 'a').write(json.dumps([a[0] if a else None, sorted(k)], default=str) + '\\n')\n"
        "def init(**k): _rec('init', **k)\n"
        "def log(d, step=None): _rec('log', **d)\n"
        "def save(*a, **k): _rec('save')\n"
        "def finish(): _rec('finish')\n"
        "class _Cfg:\n    def update(self, d): _rec('config', **d)\n"
        "config = _Cfg()\n"
    )
    log = tmp_path / "calls.jsonl"
    env = {**os.environ, "PYTHONPATH": f"{stub}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "WANDB_STUB_LOG": str(log)}
    r = subprocess.run(
        [sys.executable, str(ROOT / "train.py"), "task=cartpole", "device=cpu", "num_envs=8",
         "max_iterations=2", "progress=false", "logger=wandb", "logger_project=simrl_test",
         f"hydra.run.dir={tmp_path / 'run'}"],
        cwd=ROOT, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr[-2000:]
    import json

    calls = [json.loads(line) for line in log.read_text().splitlines()]
    kinds = [c[0] for c in calls]
    assert kinds[0] == "init" and kinds[-1] == "finish" and "config" in kinds and "save" in kinds
    logged = {k for kind, keys in calls if kind == "log" for k in keys}
    assert "Train/mean_reward" in logged and "Loss/value" in logged
    assert any(p.name.startswith("events.out.tfevents") for p in (tmp_path / "run").iterdir())


def test_multirun_sweep_over_two_seeds_in_parallel(tmp_path):
    r = subprocess.run(
        [sys.executable, str(ROOT / "train.py"), "-m", "hydra/launcher=local", "task=cartpole",
         "seed=1,2", "num_envs=8", "max_iterations=1", "progress=false", "device=cpu",
         "sim=mujoco", "sim.kwargs.nthread=1", f"hydra.sweep.dir={tmp_path}"],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, "HYDRA_FULL_ERROR": "1"},
    )
    assert r.returncode == 0, r.stderr[-2000:]
    runs = sorted(p for p in Path(tmp_path).iterdir() if p.is_dir())
    assert [p.name for p in runs] == ["0_seed1", "1_seed2"]
    assert all((p / "model_1.pt").is_file() for p in runs)
    table = (tmp_path / "summary.md").read_text()
    assert "seed=1" in table and "seed=2" in table and "mean_reward" in table


def test_metrics_csv_widens_when_new_columns_appear(tmp_path):
    import csv

    from simrl.rl.metrics_csv import append_csv

    path = tmp_path / "metrics.csv"
    append_csv(path, {"iteration": 1, "mean_reward": 0.5})
    append_csv(path, {"iteration": 2, "mean_reward": 0.7, "Episode/length_s": 3.0})  # new column
    append_csv(path, {"iteration": 3, "Episode/length_s": 4.0, "mean_reward": 0.9})  # other order
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["iteration"] for r in rows] == ["1", "2", "3"]
    assert [r["Episode/length_s"] for r in rows] == ["", "3.0", "4.0"]
    assert [r["mean_reward"] for r in rows] == ["0.5", "0.7", "0.9"]
    assert not (tmp_path / "metrics.csv.tmp").exists()


def test_an_experiment_file_is_one_override_over_the_task_and_terrain():
    """experiment=rough_stairs: the rough grid with box stairs, the foot_clearance reward added
    to the task's own rewards (not replacing them), pushes every 4 s."""
    cfg = cfg_for("task=quadruped", "experiment=rough_stairs", "num_envs=2")
    env, _ = build_env(cfg)
    types = ["rough", "slope_up", "slope_down", "stairs_up", "stairs_down", "obstacles"]
    assert env.terrain.grid.cfg.types == types
    assert env.terrain.grid.cfg.box_types == ["stairs_up", "stairs_down"] and len(env.terrain.grid.boxes) > 0
    assert env.cfg.rewards["foot_clearance"] < 0 and env.cfg.rewards["track_lin_vel"] == 1.0
    assert env.legged.track_swing and env.cfg.push_interval_s == 4.0
    with pytest.raises(Exception, match="experiment"):
        cfg_for("experiment=no_such_stage")


def test_a_run_records_what_the_env_chose_and_replays_on_another_ground(tmp_path):
    """height_scan_size None is resolved by the terrain (one point on a plane): the run's config
    records the resolved size, so evaluating the checkpoint on stairs builds the same critic."""
    import simrl

    run = simrl.train("quadruped", "max_iterations=1", "num_envs=8", device="cpu", progress=False,
                      run_dir=tmp_path / "flat")
    saved = (tmp_path / "flat" / "config.yaml").read_text()
    assert "height_scan_size:\n    - 0.0\n    - 0.0" in saved, saved
    results = simrl.evaluate(run.run_dir, "terrain=stairs", "num_envs=2", "task.cfg.episode_length_s=1.2",
                             progress=False).results
    assert len(results) == 3 and all(r["episodes"] == 2 for r in results)
