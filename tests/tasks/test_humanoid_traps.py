"""A humanoid from unmodified Menagerie MJCF, by yaml alone, without traps: limits derived from the
robot, a warning where episodes end at once, mirror markers at name boundaries, the torque
limits the simulation applies, and feet named by their geoms refused with the reason."""

from __future__ import annotations

import pytest

import simrl
from simrl.errors import UnknownNameError
from simrl.mirror import swap_index


def test_the_height_termination_is_a_share_of_the_robots_own_base_height():
    g1 = simrl.make("humanoid", 1, device="cpu", robot="unitree_g1_legs")
    t1 = simrl.make("humanoid", 1, device="cpu", robot="booster_t1")
    assert g1.deploy_spec()["termination"]["min_base_height"] == pytest.approx(0.6 * g1.legged.base_z0)
    assert t1.deploy_spec()["termination"]["min_base_height"] == pytest.approx(0.6 * t1.legged.base_z0)
    fixed = simrl.make("humanoid", 1, device="cpu", robot="booster_t1", cfg={"min_base_height": 0.3})
    assert fixed.deploy_spec()["termination"]["min_base_height"] == 0.3  # an absolute height wins


def test_episodes_that_end_at_once_are_named_in_one_warning(capsys, tmp_path):
    simrl.train("cartpole", "task.cfg.max_angle=0.0001", num_envs=16, max_iterations=4, device="cpu",
                progress=False, agent={"num_steps_per_env": 16}, log_root=str(tmp_path))
    err = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert len(err) == 1 and "termination 'pole_down' ends" in err[0] and "episodes last" in err[0]


def test_mirror_markers_match_at_name_boundaries_only():
    names = ["l_ank_roll_link", "r_ank_roll_link", "l_hip", "r_hip"]
    assert swap_index(names, {"l_": "r_"}, "body").tolist() == [1, 0, 3, 2]  # not r_ank_rolr_link


def test_the_torque_limit_is_the_joints_actuatorfrcrange_where_the_mjcf_sets_one():
    g1 = simrl.make("humanoid", 1, device="cpu", robot="unitree_g1_legs")
    m = g1.model
    knee = g1.robot.joints.index("left_knee_joint")
    want = float(abs(m.jnt_actfrcrange[m.joint("left_knee_joint").id]).max())
    assert g1.scene.effort_limit[knee] == want and g1.action_spec()["torque_limit"][knee] == want
    assert all(lim < float("inf") for lim in g1.scene.effort_limit)


def test_a_foot_named_by_its_geom_is_refused_saying_feet_are_bodies():
    robot = {"name": "g", "source": "menagerie:unitree_g1/g1_mjx", "root_body": "pelvis",
             "feet": ["left_foot1_collision", "right_ankle_roll_link"], "joints": ["left_knee_joint"],
             "imu_site": "imu_in_pelvis", "kp": 100.0, "kd": 2.0, "effort_limit": 50.0}
    with pytest.raises(UnknownNameError, match=r"feet are bodies: \['left_foot1_collision'\] are geoms, of "
                                               r"bodies \['left_ankle_roll_link'\]"):
        simrl.make("humanoid", 1, device="cpu", robot=robot)


def test_motor_strength_randomization_scales_a_joints_actuatorfrcrange_too():
    """G1 limits torque per joint (actuatorfrcrange), not per actuator: effort_scale must reach
    that limit, or weaker motors are never trained on. The torque the physics applies obeys it."""
    import numpy as np
    import torch

    env = simrl.make("humanoid", 2, device="cpu", seed=0, robot="unitree_g1_legs",
                     cfg={"effort_scale": [0.05, 0.05], "push_vel": 0.0})
    knee = env.model.joint("left_knee_joint").id
    limit = float(env.model.jnt_actfrcrange[knee, 1])
    assert torch.allclose(env.sim.param("jnt_actfrcrange")[:, knee, 1].double(),
                          torch.full((2,), 0.05 * limit, dtype=torch.float64))
    env.reset(seed=0)
    env.step(torch.full((2, env.num_actions), 1.0))
    d = env.sim.get_mjdata(0)
    applied = np.abs(d.qfrc_actuator[env.scene.joint_dof]).max()
    assert 0 < applied <= 0.05 * float(abs(env.model.jnt_actfrcrange[:, 1]).max()) + 1e-6


def test_a_state_saved_before_a_field_was_randomized_restores_its_model_value():
    """A checkpoint from before effort_scale reached the joint limits has no jnt_actfrcrange: the
    restored env takes the model's own limits, as that run trained with, not today's draw."""
    import torch

    env = simrl.make("humanoid", 2, device="cpu", seed=0, robot="unitree_g1_legs")
    state = env.sim.get_state()
    drawn = state.pop("param/jnt_actfrcrange")
    nominal = torch.as_tensor(env.model.jnt_actfrcrange).to(drawn.dtype).expand_as(drawn)
    assert not torch.equal(drawn, nominal)  # today's draw scaled them
    env.sim.set_state(state)
    assert torch.equal(env.sim.param("jnt_actfrcrange"), nominal)
    assert all(torch.equal(env.sim.get_state()[k], v) for k, v in state.items())  # the rest as saved
