"""Terrain tiles: each a function `(rng, n, hs, d, cfg) -> heights (n, n)` in metres.

`n` cells of `hs` metres per side, difficulty `d` in [0, 1] (0: the easiest level, 1: the
hardest). Every tile keeps a flat square `cfg.platform` metres wide at its centre, where envs
start. Rows of the array are y, columns x (MuJoCo's height-field layout). Pyramids are centred:
`*_up` rise towards the centre (the robot starts on top and walks down and back up), `*_down`
sink towards it (it starts in a pit).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from simrl.terrain.grid import TerrainCfg


def lerp(span: tuple[float, float], d: float) -> float:
    """The value of a (easiest, hardest) range at difficulty d."""
    return float(span[0] + d * (span[1] - span[0]))


def _ring(n: int, hs: float, platform: float) -> np.ndarray:
    """Distance (m) inwards from the tile's edge, capped where the centre platform begins."""
    c = (np.arange(n) + 0.5) * hs - n * hs / 2  # cell centres, relative to the tile centre
    cheb = np.maximum(np.abs(c)[None, :], np.abs(c)[:, None])  # square rings
    return n * hs / 2 - np.maximum(cheb, platform / 2)


def _platform(n: int, hs: float, platform: float) -> np.ndarray:
    c = (np.arange(n) + 0.5) * hs - n * hs / 2
    return (np.abs(c)[None, :] <= platform / 2) & (np.abs(c)[:, None] <= platform / 2)


def flat(rng: np.random.Generator, n: int, hs: float, d: float, cfg: TerrainCfg) -> np.ndarray:
    return np.zeros((n, n))


def rough(rng: np.random.Generator, n: int, hs: float, d: float, cfg: TerrainCfg) -> np.ndarray:
    """Uniform random heights of +-rough_height, in blocks of rough_cell metres (rubble)."""
    amp = lerp(cfg.rough_height, d)
    k = max(1, round(cfg.rough_cell / hs))
    m = -(-n // k)
    coarse = rng.uniform(-amp, amp, (m, m))
    h = np.kron(coarse, np.ones((k, k)))[:n, :n]
    h[_platform(n, hs, cfg.platform)] = 0.0
    return h


def slope_up(rng: np.random.Generator, n: int, hs: float, d: float, cfg: TerrainCfg) -> np.ndarray:
    """A pyramid of slope `slope` (rise over run), its top the platform."""
    return lerp(cfg.slope, d) * _ring(n, hs, cfg.platform)


def slope_down(rng: np.random.Generator, n: int, hs: float, d: float, cfg: TerrainCfg) -> np.ndarray:
    return -slope_up(rng, n, hs, d, cfg)


def stairs_up(rng: np.random.Generator, n: int, hs: float, d: float, cfg: TerrainCfg) -> np.ndarray:
    """Pyramid stairs: steps of `step_height` every `step_width` m, the platform on top."""
    steps = np.floor(_ring(n, hs, cfg.platform) / cfg.step_width + 1e-9)
    return lerp(cfg.step_height, d) * steps


def stairs_down(rng: np.random.Generator, n: int, hs: float, d: float, cfg: TerrainCfg) -> np.ndarray:
    return -stairs_up(rng, n, hs, d, cfg)


def obstacles(rng: np.random.Generator, n: int, hs: float, d: float, cfg: TerrainCfg) -> np.ndarray:
    """Discrete boxes of random footprint and +-obstacle_height, the platform kept clear."""
    h = np.zeros((n, n))
    height = lerp(cfg.obstacle_height, d)
    for _ in range(cfg.num_obstacles):
        w, l = (rng.uniform(*cfg.obstacle_size, 2) / hs).astype(int).clip(1, n)
        r, c = rng.integers(0, n - l + 1), rng.integers(0, n - w + 1)
        h[r : r + l, c : c + w] = height * rng.choice([-1.0, 1.0])
    h[_platform(n, hs, cfg.platform)] = 0.0
    return h


TILES: dict[str, Callable[..., np.ndarray]] = {
    f.__name__: f for f in (flat, rough, slope_up, slope_down, stairs_up, stairs_down, obstacles)
}
