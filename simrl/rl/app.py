"""What train.py and export.py do, as functions of their (Hydra) config, and what the other
apps share with them: the env and the policy a checkpoint was trained with (eval.py's metrics
table is `simrl.rl.evaluation_app`).

Tests and `simrl.api` call these directly. Bad user input raises `simrl.errors` types (the
apps print those as one line); importing this module registers the task config nodes with
Hydra (`simrl.config.register_configs`), so composing `train` gives `task.cfg` every field.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf, open_dict

from simrl.config import register_configs
from simrl.errors import ConfigError, UnknownNameError
from simrl.registry import make
from simrl.rl.checkpoint import CheckpointError, checkpoints, dist_info, latest_checkpoint, load_checkpoint
from simrl.rl.metrics_csv import truncate_csv
from simrl.rl.runner import Trainer
from simrl.sim import resolve_device

register_configs()

# logger setting -> (package it needs, rsl-rl writer class); tensorboard is the Trainer's own
LOGGERS: dict[str, tuple[str, str] | None] = {
    "tensorboard": None,
    "wandb": ("wandb", "rsl_rl.utils.wandb_log_writer:WandbLogWriter"),
    "neptune": ("neptune", "rsl_rl.utils.neptune_log_writer:NeptuneLogWriter"),
}


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def _per_device(value: Any, kind: str) -> Any:
    if isinstance(value, (dict, DictConfig)):
        return value[kind]
    return value


def build_env(cfg: DictConfig, num_envs: int | None = None, seed: int | None = None):
    world, rank, local = dist_info()
    try:  # it only parses and checks the user's string: a ValueError is a bad device
        device = resolve_device(cfg.device)
    except ValueError as e:
        raise ConfigError(str(e)) from e
    if world > 1 and device.type == "cuda" and cfg.device in ("auto", "cuda"):
        device = resolve_device(f"cuda:{local}")  # torchrun: one GPU per rank
    kind = "cuda" if device.type == "cuda" else "cpu"
    n = num_envs if num_envs is not None else cfg.num_envs
    n = _per_device(cfg.task.num_envs, kind) if n is None else n
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ConfigError(f"num_envs must be an int >= 1, got {n!r}: pass num_envs=N, or "
                          "num_envs=null for the task's default on the device")
    sim_kwargs = {k: v for k, v in OmegaConf.to_container(cfg.sim.kwargs).items() if v is not None}
    if world > 1 and device.type == "cpu":
        from simrl.sim.mujoco_backend import default_nthread  # share the cores between ranks

        local_world = int(os.environ.get("LOCAL_WORLD_SIZE", world))
        share = max(1, default_nthread() // local_world)
        sim_kwargs["nthread"] = sim_kwargs.get("nthread") or share  # 0 (all CPUs) -> a share
        torch.set_num_threads(share)  # the PPO update too: N ranks x all cores oversubscribes
    if seed is None:
        seed = cfg.seed + rank  # ranks explore differently
    env = make(
        cfg.task.name, num_envs=int(n), device=str(device), backend=cfg.sim.backend,
        seed=seed, cfg=OmegaConf.to_container(cfg.task.get("cfg") or {}, resolve=True), sim=sim_kwargs,
        robot=_robot(cfg),
    )
    return env, kind


def _inline_robot_file(cfg: DictConfig) -> None:
    """A robot yaml given by path (task.cfg.robot=/path, robot=/path) goes into the run's config
    by value, so the run replays after the file moves or changes."""
    from simrl.scene import load_robot, robot_names

    node = cfg.task.get("cfg")
    robot = node.get("robot") if node is not None else None
    if isinstance(robot, str) and robot not in robot_names():
        with open_dict(cfg):
            cfg.task.cfg.robot = load_robot(robot).to_dict()


def _robot(cfg: DictConfig) -> dict | None:
    """The robot=<name> choice (configs/robot/<name>.yaml) as plain data; None: the task's."""
    robot = cfg.get("robot")
    return OmegaConf.to_container(robot, resolve=True) if isinstance(robot, DictConfig) else robot


