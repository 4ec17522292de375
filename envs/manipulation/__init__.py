"""Manipulation with a fixed-base arm: `reach` (the end-effector to a sampled pose) and `lift`
(a cube to a target position), each a config over the env batch. `arm` holds what both share."""

from simrl.envs.manipulation.arm import ArmCfg
from simrl.envs.manipulation.lift import LiftCfg
from simrl.envs.manipulation.reach import ReachCfg

__all__ = ["ArmCfg", "LiftCfg", "ReachCfg"]
