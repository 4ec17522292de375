"""Batched quaternion helpers (MuJoCo's wxyz convention), shapes `(N, 4)` / `(N, 3)`."""

from __future__ import annotations

import torch


def quat_rotate_inv(q: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Rotate world vectors `v` into the frame of unit quaternions `q` (i.e. R(q)^T v)."""
    w, xyz = q[:, :1], q[:, 1:]
    t = 2.0 * torch.cross(xyz, v, dim=1)
    return v - w * t + torch.cross(xyz, t, dim=1)


def quat_rotate(q: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Rotate vectors `v` from the frame of `q` into the world (R(q) v)."""
    w, xyz = q[:, :1], q[:, 1:]
    t = 2.0 * torch.cross(xyz, v, dim=1)
    return v + w * t + torch.cross(xyz, t, dim=1)


def quat_yaw(q: torch.Tensor) -> torch.Tensor:
    """Heading (N,) of unit quaternions `q` (N, 4): the rotation about world z, in (-pi, pi]."""
    w, x, y, z = q.unbind(-1)
    return torch.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))


def yaw_rotate(yaw: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Planar vectors (x, y) rotated by `yaw` about z (broadcasting: e.g. (N, 1) yaws, (P,) points)."""
    c, s = torch.cos(yaw), torch.sin(yaw)
    return c * x - s * y, s * x + c * y


def yaw_quat(yaw: torch.Tensor) -> torch.Tensor:
    """Quaternions (N, 4) of rotations by `yaw` (N,) about world z."""
    half = 0.5 * yaw
    z = torch.zeros_like(yaw)
    return torch.stack([torch.cos(half), z, z, torch.sin(half)], dim=1)


def quat_mul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Hamilton products `a * b` (..., 4): rotate by `b`, then by `a`."""
    aw, ax, ay, az = a.unbind(-1)
    bw, bx, by, bz = b.unbind(-1)
    return torch.stack([aw * bw - ax * bx - ay * by - az * bz,
                        aw * bx + ax * bw + ay * bz - az * by,
                        aw * by - ax * bz + ay * bw + az * bx,
                        aw * bz + ax * by - ay * bx + az * bw], dim=-1)


def quat_conjugate(q: torch.Tensor) -> torch.Tensor:
    """Inverse rotations of unit quaternions `q` (..., 4). (No constant tensor: building one
    from host data is a host-to-device copy, a sync, on every call.)"""
    return torch.cat([q[..., :1], -q[..., 1:]], dim=-1)


def quat_angle(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Angle (...,) in [0, pi] of the rotation from `a` to `b` (unit quaternions, either sign)."""
    d = quat_mul(quat_conjugate(a), b)
    return 2.0 * torch.atan2(d[..., 1:].norm(dim=-1), d[..., 0].abs())


def quat_from_euler(roll: torch.Tensor, pitch: torch.Tensor, yaw: torch.Tensor) -> torch.Tensor:
    """Quaternions (N, 4) of the extrinsic x-y-z rotations (roll about x, then pitch about y,
    then yaw about z, all world axes)."""
    z = torch.zeros_like(roll)

    def axis(angle: torch.Tensor, i: int) -> torch.Tensor:
        q = [torch.cos(0.5 * angle), z, z, z]
        q[i] = torch.sin(0.5 * angle)
        return torch.stack(q, dim=-1)

    return quat_mul(axis(yaw, 3), quat_mul(axis(pitch, 2), axis(roll, 1)))


def quat_to_rot6d(q: torch.Tensor) -> torch.Tensor:
    """The first two columns of the rotation matrices of `q` (N, 4), as (N, 6): a continuous
    encoding of orientation for networks (a quaternion's sign flip is not)."""
    w, x, y, z = q.unbind(-1)
    return torch.stack([1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y),
                        2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)], dim=-1)


def quat_to_rotvec(q: torch.Tensor) -> torch.Tensor:
    """Rotation vectors (N, 3) (axis times angle in [0, pi]) of unit quaternions `q` (N, 4)."""
    q = torch.where(q[:, :1] < 0, -q, q)  # the short way round
    v = q[:, 1:]
    s = v.norm(dim=1, keepdim=True)
    angle = 2.0 * torch.atan2(s, q[:, :1])
    # angle / sin(angle / 2) -> 2 as the angle -> 0
    return v * torch.where(s > 1e-7, angle / s.clamp(min=1e-7), torch.full_like(s, 2.0))
