"""The mjwarp backend on Warp's CPU device: agreement with mj_step, resets, params, overflow.

Warp compiles its kernels on first use (tens of seconds, cached in ~/.cache/warp), so the sims
are module-scoped fixtures.
"""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
import torch
import warp as wp

from simrl import ASSETS
from simrl.sim import SimError, make_sim

pytestmark = pytest.mark.mjwarp

PENDULUM = ASSETS / "pendulum" / "pendulum.xml"
QUADRUPED = ASSETS / "quadruped" / "quadruped.xml"
N = 4


@pytest.fixture(scope="module")
def quad():
    return make_sim(QUADRUPED, N, device="cpu", backend="mjwarp", keyframe="home")


@pytest.fixture(scope="module")
def pend():
    return make_sim(PENDULUM, N, device="cpu", backend="mjwarp")


def _mj_reference(path, qpos0, qvel0, ctrl, steps, key=None):
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    if key is not None:
        mujoco.mj_resetDataKeyframe(model, data, 0)
    data.qpos[:], data.qvel[:], data.ctrl[:] = qpos0, qvel0, ctrl
    traj = []
    for _ in range(steps):
        mujoco.mj_step(model, data)
        traj.append(data.qpos.copy())
    return np.asarray(traj)


def test_pendulum_matches_mj_step(pend):
    pend.reset()
    pend.qpos[:, 0] = torch.tensor([0.0, 0.3, 0.6, 1.0])
    pend.ctrl[:, 0] = torch.tensor([0.0, 0.5, -0.5, 1.0])
    got = []
    for _ in range(100):
        pend.step()
        got.append(pend.qpos.numpy().copy())
    got = np.asarray(got)
    for w in range(N):
        want = _mj_reference(
            PENDULUM, got[0, w] * 0 + [0.0, 0.3, 0.6, 1.0][w], [0.0],
            [[0.0, 0.5, -0.5, 1.0][w]], 100,
        )
        # float32 vs float64 over 100 steps of 10 ms: stated tolerance 1e-4 rad
        np.testing.assert_allclose(got[:, w], want, atol=1e-4)


def test_quadruped_standing_matches_mj_step(quad):
    quad.reset()
    home_ctrl = torch.from_numpy(quad.model.key_ctrl[0]).float()
    quad.ctrl[:] = home_ctrl
    got = []
    for _ in range(100):
        quad.step()
        got.append(quad.qpos.numpy().copy())
    got = np.asarray(got)
    m = quad.model
    want = _mj_reference(QUADRUPED, m.key_qpos[0], m.key_qvel[0], m.key_ctrl[0], 100, key="home")
    # contact-rich, float32, different solver arithmetic: stated tolerance 2 mm / 0.02 rad
    np.testing.assert_allclose(got[:, 0], want, atol=2e-2)
    np.testing.assert_allclose(got[:, 0, :3], want[:, :3], atol=2e-3)
    assert np.ptp(got[-1], axis=0).max() < 1e-5  # identical worlds stay identical


def test_zero_copy_and_ctrl_moves_only_that_world(pend):
    pend.reset()
    assert pend.qpos.data_ptr() == pend.d.qpos.ptr
    assert pend.ctrl.data_ptr() == pend.d.ctrl.ptr
    pend.ctrl[2, 0] = 2.0
    pend.step(20)
    q = pend.qpos[:, 0]
    assert float(q[2]) > 0.01 and float(q[0]) == 0.0 and float(q[3]) == 0.0
    assert float(pend.d.qpos.numpy()[2, 0]) == float(q[2])