def make_writer(cfg: DictConfig, run_dir: Path | None):
    """rsl-rl's W&B or Neptune writer for `logger=wandb|neptune`; None for TensorBoard."""
    name = cfg.get("logger") or "tensorboard"
    if name not in LOGGERS:
        raise ConfigError(f"unknown logger '{name}'; valid: {', '.join(LOGGERS)}")
    if LOGGERS[name] is None:
        return None
    package, writer_ref = LOGGERS[name]
    if importlib.util.find_spec(package) is None:  # checked before the env is built
        raise ConfigError(f"logger={name} needs the '{package}' package, which is not installed: "
                          f"pip install {package}, or use logger=tensorboard")
    if run_dir is None:  # not rank 0: nothing to write
        return None
    module, cls = writer_ref.split(":")
    writer_cls = getattr(importlib.import_module(module), cls)  # imports the package only now
    return writer_cls(log_dir=str(run_dir), project_name=str(cfg.get("logger_project") or "simrl"))


def train(cfg: DictConfig, run_dir: str | Path) -> Trainer:
    """Train cfg.task; write config, checkpoints, TensorBoard logs and metrics into run_dir."""
    run_dir = Path(run_dir)
    world, rank, _ = dist_info()
    make_writer(cfg, None)  # a bad or missing logger fails before the env is built
    seed_everything(cfg.seed + rank)
    _inline_robot_file(cfg)
    env, kind = build_env(cfg)
    iterations = cfg.max_iterations
    if iterations is None:
        iterations = _per_device(cfg.task.max_iterations, kind)
    resolved = env.resolved_cfg()  # what the env chose for None fields: a replay builds the same inputs
    if resolved:
        cfg.task.cfg = {**OmegaConf.to_container(cfg.task.get("cfg") or {}, resolve=True), **resolved}
    agent = OmegaConf.to_container(cfg.agent, resolve=True)
    if cfg.get("symmetry"):  # every mini-batch also trains on its left-right mirror image
        from simrl.rl.symmetry import symmetry_cfg

        env.mirror_maps()  # a robot or task without a mirror stops here, in one line
        agent["algorithm"]["symmetry_cfg"] = symmetry_cfg()
    if rank == 0:  # under torchrun only rank 0 writes
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "config.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True))
    infos = {"config": OmegaConf.to_container(cfg, resolve=True), "obs_layout": obs_layout(env)}
    trainer = Trainer(env, agent, run_dir=run_dir if rank == 0 else None, infos=infos)
    trainer.video_interval = int(cfg.get("video_interval") or 0)
    trainer.max_unstable_share = float(cfg.get("max_unstable_share") or 1.0)
    iterations = _resume(cfg, trainer, run_dir, int(iterations), rank)
    if iterations is None:  # a stopped run found complete: nothing to do
        return trainer
    writer = make_writer(cfg, run_dir if rank == 0 else None)
    if writer is not None:  # the Trainer logs through it instead of its own SummaryWriter
        writer.store_config(env.cfg, agent)
        trainer.writer = writer
    ranks = f" | rank {rank} of {world}" if world > 1 else ""
    print(f"simrl: {cfg.task.name} | {env.num_envs} envs | backend {env.sim.backend} on "
          f"{env.device} | {iterations} iterations | run dir {run_dir}{ranks}")
    viewer = None
    if cfg.get("viewer") and rank == 0:  # reads world 0 beside the run; changes nothing it computes
        from simrl.viewer.attach import watch_training

        viewer = watch_training(env, port=int(cfg.get("viewer_port", 8080)),
                                rate_hz=float(cfg.get("viewer_hz", 10)))
    try:
        trainer.learn(int(iterations), progress=cfg.progress, max_minutes=cfg.get("max_minutes"))
    finally:
        if viewer is not None:
            viewer.close()
        if writer is not None:
            if trainer.iteration:
                writer.save_model(str(latest_checkpoint(run_dir)), trainer.iteration)
            writer.stop()
    last = trainer.history[-1] if trainer.history else {}
    summary = {k: last.get(k) for k in ("iteration", "env_steps", "mean_reward", "mean_episode_length")}
    if rank == 0:
        (run_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    if torch.distributed.is_initialized():
        # leave together: rank 0 hosts the rendezvous store, and a rank whose gloo peers vanish
        # mid-teardown aborts (SIGABRT, one 2-rank run in ~8 in the test suite)
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()
    return trainer


def _resume(cfg: DictConfig, trainer: Trainer, run_dir: Path, iterations: int,
            rank: int) -> int | None:
    """Load what `resume=` names, or, where `run_dir` already holds checkpoints (a run stopped
    or killed there, started again with the same `hydra.run.dir`), its newest readable one;
    return the iterations to run (None: that run is already complete).

    `resume=` runs `iterations` more. A stopped run started again runs on to the iteration it
    was started for (`run.json`), so rerunning a killed job's command finishes that job. A run
    that continues in its own dir drops the rows and TensorBoard events past its checkpoint, so
    no iteration is lost or logged twice.
    """
    own = checkpoints(run_dir)
    auto = not cfg.resume and bool(own)
    if not cfg.resume and not own:
        _write_run_json(run_dir, 0, iterations, rank)
        return iterations
    if auto:
        candidates = own[::-1]
    else:
        named = latest_checkpoint(cfg.resume)
        candidates = [named]
    ckpt = None
    for i, path in enumerate(candidates):
        try:
            ckpt = trainer.load(path)
            break
        except CheckpointError as e:
            if i + 1 == len(candidates):
                raise
            print(f"simrl: skipping unreadable checkpoint {path.name} ({e})")
    done = trainer.iteration
    same_dir = Path(ckpt["path"]).parent.resolve() == run_dir.resolve()
    state = ("learner, envs and random state: it continues bit for bit" if ckpt["env_restored"]
             else f"learner only; the envs start fresh: {ckpt['env_note']}")
    if auto:
        target = _read_run_json(run_dir).get("target_iteration", iterations)
        print(f"simrl: run dir {run_dir} holds a stopped run at iteration {done} "
              f"({Path(ckpt['path']).name}): resuming it to iteration {target} ({state})")
        iterations = max(0, target - done)
    else:
        print(f"simrl: resumed from {ckpt['path']} at iteration {done} ({state})")
        _write_run_json(run_dir, done, iterations, rank)
    if same_dir and rank == 0:
        for tmp in run_dir.glob("*.tmp"):  # a write the stopped run never finished
            tmp.unlink()
        truncate_csv(run_dir / "metrics.csv", done)
        trainer.purge_step = done + 1
    if auto and iterations == 0:
        print(f"simrl: that run is complete; pass resume={run_dir} max_iterations=N to train N more")
        return None
    return iterations


def _read_run_json(run_dir: Path) -> dict:
    try:
        return json.loads((run_dir / "run.json").read_text())
    except (OSError, ValueError):
        return {}


def _write_run_json(run_dir: Path, start: int, iterations: int, rank: int) -> None:
    """The iteration this run was started for, so that a rerun of a killed job finishes it."""
    if rank == 0:
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "run.json").write_text(json.dumps(
            {"start_iteration": start, "target_iteration": start + iterations}))


