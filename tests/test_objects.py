"""Objects beside the robot (simrl.objects): assembly on the spec, the keyframe, bad input."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from simrl.errors import ConfigError, UnknownNameError
from simrl.robot import assemble

CUBE = {"cube": {"size": [0.02, 0.02, 0.02], "mass": 0.05, "pos": [0.5, 0.1, 0.0]}}


def test_a_cube_is_a_free_body_after_the_robot_resting_on_the_floor():
    scene = assemble("franka_panda_hand", objects=CUBE)
    m, ids = scene.model, scene.objects["cube"]
    assert ids.qpos == m.nq - 7 and ids.dof == m.nv - 6  # after the arm's joints
    assert m.body_mass[ids.body] == pytest.approx(0.05)
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, 0)
    np.testing.assert_allclose(d.qpos[ids.qpos : ids.qpos + 3], [0.5, 0.1, 0.02])
    # default_pose names finger_joint2 (no policy joint): it starts open with its twin
    assert d.qpos[m.joint("finger_joint2").qposadr[0]] == d.qpos[m.joint("finger_joint1").qposadr[0]] == 0.04
    for _ in range(200):  # one second: it stays where it was put, on the floor
        mujoco.mj_step(m, d)
    np.testing.assert_allclose(d.qpos[ids.qpos : ids.qpos + 3], [0.5, 0.1, 0.02], atol=2e-3)


def test_bad_objects_are_refused_naming_the_problem():
    with pytest.raises(ConfigError, match="object 'cube' has no size"):
        assemble("franka_panda_hand", objects={"cube": {"mass": 0.1}})
    with pytest.raises(UnknownNameError, match="object 'cube': unknown fields \\['colour'\\]"):
        assemble("franka_panda_hand", objects={"cube": {"size": [0.02] * 3, "colour": "red"}})
    with pytest.raises(ConfigError, match="size must be 3 half extents > 0"):
        assemble("franka_panda_hand", objects={"cube": {"size": [0.02, 0.0, 0.02]}})
    with pytest.raises(ConfigError, match="already has a body of that name"):
        assemble("franka_panda_hand", objects={"hand": {"size": [0.02] * 3}})
