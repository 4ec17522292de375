"""Actions: how the policy's action vector becomes actuator controls, as terms listed in a task's
config:

    actions:
      arm: {func: joint_position_action, params: {joints: "joint[1-7]", scale: 0.5}}
      gripper: {func: binary_gripper_action, params: {joint: finger_joint1}}

Action column i always drives the model's actuator i (the policy's actuators come first; a
robot's held joints after them); a term claims the columns of the actuators of its joints and
says how they are driven. Together the terms must claim every policy actuator once; priors (a
reference gait: `prior = True`) add to the actions first and claim none. A task's own entries
come first (simrl.env.config.own_entries: one `joint_position_action` over every policy actuator
at the task's scale and offset, unless the task says otherwise); a config's entries merge over them.

`policy.json`'s `action` section says the same to the robot-side runtime (simrl.deploy): a
scale per actuator (one number where they share it), the offsets, the mode, and the binary
columns with their open and closed targets.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from simrl.errors import ConfigError
from simrl.managers.terms import index_of

MODES = ("absolute", "delta")


def policy_actuators(env: Any, joints: torch.Tensor | list[int] | None, where: str) -> list[int]:
    """The policy actuators (column indices) driving `joints` (ids), in the joints' order; every
    policy actuator where `joints` is None."""
    m, na = env.model, env.num_actions
    if joints is None:
        return list(range(na))
    by_joint = {int(m.actuator_trnid[i, 0]): i for i in range(na)}
    ids = [int(j) for j in (joints.tolist() if isinstance(joints, torch.Tensor) else joints)]
    missing = [m.joint(j).name for j in ids if j not in by_joint]
    if missing:
        valid = [m.joint(int(m.actuator_trnid[i, 0])).name for i in range(na)]
        raise ConfigError(f"{where}: joints {missing} have no policy actuator; valid: {valid}")
    return [by_joint[j] for j in ids]


def _ctrl_range(env: Any, cols: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    m, f32 = env.model, dict(device=env.device, dtype=torch.float32)
    lo, hi = torch.as_tensor(m.actuator_ctrlrange[cols], **f32).T
    limited = torch.as_tensor(m.actuator_ctrllimited[cols], device=env.device, dtype=torch.bool)
    return torch.where(limited, lo, -torch.inf), torch.where(limited, hi, torch.inf)


# --- terms ------------------------------------------------------------------------------------
class JointPositionAction:
    """Targets for the actuators of `joints` (None: every policy actuator): `offset + scale x
    action` in `absolute` mode, where offset is the task's (a robot's default pose); `target +=
    scale x action` in `delta` mode (a policy that holds still outputs 0 wherever the arm is),
    clamped to the actuators' control ranges. `scale`: one number (None: the task's), a list in
    the joints' order, or {joint regex: value}. For a motor (cartpole's) the target is a force."""

    def __init__(self, env: Any, joints: torch.Tensor | None = None, scale: Any = None,
                 mode: str = "absolute"):
        if mode not in MODES:
            raise ConfigError(f"joint_position_action: mode must be one of {list(MODES)}, got {mode!r}")
        self.cols = policy_actuators(env, joints, "joint_position_action")
        self.index = index_of(self.cols, env.device)
        self.mode = mode
        names = [env.model.joint(int(env.model.actuator_trnid[i, 0])).name for i in self.cols]
        if scale is None:
            scale = float(env.action_scale)
        if isinstance(scale, (int, float)) and not isinstance(scale, bool):
            self.scale: float | torch.Tensor = float(scale)  # a number: the arithmetic of a float
        else:
            from simrl.scene import per_joint

            self.scale = torch.as_tensor(per_joint(scale, names, "joint_position_action: scale"),
                                         device=env.device, dtype=torch.float32)
        self.offset = env.action_offset[self.index]
        self.ctrl_lo, self.ctrl_hi = _ctrl_range(env, self.cols)

    def apply(self, env: Any, actions: torch.Tensor) -> None:
        ctrl = env.sim.ctrl
        if self.mode == "absolute":
            target = self.offset + self.scale * actions[:, self.index]
        else:
            moved = ctrl[:, self.index].float() + self.scale * actions[:, self.index]
            target = torch.maximum(torch.minimum(moved, self.ctrl_hi), self.ctrl_lo)
        ctrl[:, self.index] = target.to(ctrl.dtype)  # float32 -> ctrl's float64 is exact

    def spec(self, env: Any) -> dict[str, Any]:
        scale = self.scale if isinstance(self.scale, float) else self.scale.tolist()
        return {"cols": self.cols, "scale": scale, "mode": self.mode}


class BinaryGripperAction:
    """One column that opens or closes a gripper: the target of `joint`'s actuator is `open`
    where the action is > 0, else `closed` (defaults: the top and bottom of its control range).
    Exploration needs no fine motor control to grasp (Isaac Lab's binary joint action)."""

    def __init__(self, env: Any, joint: int, open: float | None = None,  # noqa: A002
                 closed: float | None = None):
        (self.col,) = policy_actuators(env, [joint], "binary_gripper_action")
        dt = env.sim.ctrl.dtype
        lo, hi = env.model.actuator_ctrlrange[self.col]
        self.open = float(hi if open is None else open)
        self.closed = float(lo if closed is None else closed)
        if not np.isfinite([self.open, self.closed]).all() or self.open == self.closed:
            raise ConfigError(f"binary_gripper_action: open and closed must be two finite targets, got "
                              f"{self.open} and {self.closed} (give both where the actuator has no "
                              "ctrlrange)")
        self.cols = [self.col]
        # the targets in ctrl's own dtype: 0.04 stays 0.04 in a float64 ctrl, as the runtime has it
        self.targets = torch.tensor([self.closed, self.open], device=env.device, dtype=dt)

    def apply(self, env: Any, actions: torch.Tensor) -> None:
        env.sim.ctrl[:, self.col] = self.targets[(actions[:, self.col] > 0).long()]

    def spec(self, env: Any) -> dict[str, Any]:
        return {"cols": self.cols, "scale": 0.0, "binary": {"open": self.open, "closed": self.closed}}


ACTION_TERMS = {"joint_position_action": JointPositionAction, "binary_gripper_action": BinaryGripperAction}


