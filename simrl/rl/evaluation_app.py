"""What eval.py (`simrl-eval`, `simrl.evaluate`) does: the metrics table of a checkpoint or an
exported policy, as a function of its (Hydra) config, configs/eval.yaml.

From a checkpoint, the run's env under the run's config with the evaluation overrides, one
episode per env under each command; from an exported policy.onnx, sim-to-sim through
simrl.deploy in MuJoCo C. Bad user input raises `simrl.errors` types. (Watching a policy, and its
clips, is simrl-play: simrl.viewer.)
"""

from __future__ import annotations

from typing import Any

from omegaconf import DictConfig, OmegaConf

from simrl.errors import ConfigError
from simrl.managers.action import parse_action_delay
from simrl.rl.app import build_env, policy_from_checkpoint, run_dir_config
from simrl.terrain import override_terrain


def episodes_per_command(cfg: DictConfig, default: int) -> int:
    """Episodes per command: `episodes`, the one setting of both eval modes; `num_envs`, its
    older name from a checkpoint's one-episode-per-env batch, must agree with it."""
    episodes, num_envs = cfg.get("episodes"), cfg.get("num_envs")
    if episodes is not None and num_envs is not None and episodes != num_envs:
        raise ConfigError(f"episodes={episodes} and num_envs={num_envs} disagree: both set the episodes "
                          f"per command in eval; pass only episodes=N")
    n = next((v for v in (episodes, num_envs) if v is not None), default)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ConfigError(f"episodes must be an int >= 1 (per command), got {n!r}")
    return n


def evaluate_app(cfg: DictConfig) -> list[dict[str, Any]]:
    """Evaluate a checkpoint on each command of cfg.commands; print and return the figures."""
    from simrl.rl.evaluate import evaluate

    if cfg.get("policy"):
        return evaluate_exported(cfg)
    if not cfg.checkpoint:
        raise ConfigError("eval needs checkpoint=PATH (a model_*.pt file or a run dir) or "
                          "policy=PATH/policy.onnx")
    run_cfg = run_dir_config(cfg.checkpoint)
    run_cfg.device = cfg.device
    run_cfg.num_envs = episodes_per_command(cfg, default=64)  # one episode per env and command
    run_cfg.seed = cfg.seed
    run_cfg.sim = cfg.sim if cfg.get("sim") else run_cfg.sim
    overrides = OmegaConf.to_container(cfg.task.cfg, resolve=True) if cfg.get("task") else {}
    task_cfg = OmegaConf.to_container(run_cfg.task.cfg, resolve=True)
    if "terrain" in overrides:  # task.cfg.terrain.<field>=... changes the run's own ground
        overrides["terrain"] = override_terrain(task_cfg.get("terrain"), overrides["terrain"])
    task_cfg.update(overrides)
    if not cfg.get("pushes", False) and "push_vel" in task_cfg:
        task_cfg["push_vel"] = 0.0
    if cfg.get("motor_strength") is not None:
        raise ConfigError("motor_strength is a sim-to-sim condition: evaluate the exported policy "
                          "(policy=<export>/policy.onnx), or here task.cfg.kp_scale=kd_scale="
                          "effort_scale=[s,s] (the policy's joints only)")
    run_cfg.task.cfg = task_cfg
    env, _ = build_env(run_cfg)
    level, kind = cfg.get("terrain_level"), cfg.get("terrain_type")
    if level is not None or kind is not None:
        if not hasattr(env, "terrain"):
            raise ConfigError(f"terrain_level/terrain_type need a task on terrain; "
                              f"{run_cfg.task.name} has none")
        env.terrain.set_tiles(level, kind)
    policy, ckpt = policy_from_checkpoint(env, cfg.checkpoint, OmegaConf.to_container(run_cfg.agent))
    print(f"simrl eval: {ckpt['path']} (iteration {ckpt.get('iter')}) on {run_cfg.task.name}, "
          f"{env.num_envs} episodes per command, backend {env.sim.backend}")
    commands = [tuple(c) for c in cfg.commands] if env.deploy_spec()["tracks_commands"] else [None]
    if cfg.get("terrain_tiles"):
        return evaluate_tiles(env, policy, commands[0], cfg.progress)
    results = []
    for command in commands:
        r = evaluate(env, policy, command=command, progress=cfg.progress)
        r["command"] = list(command) if command else None
        results.append(r)
        if command is None:
            print(f"  return {r['mean_return']:.2f} | episodes ended early "
                  f"{100 * r['fall_share']:.1f}%{_metrics(env, r)}")
        else:
            print(f"  cmd {list(command)}: return {r['mean_return']:.2f} | lin-vel error "
                  f"{r['lin_vel_error']:.3f} m/s | yaw-rate error {r['yaw_rate_error']:.3f} "
                  f"rad/s | falls {100 * r['fall_share']:.1f}%{_crossed(r)}")
    return results


