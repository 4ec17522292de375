"""Runs saved before a task field existed replay as they were trained, not under new defaults."""

from __future__ import annotations

import shutil

from omegaconf import OmegaConf

from simrl.rl.app import _env_for_checkpoint, run_dir_config


def test_a_run_saved_before_the_realism_fields_replays_without_them(quad_export, tmp_path):
    quad_dir, _ = quad_export
    old = tmp_path / "old_run"
    old.mkdir()
    cfg = OmegaConf.load(quad_dir / "config.yaml")
    assert list(cfg.task.cfg.action_delay) == [0, 1]  # today's default, saved with the run
    for key in ("action_delay", "kp_scale", "com_offset", "history", "terrain"):
        del cfg.task.cfg[key]  # as a config.yaml written before these fields existed
    OmegaConf.save(cfg, old / "config.yaml")
    shutil.copy(quad_dir / "model_1.pt", old / "model_1.pt")

    loaded = run_dir_config(old)
    assert list(loaded.task.cfg.action_delay) == [0, 0] and list(loaded.task.cfg.kp_scale) == [1.0, 1.0]
    assert loaded.task.cfg.com_offset == 0.0 and loaded.task.cfg.terrain == "flat"
    env, _ = _env_for_checkpoint(old / "model_1.pt", num_envs=2)
    assert env.action_manager.queue.shape[1] == 1 and list(env.cfg.kp_scale) == [1.0, 1.0]
    gain = env.sim.param("actuator_gainprm")[:, :, 0]
    assert (gain == gain[0]).all()  # no per-env gains drawn

    new = run_dir_config(quad_dir)  # a run saved with the fields keeps its own values
    assert list(new.task.cfg.action_delay) == [0, 1]


def test_a_grid_saved_before_box_tiles_replays_as_height_field_only(quad_export, tmp_path):
    quad_dir, _ = quad_export
    old = tmp_path / "old_grid_run"
    old.mkdir()
    cfg = OmegaConf.load(quad_dir / "config.yaml")
    cfg.task.cfg.terrain = {"name": "grid", "types": ["stairs_up"], "num_levels": 1}  # no `box_types`
    OmegaConf.save(cfg, old / "config.yaml")
    shutil.copy(quad_dir / "model_1.pt", old / "model_1.pt")
    assert list(run_dir_config(old).task.cfg.terrain.box_types) == []
    cfg.task.cfg.terrain.box_types = ["stairs_up"]
    OmegaConf.save(cfg, old / "config.yaml")
    # saved with the field: its own
    assert list(run_dir_config(old).task.cfg.terrain.box_types) == ["stairs_up"]
