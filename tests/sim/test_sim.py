"""simrl.sim: both backends against plain mujoco.mj_step, resets, params, zero-copy, errors."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
import torch

from simrl import ASSETS
from simrl.sim import SimError, make_sim

PENDULUM = ASSETS / "pendulum" / "pendulum.xml"
QUADRUPED = ASSETS / "quadruped" / "quadruped.xml"


def reference_rollout(path, qpos0, qvel0, ctrls, keyframe=None):
    """Plain mj_step, one MjData per world: the ground truth. Returns (T, N, nq) qpos."""
    model = mujoco.MjModel.from_xml_path(str(path))
    out = []
    for w in range(qpos0.shape[0]):
        data = mujoco.MjData(model)
        if keyframe is not None:
            mujoco.mj_resetDataKeyframe(model, data, mujoco.mj_name2id(model, 8, keyframe))
        data.qpos[:], data.qvel[:] = qpos0[w], qvel0[w]
        traj = []
        for u in ctrls:
            data.ctrl[:] = u[w]
            mujoco.mj_step(model, data)
            traj.append(data.qpos.copy())
        out.append(traj)
    return np.asarray(out).transpose(1, 0, 2)


def random_ctrls(model, steps, n, seed=0):
    rng = np.random.default_rng(seed)
    lo, hi = model.actuator_ctrlrange[:, 0], model.actuator_ctrlrange[:, 1]
    return rng.uniform(lo, hi, size=(steps, n, model.nu))


@pytest.mark.parametrize("path,key", [(PENDULUM, None), (QUADRUPED, "home")])
def test_mujoco_backend_matches_mj_step_bit_for_bit(path, key):
    n, steps = 4, 500
    sim = make_sim(path, n, backend="mujoco", keyframe=key, nthread=2)
    rng = np.random.default_rng(1)
    qpos0 = sim.qpos.numpy().copy()
    qpos0[:, -sim.model.nu :] += rng.normal(0, 0.05, size=(n, sim.model.nu))
    qvel0 = rng.normal(0, 0.1, size=(n, sim.model.nv))
    sim.reset(qpos=torch.from_numpy(qpos0), qvel=torch.from_numpy(qvel0))
    ctrls = random_ctrls(sim.model, steps, n)
    got = []
    for u in ctrls:
        sim.ctrl[:] = torch.from_numpy(u)
        sim.step()
        got.append(sim.qpos.numpy().copy())
    want = reference_rollout(path, qpos0, qvel0, ctrls, keyframe=key)
    assert np.isfinite(want).all()
    np.testing.assert_array_equal(np.asarray(got), want)


def test_decimated_step_equals_single_steps():
    a = make_sim(QUADRUPED, 3, backend="mujoco", keyframe="home")
    b = make_sim(QUADRUPED, 3, backend="mujoco", keyframe="home")
    u = torch.from_numpy(random_ctrls(a.model, 1, 3)[0])
    a.ctrl[:] = u
    b.ctrl[:] = u
    for _ in range(5):
        a.step(4)
        for _ in range(4):
            b.step(1)
    assert torch.equal(a.qpos, b.qpos) and torch.equal(a.qvel, b.qvel)


def test_reset_subset_changes_only_those_worlds():
    sim = make_sim(QUADRUPED, 6, backend="mujoco", keyframe="home")
    sim.ctrl[:] = torch.from_numpy(random_ctrls(sim.model, 1, 6)[0])
    sim.step(20)
    before = sim.qpos.clone()
    ids = torch.tensor([1, 4])
    new_qvel = torch.zeros(2, sim.model.nv, dtype=sim.dtype)
    new_qvel[:, 0] = 0.7
    sim.reset(ids, qvel=new_qvel)
    home = torch.from_numpy(sim.model.key_qpos[0])
    keep = torch.tensor([0, 2, 3, 5])
    assert torch.equal(sim.qpos[keep], before[keep])
    assert torch.equal(sim.qpos[ids], home.expand(2, -1))
    assert torch.equal(sim.qvel[ids, 0], torch.full((2,), 0.7, dtype=sim.dtype))


def test_per_world_friction_and_mass_affect_only_that_world():
    n = 4
    sim = make_sim(QUADRUPED, n, backend="mujoco", keyframe="home")
    # push every trunk sideways; world 2 slides on ice, world 3 carries 5 kg more
    trunk = sim.body_ids(["trunk"])[0]
    sim.param("geom_friction")[2, :, 0] = 0.01  # contacts take the larger geom's friction
    sim.set_param("body_mass", sim.param("body_mass")[3, trunk] + 5.0, ids=[3])
    sim.ctrl[:] = torch.from_numpy(sim.model.key_ctrl[0])
    sim.qvel[:, 0] = 1.0
    sim.step(100)
    x = sim.qpos[:, 0]
    assert torch.equal(x[0], x[1])  # untouched worlds stay identical
    assert abs(float(x[2] - x[0])) > 1e-3  # less friction: slides further
    assert abs(float(x[3] - x[0])) > 1e-6  # heavier: moves differently
    assert float(sim.param("body_mass")[3, trunk] - sim.param("body_mass")[0, trunk]) == 5.0


def test_zero_copy_views():
    sim = make_sim(PENDULUM, 3, backend="mujoco")
    qpos_np = sim.batch.bind("qpos")
    assert sim.qpos.data_ptr() == qpos_np.ctypes.data
    assert sim.ctrl.data_ptr() == sim.batch.bind("ctrl").ctypes.data
    sim.ctrl[1, 0] = 2.0  # only world 1 is driven
    sim.step(50)
    assert float(sim.qpos[1, 0]) > 0.05
    assert float(sim.qpos[0, 0]) == 0.0 and float(sim.qpos[2, 0]) == 0.0
    assert float(qpos_np[1, 0]) == float(sim.qpos[1, 0])


def test_same_seed_same_controls_same_states():
    def run():
        sim = make_sim(QUADRUPED, 8, backend="mujoco", keyframe="home")
        for u in random_ctrls(sim.model, 50, 8, seed=7):
            sim.ctrl[:] = torch.from_numpy(u)
            sim.step(4)
        return sim.qpos.clone(), sim.qvel.clone()

    (qa, va), (qb, vb) = run(), run()
    assert torch.equal(qa, qb) and torch.equal(va, vb)


def test_nonfinite_world_is_reported_and_others_keep_stepping():
    sim = make_sim(QUADRUPED, 4, backend="mujoco", keyframe="home")
    sim.ctrl[:] = torch.from_numpy(sim.model.key_ctrl[0])
    sim.qvel[:, 0] = 0.5
    sim.qvel[2, 7] = float("nan")
    before = sim.qpos.clone()
    sim.step(4)
    bad = sim.unstable()
    assert bad.tolist() == [False, False, True, False]
    good = torch.tensor([0, 1, 3])
    assert torch.isfinite(sim.qpos[good]).all()
    assert (sim.qpos[good, 0] != before[good, 0]).all()  # they moved
    with pytest.raises(SimError, match=r"1 of 4 worlds: \[2\]"):
        sim.check_finite()
    sim.reset([2])
    assert not sim.unstable().any()


def test_velocity_bound_flags_absurd_worlds():
    sim = make_sim(PENDULUM, 3, backend="mujoco")
    sim.qvel[1, 0] = 1e4
    assert sim.unstable(max_qvel=100.0).tolist() == [False, True, False]


def test_contact_force_on_standing_feet():
    sim = make_sim(QUADRUPED, 2, backend="mujoco", keyframe="home")
    sim.ctrl[:] = torch.from_numpy(sim.model.key_ctrl[0])
    sim.step(200)
    feet = sim.body_ids([f"{leg}_calf" for leg in ("FR", "FL", "RR", "RL")])
    f = sim.contact_force(feet)
    total_mass = float(sim.model.body_subtreemass[1])
    fz = f[..., 2].sum(dim=1)
    np.testing.assert_allclose(fz.numpy(), total_mass * 9.81, rtol=0.1)


# --- bad input ---------------------------------------------------------------------------------
def test_missing_mjcf(tmp_path):
    with pytest.raises(FileNotFoundError, match="MJCF file not found"):
        make_sim(tmp_path / "nope.xml", 2)


def test_malformed_mjcf(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><body><geom type='sphere'/></body>")
    with pytest.raises(ValueError, match="could not compile MJCF"):
        make_sim(bad, 2)


@pytest.mark.parametrize("n", [0, -3])
def test_num_worlds_must_be_positive(n):
    with pytest.raises(ValueError, match="num_worlds must be >= 1"):
        make_sim(PENDULUM, n)


def test_unknown_backend_lists_choices():
    with pytest.raises(ValueError, match="unknown sim backend 'physx'; valid: auto, mujoco, mjwarp"):
        make_sim(PENDULUM, 2, backend="physx")


def test_missing_cuda_device_is_a_clear_error():
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    with pytest.raises(ValueError, match="requested but this machine has"):
        make_sim(PENDULUM, 2, backend="mjwarp", device=f"cuda:{n + 3}")


def test_mujoco_backend_refuses_gpu_device():
    with pytest.raises(ValueError, match="runs on the CPU"):
        from simrl.sim import resolve_backend

        resolve_backend("mujoco", torch.device("cuda", 0))


def test_unknown_body_name_lists_valid():
    sim = make_sim(PENDULUM, 1, backend="mujoco")
    with pytest.raises(KeyError, match="no body named 'arm' in the model; valid:.*pole"):
        sim.body_ids(["arm"])


_WELD_XML = """
<mujoco>
  <worldbody>
    <body name="mocap" mocap="true"/>
    <body name="pole">
      <joint name="hinge" type="hinge" axis="0 1 0"/><geom size=".05 .5" type="capsule"/>
    </body>
  </worldbody>
  <equality><weld body1="mocap" body2="pole"/></equality>