def evaluate_tiles(env, policy, command, progress: bool = False) -> list[dict[str, Any]]:
    """eval.py terrain_tiles=true: every terrain type at a medium and the hardest level, under
    the first command: share of episodes that crossed the tile without a fall, tracking error."""
    from simrl.rl.evaluate import evaluate

    if getattr(getattr(env, "terrain", None), "grid", None) is None:
        raise ConfigError("terrain_tiles=true needs a run on a terrain grid (terrain=rough)")
    top = env.terrain.grid.num_levels - 1
    results = []
    print(f"  {'type':<12} {'level':>5} {'crossed':>8} {'falls':>6} {'lin-vel error':>14}  "
          f"cmd {list(command)}")
    for kind in env.terrain.grid.cfg.types:
        for level in sorted({top // 2, top}):
            env.terrain.set_tiles(level, kind)
            r = evaluate(env, policy, command=command, progress=progress)
            r.update(terrain_type=kind, terrain_level=level, command=list(command))
            results.append(r)
            print(f"  {kind:<12} {level:>5} {100 * r['crossed_share']:>7.1f}% {100 * r['fall_share']:>5.1f}% "
                  f"{r['lin_vel_error']:>10.3f} m/s")
    return results


def _metrics(env, r: dict) -> str:
    """The task's own metrics (success, final errors, a tracking mean such as a cube's turn
    rate), as eval prints them."""
    return "".join(f" | {k} {r[k]:.3f}" for k in (*env.METRIC_TERMS, *env.TRACKING_TERMS) if k in r)


def _crossed(r: dict) -> str:
    c = r.get("crossed_share")
    return "" if c is None or c != c else f" | crossed {100 * c:.1f}%"


def sim2sim_conditions(cfg: DictConfig) -> dict[str, Any]:
    """eval.py's test conditions for sim-to-sim: pushes=true with task.cfg.push_vel /
    push_interval_s, task.cfg.friction=[mu,mu], task.cfg.action_delay=[k,k] (control steps),
    motor_strength=<share of torque>, terrain=<name>, terrain_level/terrain_type."""
    over = OmegaConf.to_container(cfg.task.cfg, resolve=True) if cfg.get("task") else {}
    out: dict[str, Any] = {}
    if cfg.get("pushes"):
        out["push_vel"] = float(over.get("push_vel", 1.0))
        out["push_interval_s"] = float(over.get("push_interval_s", 4.0))
    if "friction" in over:
        lo, hi = over["friction"]
        if lo != hi:
            raise ConfigError("sim-to-sim takes one ground friction: task.cfg.friction=[mu,mu], "
                              f"got {[lo, hi]}")
        out["friction"] = float(lo)
    if "action_delay" in over:
        lo, hi = parse_action_delay(over["action_delay"])
        if lo != hi:
            raise ConfigError("sim-to-sim takes one action delay in control steps: "
                              f"task.cfg.action_delay=[k,k], got {[lo, hi]}")
        out["delay_steps"] = lo
    strength = cfg.get("motor_strength")
    if strength is not None:
        if isinstance(strength, bool) or not isinstance(strength, (int, float)) or not 0 < strength <= 1:
            raise ConfigError(f"motor_strength is the share of torque the motors give, in (0, 1] "
                              f"(0.7: 30% weaker), got {strength!r}")
        out["motor_strength"] = float(strength)
    if over.get("terrain") is not None:
        out["terrain"] = over["terrain"]
    level, kind = cfg.get("terrain_level"), cfg.get("terrain_type")
    if level is not None or kind is not None:
        out["tile"] = (level if level is not None else 0, kind if kind is not None else 0)
    return out


def evaluate_exported(cfg: DictConfig) -> list[dict[str, Any]]:
    """eval.py policy=policy.onnx: the exported policy through simrl.deploy in MuJoCo C."""
    from simrl.rl.sim2sim import exported_meta, run_sim2sim

    meta = exported_meta(cfg.policy)
    tracks = meta["deploy"]["tracks_commands"]
    commands = [tuple(c) for c in cfg.commands] if tracks else [(0.0, 0.0, 0.0)]
    episodes = episodes_per_command(cfg, default=10)
    print(f"simrl eval (sim-to-sim, MuJoCo C + onnxruntime): {cfg.policy} on {meta['task']}, "
          f"{episodes} episodes per command")
    results = []
    conditions = sim2sim_conditions(cfg)
    if "terrain" in conditions:  # as from a checkpoint: bare fields change the trained ground
        conditions["terrain"] = override_terrain(meta["deploy"].get("terrain"), conditions["terrain"])
    if conditions:
        print(f"  conditions: {conditions}")
    for command in commands:
        r = run_sim2sim(cfg.policy, command=command, episodes=episodes, seed=cfg.seed, **conditions)
        r["command"] = list(command) if tracks else None  # as eval from a checkpoint gives it
        results.append(r)
        if tracks:
            print(f"  cmd {list(command)}: lin-vel error {r['lin_vel_error']:.3f} m/s | yaw-rate "
                  f"error {r['yaw_rate_error']:.3f} rad/s | falls {100 * r['fall_share']:.1f}%{_crossed(r)}")
        else:
            named = ("success", "final_pos_error", "final_ori_error", "final_object_error", "lifted",
                     *meta["deploy"].get("metrics", {}))  # the success rule's, the metric twins'
            extra = "".join(f" | {k} {r[k]:.3f}" for k in named if k in r)
            print(f"  mean steps {r['mean_steps']:.1f} | episodes ended early "
                  f"{100 * r['fall_share']:.1f}%{extra}")
    return results
