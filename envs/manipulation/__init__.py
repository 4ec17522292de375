"""Manipulation with a fixed-base arm: `reach` (the end-effector to a sampled pose) and `lift`
(a cube to a target position). `arm` holds what both share."""

from simrl.envs.manipulation.arm import ArmEnv
from simrl.envs.manipulation.lift import LiftCfg, LiftEnv
from simrl.envs.manipulation.reach import ReachCfg, ReachEnv

__all__ = ["ArmEnv", "LiftCfg", "LiftEnv", "ReachCfg", "ReachEnv"]
