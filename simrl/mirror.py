"""Left-right mirror images of a robot's joints and bodies, and of an env's observations and
actions: what symmetry augmentation (rsl-rl's `symmetry_cfg`, simrl.rl.symmetry) trains on.

The mirror is the reflection of the world across the robot's sagittal plane (y -> -y in the base
frame). A robot config names its sides by a rule, e.g. `mirror: {left_: right_}` (G1) or
`{FR_: FL_, RR_: RL_}` (Go1): every joint and body name is swapped by it (a name with no side
maps to itself). Whether a joint's angle changes sign under the mirror is read from the model,
not configured: with M = diag(1, -1, 1), a rotation by q about axis a mirrors to a rotation by
-q about M a (a reflection reverses the sense of rotation), so joint j's mirror partner p, of
axis a_p, turns by sign * q with sign = -a_p . (M a_j): +1 for pitch joints (axis along y), -1
for roll and yaw joints. Both axes are taken in the base frame at the default pose, and a pair
whose axes are not mirror images (|sign| far from 1) is refused.

Every map here is a signed permutation `(perm, sign)`: mirrored = x[..., perm] * sign, and
applying it twice gives x back.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import mujoco
import numpy as np
import torch

from simrl.errors import ConfigError

M = np.diag([1.0, -1.0, 1.0])  # the reflection y -> -y


def swap_index(names: Sequence[str], rule: dict[str, str], what: str = "joint") -> np.ndarray:
    """For each name, the index of its mirror image in `names` under `rule` (each key and value
    swapped for the other where it starts the name or follows a separator `_ - . /`: `{l_: r_}`
    turns `l_ank_roll_link` into `r_ank_roll_link`, not `r_ank_rolr_link`). One line names a
    name whose mirror is missing, or two names with one mirror."""
    if not rule:
        raise ConfigError(f"a mirror rule needs at least one pair of side markers, e.g. "
                          f"{{left_: right_}}, got {rule!r}")
    both = {**{str(k): str(v) for k, v in rule.items()}, **{str(v): str(k) for k, v in rule.items()}}
    if len(both) != 2 * len(rule) or any(not k for k in both):
        raise ConfigError(f"mirror rule {rule!r}: each side marker must be non-empty and appear once")
    markers = "|".join(re.escape(k) for k in sorted(both, key=len, reverse=True))
    pattern = re.compile(f"(?:^|(?<=[_\\-./]))(?:{markers})")
    where = {n: i for i, n in enumerate(names)}
    index = []
    for n in names:
        image = pattern.sub(lambda m: both[m.group(0)], n)
        if image not in where:
            raise ConfigError(f"mirror rule {rule!r} maps {what} '{n}' to '{image}', which is not "
                              f"one of the {what}s {list(names)}: fix the rule or the {what} list")
        index.append(where[image])
    dup = sorted({names[i] for i in index if index.count(i) > 1})
    if dup:
        raise ConfigError(f"mirror rule {rule!r} maps two {what}s to each of {dup}: a mirror must "
                          f"pair each {what} with exactly one")
    return np.array(index, dtype=np.int64)


def joint_signs(model: mujoco.MjModel, joints: Sequence[str], index: np.ndarray, root_body: int,
                qpos: np.ndarray | None = None) -> np.ndarray:
    """+1 or -1 per joint: how its mirror partner's angle follows its own (module docstring),
    from the hinge axes in the root body's frame at `qpos` (default: the model's qpos0)."""
    d = mujoco.MjData(model)
    if qpos is not None:
        d.qpos[:] = qpos
    mujoco.mj_forward(model, d)
    rot = d.xmat[root_body].reshape(3, 3)
    ids = [model.joint(j).id for j in joints]
    for j, i in zip(joints, ids, strict=True):
        if int(model.jnt_type[i]) != int(mujoco.mjtJoint.mjJNT_HINGE):
            raise ConfigError(f"joint '{j}' is not a hinge: the mirror's sign rule is the one of rotations")
    axes = rot.T @ d.xaxis[ids].T  # (3, joints) in the base frame
    signs = -np.einsum("ij,ij->j", axes[:, index], M @ axes)
    for k, s in enumerate(signs):
        if abs(abs(s) - 1.0) > 0.05:
            raise ConfigError(f"joints '{joints[k]}' and '{joints[index[k]]}' are not mirror images "
                              f"across the base's x-z plane (axes {np.round(axes[:, k], 3).tolist()} and "
                              f"{np.round(axes[:, index[k]], 3).tolist()}): check the mirror rule")
    return np.sign(signs)


# --- term maps: (perm, sign) of one frame of an observation term ------------------------------
def vector(frame: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A 3-vector (velocity, gravity) in a body frame: y flips. `frame`: the rotation from that
    frame to the base (an IMU mounted turned), which must keep the map a signed permutation."""
    return _signed_perm(M if frame is None else frame.T @ M @ frame)


