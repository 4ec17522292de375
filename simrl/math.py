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
