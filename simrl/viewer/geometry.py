"""The visible geoms of an MjModel as triangle meshes (vertices, faces in the geom's frame),
the shapes the web viewer draws once and then moves by each world's `geom_xpos`/`geom_xmat`.

MuJoCo's default visibility is kept: geom groups 0-2 are drawn (Menagerie puts its visual
meshes in group 2 and its collision shapes in group 3), and a geom with alpha 0 is skipped.
"""

from __future__ import annotations

from typing import NamedTuple

import mujoco
import numpy as np
import trimesh

VISIBLE_GROUPS = (0, 1, 2)
G = mujoco.mjtGeom


class GeomMesh(NamedTuple):
    geom: int  # geom id
    vertices: np.ndarray  # (V, 3) float32, geom frame
    faces: np.ndarray  # (F, 3) uint32
    rgb: tuple[int, int, int]
    opacity: float
    static: bool  # on the world body: drawn once, never moved


def geom_rgba(m: mujoco.MjModel, g: int) -> np.ndarray:
    """The geom's colour: its material's where it has one, else its own rgba."""
    mat = int(m.geom_matid[g])
    return np.asarray(m.mat_rgba[mat] if mat >= 0 else m.geom_rgba[g], dtype=np.float64)


def _primitive(m: mujoco.MjModel, g: int) -> trimesh.Trimesh | None:
    kind, size = int(m.geom_type[g]), m.geom_size[g]
    if kind == G.mjGEOM_SPHERE:
        return trimesh.creation.icosphere(subdivisions=2, radius=size[0])
    if kind == G.mjGEOM_ELLIPSOID:
        mesh = trimesh.creation.icosphere(subdivisions=2, radius=1.0)
        mesh.vertices *= size[:3]
        return mesh
    if kind == G.mjGEOM_CAPSULE:
        return trimesh.creation.capsule(height=2 * size[1], radius=size[0], count=[12, 12])
    if kind == G.mjGEOM_CYLINDER:
        return trimesh.creation.cylinder(radius=size[0], height=2 * size[1], sections=24)
    if kind == G.mjGEOM_BOX:
        return trimesh.creation.box(extents=2 * size[:3])
    if kind == G.mjGEOM_MESH:
        mid = int(m.geom_dataid[g])
        v0, nv = int(m.mesh_vertadr[mid]), int(m.mesh_vertnum[mid])
        f0, nf = int(m.mesh_faceadr[mid]), int(m.mesh_facenum[mid])
        return trimesh.Trimesh(m.mesh_vert[v0 : v0 + nv].copy(), m.mesh_face[f0 : f0 + nf].copy(),
                               process=False)
    if kind == G.mjGEOM_HFIELD:
        return _hfield(m, int(m.geom_dataid[g]))
    return None  # planes are drawn as the ground grid; lines and arrows are not geometry


def _hfield(m: mujoco.MjModel, h: int) -> trimesh.Trimesh:
    """A height field as a grid of triangles (its top surface), centred on the geom."""
    rows, cols = int(m.hfield_nrow[h]), int(m.hfield_ncol[h])
    sx, sy, sz, _ = m.hfield_size[h]
    adr = int(m.hfield_adr[h])
    z = m.hfield_data[adr : adr + rows * cols].reshape(rows, cols) * sz
    x = np.linspace(-sx, sx, cols)
    y = np.linspace(-sy, sy, rows)
    xx, yy = np.meshgrid(x, y)
    verts = np.stack([xx.ravel(), yy.ravel(), z.ravel()], axis=1)
    i = np.arange(rows * cols).reshape(rows, cols)
    a, b, c, d = i[:-1, :-1].ravel(), i[:-1, 1:].ravel(), i[1:, :-1].ravel(), i[1:, 1:].ravel()
    faces = np.concatenate([np.stack([a, b, d], 1), np.stack([a, d, c], 1)])
    return trimesh.Trimesh(verts, faces, process=False)


def geom_meshes(m: mujoco.MjModel) -> list[GeomMesh]:
    """Every visible, drawable geom of `m` as a mesh in its own frame."""
    out = []
    for g in range(m.ngeom):
        if int(m.geom_group[g]) not in VISIBLE_GROUPS:
            continue
        rgba = geom_rgba(m, g)
        if rgba[3] <= 0.0:
            continue
        mesh = _primitive(m, g)
        if mesh is None:
            continue
        rgb = tuple(int(round(255 * c)) for c in np.clip(rgba[:3], 0.0, 1.0))
        static = int(m.geom_bodyid[g]) == 0 and int(m.body_mocapid[0]) < 0
        out.append(GeomMesh(g, np.asarray(mesh.vertices, dtype=np.float32),
                            np.asarray(mesh.faces, dtype=np.uint32), rgb, float(rgba[3]), static))
    return out


def has_plane(m: mujoco.MjModel) -> bool:
    return bool(np.any(m.geom_type == G.mjGEOM_PLANE))


def xmat_to_wxyz(xmat: np.ndarray) -> np.ndarray:
    """(..., 9) rotation matrices (MuJoCo's geom_xmat rows) as (..., 4) unit quaternions w, x, y, z."""
    flat = np.asarray(xmat, dtype=np.float64).reshape(-1, 9)
    out = np.empty((flat.shape[0], 4))
    for k, row in enumerate(flat):
        mujoco.mju_mat2Quat(out[k], row)
    return out.reshape(*np.shape(xmat)[:-1], 4)


def robot_size(m: mujoco.MjModel) -> float:
    """The diagonal (m) of the box around every body but the world's in the model's first
    keyframe (or its default pose): how far the camera stands from a hand, a dog or a humanoid."""
    d = mujoco.MjData(m)
    if m.nkey:
        mujoco.mj_resetDataKeyframe(m, d, 0)
    mujoco.mj_kinematics(m, d)
    pos = d.xpos[1:] if m.nbody > 1 else np.zeros((1, 3))
    return float(np.linalg.norm(pos.max(axis=0) - pos.min(axis=0)))


def camera_distance(m: mujoco.MjModel, far: float = 2.2) -> float:
    """A camera distance that frames the robot: 3 robot sizes, between 0.4 m and `far`."""
    return float(np.clip(3.0 * robot_size(m), 0.4, far))