def axial(frame: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """An angular velocity (a pseudovector): x and z flip."""
    return _signed_perm(-M if frame is None else -(frame.T @ M @ frame))


def velocity_command() -> tuple[np.ndarray, np.ndarray]:
    """[forward, lateral, yaw rate]: lateral and yaw rate flip."""
    return np.arange(3), np.array([1.0, -1.0, -1.0])


def same(width: int) -> tuple[np.ndarray, np.ndarray]:
    """Values that do not change under the mirror (friction, a phase, a height)."""
    return np.arange(width), np.ones(width)


def points_y(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Values sampled at (P, 2) points in the base frame (a height scan): each point's value
    goes to the point at (x, -y), which the grid must have."""
    pts = np.asarray(points, dtype=np.float64)
    perm = []
    for x, y in pts:
        hit = np.flatnonzero(np.all(np.isclose(pts, [x, -y], atol=1e-6), axis=1))
        if hit.size != 1:
            raise ConfigError(f"the scan point ({x:.3f}, {y:.3f}) has no mirror image (x, -y) on the grid")
        perm.append(int(hit[0]))
    return np.array(perm), np.ones(len(perm))


def _signed_perm(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    perm = np.abs(mat).argmax(axis=1)
    sign = np.sign(mat[np.arange(len(mat)), perm])
    if not np.allclose(np.abs(mat), np.eye(len(mat))[perm], atol=1e-6):
        raise ConfigError("the IMU's frame is turned by other than a multiple of 90 degrees about "
                          "the base's axes: its readings have no signed-permutation mirror")
    return perm, sign


def group_map(layout, term_maps: dict[str, tuple[np.ndarray, np.ndarray]], device,
              group: str = "") -> tuple[torch.Tensor, torch.Tensor]:
    """One observation group's (perm, sign) over its columns from its layout (ObsSlots: term,
    slice, history frames of `width`) and each term's one-frame map."""
    width = max((s.slice.stop for s in layout), default=0)
    perm, sign = np.arange(width), np.ones(width)
    for slot in layout:
        if slot.name not in term_maps:
            raise ConfigError(f"observation term '{slot.name}' in group '{group}' has no mirror "
                              "(declare one beside it: @observation(mirror=...)): symmetry needs one "
                              "for every term")
        p, s = term_maps[slot.name]
        if len(p) != slot.width:
            raise ConfigError(f"the mirror of term '{slot.name}' maps {len(p)} values, the term has "
                              f"{slot.width}")
        for f in range(slot.history):
            start = slot.slice.start + f * slot.width
            perm[start : start + slot.width] = start + np.asarray(p)
            sign[start : start + slot.width] = s
    return (torch.as_tensor(perm, device=device, dtype=torch.long),
            torch.as_tensor(sign, device=device, dtype=torch.float32))


def apply(x: torch.Tensor, signed_perm: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
    """x's mirror image along its last dim."""
    perm, sign = signed_perm
    return x[..., perm] * sign


def robot_mirror(scene) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(joint index, joint sign, foot index) of an assembled scene's robot (simrl.scene.Scene),
    by its config's `mirror` rule, at its default pose; checks the default pose is its own mirror
    image (actions are offsets from it, so their mirror is then a signed permutation too)."""
    robot, model = scene.robot, scene.model
    if not robot.mirror:
        raise ConfigError(f"robot '{robot.name}' has no mirror rule, so symmetry cannot be used: add "
                          f"`mirror: {{left_: right_}}` (its side markers) to its robot config, or "
                          f"train without symmetry")
    index = swap_index(robot.joints, robot.mirror, "joint")
    qpos = model.key_qpos[0] if model.nkey else None
    sign = joint_signs(model, robot.joints, index, scene.root_body, qpos)
    feet = swap_index(robot.feet, robot.mirror, "foot body")
    if scene.imu_pos is not None and abs(float(scene.imu_pos[1])) > 1e-6:
        raise ConfigError(f"robot '{robot.name}': the IMU sits {scene.imu_pos[1]:+.3f} m off the base's "
                          "x-z plane, so its velocity has no mirror image among the readings: "
                          "put the IMU site on the plane (y = 0) to use symmetry")
    q0 = np.asarray(scene.default_joint_pos, dtype=np.float64)
    bad = [robot.joints[k] for k in range(len(q0)) if abs(q0[index[k]] * sign[k] - q0[k]) > 1e-6]
    if bad:
        raise ConfigError(f"robot '{robot.name}': the default pose is not its own mirror image at "
                          f"joints {bad} (a joint's angle must equal its partner's, or minus it for "
                          f"roll and yaw joints)")
    return index, sign, feet
