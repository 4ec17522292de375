"""A PPO iteration of the quadruped split into physics, task logic, policy/storage and the
update, optionally alternated with the task under other config fields (the iteration mode)."""

from __future__ import annotations

import statistics
from argparse import Namespace

from simrl.bench.env import timed


def quadruped_agent() -> dict:
    """The rsl-rl config `train.py task=quadruped` uses (networks as trained)."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf

    from simrl.paths import CONFIGS

    with initialize_config_dir(config_dir=str(CONFIGS), version_base=None):
        return OmegaConf.to_container(compose("train", overrides=["task=quadruped"]).agent, resolve=True)


def bench_iteration(n: int, iterations: int, device: str, backend: str, nthread: int,
                    cfg: dict | None = None) -> dict:
    """Seconds per PPO iteration split into physics, task logic, policy/storage and update
    (`cfg`: quadruped task fields over the defaults)."""
    from simrl.registry import make
    from simrl.rl.runner import Trainer

    kw = {"nthread": nthread} if backend == "mujoco" else {}
    env = make("quadruped", num_envs=n, device=device, backend=backend, sim=kw, cfg=cfg)
    agent = quadruped_agent()
    trainer = Trainer(env, agent)
    trainer.learn(1, progress=False)  # warm-up (graph capture, allocation)
    with timed(env) as timers:
        hist = trainer.learn(iterations, progress=False)[-iterations:]
    collect = sum(m["collect_s"] for m in hist)
    learn = sum(m["learn_s"] for m in hist)
    total = collect + learn
    physics, env_step = timers["physics"], timers["env_step"]
    return {"num_envs": n, "iteration_s": total / iterations,
            "steps_per_s": n * agent["num_steps_per_env"] * iterations / total,
            "physics": physics / total, "task": (env_step - physics) / total,
            "policy_storage": (collect - env_step) / total, "ppo_update": learn / total}


def run(args: Namespace) -> None:
    """The iteration mode: one table row per size (and per alternation with `versus`)."""
    from simrl.sim import resolve_device

    dev = resolve_device(args.device)
    backend = args.backend if args.backend != "auto" else ("mjwarp" if dev.type == "cuda" else "mujoco")
    print(f"PPO iteration time shares, quadruped, backend {backend} on {dev}")
    print(f"{'envs':>7} {'s/iter':>8} {'steps/s':>10} {'physics':>8} {'task':>6} "
          f"{'policy+storage':>15} {'PPO update':>11}")
    versus = args.versus
    other = " ".join(f"{k}={v}" for k, v in versus.items())
    for n in args.num_worlds:
        times: dict[str, list[float]] = {"default": [], "versus": []}
        for _ in range(args.repeats if versus else 1):
            for label in ("default", "versus") if versus else ("default",):
                r = bench_iteration(n, 2 if args.quick else 5, str(dev), backend, args.nthread,
                                    versus if label == "versus" else None)
                times[label].append(r["iteration_s"])
                name = f"{n}" if label == "default" else f"{n} {other}"
                print(f"{name:>7} {r['iteration_s']:>8.2f} {r['steps_per_s']:>10,.0f} "
                      f"{r['physics']:>8.0%} {r['task']:>6.0%} {r['policy_storage']:>15.0%} "
                      f"{r['ppo_update']:>11.0%}")
        if versus:
            a, b = statistics.median(times["default"]), statistics.median(times["versus"])
            print(f"median s/iter over {args.repeats} alternations: default {a:.3f}, {other} "
                  f"{b:.3f}: default/versus {a / b:.3f}")
