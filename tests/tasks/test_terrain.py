"""Terrain grid, curriculum and height scans (simrl.terrain), and the locomotion task on it."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
import torch

import simrl
from simrl.errors import ConfigError, UnknownNameError
from simrl.scene import assemble
from simrl.terrain import TerrainCfg, generate, terrain_from
from simrl.terrain.curriculum import next_levels
from simrl.terrain.heights import HeightField

GRID = {"name": "grid", "num_levels": 3, "tile_size": 4.0, "border": 1.0, "platform": 1.0}


def tile(terrain, level: int, kind: str) -> np.ndarray:
    """The height samples of one tile."""
    n = round(terrain.cfg.tile_size / terrain.hs)
    b = round(terrain.cfg.border / terrain.hs)
    j = terrain.cfg.types.index(kind)
    return terrain.heights[b + j * n : b + (j + 1) * n, b + level * n : b + (level + 1) * n]


def test_same_seed_same_terrain_other_seed_other_rubble():
    a, b = generate(terrain_from(GRID)), generate(terrain_from(GRID))
    np.testing.assert_array_equal(a.heights, b.heights)
    c = generate(terrain_from({**GRID, "seed": 1}))
    assert not np.array_equal(tile(a, 2, "rough"), tile(c, 2, "rough"))
    np.testing.assert_array_equal(tile(a, 2, "stairs_up"), tile(c, 2, "stairs_up"))  # no randomness


def test_stairs_have_the_configured_step_height_at_each_level():
    cfg = terrain_from({**GRID, "step_height": (0.05, 0.15)})
    t = generate(cfg)
    for level, want in zip(range(3), (0.05, 0.10, 0.15), strict=True):
        for kind in ("stairs_up", "stairs_down"):
            row = tile(t, level, kind)[tile(t, level, kind).shape[0] // 2]  # through the centre
            steps = np.abs(np.diff(row))
            risers = steps[steps > 1e-6]
            np.testing.assert_allclose(risers, want, atol=1e-5)  # every riser one step high
            # step treads are step_width long: risers 0.3 m apart
            where = np.nonzero(steps > 1e-6)[0]
            np.testing.assert_allclose(np.diff(where[where < len(row) // 2]) * t.hs, 0.3, atol=t.hs)
    assert t.origins[2, cfg.types.index("stairs_up"), 2] == pytest.approx(
        tile(t, 2, "stairs_up").max())  # envs start on top of the up-pyramid


def test_slopes_rise_at_the_configured_grade():
    t = generate(terrain_from({**GRID, "slope": (0.1, 0.3)}))
    for level, want in zip(range(3), (0.1, 0.2, 0.3), strict=True):
        row = tile(t, level, "slope_up")
        row = row[row.shape[0] // 2]
        grade = np.diff(row[: len(row) // 4]) / t.hs  # the outer quarter: on the slope
        np.testing.assert_allclose(grade, want, atol=1e-5)
        assert tile(t, level, "slope_down").min() == pytest.approx(-tile(t, level, "slope_up").max())


def test_boxes_rise_to_every_boxed_sample_and_stack_one_per_step():
    t = generate(terrain_from({**GRID, "box_types": ["stairs_up", "stairs_down"]}))
    top = np.full(t.heights.shape, -np.inf)  # the highest box top over each sample
    for r0, r1, c0, c1, h in t.boxes:
        r0, r1, c0, c1 = int(r0), int(r1), int(c0), int(c1)
        top[r0:r1, c0:c1] = np.maximum(top[r0:r1, c0:c1], h)
    np.testing.assert_allclose(top[t.boxed], t.heights[t.boxed])  # the ground a foot meets
    assert np.isinf(top[~t.boxed]).all()  # height-field samples: no box
    # the boxed stairs are boxes; rubble, slopes and obstacles are the height field's
    n, b = round(t.cfg.tile_size / t.hs), round(t.cfg.border / t.hs)
    for kind, boxed in (("stairs_up", True), ("stairs_down", True), ("obstacles", False),
                        ("rough", False), ("slope_up", False)):
        j = t.cfg.types.index(kind)
        assert t.boxed[b + j * n : b + (j + 1) * n, b : b + n].all() == boxed, kind
    assert not t.boxed[0].any() and not t.boxed[:, -1].any()  # the border: height field
    # a pyramid of k steps is k + 1 stacked boxes (the ground level included); a pit 4 a ring
    for kind, per_step in (("stairs_up", 1), ("stairs_down", 4)):
        j = t.cfg.types.index(kind)
        steps = len(np.unique(tile(t, 2, kind))) - 1
        r0, c0 = b + j * n, b + 2 * n
        inside = ((t.boxes[:, 0] >= r0) & (t.boxes[:, 1] <= r0 + n)
                  & (t.boxes[:, 2] >= c0) & (t.boxes[:, 3] <= c0 + n))
        assert steps >= 3 and inside.sum() == 1 + per_step * steps, kind
    assert generate(terrain_from({**GRID, "box_types": []})).boxed is None


def _drop(model: mujoco.MjModel, xy: np.ndarray, z0: float, steps: int = 300) -> tuple[np.ndarray, list[int]]:
    """Drop the robot at xy (its default pose, z0 above the ground) and let it stand: the base
    trajectory and the contact counts."""
    d = mujoco.MjData(model)
    mujoco.mj_resetDataKeyframe(model, d, 0)
    d.qpos[:2] += xy
    d.qpos[2] += z0
    traj, ncon = [], []
    for _ in range(steps):
        mujoco.mj_step(model, d)
        traj.append(d.qpos[:7].copy())
        ncon.append(d.ncon)
    return np.array(traj), ncon


def test_box_tiles_collide_like_the_plane_and_the_height_field_does_not():
    """A robot standing on a flat tile built of boxes moves exactly as on the plane (one
    contact per foot); on the same tile as height field it makes extra contacts and drifts."""
    flat = {**GRID, "types": ["flat"], "num_levels": 1}
    plane = assemble("quadruped").model
    traj0, ncon0 = _drop(plane, np.zeros(2), 0.0)
    for boxes in (True, False):
        scene = assemble("quadruped", terrain={**flat, "box_types": ["flat"] if boxes else []})
        xy = scene.terrain.origins[0, 0, :2] + 0.01  # feet off the samples (on them: 4 contacts)
        traj, ncon = _drop(scene.model, xy, 0.0)
        traj[:, :2] -= xy
        if boxes:
            assert ncon == ncon0 and ncon0[-1] == 4
            np.testing.assert_allclose(traj, traj0, atol=1e-9)
        else:
            assert max(ncon) > 4
            assert np.abs(traj - traj0).max() > 1e-4


def test_stair_risers_are_vertical_faces():
    """Stairs of boxes: a horizontal ray at mid-riser height hits the first step's face where
    the step begins (within a sample's half width), not a ramp one sample long."""
    scene = assemble("quadruped", terrain={**GRID, "types": ["stairs_up"], "step_height": (0.1, 0.1),
                                           "box_types": ["stairs_up"]})
    m, t = scene.model, scene.terrain
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    o = t.origins[0, 0]
    x_edge = o[0] - t.cfg.tile_size / 2  # the tile's outer edge; steps rise inwards
    row = t.heights[round((o[1] - t.y0) / t.hs)]
    first = np.nonzero(row > 0.05)[0][0]  # the first sample on the first step
    face = t.x0 + (first - 0.5) * t.hs
    geomid = np.zeros(1, np.int32)
    for z in (0.02, 0.05, 0.08):
        dist = mujoco.mj_ray(m, d, np.array([x_edge - 0.5, o[1], z]), np.array([1.0, 0, 0]),
                             None, 1, -1, geomid)
        assert x_edge - 0.5 + dist == pytest.approx(face, abs=1e-6)


def test_episode_friction_and_damping_reach_every_contact_on_the_terrain():
    """The per-episode ground friction and contact damping ratio are each world's, in every
    contact, whichever of the terrain's many geoms (boxes, height field) a foot touches."""
    env = simrl.make("quadruped", 3, seed=0, cfg={
        "terrain": {**GRID, "types": ["stairs_up", "rough"], "box_types": ["stairs_up"]},
        "friction": (0.3, 1.2), "ground_dampratio": (0.5, 0.9), "push_vel": 0.0})
    env.reset()
    for _ in range(10):
        env.step(torch.zeros(3, env.num_actions))
    ratio = env.sim.param("geom_solref")[:, env.legged.touching, 1]
    assert len(set(env.legged.mu[:, 0].tolist())) == 3  # each world its own
    for w in range(3):
        d = env.sim.get_mjdata(w)
        assert d.ncon >= 3
        for c in d.contact[: d.ncon]:
            assert c.friction[0] == pytest.approx(float(env.legged.mu[w, 0]), rel=1e-6)
            assert c.solref[1] == pytest.approx(float(ratio[w, 0]), rel=1e-6)


def test_curriculum_moves_envs_by_its_rule():
    levels = torch.tensor([0, 1, 2, 2, 1, 1, 0])
    walked = torch.tensor([3.0, 3.0, 3.0, 0.5, 1.0, 2.0, 0.0])  # tile 4 m: up past 2 m
    commanded = torch.tensor([4.0, 4.0, 4.0, 4.0, 4.0, 2.0, 0.0])
    fell = torch.tensor([False, False, False, False, False, True, False])
    mask = torch.tensor([True, True, True, True, True, True, False])
    random = torch.full((7,), 7)  # what the top level wraps to
    new = next_levels(levels, walked, commanded, fell, mask, 4.0, 3, random)
    # up, up, past the top -> random, down (0.5 < 2), stays (1.0 >= 2? no: 1 < 2 -> down),
    # down (fell), unmasked stays
    assert new.tolist() == [1, 2, 7, 1, 0, 0, 0]
    assert next_levels(torch.tensor([0]), torch.tensor([0.0]), torch.tensor([5.0]),
                       torch.tensor([True]), torch.tensor([True]), 4.0, 3, torch.tensor([1])).item() == 0


def test_height_field_matches_mujoco_ray_casts():
    """The torch heights equal mj_ray on the assembled height field: exactly at the samples,
    within the local height change of a cell between them."""
    scene = assemble("quadruped", terrain=GRID)
    m, t = scene.model, scene.terrain
    d = mujoco.MjData(m)
    mujoco.mj_forward(m, d)
    field = HeightField(t, "cpu")
    rng = np.random.default_rng(0)
    geomid = np.zeros(1, np.int32)
    for _ in range(200):
        x, y = rng.uniform(t.x0, -t.x0), rng.uniform(t.y0, -t.y0)
        c, r = round((x - t.x0) / t.hs), round((y - t.y0) / t.hs)
        for px, py, tol in ((t.x0 + c * t.hs, t.y0 + r * t.hs, 1e-4), (x, y, None)):
            ray = 10.0 - mujoco.mj_ray(m, d, np.array([px, py, 10.0]), np.array([0, 0, -1.0]),
                                       None, 1, -1, geomid)
            ours = float(field(torch.tensor([px]), torch.tensor([py])))
            if tol is None:  # between samples: bounded by the cell's own height change
                cell = t.heights[max(r - 1, 0) : r + 2, max(c - 1, 0) : c + 2]
                tol = float(cell.max() - cell.min()) + 1e-4
            assert abs(ray - ours) <= tol, (px, py, ray, ours)


def test_height_scan_observes_the_ground_around_the_base():
    env = simrl.make("quadruped", 4, cfg={"terrain": GRID, "obs_noise": False}, seed=0)
    env.terrain.set_tiles(level=2, kind="stairs_up")
    env.reset()
    scan = env.OBS_TERMS["height_scan"](env)
    assert scan.shape == (4, env.terrain.scan_points.shape[0])
    # on the platform, the ground under the base is level with it: 0 at the centre point
    centre = int(((env.terrain.scan_points).norm(dim=1)).argmin())
    assert scan[:, centre].abs().max() < 0.05
    # at 0.8 m the stairs have gone down: the base is higher above the ground there
    assert (scan.max(dim=1).values > 0.05).all()


def test_curriculum_runs_in_the_env_and_envs_start_on_their_tiles():
    env = simrl.make("quadruped", 12, cfg={"terrain": {**GRID, "max_init_level": 2}}, seed=0)
    origin = env.terrain.origins[env.terrain.levels, env.terrain.types]
    base = env.sim.qpos[:, :2].float()
    assert ((base - origin[:, :2]).abs() <= env.cfg.spawn_xy + 1e-6).all()
    env.terrain.walked[:] = 3.0  # as if every env walked past half a tile
    env.terrain.cmd_disp[:] = 2.0
    before = env.terrain.levels.clone()
    env._reset(torch.ones(12, dtype=torch.bool))
    want = torch.where(before + 1 >= 3, env.terrain.levels, before + 1)  # the top wraps randomly
    assert torch.equal(env.terrain.levels, want)
    log = env.episode_log()
    assert log["Curriculum/terrain_level"] == pytest.approx(env.terrain.levels.float().mean().item())
    for j, kind in enumerate(env.terrain.grid.cfg.types):  # and each terrain type's own mean level
        want = env.terrain.levels[env.terrain.types == j].float().mean().item()
        assert log[f"Curriculum/level_{kind}"] == pytest.approx(want)


def test_actions_reach_the_actuators_exactly_k_steps_later():
    k = 2
    env = simrl.make("quadruped", 3, cfg={"action_delay": (k, k), "push_vel": 0.0}, seed=0)
    sent = []
    for t in range(6):
        a = torch.full((3, env.num_actions), 0.01 * (t + 1))
        sent.append(a)
        env.step(a)
        want = sent[t - k] if t >= k else torch.zeros_like(a)
        expect = env.action_offset + env.action_scale * want
        np.testing.assert_allclose(env.sim.ctrl.float().numpy(), expect.numpy(), atol=1e-6)


def test_history_stacks_oldest_first_and_restarts_with_the_episode():
    env = simrl.make("quadruped", 2, cfg={"history": 3, "obs_noise": False, "push_vel": 0.0}, seed=0)
    slot = next(s for s in env.obs_layout["policy"] if s.name == "joint_pos")
    assert slot.history == 3 and slot.slice.stop - slot.slice.start == 3 * slot.width
    frames = lambda obs: obs["policy"][:, slot.slice].reshape(2, 3, slot.width)  # noqa: E731
    obs, _ = env.reset()
    first = frames(obs)
    assert torch.equal(first[:, 0], first[:, 2]) and torch.equal(first[:, 1], first[:, 2])
    seen = [first[:, 2].clone()]
    gen = torch.Generator().manual_seed(0)
    for _ in range(3):
        obs, *_ = env.step(0.3 * torch.randn(2, env.num_actions, generator=gen))
        seen.append(frames(obs)[:, 2].clone())
        now = env.OBS_TERMS["joint_pos"](env)
        np.testing.assert_allclose(frames(obs)[:, 2].numpy(), now.numpy(), atol=1e-6)
    np.testing.assert_allclose(frames(obs).numpy(), torch.stack(seen[-3:], 1).numpy(), atol=1e-6)
    env._reset(torch.tensor([True, False]))
    obs = env.compute_observations()
    f = frames(obs)
    assert torch.equal(f[0, 0], f[0, 2])  # the reset env starts over
    assert not torch.equal(f[1, 0], f[1, 2])  # the other keeps its past


# --- bad input -----------------------------------------------------------------------------------
def test_bad_terrain_and_history_configs_are_refused_by_name():
    with pytest.raises(UnknownNameError, match=r"unknown terrain types \['lava'\]; valid: .*'stairs_up'"):
        terrain_from({**GRID, "types": ["rough", "lava"]})
    with pytest.raises(ConfigError, match=r"step_height must be >= 0"):
        terrain_from({**GRID, "step_height": (-0.1, 0.1)})
    with pytest.raises(ConfigError, match=r"0 <= first <= last"):
        terrain_from({**GRID, "levels": (-0.5, 1.0)})
    with pytest.raises(UnknownNameError, match=r"unknown terrain 'moon'; valid: \[.*'rough'"):
        terrain_from("moon")
    with pytest.raises(UnknownNameError, match=r"unknown fields \['stepheight'\]"):
        terrain_from({"name": "grid", "stepheight": 0.1})
    with pytest.raises(ConfigError, match=r"history must be an int >= 1"):
        simrl.make("quadruped", 2, cfg={"history": 0})
    with pytest.raises(ConfigError, match=r"action_delay must be"):
        simrl.make("quadruped", 2, cfg={"action_delay": (2, 1)})
    assert TerrainCfg().name == "flat"


@pytest.mark.mjwarp
def test_terrain_grid_on_mujoco_warp():
    """The height field and box stairs collide with the robot's geoms on MuJoCo Warp too (Warp's
    CPU device): standing on its tile (world 0 on boxes, world 1 on the height field), a robot's
    feet touch the ground and nothing diverges; every model field the task randomizes exists
    per world there."""
    env = simrl.make("quadruped", 2, backend="mjwarp", device="cpu", seed=0,
                     cfg={"terrain": {**GRID, "types": ["stairs_up", "rough"], "platform": 2.0,
                                      "box_types": ["stairs_up"]},
                          "push_vel": 0.0, "spawn_xy": 0.2})  # all four feet on the platform
    env.terrain.set_tiles(level=1)
    obs, _ = env.reset()
    touched = torch.zeros(2, 4, dtype=torch.bool)
    for t in range(20):
        obs, rew, term, trunc, _ = env.step(torch.zeros(2, env.num_actions))
        assert torch.isfinite(rew).all() and torch.isfinite(obs["critic"]).all()
        if t >= 10:  # settled: every foot bears weight at some step (the stance shifts a little)
            touched |= env.legged.contact
    assert not (term | trunc).any()
    assert touched.all()  # four feet on the ground, in both worlds
    top = env.terrain.origins[1, 0, 2]  # world 0 stands on top of the stairs pyramid
    assert env.legged.base_pos[0, 2] > top + 0.15
    assert env.legged.base_height[0] == pytest.approx(env.legged.base_pos[0, 2].item() - top.item(), abs=1e-3)


def test_heading_commands_steer_towards_the_target_heading():
    """On a curriculum grid the yaw-rate command is 0.5 x the heading error (clipped), so envs
    walk mostly straight; a fixed evaluation command turns heading mode off."""
    env = simrl.make("quadruped", 6, cfg={"terrain": GRID, "push_vel": 0.0}, seed=0)
    vel = env.command_terms["base_velocity"]
    plane = simrl.make("quadruped", 2).command_terms["base_velocity"]
    assert vel.heading_mode and not plane.heading_mode  # the plane: yaw rates
    env.step(torch.zeros(6, env.num_actions))
    from simrl.math import quat_yaw

    err = torch.remainder(vel.heading - quat_yaw(env.legged.base_quat) + torch.pi, 2 * torch.pi) - torch.pi
    want = (0.5 * err).clamp(*env.cfg.yaw_rate) * vel.moving
    torch.testing.assert_close(env.command()[:, 2], want)
    env.fix_command([0.5, 0.0, 0.3])
    env.step(torch.zeros(6, env.num_actions))
    assert not vel.heading_mode and torch.allclose(env.command()[:, 2], torch.tensor(0.3))


def test_foot_tips_sit_on_the_ground_standing_and_rise_with_the_base():
    """The clearance the foot_clearance reward reads: each foot tip (the foot sphere's centre)
    over the ground under it, from the height field's own data."""
    env = simrl.make("quadruped", 2, cfg={"terrain": GRID, "push_vel": 0.0, "joint_pos_scale": (1.0, 1.0),
                                          "rewards": {"foot_clearance": -1.0}}, seed=0)
    np.testing.assert_allclose(env.legged.foot_tip.numpy(), [[0, 0, -0.213]] * 4, atol=1e-6)
    env.terrain.set_tiles(level=2, kind="stairs_up")
    env.reset()  # then stand still on the centre of the raised top platform
    env.sim.qpos[:, :2] = env.terrain.origins[2, env.terrain.grid.cfg.types.index("stairs_up"), :2].double()
    env.sim.qvel[:] = 0.0
    for _ in range(25):
        env.step(torch.zeros(2, env.num_actions))
    assert (env.legged.base_pos[:, 2] > 0.5).all()  # the ground under the feet is not z = 0
    clear = env.legged.foot_heights(env)
    np.testing.assert_allclose(clear.numpy(), 0.02, atol=0.01)  # the sphere's radius: standing
    # the same robot lifted 0.3 m: every tip is 0.3 m higher above the same ground
    env.sim.qpos[:, 2] += 0.3
    env.sim.forward()
    np.testing.assert_allclose(env.legged.foot_heights(env).numpy(), clear.numpy() + 0.3, atol=1e-4)


def test_foot_clearance_charges_the_shortfall_of_each_landing_swing():
    env = simrl.make("quadruped", 3, cfg={"push_vel": 0.0, "rewards": {"foot_clearance": -1.0},
                                          "foot_clearance_target": 0.1}, seed=0)
    term = env.REWARD_TERMS["foot_clearance"]
    env.legged.swing_peak_on_landing = torch.tensor([[0.1, 0.05, 0.0, 0.3]] * 3)
    env.legged.first_contact = torch.tensor([[True, True, True, True], [False, True, False, True],
                                      [True, True, True, True]])
    env.command()[:] = torch.tensor([[0.5, 0, 0], [0.5, 0, 0], [0.0, 0, 0.5]])
    # reached, half short, all short, over: 0 + 0.5 + 1 + 0; only landed feet; standing: 0
    np.testing.assert_allclose(term(env).numpy(), [1.5, 0.5, 0.0], atol=1e-6)
    # stepping: a foot on the ground has no swing peak; one in the air peaks at least as high
    # as it is now (a running maximum over the swing), in every env not reset this step
    for _ in range(30):
        env.step(0.5 * torch.randn(3, env.num_actions, generator=torch.Generator().manual_seed(0)))
        assert (env.legged.swing_peak[env.legged.contact] == 0).all()
        airborne = ~env.legged.contact & (env.episode_length_buf > 0)[:, None]
        assert (env.legged.swing_peak[airborne] >= env.legged.foot_heights(env)[airborne] - 1e-6).all()
    assert (env.legged.swing_peak > 0).any()
    with pytest.raises(ConfigError, match="foot_clearance_target must be > 0 m"):
        simrl.make("quadruped", 1, cfg={"rewards": {"foot_clearance": -1.0}, "foot_clearance_target": 0.0})


def test_a_bare_terrain_field_overrides_the_runs_ground_and_a_named_ground_replaces_it():
    """eval.py checkpoint=<rough run> task.cfg.terrain.border=5 evaluates the run's grid with a
    5 m border, not a plane with one (a dict of fields without a name alone is a plane)."""
    from simrl.terrain import override_terrain

    rough = terrain_from("rough").to_dict()
    assert rough["border"] != 5.0  # so the override below shows
    wider = terrain_from(override_terrain(rough, {"border": 5.0}))
    assert wider.name == "grid" and wider.border == 5.0 and wider.types == rough["types"]
    assert terrain_from(override_terrain("rough", {"border": 5.0})) == wider  # a name as the base
    stairs = terrain_from("stairs").to_dict()
    assert override_terrain(rough, stairs) == stairs  # terrain=stairs: the whole ground
    assert override_terrain(rough, "flat") == "flat"
    assert terrain_from(override_terrain(None, {"border": 7.0})).name == "flat"  # a plane stays one


def test_on_a_plane_the_scan_is_one_point_and_on_a_grid_the_full_patch():
    flat = simrl.make("quadruped", 2, device="cpu")
    grid = simrl.make("quadruped", 2, device="cpu", cfg={"terrain": GRID})
    assert flat.terrain.scan_points.shape == (1, 2) and grid.terrain.scan_points.shape == (17 * 11, 2)
    assert grid.obs_dims["critic"] - flat.obs_dims["critic"] == 17 * 11 - 1
    flat.reset()
    # the one point reads the base's height over the plane minus the default pose's
    z = flat.legged.base_pos[:, 2] - flat.legged.base_z0
    torch.testing.assert_close(flat.OBS_TERMS["height_scan"](flat)[:, 0], z.clamp(-1, 1))
