"""The left-right mirror (simrl/mirror.py): derived from names and hinge axes, an involution,
and true to the physics: the mirror image of a state steps to the mirror image of its result."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import simrl
from simrl import mirror
from simrl.errors import ConfigError

CALM = {"obs_noise": False, "push_vel": 0.0, "action_delay": [0, 0], "kp_scale": [1.0, 1.0],
        "kd_scale": [1.0, 1.0], "effort_scale": [1.0, 1.0], "joint_friction": [0.0, 0.0],
        "joint_damping": [0.0, 0.0], "joint_armature": [0.0, 0.0], "com_offset": 0.0,
        "added_base_mass": [0.0, 0.0], "friction": [1.0, 1.0], "ground_dampratio": [1.0, 1.0]}


@pytest.mark.parametrize("robot", ["quadruped", "unitree_go1", "unitree_g1", "unitree_g1_legs", "booster_t1"])
def test_every_shipped_legged_robot_mirrors_onto_itself_twice(robot):
    env = simrl.make("quadruped", 2, device="cpu", robot=robot)
    maps = env.mirror_maps()
    index, sign, feet = env.robot_mirror
    names = env.robot.joints
    for n, i in zip(names, index, strict=True):  # sides swapped by name, centre joints kept
        side = {"left_": "right_", "right_": "left_", "Left_": "Right_", "Right_": "Left_",
                "FR_": "FL_", "FL_": "FR_", "RR_": "RL_", "RL_": "RR_"}
        key = next((k for k in side if k in n), None)
        assert names[i] == (n.replace(key, side[key]) if key else n)
    assert sorted(index.tolist()) == list(range(len(names))) and set(np.abs(sign)) == {1.0}
    for group, sp in [*maps["obs"].items(), ("actions", maps["actions"])]:
        x = torch.randn(5, len(sp[0]))
        once = mirror.apply(x, sp)
        assert torch.equal(mirror.apply(once, sp), x), group
        assert not torch.equal(once, x), group  # it does move something


def test_roll_and_yaw_joints_flip_pitch_joints_do_not():
    env = simrl.make("quadruped", 2, device="cpu", robot="unitree_g1")
    index, sign, _ = env.robot_mirror
    by_name = dict(zip(env.robot.joints, sign, strict=True))
    assert by_name["left_hip_pitch_joint"] == 1 and by_name["left_knee_joint"] == 1
    assert by_name["left_hip_roll_joint"] == -1 and by_name["left_hip_yaw_joint"] == -1
    assert by_name["waist_yaw_joint"] == -1 and by_name["waist_pitch_joint"] == 1


def test_a_mirrored_state_steps_to_the_mirror_image_of_the_result():
    env = simrl.make("quadruped", 2, device="cpu", seed=5, cfg=CALM)
    env.reset()
    maps = env.mirror_maps()
    index, sign, _ = env.robot_mirror
    sim, rq, rd = env.sim, env.legged.root_qpos, env.legged.root_dof
    g = torch.Generator().manual_seed(0)
    q, v = sim.qpos[0].clone(), sim.qvel[0].clone()
    q[env.joint_qpos] += 0.2 * torch.randn(12, generator=g, dtype=q.dtype)
    v[rd : rd + 6] = 0.5 * torch.randn(6, generator=g, dtype=v.dtype)
    v[env.joint_dof] = torch.randn(12, generator=g, dtype=v.dtype)
    idx, sgn = torch.as_tensor(index), torch.as_tensor(sign, dtype=q.dtype)
    mq, mv = q.clone(), v.clone()
    mq[rq + 1] = -q[rq + 1]  # position y
    mq[rq + 3 : rq + 7] = q[rq + 3 : rq + 7] * torch.tensor([1, -1, 1, -1], dtype=q.dtype)  # M R M
    mq[env.joint_qpos] = q[env.joint_qpos][idx] * sgn
    mv[rd + 1] = -v[rd + 1]  # world linear velocity y
    mv[rd + 3 : rd + 6] = v[rd + 3 : rd + 6] * torch.tensor([-1, 1, -1], dtype=v.dtype)  # axial, body frame
    mv[env.joint_dof] = v[env.joint_dof][idx] * sgn
    sim.qpos[:] = torch.stack([q, mq])
    sim.qvel[:] = torch.stack([v, mv])
    env.fix_command([0.6, 0.2, 0.4])
    env.command()[1] = torch.tensor([0.6, -0.2, -0.4])
    # the trot clock's mirror image is the clock half a cycle on (left and right feet swap phases)
    env.episode_length_buf[1] = env.episode_length_buf[0] + round(0.5 * env.cfg.gait_period_s / env.dt)
    for _ in range(5):
        a = 0.5 * torch.randn(1, 12, generator=g)
        obs, *_ = env.step(torch.cat([a, mirror.apply(a, maps["actions"])]))
        for group, sp in maps["obs"].items():
            torch.testing.assert_close(obs[group][1], mirror.apply(obs[group][:1], sp)[0],
                                       atol=2e-3, rtol=2e-3, msg=group)


def test_bad_mirror_rules_are_named():
    joints = ["left_knee", "right_knee", "left_hip"]
    with pytest.raises(ConfigError, match="maps joint 'left_hip' to 'right_hip'"):
        mirror.swap_index(joints, {"left_": "right_"})
    with pytest.raises(ConfigError, match="appear once"):  # a_ and c_ joints would both map to b_
        mirror.swap_index(["a_knee", "b_knee", "c_knee"], {"a_": "b_", "c_": "b_"})
    with pytest.raises(ConfigError, match="no mirror rule"):
        simrl.make("quadruped", 2, device="cpu", robot={**_robot("quadruped"), "mirror": None}).mirror_maps()
    with pytest.raises(ConfigError, match="task 'cartpole' has no robot, so no mirror image of its actions"):
        simrl.make("cartpole", 2, device="cpu").mirror_maps()


def _robot(name):
    from simrl.scene import load_robot

    return load_robot(name).to_dict()
