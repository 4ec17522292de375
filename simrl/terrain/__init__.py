"""Terrain: a seeded grid of height-field tiles with a curriculum, and height scans over it.

`grid` builds the tiles and the MuJoCo height field, `tiles` the tile shapes, `heights` the
batched torch sampling (height scans, spawn heights), `curriculum` the level rule.
"""

from simrl.terrain.grid import Terrain, TerrainCfg, add_to_spec, generate, override_terrain, terrain_from

__all__ = ["Terrain", "TerrainCfg", "add_to_spec", "generate", "override_terrain", "terrain_from"]
