"""Geometry the web viewer draws, and the keys both viewers share."""

import mujoco
import numpy as np

import simrl
from simrl.viewer.geometry import camera_distance, geom_meshes, has_plane, robot_size, xmat_to_wxyz
from simrl.viewer.keys import Controls

XML = """
<mujoco>
  <asset><hfield name="h" nrow="3" ncol="4" size="1 1 0.5 0.1"/></asset>
  <worldbody>
    <geom type="plane" size="5 5 .1"/>
    <geom type="hfield" hfield="h"/>
    <body pos="0 0 1"><freejoint/>
      <geom type="box" size=".1 .2 .3" rgba="1 0 0 1"/>
      <geom type="capsule" size=".05 .2"/>
      <geom type="sphere" size=".1" group="3"/>
      <geom type="cylinder" size=".05 .1" rgba="0 0 1 0"/>
    </body>
  </worldbody>
</mujoco>"""


def test_meshes_follow_mujoco_visibility_and_sizes():
    m = mujoco.MjModel.from_xml_string(XML)
    meshes = {int(m.geom_type[g.geom]): g for g in geom_meshes(m)}
    G = mujoco.mjtGeom
    # the plane is the ground grid; group 3 and alpha 0 are hidden as MuJoCo hides them
    assert set(meshes) == {G.mjGEOM_HFIELD, G.mjGEOM_BOX, G.mjGEOM_CAPSULE}
    box = meshes[G.mjGEOM_BOX]
    assert np.allclose(box.vertices.max(0), [0.1, 0.2, 0.3]) and box.rgb == (255, 0, 0) and not box.static
    cap = meshes[G.mjGEOM_CAPSULE]
    assert np.isclose(cap.vertices[:, 2].max(), 0.25, atol=1e-6)  # half length + radius, along z
    field = meshes[G.mjGEOM_HFIELD]
    assert field.static and len(field.vertices) == 12 and len(field.faces) == 2 * 2 * 3
    assert has_plane(m)


def test_xmat_to_wxyz_is_mujocos_rotation():
    q = np.array([0.7, 0.1, -0.3, 0.6])
    q /= np.linalg.norm(q)
    mat = np.zeros(9)
    mujoco.mju_quat2Mat(mat, q)
    got = xmat_to_wxyz(mat[None])[0]
    assert np.allclose(got, q) or np.allclose(got, -q)


def test_keys_steer_within_the_trained_ranges():
    c = Controls(np.zeros(3), [[-0.5, 1.0], [-0.2, 0.2], [-1.0, 1.0]], num_worlds=3)
    for _ in range(10):
        c.press("I")
    assert c.command[0] == 1.0 and c.changed  # clamped to the range's top
    c.press("U")
    c.press("U")
    assert c.command[1] == 0.2
    c.press("L")
    assert c.command[2] == -0.5
    c.press("space")
    assert not c.command.any()
    c.press("P"), c.press("N"), c.press("R"), c.press("F"), c.press("F"), c.press("F")
    assert c.paused and c.pending_steps == 1 and c.pending_reset and c.follow == 0


def test_command_keys_do_nothing_without_a_command():
    c = Controls(None, None)
    c.press("I")
    c.press("space")
    assert c.command is None and not c.changed


def test_the_camera_stands_back_by_the_robots_size():
    """A hand is framed from closer than a dog, a humanoid from no farther than the default."""
    hand = simrl.make("inhand_rotate", 1, device="cpu").model
    dog = simrl.make("quadruped", 1, device="cpu").model
    person = simrl.make("humanoid", 1, device="cpu").model
    assert 0.15 < robot_size(hand) < 0.3 < robot_size(dog) < robot_size(person)
    assert 0.4 <= camera_distance(hand) < camera_distance(dog) < camera_distance(person) == 2.2
