"""Objects beside the robot (simrl.scene.objects): assembly on the spec, the keyframe, bad input."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from simrl.errors import ConfigError, UnknownNameError
from simrl.scene import assemble

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


def test_entities_are_the_robot_and_each_object_with_their_own_ids():
    from simrl.scene import assemble

    scene = assemble("franka_panda_hand", objects={"cube": {"size": [0.02, 0.02, 0.02]}})
    robot, cube = scene.entities["robot"], scene.entities["cube"]
    m = scene.model
    assert robot.kind == "robot" and robot.fixed_base and not cube.fixed_base
    assert cube.bodies == (m.body("cube").id,) and m.body("cube").id not in robot.bodies
    assert {m.joint(j).name for j in robot.joints} >= {"joint1", "finger_joint1"}
    assert set(robot.bodies).isdisjoint(cube.bodies)


def test_term_params_name_objects_entity_by_entity():
    import pytest

    import simrl
    from simrl.errors import UnknownNameError

    entries = {"push": {"func": "push_body", "mode": "interval", "interval_s": 1.0,
                        "params": {"body": "robot/trunk", "max_vel": 0.1}}}
    env = simrl.make("quadruped", 2, device="cpu", cfg={"events": entries, "push_vel": 0.0})
    (fn, _), = env.event_manager.fns["interval"]
    assert fn.keywords["body"] == env.model.body("trunk").id
    bad = {"push": {**entries["push"], "params": {"body": "robto/trunk", "max_vel": 0.1}}}
    with pytest.raises(UnknownNameError, match=r"event 'push': 'robto' of body 'robto/trunk' is not an "
                                               r"entity of the scene; entities: \['robot'\]"):
        simrl.make("quadruped", 2, device="cpu", cfg={"events": bad, "push_vel": 0.0})
    lift = {"x": {"func": "push_body", "mode": "interval", "interval_s": 1.0,
                  "params": {"body": "robot/cube", "max_vel": 0.1}}}
    with pytest.raises(UnknownNameError, match=r"body 'cube' of entity 'robot' matches nothing"):
        simrl.make("lift", 2, device="cpu", cfg={"events": lift})
