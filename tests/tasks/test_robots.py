"""Robots as data: every shipped robot config assembles, maps by name, steps, and deploys.

The Menagerie robots come from the test extra's offline copies (tests/conftest.py).
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
import torch

from simrl.errors import ConfigError, MissingFileError, UnknownNameError
from simrl.scene import assemble, load_robot, robot_names

# the legged robots (the arms' scenes and tasks: tests/tasks/test_manipulation.py)
ROBOTS = [name for name in robot_names() if load_robot(name).feet]
# the task each robot is trained with (default: quadruped)
TASK = {"unitree_g1": "humanoid", "unitree_g1_legs": "humanoid", "booster_t1": "humanoid"}


def test_the_shipped_robots():
    assert {"quadruped", "unitree_go1", "unitree_g1"} <= set(ROBOTS)
    assert {"franka_panda", "franka_panda_hand"} <= set(robot_names()) - set(ROBOTS)


@pytest.mark.parametrize("name", ROBOTS)
def test_scene_maps_joints_actuators_and_sensors_by_name(name):
    robot = load_robot(name)
    scene = assemble(name)
    m = scene.model
    assert m.nu == len(robot.joints) + len(robot.held_joints)
    for i, joint in enumerate(robot.joints + robot.held_joints):  # actuator i drives the i-th policy joint
        assert m.actuator(i).name == joint
        jid = m.joint(joint).id
        assert m.actuator_trnid[i, 0] == jid
        kp, kd = np.concatenate([scene.kp, scene.held_kp]), np.concatenate([scene.kd, scene.held_kd])
        assert m.actuator_gainprm[i, 0] == pytest.approx(kp[i])  # PD as configured
        assert -m.actuator_biasprm[i, 2] == pytest.approx(kd[i])
        qpos = np.concatenate([scene.joint_qpos, scene.held_qpos])
        assert qpos[i] == m.jnt_qposadr[jid]
    for sensor in ("imu_gyro", "imu_acc", "imu_quat", "imu_vel"):
        s = m.sensor(sensor)
        assert m.site(int(s.objid[0])).name == robot.imu_site
    home = scene.default_joint_pos.tolist() + scene.held_pos.tolist()
    assert m.key("home").ctrl.tolist() == pytest.approx(home)
    assert [m.body(b).name for b in scene.feet] == robot.feet
    assert any(m.geom_type[g] == mujoco.mjtGeom.mjGEOM_PLANE for g in range(m.ngeom))


def test_menagerie_go1_reorders_nothing_by_position():
    """The action order is the config's joint order, whatever the MJCF's actuator order."""
    robot = load_robot("unitree_go1").to_dict()
    robot["joints"] = robot["joints"][3:6] + robot["joints"][:3] + robot["joints"][6:]  # FL first
    scene = assemble(robot)
    assert scene.model.actuator(0).name == "FL_hip_joint"
    assert scene.joint_qpos[0] == scene.model.joint("FL_hip_joint").qposadr[0]


@pytest.mark.parametrize("backend", ["mujoco", "mjwarp"])
@pytest.mark.parametrize("name", ROBOTS)
def test_random_actions_step_without_nan(name, backend):
    import simrl

    n, steps = (8, 200) if backend == "mujoco" else (2, 10)  # Warp's CPU device is slow
    env = simrl.make(TASK.get(name, "quadruped"), n, device="cpu", backend=backend, robot=name, seed=0)
    gen = torch.Generator().manual_seed(0)
    since_reset = torch.zeros(n, dtype=torch.long)  # control steps since each episode began
    for _ in range(steps):
        obs, rew, term, trunc, _ = env.step(torch.randn(n, env.num_actions, generator=gen))
        assert torch.isfinite(rew).all() and all(torch.isfinite(v).all() for v in obs.values())
        since_reset = torch.where(term | trunc, 0, since_reset + 1)
    assert env.episode_length_buf.tolist() == since_reset.tolist()  # episodes ended where reported
    assert env.num_actions == len(load_robot(name).joints)
    assert env.unstable_count == 0


@pytest.mark.parametrize("name", ROBOTS)
def test_deploy_builds_the_envs_observations_from_raw_readings(name):
    """One definition: simrl.deploy, fed MuJoCo's own sensors and encoders of a world, builds
    the observation the env computed for it (within 1e-5)."""
    import simrl
    from simrl.deploy.runtime import observation
    from simrl.rehearse.scene import Readings
    from simrl.rl.export import deploy_metadata

    env = simrl.make(TASK.get(name, "quadruped"), 4, device="cpu", robot=name, seed=1,
                     cfg={"obs_noise": False})
    meta = deploy_metadata(env, ["policy"])
    gen = torch.Generator().manual_seed(0)
    for _ in range(15):
        obs, *_ = env.step(0.5 * torch.randn(4, env.num_actions, generator=gen))
    read = Readings(env.model, meta)
    for w in range(4):
        d = env.sim.get_mjdata(w)  # forwarded: sensors at the state's instant
        r = read(d, env.command()[w].numpy())
        r["last_action"] = env.actions[w].numpy()
        r["policy_time"] = env.episode_length_buf[w].item() * env.dt  # DeployPolicy counts it itself
        np.testing.assert_allclose(observation(meta, r), obs["policy"][w].numpy(), atol=1e-5)


# --- bad input ---------------------------------------------------------------------------------
def test_unknown_robot_lists_the_shipped_ones():
    with pytest.raises(UnknownNameError, match=r"unknown robot 'unitree_go7'; valid: \[.*'unitree_go1'"):
        load_robot("unitree_go7")


def test_missing_field_and_unknown_field_are_named():
    robot = load_robot("quadruped").to_dict()
    del robot["joints"]
    with pytest.raises(ConfigError, match=r"required fields \['joints'\] are missing"):
        load_robot(robot)
    with pytest.raises(UnknownNameError, match=r"unknown fields \['kpp'\]; valid: .*'kp'"):
        load_robot({**load_robot("quadruped").to_dict(), "kpp": 3.0})


def test_a_name_missing_from_the_mjcf_is_named_with_the_valid_ones():
    robot = load_robot("quadruped").to_dict()
    robot["feet"] = ["FR_calf", "FR_foot"]
    with pytest.raises(UnknownNameError, match=r"feet \['FR_foot'\] not in the MJCF.*valid: .*'FR_calf'"):
        assemble(robot)


def test_a_missing_mjcf_and_an_unavailable_menagerie_model(monkeypatch, tmp_path):
    robot = load_robot("quadruped").to_dict()
    with pytest.raises(MissingFileError, match="MJCF file not found"):
        assemble({**robot, "source": "nowhere/robot.xml"})
    monkeypatch.setenv("MENAGERIE_ROOT", str(tmp_path))  # an offline copy without the robot
    with pytest.raises(MissingFileError, match=r"Menagerie model unavailable.*MENAGERIE_ROOT"):
        assemble("unitree_go1")


def test_torque_motors_need_gains_in_the_config():
    """A robot whose MJCF drives its joints with torque motors (as Menagerie's Go2) must say
    which PD gains the position actuators get."""
    xml = """<mujoco><worldbody><body name="base"><freejoint/><geom size=".1"/><site name="imu"/>
      <body name="leg"><joint name="j" axis="0 1 0" range="-1 1"/>
      <geom type="capsule" size=".05" fromto="0 0 0 0 0 -.3"/></body></body></worldbody>
      <actuator><motor joint="j" ctrlrange="-23.7 23.7"/></actuator></mujoco>"""
    path = tmp_path_xml(xml)
    robot = {"name": "toy", "source": str(path), "root_body": "base", "feet": ["leg"],
             "joints": ["j"], "default_pose": {"j": 0.2}}
    with pytest.raises(ConfigError, match="kp is not set and the MJCF has no position actuator"):
        assemble(robot)
    scene = assemble({**robot, "kp": 20.0, "kd": 0.5, "effort_limit": 5.0})
    m = scene.model
    assert m.actuator_gainprm[0, 0] == 20.0 and m.actuator_forcerange[0].tolist() == [-5.0, 5.0]
    assert m.actuator_biastype[0] == mujoco.mjtBias.mjBIAS_AFFINE  # a position actuator now
    assert m.actuator_ctrlrange[0].tolist() == m.joint("j").range.tolist() != [-23.7, 23.7]  # not N m


def tmp_path_xml(xml: str):
    import tempfile
    from pathlib import Path

    path = Path(tempfile.mkdtemp()) / "toy.xml"
    path.write_text(xml)
    return path


def test_assembling_the_primitive_quadruped_changes_none_of_its_physics():
    """Its MJCF already has what assembly adds: the scene steps bit-identically to the file."""
    from simrl import ASSETS

    m0 = mujoco.MjModel.from_xml_path(str(ASSETS / "quadruped" / "quadruped.xml"))
    m1 = assemble("quadruped").model
    d0, d1 = mujoco.MjData(m0), mujoco.MjData(m1)
    mujoco.mj_resetDataKeyframe(m0, d0, 0)
    mujoco.mj_resetDataKeyframe(m1, d1, 0)
    rng = np.random.default_rng(0)
    for _ in range(300):
        d0.ctrl[:] = d1.ctrl[:] = m0.key_ctrl[0] + rng.normal(0, 0.3, m0.nu)
        mujoco.mj_step(m0, d0)
        mujoco.mj_step(m1, d1)
    assert np.array_equal(d0.qpos, d1.qpos) and np.abs(d0.qpos[:2]).max() > 1e-4  # it moved


def test_contact_model_fields_set_the_cone_and_the_robots_condim():
    """Go1 ships pyramidal cones and condim-3 contacts (Menagerie's elliptic, impratio 100,
    condim-6 feet cost ~4x the physics); null keeps the MJCF's own; bad values are refused."""
    go1 = load_robot("unitree_go1").to_dict()
    own = assemble({**go1, "cone": None, "impratio": None, "condim": None}).model
    ours = assemble("unitree_go1").model
    assert own.opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC and own.opt.impratio == 100
    assert ours.opt.cone == mujoco.mjtCone.mjCONE_PYRAMIDAL and ours.opt.impratio == 1
    feet = [ours.geom(n).id for n in ("FR", "FL", "RR", "RL")]
    assert own.geom_condim[feet].tolist() == [6] * 4 and ours.geom_condim[feet].tolist() == [3] * 4
    touching = (ours.geom_bodyid != 0) & (ours.geom_conaffinity > 0)
    assert set(ours.geom_condim[touching]) == {3}
    for field, value, msg in (("cone", "round", "cone must be one of"), ("condim", 2, "condim must be"),
                              ("impratio", 0.5, "impratio must be >= 1")):
        with pytest.raises(ConfigError, match=msg):
            load_robot({**go1, field: value})


def test_a_joints_list_that_leaves_out_an_actuated_joint_is_refused():
    go1 = load_robot("unitree_go1").to_dict()
    go1["joints"] = [j for j in go1["joints"] if j != "RL_calf_joint"]
    with pytest.raises(ConfigError, match=r"leaves out \['RL_calf_joint'\], which the MJCF.*held_joints"):
        assemble(go1)
    scene = assemble({**go1, "held_joints": ["RL_calf_joint"]})  # or it is held, explicitly
    assert scene.model.nu == 12 and scene.model.actuator(11).name == "RL_calf_joint"


def test_held_joints_are_refused_where_they_name_a_policy_joint_or_none_or_miss_a_gain():
    go1 = {**load_robot("unitree_go1").to_dict(), "motors": None}
    with pytest.raises(ConfigError, match=r"names policy joints \['FR_hip_joint'\]"):
        assemble({**go1, "held_joints": ["FR_hip_joint"]})
    with pytest.raises(UnknownNameError, match=r"held_joints \['FR_hip'\] not in the MJCF"):
        assemble({**go1, "held_joints": ["FR_hip"]})
    legs = {**go1, "joints": go1["joints"][:9], "held_joints": go1["joints"][9:], "kp": [35.0] * 9}
    with pytest.raises(ConfigError, match="kp is a list .* leaves the held joints without one"):
        assemble(legs)


def test_a_legs_only_humanoid_holds_its_waist_and_arms_at_the_default_pose():
    """unitree_g1_legs: the policy's 12 actions move the legs; the 17 held joints' servos keep
    their targets whatever the actions, so on average the waist and arms stay near the default
    pose (falls jolt them briefly) while the legs move far from it."""
    import simrl

    env = simrl.make("humanoid", 4, device="cpu", robot="unitree_g1_legs", seed=0)
    sc = env.scene
    assert env.num_actions == 12 and env.model.nu == 29 and len(sc.held_qpos) == 17
    assert env.single_action_space.shape == (12,)
    gen = torch.Generator().manual_seed(0)
    held_err, leg_err = [], []
    for _ in range(25):
        env.step(torch.randn(4, 12, generator=gen))
        held = env.sim.qpos[:, sc.held_qpos] - torch.as_tensor(sc.held_pos)
        held_err.append(float(held.abs().mean()))
        leg_err.append(float((env.joint_pos - env.default_joint_pos).abs().mean()))
        targets = torch.as_tensor(sc.held_pos, dtype=env.sim.dtype).expand(4, 17)
        assert torch.equal(env.sim.ctrl[:, 12:], targets)  # the actions never reach them
    held_err, leg_err = np.mean(held_err), np.mean(leg_err)
    assert leg_err > 0.1 and held_err < 0.2 * leg_err, (leg_err, held_err)
    spec = env.action_spec()
    assert len(spec["joint_names"]) == len(spec["kp"]) == len(spec["ctrl_range"]) == 12
    assert env.scene.facts()["held"]["joint_names"][0] == "waist_yaw_joint"


@pytest.mark.parametrize("field, value, message", [
    ("kp", 0.0, r"kp must be > 0 on every joint, got \{'FR_hip_joint': 0.0"),
    ("kp", {".*_calf_joint": -5.0, ".*": 35.0}, r"kp must be > 0 on every joint, got \{'FR_calf_joint'"),
    ("kd", -0.5, r"kd must be >= 0 on every joint"),
    ("effort_limit", 0.0, r"effort_limit must be > 0 on every joint"),
])
def test_zero_or_negative_gains_are_refused(field, value, message):
    go1 = load_robot("unitree_go1").to_dict()
    go1[field] = value
    with pytest.raises(ConfigError, match=message):
        assemble(go1)
    go1[field] = load_robot("unitree_go1").to_dict()[field]
    go1["kd"] = 0.0  # a servo without damping is a valid (if soft) choice
    assert assemble(go1).kd.tolist() == [0.0] * 12


def test_a_site_the_mjcf_lacks_is_added_on_the_spec():
    """Menagerie's Go1 with its IMU moved to a site the config adds on the trunk: no XML edited."""
    go1 = load_robot("unitree_go1").to_dict()
    go1["sites"] = {"my_imu": {"body": "trunk", "pos": [0.01, 0.0, 0.02]}}
    go1["imu_site"] = "my_imu"
    scene = assemble(go1)
    site = scene.model.site("my_imu")
    assert scene.model.body(site.bodyid[0]).name == "trunk"
    np.testing.assert_allclose(scene.imu_pos, [0.01, 0.0, 0.02])
    assert scene.model.sensor("imu_gyro").objid[0] == site.id  # the IMU sensors ride on it
    go1["sites"] = {"my_imu": {"body": "torso"}}
    with pytest.raises(UnknownNameError, match=r"site 'my_imu' is on body 'torso', which is not in the MJCF"):
        assemble(go1)
    go1["sites"] = {"imu": {"body": "trunk"}}
    with pytest.raises(ConfigError, match="site 'imu' is already in the MJCF"):
        assemble(go1)
    go1["sites"] = {"my_imu": {"body": "trunk", "pos": [0, 0]}}
    with pytest.raises(ConfigError, match=r"needs pos \[x, y, z\]"):
        assemble(go1)


def test_the_motor_table_must_drive_every_policy_joint():
    from simrl.errors import ConfigError

    go1 = load_robot("unitree_go1").to_dict()
    assert go1["motors"]["layout"] == "unitree_go" and go1["motors"]["order"][:3] == go1["joints"][:3]
    short = {**go1, "motors": {"layout": "unitree_go", "order": go1["motors"]["order"][:-1]}}
    with pytest.raises(ConfigError, match=r"motors.order lacks the policy or held joints \['RL_calf"):
        load_robot(short)
    with pytest.raises(ConfigError, match="motors must be"):
        load_robot({**go1, "motors": ["FR_hip_joint"]})


def test_the_export_carries_the_joint_limits_the_deploy_controller_checks():
    from simrl.registry import make

    env = make("quadruped", 2, device="cpu", cfg={"robot": "unitree_go1"})
    limits = env.deploy_spec()["limits"]
    m, robot = env.model, load_robot("unitree_go1")
    hip = m.joint("FR_hip_joint")
    assert limits["joint_pos"][0] == pytest.approx(hip.range.tolist())
    assert limits["joint_vel"][:3] == [30.1, 30.1, 20.06] and len(limits["joint_vel"]) == len(robot.joints)
