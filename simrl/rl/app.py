"""What train.py and play.py do, as functions of their (Hydra) config, so tests can call them."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf

from simrl.registry import make
from simrl.rl.runner import Trainer, latest_checkpoint, load_checkpoint
from simrl.sim import resolve_device


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def _per_device(value: Any, kind: str) -> Any:
    if isinstance(value, (dict, DictConfig)):
        return value[kind]
    return value


def build_env(cfg: DictConfig, num_envs: int | None = None, seed: int | None = None):
    device = resolve_device(cfg.device)
    kind = "cuda" if device.type == "cuda" else "cpu"
    n = num_envs or cfg.num_envs or _per_device(cfg.task.num_envs, kind)
    sim_kwargs = {k: v for k, v in OmegaConf.to_container(cfg.sim.kwargs).items() if v is not None}
    env = make(
        cfg.task.name, num_envs=int(n), device=str(device), backend=cfg.sim.backend,
        seed=cfg.seed if seed is None else seed,
        cfg=OmegaConf.to_container(cfg.task.cfg, resolve=True), sim=sim_kwargs,
    )
    return env, kind


def train(cfg: DictConfig, run_dir: str | Path) -> Trainer:
    """Train cfg.task; write config, checkpoints, TensorBoard logs and metrics into run_dir."""
    run_dir = Path(run_dir)
    seed_everything(cfg.seed)
    env, kind = build_env(cfg)
    iterations = cfg.max_iterations or _per_device(cfg.task.max_iterations, kind)
    agent = OmegaConf.to_container(cfg.agent, resolve=True)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True))
    infos = {"config": OmegaConf.to_container(cfg, resolve=True), "obs_layout": obs_layout(env)}
    trainer = Trainer(env, agent, run_dir=run_dir, infos=infos)
    if cfg.resume:
        ckpt = trainer.load(cfg.resume)
        print(f"simrl: resumed from {ckpt['path']} at iteration {trainer.iteration}")
    print(f"simrl: {cfg.task.name} | {env.num_envs} envs | backend {env.sim.backend} on "
          f"{env.device} | {iterations} iterations | run dir {run_dir}")
    trainer.learn(int(iterations), progress=cfg.progress)
    last = trainer.history[-1] if trainer.history else {}
    summary = {k: last.get(k) for k in ("iteration", "env_steps", "mean_reward", "mean_episode_length")}
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    return trainer


def obs_layout(env) -> dict[str, list[dict[str, Any]]]:
    """The observation layout as plain data (term, start, stop, scale, noise) per group."""
    return {
        g: [{"name": n, "start": s.start, "stop": s.stop, "scale": sc, "noise": no}
            for n, s, sc, no in layout]
        for g, layout in env.obs_layout.items()
    }


def run_dir_config(path: str | Path) -> DictConfig:
    """The resolved config a run dir (or a checkpoint inside one) was trained with."""
    ckpt = latest_checkpoint(path)
    cfg_file = ckpt.parent / "config.yaml"
    if cfg_file.is_file():
        return OmegaConf.load(cfg_file)
    infos = load_checkpoint(ckpt).get("infos") or {}
    if "config" not in infos:
        raise FileNotFoundError(f"no config.yaml beside '{ckpt}' and none stored in it")
    return OmegaConf.create(infos["config"])
