"""The ground under a legged robot as the velocity task reads it: heights (a plane, or a terrain
grid's height field), the height-scan points, and on a grid each env's tile (level and type)
with the curriculum's bookkeeping: how far the robot walked and how far its commands asked."""

from __future__ import annotations

from typing import Any

import torch

from simrl.errors import ConfigError
from simrl.math import yaw_rotate
from simrl.terrain.heights import HeightField, scan_points

GRID_SCAN_SIZE = (1.6, 1.0)  # m, x and y: the height scan on a terrain grid (height_scan_size None)


class TerrainData:
    """`env.terrain`: built once; `update` after each physics step (the curriculum's distances)."""

    not_state = frozenset({"grid", "field", "origins", "scan_points", "height_scan_size"})

    def __init__(self, env: Any):
        n, f32 = env.num_envs, dict(device=env.device, dtype=torch.float32)
        self.grid = env.scene.terrain
        self.field = HeightField(self.grid, env.device)
        size = env.cfg.height_scan_size
        if size is None:  # a grid's scan; on a plane one point (every point reads the same)
            size = GRID_SCAN_SIZE if self.grid is not None else (0.0, 0.0)
        self.height_scan_size = (float(size[0]), float(size[1]))
        self.scan_points = scan_points(size, env.cfg.height_scan_spacing, env.device)
        if self.grid is None:
            return
        self.origins = torch.as_tensor(self.grid.origins, **f32)  # (levels, types, 3)
        self.levels = torch.zeros(n, device=env.device, dtype=torch.long)  # drawn at startup
        self.types = torch.arange(n, device=env.device) % self.grid.num_types
        self.curriculum = self.grid.cfg.curriculum
        self.spawn = torch.zeros(n, 2, **f32)
        self.walked = torch.zeros(n, **f32)
        self.farthest = torch.zeros(n, **f32)  # this episode's largest `walked`
        self.cmd_disp = torch.zeros(n, 2, **f32)  # where the commands would have taken it

    def refresh(self, env: Any) -> None:
        pass

    def update(self, env: Any) -> None:
        """How far each robot went, and how far it was asked to (for the curriculum)."""
        if self.grid is None:
            return
        legged = env.legged
        self.walked = (legged.base_pos[:, :2] - self.spawn).norm(dim=1)
        self.farthest = torch.maximum(self.farthest, self.walked)
        # the commanded base-frame velocity, in the world frame
        cmd = env.command_terms["base_velocity"].command
        vx, vy = yaw_rotate(legged.base_yaw, cmd[:, 0], cmd[:, 1])
        self.cmd_disp = self.cmd_disp + torch.stack([vx, vy], dim=1) * env.dt

    def reset(self, env: Any, mask: torch.Tensor) -> None:
        pass  # the spawn event `place_on_terrain` moves the reset envs and clears their distances

    def set_tiles(self, level: int | None = None, kind: str | None = None) -> None:
        """Pin every env to one level and/or terrain type (evaluation); stops the curriculum."""
        if self.grid is None:
            raise ConfigError("set_tiles needs a terrain grid (terrain=rough or stairs), not a plane")
        types = self.grid.cfg.types
        if level is not None:
            if not 0 <= level < self.grid.num_levels:
                raise ConfigError(f"terrain level {level} out of range 0..{self.grid.num_levels - 1}")
            self.levels.fill_(level)
        if kind is not None:
            if kind not in types:
                raise ConfigError(f"terrain type '{kind}' not in this grid's types {types}")
            self.types.fill_(types.index(kind))
        self.curriculum = False

    def log(self, env: Any) -> dict[str, float]:
        """The mean level, overall and per terrain type (one read per iteration)."""
        if self.grid is None:
            return {}
        types = self.grid.cfg.types
        counts = torch.bincount(self.types, minlength=len(types)).clamp(min=1)
        sums = torch.zeros(len(types), device=env.device).index_add_(0, self.types, self.levels.float())
        means = torch.cat([self.levels.float().mean()[None], sums / counts]).tolist()
        return {"Curriculum/terrain_level": means[0],
                **{f"Curriculum/level_{kind}": v for kind, v in zip(types, means[1:], strict=True)}}

    def metrics(self) -> dict[str, Any]:
        """On a grid evaluation also reports who crossed half a tile without a fall."""
        return {} if self.grid is None else {"crossed_share": crossed_share}

    def deploy_facts(self, env: Any) -> dict[str, Any]:
        return {"terrain": self.grid.cfg.to_dict() if self.grid is not None else None}

    def resolved_cfg(self) -> dict[str, Any]:
        return {"height_scan_size": list(self.height_scan_size)}  # the critic's width


def crossed_share(env: Any) -> torch.Tensor:
    """1 where the episode got past half a tile from its start without a fall."""
    return (env.terrain.farthest > env.terrain.grid.cfg.tile_size / 2) & ~env.terminated_buf
