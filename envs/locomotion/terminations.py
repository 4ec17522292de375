"""The velocity task's own terminations (simrl.mdp.terminations' body_contact and the others
apply too), each with the facts a robot-side check needs."""

from __future__ import annotations

from typing import Any

import torch

from simrl.managers.termination import deploy_facts


@deploy_facts(lambda env, max_tilt_cos: {"max_tilt_cos": float(max_tilt_cos)})
def base_tilt(env: Any, max_tilt_cos: float) -> torch.Tensor:
    """The base's up axis tilted past acos(`max_tilt_cos`) from the vertical (in the IMU frame)."""
    return env.legged.gravity_b[:, 2] > -max_tilt_cos


@deploy_facts(lambda env, min_height: {"min_base_height": float(min_height)})
def base_height_below(env: Any, min_height: float) -> torch.Tensor:
    """The base below `min_height` m over the ground under it (a sat-down or fallen humanoid)."""
    return env.legged.base_height < min_height
