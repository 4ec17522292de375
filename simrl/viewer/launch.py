"""`simrl-play` (play.py): watch a checkpoint or an exported policy in the browser viewer, the
native MuJoCo viewer, or as a clip (`video=true`: an MP4; a .gif path: a GIF)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from simrl.errors import ConfigError

VIEWERS = ("web", "native")


def check_robot(found: str | None, cfg: DictConfig, what: str) -> None:
    """A checkpoint or policy for another robot than `robot=` is refused, naming both."""
    robot = cfg.get("robot")
    wanted = robot.get("name") if robot else None
    if wanted and found != wanted:
        raise ConfigError(f"{what} drives robot '{found}', not '{wanted}': drop robot= or pass "
                          f"robot={found}, or a {what.split()[0]} trained on {wanted}")


def make_source(cfg: DictConfig) -> tuple[Any, str]:
    """(viewer source, a line saying what runs) for cfg.checkpoint or cfg.policy."""
    from simrl.viewer.sources import DeploySource, EnvSource

    worlds = int(cfg.num_envs)
    if worlds < 1:
        raise ConfigError(f"num_envs must be >= 1, got {worlds}")
    if not 0 <= int(cfg.env) < worlds:
        raise ConfigError(f"env={cfg.env} is past the {worlds} envs shown (num_envs={worlds}): "
                          f"pick 0-{worlds - 1} or raise num_envs")
    command = list(cfg.command)
    if cfg.get("policy") and cfg.get("checkpoint"):
        raise ConfigError("pass checkpoint=<run> (the training env) or policy=<policy.onnx> (the "
                          "deploy runtime), not both")
    if cfg.get("policy"):
        from simrl.rl.sim2sim import exported_meta

        meta = exported_meta(cfg.policy)
        check_robot((meta.get("robot") or {}).get("name", meta.get("task")), cfg,
                    f"policy '{cfg.policy}'")
        source = DeploySource(cfg.policy, num_envs=worlds, seed=int(cfg.seed), command=command)
        return source, f"{cfg.policy} ({meta['task']}) through simrl.deploy in MuJoCo C"
    if not cfg.get("checkpoint"):
        raise ConfigError("play needs checkpoint=PATH (a run dir or model_*.pt) or "
                          "policy=PATH/policy.onnx; simrl-demo shows a shipped policy")
    from simrl.rl.app import _env_for_checkpoint, policy_from_checkpoint
    from simrl.rl.checkpoint import latest_checkpoint

    ckpt = latest_checkpoint(cfg.checkpoint)
    task_cfg = OmegaConf.to_container(cfg.task.cfg, resolve=True) if cfg.get("task") else {}
    env, run_cfg = _env_for_checkpoint(ckpt, device=cfg.device, num_envs=worlds, seed=int(cfg.seed),
                                       sim=cfg.sim if cfg.get("sim") else None, task_cfg=task_cfg)
    scene = getattr(env, "scene", None)
    check_robot(scene.robot.name if scene is not None else run_cfg.task.name, cfg,
                f"checkpoint '{ckpt}'")
    policy, info = policy_from_checkpoint(env, ckpt, OmegaConf.to_container(run_cfg.agent))
    source = EnvSource(env, policy)
    if source.command is not None:
        source.set_command(command)
    return source, f"{ckpt} (iteration {info.get('iter')}, {run_cfg.task.name}) on {env.sim.backend}"


def has_display() -> bool:
    return sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or
                                                         os.environ.get("WAYLAND_DISPLAY"))


def play(cfg: DictConfig) -> Any:
    """Show cfg's policy: a clip (video=true), the native viewer, or the browser viewer."""
    if cfg.viewer not in VIEWERS:
        raise ConfigError(f"unknown viewer '{cfg.viewer}'; valid: {', '.join(VIEWERS)}")
    if cfg.viewer == "native" and not cfg.get("video") and not has_display():
        raise ConfigError("viewer=native needs a display (DISPLAY is unset): use viewer=web and open "
                          "the printed address in a browser, or video=true for a clip")
    source, what = make_source(cfg)
    print(f"simrl play: {what}, {source.num_worlds} env(s)")
    if cfg.get("video"):
        from simrl.viewer.record import record

        path = Path(cfg.video_path) if cfg.get("video_path") else default_clip(cfg)
        out = record(source, path, seconds=float(cfg.video_s), width=int(cfg.video_width),
                     height=int(cfg.video_height), progress=bool(cfg.progress))
        print(f"simrl play: wrote {out}")
        return out
    if cfg.viewer == "native":
        from simrl.viewer.native import run_native

        return run_native(source, seconds=cfg.get("seconds"), follow=int(cfg.env))
    return serve(source, cfg)


def default_clip(cfg: DictConfig) -> Path:
    if cfg.get("checkpoint"):
        from simrl.rl.checkpoint import latest_checkpoint

        return latest_checkpoint(cfg.checkpoint).parent / "videos" / "play.mp4"
    return Path(cfg.policy).parent / "play.mp4"


def serve(source: Any, cfg: DictConfig) -> Any:
    """The browser viewer until Ctrl+C (or cfg.seconds)."""
    from simrl.viewer.web import WebViewer

    viewer = WebViewer(source, port=int(cfg.port), host=str(cfg.host), follow=int(cfg.env))
    print(f"simrl play: open {viewer.url} in a browser (Ctrl+C stops)")
    if cfg.get("open_browser") and has_display():
        import webbrowser

        webbrowser.open(viewer.url)
    try:
        viewer.run(seconds=cfg.get("seconds"))
    except KeyboardInterrupt:
        print("simrl play: stopped")
    finally:
        viewer.close()
    return viewer