def obs_layout(env) -> dict[str, list[dict[str, Any]]]:
    """The observation layout as plain data (term, start, stop, scale, noise, history, clip,
    delay) per group."""
    return {
        g: [{"name": t.name, "start": t.slice.start, "stop": t.slice.stop, "scale": t.scale,
             "noise": t.noise, "history": t.history, "clip": t.clip, "delay": t.delay}
            for t in layout]
        for g, layout in env.obs_layout.items()
    }


def run_dir_config(path: str | Path) -> DictConfig:
    """The resolved config a run dir (or a checkpoint inside one) was trained with."""
    ckpt = latest_checkpoint(path)
    cfg_file = ckpt.parent / "config.yaml"
    if cfg_file.is_file():
        return _as_trained(OmegaConf.load(cfg_file))
    infos = load_checkpoint(ckpt).get("infos") or {}
    if "config" not in infos:
        raise CheckpointError(f"no config.yaml beside '{ckpt}' and none stored in it: pass the "
                              "run dir train.py wrote, or a checkpoint inside it")
    return _as_trained(OmegaConf.create(infos["config"]))


def _as_trained(cfg: DictConfig) -> DictConfig:
    """A saved run's config with every task field it predates set to the value that reproduces
    it (the config class's `since`): a run saved before action delays existed replays without
    one, rather than under today's default."""
    from simrl.registry import task_classes

    try:
        _, cfg_cls = task_classes(cfg.task.name)
    except (UnknownNameError, AttributeError):
        return cfg
    saved = cfg.task.get("cfg") or {}
    if "observations" not in saved:  # not a full saved task config: nothing to infer
        return cfg
    for key, value in getattr(cfg_cls, "since", {}).items():
        if key not in saved:
            saved[key] = value
    terrain = saved.get("terrain")
    if isinstance(terrain, Mapping) and terrain.get("name") == "grid" and "box_types" not in terrain:
        terrain["box_types"] = []  # grids saved before box tiles existed were all height field
    cfg.task.cfg = saved
    return cfg


