"""Velocity tracking for legged robots, on flat ground or a terrain grid (legged_gym / mjlab).

One task for any robot config (configs/robot/*.yaml): quadrupeds and bipeds alike, every index
looked up by name from the robot config (simrl.scene). `quadruped` and `humanoid` are this task
with different defaults (robot, commands, reward weights, terminations).

Commands (forward, lateral, yaw rate) are sampled per env and resampled every few seconds, a
share of them standing still. Actions are joint position offsets around the default pose, held
by the assembled scene's PD position actuators after a random per-env delay; control at 50 Hz.

The policy observes only what a legged robot measures on board (IMU gyro and orientation, joint
encoders, its last action, the command); the critic also sees privileged state (base velocity,
contacts, ground friction, a height scan): asymmetric actor-critic. On a terrain grid
(`terrain=rough`, simrl.terrain) each env starts on a tile of its curriculum level. Sensor bias,
actuator gains and strength, joint friction/damping/armature, base mass and centre of mass,
ground friction and damping are randomized; pushes kick the base.
"""

from simrl.envs.locomotion.cfg import FLAT_REWARDS, HumanoidCfg, LocomotionCfg, QuadrupedCfg
from simrl.envs.locomotion.clock import default_gait_offsets
from simrl.envs.locomotion.observations import gait_clock, gait_phase, height_scan
from simrl.envs.locomotion.rewards import (
                                           ang_vel_xy,
                                           feet_air_time,
                                           feet_air_time_biped,
                                           feet_height_phase,
                                           foot_clearance,
                                           foot_slip,
                                           gait_contact,
                                           lin_vel_z,
                                           orientation,
                                           posture,
                                           track_lin_vel,
                                           track_yaw_rate,
)

__all__ = ["FLAT_REWARDS", "HumanoidCfg", "LocomotionCfg", "QuadrupedCfg", "ang_vel_xy",
           "default_gait_offsets", "feet_air_time", "feet_air_time_biped", "feet_height_phase",
           "foot_clearance", "foot_slip", "gait_clock", "gait_contact", "gait_phase", "height_scan",
           "lin_vel_z", "orientation", "posture", "track_lin_vel", "track_yaw_rate"]
