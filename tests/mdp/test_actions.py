"""Actions by configuration (simrl.mdp.actions): joint position targets with a scale per joint, a
binary gripper, the action spec the robot-side runtime reads, and bad entries."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import simrl
from simrl.deploy.runtime import joint_targets
from simrl.errors import ConfigError, UnknownNameError

ARM_AND_GRIPPER = {
    "joint_pos": {"func": "joint_position_action",
                  "params": {"joints": "joint[1-7]", "scale": {"joint[1-4]": 0.5, ".*": 0.25}}},
    "gripper": {"func": "binary_gripper_action", "params": {"joint": "finger_joint1"}},
}


def test_the_default_action_is_the_tasks_scale_and_offset_on_every_policy_actuator():
    env = simrl.make("quadruped", 4, device="cpu", seed=0, cfg={"action_delay": [0, 0]})
    assert list(env.action_manager.terms) == ["joint_pos"]
    a = torch.linspace(-1, 1, 4 * env.num_actions).reshape(4, env.num_actions)
    env.action_manager.apply(env, a)
    want = env.default_joint_pos + env.action_scale * a
    torch.testing.assert_close(env.sim.ctrl[:, : env.num_actions].float(), want)
    spec = env.action_spec()
    assert spec["scale"] == env.action_scale and spec["mode"] == "absolute" and "binary" not in spec


def test_an_arm_with_a_binary_gripper_drives_each_actuator_as_its_term_says():
    env = simrl.make("lift", 3, device="cpu", seed=0, cfg={"actions": ARM_AND_GRIPPER})
    m, na = env.model, env.num_actions
    finger = next(i for i in range(na) if m.joint(int(m.actuator_trnid[i, 0])).name == "finger_joint1")
    a = torch.full((3, na), 0.2)
    a[:, finger] = torch.tensor([0.7, -0.01, 0.0])  # open, closed, closed (0 is not > 0)
    env.action_manager.apply(env, a)
    ctrl = env.sim.ctrl[:, :na].float()
    lo, hi = m.actuator_ctrlrange[finger]
    assert ctrl[:, finger].tolist() == pytest.approx([hi, lo, lo])
    scale = torch.tensor([0.5] * 4 + [0.25] * 3)
    arm = [i for i in range(na) if i != finger]
    torch.testing.assert_close(ctrl[:, arm], (env.default_joint_pos[arm] + scale * 0.2).expand(3, -1))

    spec = env.action_spec()  # what policy.json says, and what the robot-side runtime makes of it
    assert spec["binary"] == [{"index": finger, "open": hi, "closed": lo}]
    assert spec["scale"][finger] == 0.0 and spec["scale"][:4] == [0.5] * 4
    for row in range(3):
        got = joint_targets(spec, a[row].numpy(), np.asarray(spec["offset"]))
        np.testing.assert_allclose(got, env.sim.ctrl[row, :na].numpy(), rtol=0, atol=1e-6)


def test_terms_over_joints_that_are_not_adjacent_index_with_a_device_tensor():
    actions = {"joint_pos": {"func": "joint_position_action",
                             "params": {"joints": ".*_hip_joint", "scale": 0.1}},
               "legs": {"func": "joint_position_action", "params": {"joints": ".*_(thigh|calf)_joint"}}}
    env = simrl.make("quadruped", 2, device="cpu", seed=0, cfg={"action_delay": [0, 0], "actions": actions})
    hips = env.action_manager.terms["joint_pos"]
    assert hips.cols == [0, 3, 6, 9] and isinstance(hips.index, torch.Tensor)
    env.action_manager.apply(env, torch.ones(2, 12))
    scale = torch.full((12,), env.action_scale)
    scale[[0, 3, 6, 9]] = 0.1
    torch.testing.assert_close(env.sim.ctrl[:, :12].float(), (env.default_joint_pos + scale).expand(2, -1))
    assert env.action_spec()["scale"] == pytest.approx(scale.tolist())


def test_delta_mode_moves_the_targets_and_clamps_them_to_the_control_range():
    env = simrl.make("reach", 2, device="cpu", seed=0, cfg={"action_mode": "delta"})
    na = env.num_actions
    before = env.sim.ctrl[:, :na].clone()
    env.action_manager.apply(env, torch.full((2, na), 0.1))
    torch.testing.assert_close(env.sim.ctrl[:, :na], before + env.action_scale * 0.1)
    env.action_manager.apply(env, torch.full((2, na), 1e3))
    lo, hi = env.model.actuator_ctrlrange[:na].T
    assert np.allclose(env.sim.ctrl[:, :na].numpy(), np.where(lo < hi, hi, env.sim.ctrl[:, :na].numpy()))
    assert env.action_spec()["mode"] == "delta"


@pytest.mark.parametrize(("actions", "error", "words"), [
    ({"joint_pos": {"func": "joint_position_action", "params": {"joints": "joint[1-7]"}}, "gripper": None},
     ConfigError, "joints ['finger_joint1'] are in no action term"),
    ({"joint_pos": None, "all": {"func": "joint_position_action"}}, ConfigError,  # and lift's gripper
     "both drive actuator"),
    ({"joint_pos": {"func": "torque_action"}}, UnknownNameError, "valid: ['binary_gripper_action'"),
    ({**ARM_AND_GRIPPER, "joint_pos": {"func": "joint_position_action",
                                       "params": {"joints": "joint[1-7]", "mode": "relative"}}},
     ConfigError, "mode must be one of ['absolute', 'delta']"),
    ({"joint_pos": {"func": "joint_position_action", "params": {"joints": "finger_joint2"}}}, ConfigError,
     "joints ['finger_joint2'] have no policy actuator"),
    ({"joint_pos": None, "gripper": None,
      "all": {"func": "joint_position_action", "params": {"scale": {"joint.*": 0.5}}}}, ConfigError,
     "no pattern of ['joint.*'] matches joint 'finger_joint1'"),
    ({"extra": {"params": {}}}, UnknownNameError, "action 'extra': unknown func 'extra'"),  # func: the name
    ({"wrist": None}, ConfigError, "action 'wrist': null drops an entry, but there is none of that name; "
                                   "entries: ['gripper', 'joint_pos']"),
])
def test_bad_action_entries_end_in_one_line(actions, error, words):
    with pytest.raises(error) as e:
        simrl.make("lift", 2, device="cpu", seed=0, cfg={"actions": actions})
    assert words in str(e.value) and "\n" not in str(e.value)


def test_mixed_modes_are_refused():
    actions = {"joint_pos": {"func": "joint_position_action",
                             "params": {"joints": "joint[1-7]", "mode": "delta"}},
               "finger": {"func": "joint_position_action", "params": {"joints": "finger_joint1"}},
               "gripper": None}
    with pytest.raises(ConfigError, match=r"mix modes \['absolute', 'delta'\]"):
        simrl.make("lift", 2, device="cpu", seed=0, cfg={"actions": actions})


def test_lift_drives_its_gripper_binary_by_default_and_like_the_arm_with_gripper_null():
    env = simrl.make("lift", 2, device="cpu", seed=0)
    assert list(env.action_manager.terms) == ["joint_pos", "gripper"]
    assert len(env.action_spec()["binary"]) == 1
    old = simrl.make("lift", 2, device="cpu", seed=0, cfg={"gripper": None})
    assert list(old.action_manager.terms) == ["joint_pos"] and "binary" not in old.action_spec()
    with pytest.raises(ConfigError, match="gripper 'hand' is not one of the robot's policy joints"):
        simrl.make("lift", 2, device="cpu", seed=0, cfg={"gripper": "hand"})