def test_reset_subset_and_per_world_mass(pend):
    pend.reset()
    pend.qpos[:, 0] = 0.5
    mass = pend.param("body_mass")
    assert mass.shape == (N, pend.model.nbody)
    pend.set_param("body_mass", 3.0, ids=[1])
    pend.step(30)
    q = pend.qpos[:, 0].clone()
    assert q[0] == q[2] == q[3]
    assert abs(float(q[1] - q[0])) > 1e-4  # heavier pendulum, less relative damping
    pend.reset(torch.tensor([0, 3]))
    assert pend.qpos[0, 0] == 0.0 and pend.qpos[3, 0] == 0.0
    assert pend.qpos[1, 0] == q[1] and pend.qpos[2, 0] == q[2]
    pend.set_param("body_mass", float(pend.model.body_mass[1]), ids=[1])


def test_nonfinite_world_detected(quad):
    quad.reset()
    quad.qvel[1, 6] = float("nan")
    quad.step(2)
    assert quad.unstable().tolist() == [False, True, False, False]
    assert torch.isfinite(quad.qpos[[0, 2, 3]]).all()
    quad.reset([1])
    assert not quad.unstable().any()


def _fall(sim, steps=50):
    for _ in range(steps):  # from the default pose just above the floor, the feet land
        sim.step(2)


def test_constraint_row_overflow_names_the_worlds_and_njmax():
    sim = make_sim(QUADRUPED, 2, device="cpu", backend="mjwarp", njmax=16)
    with pytest.raises(SimError, match=r"2 of 2 worlds \[0, 1\] overflowed their constraint rows "
                                       r"\(njmax=16 per world\).*njmax=32"):
        _fall(sim)


def test_shared_contact_buffer_overflow_is_reported_for_the_batch():
    """Contacts live in one buffer all worlds share: its overflow names the buffer, not worlds."""
    sim = make_sim(QUADRUPED, 2, device="cpu", backend="mjwarp", nconmax=2, njmax=256)
    with pytest.raises(SimError, match=r"contact buffer all 2 worlds share \(nconmax=2 per world, "
                                       r"4 in all\).*nconmax=4"):
        _fall(sim)
    with pytest.raises(SimError, match="too small for the initial state"):
        make_sim(QUADRUPED, 2, device="cpu", backend="mjwarp", keyframe="home", nconmax=1)


def test_overflow_before_a_reset_is_still_reported_once():
    """Deferred checks (the env's, once per iteration) see overflows that a reset cleared."""
    sim = make_sim(QUADRUPED, 2, device="cpu", backend="mjwarp", njmax=16, check_overflow=False)
    _fall(sim)  # overflows, unchecked
    sim.reset()  # clears d.overflow
    assert not sim._overflow.any()
    with pytest.raises(SimError, match="overflowed their constraint rows"):
        sim.raise_on_overflow()
    sim.raise_on_overflow()  # reported, then cleared


