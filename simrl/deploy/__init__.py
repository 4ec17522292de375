"""On-robot runtime: numpy + onnxruntime only (no torch, no simrl.sim).

    policy = DeployPolicy("policy.onnx")
    obs = policy.observation(readings)          # readings: raw values, named in policy.readings
    targets, kp, kd = policy.act(readings)      # joint position targets + the PD gains to use

`readings` is a dict of 1-D (or batched 2-D) numpy arrays, one per raw reading the policy
needs: `policy.readings` lists them and policy.json's `reading_docs` says what each is (for a
legged robot `joint_pos`, `joint_vel`, `gyro`, `quat` or `gravity`, `command`; for an arm
`joint_pos`, `joint_vel`, `target_pose`); a dict lacking one is refused, naming it.
`last_action` defaults to the previous `act` output. Each observation term of policy.json says
which reading it is built from and how (`read`: an op of `OPS`, columns, an offset), so this
runtime knows no task and no term names. Where the policy stacks a history of frames, the runtime
keeps it: call `observation`/`act` once per control step and `reset()` at a new episode.
The action delay trained with (policy.json `deploy.action_delay`, control steps) is the
robot's own latency: nothing here adds it.
"""

from simrl.deploy.runtime import (
    OPS,
    DeployPolicy,
    load_metadata,
    projected_gravity,
    reading_docs,
    required_readings,
)

__all__ = ["OPS", "DeployPolicy", "load_metadata", "projected_gravity", "reading_docs",
           "required_readings"]
