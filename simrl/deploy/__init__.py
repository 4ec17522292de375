"""On-robot runtime: numpy + onnxruntime only (no torch, no simrl.sim).

    policy = DeployPolicy("policy.onnx")
    obs = policy.observation(readings)          # readings: raw sensor values, see OBS_READERS
    targets, kp, kd = policy.act(readings)      # joint position targets + the PD gains to use

`readings` is a dict of 1-D (or batched 2-D) numpy arrays: `joint_pos`, `joint_vel`,
`gyro` (base angular velocity, base frame), `quat` (base orientation wxyz) or `gravity`
(unit gravity in the base frame), `base_lin_vel` (base frame, from the state estimator),
`command` ([vx, vy, yaw_rate]), and `last_action` (defaults to the previous `act` output).
"""

from simrl.deploy.runtime import OBS_READERS, DeployPolicy, load_metadata, projected_gravity

__all__ = ["OBS_READERS", "DeployPolicy", "load_metadata", "projected_gravity"]