</mujoco>
"""


def test_engine_failure_names_the_failed_worlds_and_the_rest_step():
    sim = make_sim(mujoco.MjModel.from_xml_string(_WELD_XML), 4, backend="mujoco")
    sim.qvel[:, 0] = 1.0
    eq_type = sim.param("eq_type")
    eq_type[[1, 3]] = 99  # an unknown constraint type: MuJoCo raises in those worlds only
    before = sim.qpos.clone()
    with pytest.raises(SimError, match=r"failed in worlds \[1, 3\]") as e:
        sim.step()
    assert e.value.worlds.tolist() == [1, 3]
    assert torch.equal(sim.qpos[[1, 3]], before[[1, 3]])  # kept their state
    assert (sim.qpos[[0, 2]] != before[[0, 2]]).all()  # the others stepped
    eq_type[[1, 3]] = int(sim.model.eq_type[0])
    sim.reset(e.value.worlds)
    sim.step()  # and the batch goes on
    assert torch.isfinite(sim.qpos).all()


def test_reset_ids_are_checked_and_deduplicated():
    sim = make_sim(PENDULUM, 3, backend="mujoco")
    with pytest.raises(IndexError, match=r"world id 3 out of range: this sim has worlds 0..2"):
        sim.reset([0, 3])
    with pytest.raises(IndexError, match="world id -1 out of range"):
        sim.reset([-1])
    with pytest.raises(ValueError, match=r"world ids repeat \[2\]"):
        sim.reset([2, 0, 2], qvel=torch.zeros(3, 1))
    sim.qvel[:] = 1.0
    sim.reset(torch.tensor([2, 0]), qvel=torch.tensor([[5.0], [7.0]]))  # rows follow the ids' order
    assert sim.qvel[:, 0].tolist() == [7.0, 1.0, 5.0]
    sim.reset([1, 1])  # a plain reset may name a world twice
    assert sim.qvel[1, 0] == 0.0


def test_reset_takes_a_world_mask():
    sim = make_sim(PENDULUM, 3, backend="mujoco")
    sim.qvel[:, 0] = torch.tensor([1.0, 1e4, 1.0], dtype=sim.dtype)
    sim.reset(sim.unstable(max_qvel=100.0))  # the mask's True worlds, not worlds 0 and 1
    assert sim.qvel[:, 0].tolist() == [1.0, 0.0, 1.0]
    with pytest.raises(ValueError, match=r"a world mask must have shape \(3,\), got \(2,\)"):
        sim.reset(torch.tensor([True, False]))


def test_reset_state_is_the_keyframe_and_a_copy():
    sim = make_sim(QUADRUPED, 1, backend="mujoco", keyframe="home")
    state = sim.reset_state()
    np.testing.assert_array_equal(state["qpos"], sim.model.key_qpos[0])
    state["qpos"][:] = 0.0  # the caller's copy: the model's keyframe stays
    assert sim.model.key_qpos[0, 2] > 0 and sim.reset_state()["qpos"][2] > 0


def test_a_sim_setting_of_the_other_backend_is_refused_by_name():
    from simrl.errors import ConfigError

    with pytest.raises(ConfigError, match=r"sim settings \['nthread'\] do not apply to the mjwarp backend"):
        make_sim(ASSETS / "pendulum" / "pendulum.xml", 2, device="cpu", backend="mjwarp", nthread=2)
    with pytest.raises(ConfigError, match=r"\['graphs'\] do not apply to the mujoco backend"):
        make_sim(ASSETS / "pendulum" / "pendulum.xml", 2, device="cpu", backend="mujoco", graphs=True)
