"""The terrain: a grid of tiles (rows of rising difficulty, columns of terrain types) built as
one MuJoCo height field, seeded, so the same config always gives the same ground.

    cfg = TerrainCfg(name="grid")                  # configs/terrain/rough.yaml
    terrain = generate(cfg)                        # Terrain(heights, origins, ...)
    add_to_spec(spec, terrain)                     # an hfield asset and its geom, in place of a plane

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
    border: float = 3.0  # m of flat ground around the grid
    platform: float = 2.0  # m, the flat start square at each tile's centre
    seed: int = 0
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
        if "types" in values:
            values["types"] = list(values["types"])
        cfg = TerrainCfg(**values)
    check(cfg)
    return cfg


def _named(name: str) -> TerrainCfg:
    import yaml

    from simrl import CONFIGS

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
    for i in range(levels):
        for j, kind in enumerate(cfg.types):
            rng = np.random.default_rng([cfg.seed, i, j])
            tile = TILES[kind](rng, n, hs, float(difficulty[i]), cfg)
            r, c = b + j * n, b + i * n
            heights[r : r + n, c : c + n] = tile
            cx, cy = x0 + (c + (n - 1) / 2) * hs, y0 + (r + (n - 1) / 2) * hs
            origins[i, j] = cx, cy, tile[n // 2, n // 2]
    return Terrain(cfg, heights.astype(np.float32), x0, y0, hs, origins, difficulty)


def add_to_spec(spec: mujoco.MjSpec, terrain: Terrain, name: str = "terrain") -> None:
    """The grid as an hfield asset plus its geom (contype/conaffinity 1, as a floor plane)."""
    h = terrain.heights.astype(np.float64)
    low, high = float(h.min()), float(h.max())
    span = max(high - low, 1e-3)
    nrow, ncol = h.shape
    spec.add_hfield(
        name=name, nrow=nrow, ncol=ncol,
        size=[(ncol - 1) * terrain.hs / 2, (nrow - 1) * terrain.hs / 2, span, 1.0],
        userdata=((h - low) / span).ravel().tolist(),
    )
    spec.worldbody.add_geom(
        name=name, type=mujoco.mjtGeom.mjGEOM_HFIELD, hfieldname=name, pos=[0, 0, low],
        contype=1, conaffinity=1, rgba=[0.45, 0.5, 0.55, 1],
    )