def policy_from_checkpoint(env, checkpoint: str | Path, agent_cfg: dict):
    """(policy fn over obs dicts, checkpoint dict) for `env` from a checkpoint or run dir."""
    from tensordict import TensorDict

    trainer = Trainer(env, agent_cfg)
    ckpt = trainer.load(checkpoint)
    net = trainer.policy()
    # curricula that follow training time (a reference gait's fade) take the checkpoint's
    steps = int(ckpt.get("iter", 0)) * int(agent_cfg["num_steps_per_env"])
    for term in env.curriculum_manager.terms.values():
        if hasattr(term, "set_step"):
            term.set_step(steps)

    def policy(obs: dict) -> torch.Tensor:
        return net(TensorDict(dict(obs), batch_size=[env.num_envs]))

    policy.actor = net
    return policy, ckpt


def _env_for_checkpoint(checkpoint, device="cpu", num_envs=64, seed=0, sim=None, task_cfg=None):
    """The env a checkpoint was trained on (its run's config), rebuilt for evaluation/export."""
    run_cfg = run_dir_config(checkpoint)
    run_cfg.device, run_cfg.num_envs, run_cfg.seed = device, num_envs, seed
    if sim is not None:
        run_cfg.sim = sim
    cfg = OmegaConf.to_container(run_cfg.task.cfg, resolve=True)
    cfg.update(task_cfg or {})
    run_cfg.task.cfg = cfg
    env, _ = build_env(run_cfg)
    return env, run_cfg


def export(cfg: DictConfig) -> dict[str, Any]:
    """Export cfg.checkpoint to ONNX (always) and TensorRT (format=tensorrt); verify both."""
    from simrl.rl.export import FORMATS, build_tensorrt, export_onnx

    if cfg.format not in FORMATS:
        raise ConfigError(f"unknown export format '{cfg.format}'; valid: {', '.join(FORMATS)}")
    if not cfg.checkpoint:
        raise ConfigError("export needs checkpoint=PATH (a model_*.pt file or a run dir)")
    ckpt_path = latest_checkpoint(cfg.checkpoint)
    env, run_cfg = _env_for_checkpoint(ckpt_path, device="cpu", num_envs=cfg.num_envs, seed=cfg.seed)
    policy, ckpt = policy_from_checkpoint(env, ckpt_path, OmegaConf.to_container(run_cfg.agent))
    out_dir = Path(cfg.out_dir) if cfg.out_dir else ckpt_path.parent / "export"
    report = export_onnx(env, policy.actor, ckpt_path, out_dir, num_check=cfg.num_check)
    print(f"simrl export: {report['onnx']} verified on {report['num_checked']} observations, "
          f"max |onnx - torch| = {report['max_abs_diff']:.2e}")
    if cfg.format == "tensorrt":
        report["tensorrt"] = build_tensorrt(report["onnx"], cfg.precision)
        print(f"simrl export: TensorRT {cfg.precision} engine {report['tensorrt']}")
    return report
