"""On-robot runtime: numpy + onnxruntime only (no torch, no simrl.sim).

    policy = DeployPolicy("policy.onnx")
    obs = policy.observation(readings)          # readings: raw sensor values, see OBS_READERS
    targets, kp, kd = policy.act(readings)      # joint position targets + the PD gains to use

`readings` is a dict of 1-D (or batched 2-D) numpy arrays, named in `READINGS`: `joint_pos`,
`joint_vel`, `gyro` (IMU angular velocity, IMU frame), `quat` (IMU orientation wxyz) or
`gravity` (unit gravity in the IMU frame), `command` ([vx, vy, yaw_rate]); `base_lin_vel` only
for policies that observe it (an estimator's output); `last_action` defaults to the previous
`act` output. `policy.readings` (policy.json's `readings`) lists exactly what the policy needs,
and a dict lacking one is refused. Where the policy stacks a history of frames, the runtime
keeps it: call `observation`/`act` once per control step and `reset()` at a new episode.
The action delay trained with (policy.json `deploy.action_delay`, control steps) is the
robot's own latency: nothing here adds it.
"""

from simrl.deploy.runtime import (
    OBS_READERS,
    READINGS,
    DeployPolicy,
    load_metadata,
    projected_gravity,
    required_readings,
)

__all__ = ["OBS_READERS", "READINGS", "DeployPolicy", "load_metadata", "projected_gravity",
           "required_readings"]
