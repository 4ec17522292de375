"""The terrain: a grid of tiles (rows of rising difficulty, columns of terrain types), seeded, so
the same config always gives the same ground.

    cfg = TerrainCfg(name="grid")                  # configs/terrain/rough.yaml
    terrain = generate(cfg)                        # Terrain(heights, origins, ...)
    add_to_spec(spec, terrain)                     # box geoms and an hfield, in place of a plane

The whole grid is one MuJoCo height field by default. `box_types` builds piecewise-flat types
(flat, stairs) of box geoms instead, one stacked box per step (a pyramid of stairs is a stack
of shrinking boxes), with the height field sunk out of the way under them: a foot on a box top
makes one contact, as on a plane, and risers are vertical faces, where a height field makes
each riser a ramp one sample wide and 1-3 contacts per foot on flat ground. Boxes cost
throughput (0.67x the env-steps/s of the rough grid on the CPU with box stairs: the world's
BVH midphase, docs/benchmarks.md), so the rough grid trains on the height field and a second
stage (configs/experiment/rough_stairs.yaml) on box stairs.

Levels run along x, types along y; a flat border surrounds the grid. `origins[level, type]` is
the centre of that tile's start platform (x, y, z). `heights` are the height field's samples in
metres (rows y, columns x), which the task reads for height scans and spawn heights (simrl.
terrain.heights), so what the robot stands on and what the critic sees are the same data.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import mujoco
import numpy as np

from simrl.errors import ConfigError, UnknownNameError
from simrl.terrain.tiles import TILES

KINDS = ("flat", "grid")  # flat: a plane (no generation); grid: the tiles below
PIECEWISE_FLAT = ("flat", "stairs_up", "stairs_down", "obstacles")  # types boxes can build


@dataclass
class TerrainCfg:
    """Where the robots walk. `flat` is a plane; `grid` a height field of tiles (see module)."""

    name: str = "flat"  # flat | grid
    types: list[str] = field(default_factory=lambda: ["rough", "slope_up", "slope_down", "stairs_up",
                                                      "stairs_down", "obstacles"])  # one column each
    num_levels: int = 10  # rows of rising difficulty
    levels: tuple[float, float] = (0.0, 1.0)  # difficulty of the first and the last row
    tile_size: float = 8.0  # m, square
    horizontal_scale: float = 0.1  # m between height samples (legged_gym's)
    border: float = 7.0  # m of flat ground around the grid: robots that cross an edge tile stay on it
    platform: float = 2.0  # m, the flat start square at each tile's centre
    seed: int = 0
    # tile types built of stacked boxes (vertical risers); the rest (the border too) is height
    # field. Any piecewise-flat type can be boxed, e.g. [stairs_up, stairs_down] (see module)
    box_types: list[str] = field(default_factory=list)
    # per type, (at the easiest level, at the hardest)
    rough_height: tuple[float, float] = (0.01, 0.06)  # +- m
    rough_cell: float = 0.2  # m, the size of a rubble block
    slope: tuple[float, float] = (0.0, 0.4)  # rise over run
    step_height: tuple[float, float] = (0.03, 0.18)  # m
    step_width: float = 0.3  # m
    obstacle_height: tuple[float, float] = (0.03, 0.18)  # m
    obstacle_size: tuple[float, float] = (0.4, 1.2)  # m, footprint side
    num_obstacles: int = 24
    # curriculum (legged_gym's): an env that walked past half a tile moves up a level, one that
    # covered less than half the displacement its commands asked for (or fell) moves down; past
    # the top, a random level
    curriculum: bool = True
    max_init_level: int = 3  # envs start at a random level up to this

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def terrain_from(values: Any) -> TerrainCfg:
    """A TerrainCfg from a config name (configs/terrain), a dict of fields, or itself."""
    if isinstance(values, TerrainCfg):
        cfg = values
    elif values is None or isinstance(values, str):
        cfg = TerrainCfg(name=values or "flat") if values in (None, *KINDS) else _named(values)
    else:
        values = dict(values)
        names = [f.name for f in dataclasses.fields(TerrainCfg)]
        unknown = sorted(set(values) - set(names))
        if unknown:
            raise UnknownNameError(f"terrain config: unknown fields {unknown}; valid: {names}")
        for k in ("levels", "rough_height", "slope", "step_height", "obstacle_height", "obstacle_size"):
            if k in values:
                values[k] = tuple(values[k])
        for k in ("types", "box_types"):
            if k in values:
                values[k] = list(values[k])
        cfg = TerrainCfg(**values)
    check(cfg)
    return cfg


def override_terrain(base: Any, over: Any) -> Any:
    """A ground override over a run's own ground `base`: a whole ground (a config name, or
    fields with a `name`, as `terrain=stairs` gives) replaces it; bare fields
    (`task.cfg.terrain.border=7`) change only those fields of `base`, which alone would
    otherwise describe a plane."""
    if not isinstance(over, dict) or "name" in over:
        return over
    return {**terrain_from(base).to_dict(), **over}


def _named(name: str) -> TerrainCfg:
    import yaml

    from simrl.paths import CONFIGS

    path = CONFIGS / "terrain" / f"{name}.yaml"
    if not path.is_file():
        valid = sorted(p.stem for p in path.parent.glob("*.yaml"))
        raise UnknownNameError(f"unknown terrain '{name}'; valid: {valid} (configs/terrain), or "
                               f"the fields of simrl.terrain.TerrainCfg")
    return terrain_from(yaml.safe_load(path.read_text()) or {})


def check(cfg: TerrainCfg) -> None:
    """Refuse a config that cannot be built, naming the field and what it takes."""
    if cfg.name not in KINDS:
        raise UnknownNameError(f"terrain name '{cfg.name}' is not a kind; valid: {list(KINDS)}")
    if cfg.name == "flat":
        return
    bad = [t for t in cfg.types if t not in TILES]
    if bad or not cfg.types:
        raise UnknownNameError(f"unknown terrain types {bad or '(none given)'}; valid: {sorted(TILES)}")
    bad = [t for t in cfg.box_types if t not in PIECEWISE_FLAT]
    if bad:
        raise ConfigError(f"terrain box_types {bad} cannot be built of boxes; valid: {list(PIECEWISE_FLAT)}")
    lo, hi = cfg.levels
    if not 0.0 <= lo <= hi:
        raise ConfigError(f"terrain levels (difficulty of the first and last row) must satisfy "
                          f"0 <= first <= last, got {cfg.levels}")
    for k in ("rough_height", "slope", "step_height", "obstacle_height", "obstacle_size"):
        if min(getattr(cfg, k)) < 0:
            raise ConfigError(f"terrain {k} must be >= 0 (a difficulty range), got {getattr(cfg, k)}")
    if cfg.num_levels < 1:
        raise ConfigError(f"terrain num_levels must be >= 1, got {cfg.num_levels}")
    if cfg.horizontal_scale <= 0 or cfg.tile_size < 2 * cfg.horizontal_scale:
        raise ConfigError("terrain horizontal_scale must be > 0 and tile_size at least two samples")
    if cfg.platform > cfg.tile_size:
        raise ConfigError(f"terrain platform ({cfg.platform} m) is wider than a tile ({cfg.tile_size} m)")
    if cfg.max_init_level < 0:
        raise ConfigError(f"terrain max_init_level must be >= 0, got {cfg.max_init_level}")


@dataclass
class Terrain:
    """A generated grid: height samples and where each tile's platform is."""

    cfg: TerrainCfg
    heights: np.ndarray  # (nrow, ncol) metres; row r at y = y0 + r * hs, column c at x = x0 + c * hs
    x0: float
    y0: float
    hs: float
    origins: np.ndarray  # (num_levels, num_types, 3): each tile's platform centre
    difficulty: np.ndarray  # (num_levels,)
    boxed: np.ndarray | None = None  # (nrow, ncol) bool: samples built as box tops
    boxes: np.ndarray = field(default_factory=lambda: np.zeros((0, 5)))  # (row0, row1, col0, col1, top)

    @property
    def num_levels(self) -> int:
        return self.origins.shape[0]

    @property
    def num_types(self) -> int:
        return self.origins.shape[1]

    def height_at(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Bilinear height (numpy; the torch twin is simrl.terrain.heights.HeightField)."""
        fx = np.clip((np.asarray(x) - self.x0) / self.hs, 0, self.heights.shape[1] - 1)
        fy = np.clip((np.asarray(y) - self.y0) / self.hs, 0, self.heights.shape[0] - 1)
        c0 = np.minimum(fx.astype(int), self.heights.shape[1] - 2)
        r0 = np.minimum(fy.astype(int), self.heights.shape[0] - 2)
        tx, ty = fx - c0, fy - r0
        h = self.heights
        return ((1 - ty) * ((1 - tx) * h[r0, c0] + tx * h[r0, c0 + 1])
                + ty * ((1 - tx) * h[r0 + 1, c0] + tx * h[r0 + 1, c0 + 1]))


def generate(cfg: TerrainCfg) -> Terrain:
    """Build the grid's heights; each tile draws from its own (seed, level, type) stream, so a
    tile is the same whatever the rest of the grid holds."""
    check(cfg)
    hs = cfg.horizontal_scale
    n, b = round(cfg.tile_size / hs), round(cfg.border / hs)
    levels, types = cfg.num_levels, len(cfg.types)
    heights = np.zeros((types * n + 2 * b, levels * n + 2 * b))
    x0, y0 = -(heights.shape[1] - 1) * hs / 2, -(heights.shape[0] - 1) * hs / 2
    lo, hi = cfg.levels
    difficulty = np.array([lo + (hi - lo) * i / max(levels - 1, 1) for i in range(levels)])
    origins = np.zeros((levels, types, 3))
    boxed = np.zeros(heights.shape, dtype=bool)
    tiles = []  # (row, col, tile heights) of the boxed tiles
    for i in range(levels):
        for j, kind in enumerate(cfg.types):
            rng = np.random.default_rng([cfg.seed, i, j])
            tile = TILES[kind](rng, n, hs, float(difficulty[i]), cfg)
            r, c = b + j * n, b + i * n
            heights[r : r + n, c : c + n] = tile
            boxed[r : r + n, c : c + n] = kind in cfg.box_types
            if kind in cfg.box_types:
                tiles.append((r, c, tile))
            cx, cy = x0 + (c + (n - 1) / 2) * hs, y0 + (r + (n - 1) / 2) * hs
            origins[i, j] = cx, cy, tile[n // 2, n // 2]
    heights = heights.astype(np.float32)
    boxes = np.zeros((0, 5))
    if tiles:  # each boxed tile's stack
        boxes = np.concatenate([stacked(tile.astype(np.float32)) + np.array([r, r, c, c, 0.0])
                                for r, c, tile in tiles])
    return Terrain(cfg, heights, x0, y0, hs, origins, difficulty,
                   boxed if boxed.any() else None, boxes)


def stacked(heights: np.ndarray) -> np.ndarray:
    """Boxes stacked from the ground up: for each height v, rectangles covering the samples at
    or above v. A pyramid of k steps is k boxes (a pit of k steps, 4 per ring); a foot on a
    step touches only that step's top. Rows as `rectangles`."""
    flat = np.zeros_like(heights)
    parts = []
    for v in np.unique(heights):
        part = rectangles(flat, heights >= v)  # one height (0) over the mask: its top is v
        part[:, 4] = v
        parts.append(part)
    return np.concatenate(parts)


def rectangles(heights: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Cover the `mask`ed samples with rectangles of equal height, merging runs
    along rows and then identical runs down the rows. Returns (K, 5) rows of
    (row0, row1, col0, col1, height), ends exclusive."""
    key = np.where(mask, heights, np.nan)
    done, open_ = [], {}
    for r in range(key.shape[0] + 1):
        runs = set()
        if r < key.shape[0]:
            row = key[r]
            starts = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])  # nan != nan: own runs
            ends = np.r_[starts[1:], row.size]
            runs = {(int(a), int(b), float(row[a])) for a, b in zip(starts, ends, strict=True)
                    if not np.isnan(row[a])}
        for run in [k for k in open_ if k not in runs]:
            done.append((open_.pop(run), r, run[0], run[1], run[2]))
        for run in runs:
            open_.setdefault(run, r)
    return np.array(sorted(done), dtype=np.float64).reshape(-1, 5)


def add_to_spec(spec: mujoco.MjSpec, terrain: Terrain, name: str = "terrain") -> None:
    """The grid as world geoms (contype/conaffinity 1, as a floor plane): one box per row of
    `terrain.boxes` (each sample owns the square of side hs around it), from a common bottom up
    to its top, and an hfield for the rest, sunk below the boxes where they cover it."""
    h = terrain.heights.astype(np.float64)
    hs, rgba = terrain.hs, [0.45, 0.5, 0.55, 1]
    # the boxes reach down to here: deep enough that where the hfield slopes from a box's edge
    # sample to a sunk one, it stays under any neighbouring box (steps are < 0.5 m)
    bottom = float(h.min()) - 1.0
    boxed = terrain.boxed if terrain.boxed is not None else np.zeros(h.shape, dtype=bool)
    for k, (r0, r1, c0, c1, top) in enumerate(terrain.boxes):
        x = terrain.x0 + ((c0 + c1) / 2 - 0.5) * hs
        y = terrain.y0 + ((r0 + r1) / 2 - 0.5) * hs
        spec.worldbody.add_geom(
            name=f"{name}_box{k}", type=mujoco.mjtGeom.mjGEOM_BOX,
            pos=[x, y, (top + bottom) / 2], size=[(c1 - c0) * hs / 2, (r1 - r0) * hs / 2, (top - bottom) / 2],
            contype=1, conaffinity=1, rgba=rgba,
        )
    # the hfield keeps its samples where any neighbour is not boxed (so it meets the boxes at
    # their edges) and sinks below them elsewhere
    inner = np.pad(boxed, 1, constant_values=True)
    inner = np.logical_and.reduce([inner[1 + dr : inner.shape[0] - 1 + dr, 1 + dc : inner.shape[1] - 1 + dc]
                                   for dr in (-1, 0, 1) for dc in (-1, 0, 1)])
    if inner.all():
        return
    h = np.where(inner, bottom, h)
    low, high = float(h.min()), float(h.max())
    span = max(high - low, 1e-3)
    nrow, ncol = h.shape
    spec.add_hfield(
        name=name, nrow=nrow, ncol=ncol,
        size=[(ncol - 1) * hs / 2, (nrow - 1) * hs / 2, span, 1.0],
        userdata=((h - low) / span).ravel().tolist(),
    )
    spec.worldbody.add_geom(
        name=name, type=mujoco.mjtGeom.mjGEOM_HFIELD, hfieldname=name, pos=[0, 0, low],
        contype=1, conaffinity=1, rgba=rgba,
    )