def test_buffers_sized_from_the_model_as_mujoco_warp_does_and_no_device_printf(quad):
    import mujoco_warp as mjw

    mjd = mujoco.MjData(quad.model)
    ref = mjw.put_data(quad.model, mjd, nworld=N)
    assert (quad.nconmax, quad.njmax) == (ref.naconmax // N, ref.njmax)
    assert quad.njmax < 188  # the old hand sizing gave 188 rows per world
    assert quad.m.opt.warn_overflow == 0


def test_quadruped_env_agrees_across_backends():
    """The same task, seed and actions on both backends: same observations (float32 tolerance)."""
    from simrl.registry import make

    envs = [make("quadruped", 4, device="cpu", backend=b, seed=0, cfg={"obs_noise": False})
            for b in ("mujoco", "mjwarp")]
    outs = []
    for env in envs:
        env.reset(seed=0)
        for _ in range(5):
            obs, rew, term, trunc, _ = env.step(torch.zeros(4, 12))
        outs.append((obs["policy"], rew, term))
    (oa, ra, ta), (ob, rb, tb) = outs
    assert torch.isfinite(ob).all() and torch.equal(ta, tb)
    torch.testing.assert_close(ob, oa, atol=0.05, rtol=0.05)
    torch.testing.assert_close(rb, ra, atol=1e-3, rtol=0.05)


def test_per_world_mass_recomputes_each_worlds_constants(quad):
    """set_const after a per-world mass edit: world 1's derived constants are its own."""
    trunk = quad.body_ids(["trunk"])[0]
    base = float(quad.model.body_mass[trunk])
    mass = quad.param("body_mass")
    mass[1, trunk] = base + 3.0
    quad.set_const()
    try:
        ref = mujoco.MjModel.from_xml_path(str(QUADRUPED))
        ref.body_mass[trunk] = base + 3.0
        data = mujoco.MjData(ref)
        mujoco.mj_setConst(ref, data)
        for field in ("body_subtreemass", "dof_invweight0", "actuator_acc0"):
            got = quad.m.__getattribute__(field).numpy()
            assert got.shape[0] == N, field
            np.testing.assert_allclose(got[1], getattr(ref, field), rtol=1e-4, err_msg=field)
            # the other worlds keep the unchanged model's constants
            np.testing.assert_allclose(got[0], getattr(quad.model, field), rtol=1e-4, err_msg=field)
        assert quad.m.body_subtreemass.numpy()[1, 0] > quad.m.body_subtreemass.numpy()[0, 0] + 2.9
    finally:
        mass[1, trunk] = base
        quad.set_const()


_ACT_MOCAP_XML = """
<mujoco>
  <worldbody>
    <body name="target" mocap="true" pos="0 0 1"/>
    <body name="target2" mocap="true" pos="0 1 1"/>
    <body name="arm"><joint name="hinge" axis="0 1 0"/><geom size=".05 .3" type="capsule"/></body>
  </worldbody>
  <actuator><general name="motor" joint="hinge" dyntype="filter" dynprm="0.1"/></actuator>
  <keyframe>
    <key name="other" time="2" qpos="0.3" act="0.7" ctrl="0.5" mpos="1 2 3 4 5 6" mquat="0 1 0 0 0 0 1 0"/>
  </keyframe>
</mujoco>
"""


@pytest.mark.parametrize("key", [None, "other"])
def test_reset_restores_every_keyframe_field_as_mujoco_does(key):
    """qpos, qvel, act, ctrl and mocap after a reset equal MuJoCo C's reset of that keyframe."""
    model = mujoco.MjModel.from_xml_string(_ACT_MOCAP_XML)
    sims = {b: make_sim(model, 2, device="cpu", backend=b, keyframe=key) for b in ("mujoco", "mjwarp")}
    for sim in sims.values():
        sim.ctrl[:] = -1.0
        sim.step(20)  # move every field away from the keyframe
        for f in ("act", "mocap_pos", "mocap_quat"):
            getattr(sim, f)[:] = 0.25
        sim.reset([1])
    for f in ("time", "qpos", "qvel", "act", "ctrl", "mocap_pos", "mocap_quat"):
        want = getattr(sims["mujoco"], f)[1].float()
        got = getattr(sims["mjwarp"], f)[1]
        torch.testing.assert_close(got, want, msg=f"{f} after reset")
    warp = sims["mjwarp"]
    assert warp.act[0, 0] == 0.25 and warp.qpos[0, 0] != warp.qpos[1, 0]  # world 0 left alone


def test_captured_set_const_follows_each_new_mass():
    """With graphs on, set_const replays a captured graph: each replay reads the current masses."""
    sims = [make_sim(QUADRUPED, 3, device="cpu", backend="mjwarp", keyframe="home", graphs=g)
            for g in (False, True)]
    trunk = sims[0].body_ids(["trunk"])[0]
    for extra in (2.0, 0.5, 1.25):  # the first call captures, the later ones replay
        for sim in sims:
            mass = sim.param("body_mass")
            mass[1:, trunk] = float(sim.model.body_mass[trunk]) + torch.tensor([extra, 2 * extra])
            sim.set_const()
        eager, graphed = (wp.to_torch(s.m.body_subtreemass)[:, 0].clone() for s in sims)
        total = float(sims[0].model.body_subtreemass[0])
        torch.testing.assert_close(graphed, eager)
        torch.testing.assert_close(graphed, torch.tensor([0.0, extra, 2 * extra]) + total)
    assert "set_const" in sims[1]._graphs and sims[1]._graphs["set_const"] is not None


def test_a_step_that_cannot_be_captured_raises_naming_the_fix(monkeypatch):
    """Strict capture: no silent fallback to uncaptured launches (which sync the host per
    solver iteration on CUDA)."""
    sim = make_sim(PENDULUM, 2, device="cpu", backend="mjwarp", graphs=True)

    def no_capture(*args, **kwargs):
        raise RuntimeError("capture unsupported here")

    monkeypatch.setattr(wp, "ScopedCapture", no_capture)
    with pytest.raises(SimError, match=r"'\('step', 4\)' could not be captured.*capture unsupported "
                                       r"here.*sim.kwargs.graphs=false"):
        sim.step(4)


def test_capture_runs_with_the_garbage_collector_off(monkeypatch):
    import gc

    seen = []
    real = wp.ScopedCapture

    class Recording(real):
        def __enter__(self):
            seen.append(gc.isenabled())
            return super().__enter__()

    monkeypatch.setattr(wp, "ScopedCapture", Recording)
    sim = make_sim(PENDULUM, 2, device="cpu", backend="mjwarp", graphs=True)
    sim.step(3)
    assert seen == [False] and gc.isenabled()


def test_capture_preconditions_are_checked_up_front(monkeypatch):
    """On CUDA: a disabled memory pool or a driver without graph conditionals is refused with
    the fix named (checked here with a stand-in CUDA device)."""
    from types import SimpleNamespace

    from simrl.sim.mjwarp_backend import check_capture

    cuda = SimpleNamespace(is_cuda=True, __str__=lambda self: "cuda:0")
    monkeypatch.setattr(wp, "is_mempool_supported", lambda d: True)
    monkeypatch.setattr(wp, "is_mempool_enabled", lambda d: False)
    with pytest.raises(SimError, match=r"memory pool is disabled.*wp.set_mempool_enabled"):
        check_capture(cuda, conditional=True)
    monkeypatch.setattr(wp, "is_mempool_enabled", lambda d: True)
    monkeypatch.setattr(wp, "is_conditional_graph_supported", lambda: False)
    with pytest.raises(SimError, match=r"CUDA >= 12.4.*sim.kwargs.graphs=false"):
        check_capture(cuda, conditional=True)
    check_capture(cuda, conditional=False)  # no conditional needed: fine
    check_capture(SimpleNamespace(is_cuda=False), conditional=True)  # CPU device: nothing to check


def test_quadruped_env_with_graphs_equals_without():
    """The GPU configuration's path (step and masked resets replayed from captured graphs) gives
    the same episodes as plain launches, resets included."""
    from simrl.registry import make

    outs = []
    for graphs in (False, True):
        env = make("quadruped", 4, device="cpu", backend="mjwarp", seed=0,
                   cfg={"obs_noise": False}, sim={"graphs": graphs})
        env.reset(seed=0)
        env.episode_length_buf[[1, 3]] = env.max_episode_length - 2  # they time out and reset
        gen = torch.Generator().manual_seed(0)
        resets = 0
        for _ in range(6):
            obs, rew, term, trunc, _ = env.step(0.3 * torch.randn(4, 12, generator=gen))
            resets += int((term | trunc).sum())
        assert resets >= 2
        # a step replays two graphs: the physics and the masked reset (no forward, no set_const)
        assert set(env.sim._graphs) == ({("step", 4), "reset"} if graphs else set())
        outs.append((obs["policy"], obs["critic"], rew, env.sim.qpos.clone()))
    for a, b in zip(*outs, strict=True):
        torch.testing.assert_close(b, a, atol=1e-5, rtol=1e-5)
