"""The terrain curriculum's rule (legged_gym's, plus falls): batched, by mask, no host sync."""

from __future__ import annotations

import torch


def next_levels(
    levels: torch.Tensor, walked: torch.Tensor, commanded: torch.Tensor, fell: torch.Tensor,
    mask: torch.Tensor, tile_size: float, num_levels: int, random_levels: torch.Tensor,
) -> torch.Tensor:
    """The levels of envs after their episodes end where `mask`.

    Up one where the env walked (its displacement from the start) farther than half a tile;
    down one where it covered less than half the displacement its commands asked for (the
    commanded velocities integrated along its heading: a robot tracking turning commands is not
    demoted for ending near its start), or fell; past the top level, a random level (`random_levels`,
    drawn by the caller from its seeded generator), so solved envs keep seeing every level.
    """
    up = walked > tile_size / 2
    down = ~up & ((walked < 0.5 * commanded) | fell)
    new = levels + up.long() - down.long()
    new = torch.where(new >= num_levels, random_levels, new.clamp(min=0))
    return torch.where(mask, new, levels)
