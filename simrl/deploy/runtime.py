"""The deploy runtime (see the package docstring). Imports numpy and onnxruntime only."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def load_metadata(path: str | Path) -> dict[str, Any]:
    """The simrl metadata of an exported policy: from policy.json, or the ONNX metadata_props."""
    path = Path(path)
    if path.suffix == ".json":
        return json.loads(path.read_text())
    sidecar = path.with_name("policy.json")
    if sidecar.is_file():
        return json.loads(sidecar.read_text())
    import onnxruntime as ort

    props = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).get_modelmeta()
    meta = props.custom_metadata_map.get("simrl")
    if meta is None:
        raise ValueError(f"'{path}' has no simrl metadata: export it with export.py")
    return json.loads(meta)


def projected_gravity(quat: np.ndarray) -> np.ndarray:
    """Unit gravity in the base frame, R(q)^T [0, 0, -1], for wxyz quaternions (..., 4)."""
    w, x, y, z = np.moveaxis(np.asarray(quat, dtype=np.float64), -1, 0)
    # third row of R(q) is [2(xz - wy), 2(yz + wx), 1 - 2(x^2 + y^2)]; gravity is its negative
    g = -np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=-1)
    return g


def _gravity(r: dict, meta: dict) -> np.ndarray:
    if "gravity" in r:
        return np.asarray(r["gravity"])
    return projected_gravity(r["quat"])


# observation term name -> how to read it from the robot's raw readings (before scale/clip)
OBS_READERS: dict[str, Callable[[dict, dict], np.ndarray]] = {
    "base_lin_vel": lambda r, m: np.asarray(r["base_lin_vel"]),
    "base_ang_vel": lambda r, m: np.asarray(r["gyro"]),
    "projected_gravity": _gravity,
    "command": lambda r, m: np.asarray(r["command"]),
    "joint_pos": lambda r, m: np.asarray(r["joint_pos"]) - np.asarray(m["default_joint_pos"]),
    "joint_vel": lambda r, m: np.asarray(r["joint_vel"]),
    "last_action": lambda r, m: np.asarray(r["last_action"]),
    "foot_contact": lambda r, m: np.asarray(r["foot_contact"], dtype=np.float64),
    # cartpole
    "cart_pos": lambda r, m: np.asarray(r["joint_pos"])[..., :1],
    "pole_angle": lambda r, m: np.asarray(r["joint_pos"])[..., 1:2],
    "cart_vel": lambda r, m: np.asarray(r["joint_vel"])[..., :1],
    "pole_vel": lambda r, m: np.asarray(r["joint_vel"])[..., 1:2],
}


def observation(meta: dict[str, Any], readings: dict[str, Any]) -> np.ndarray:
    """The policy's observation (float32) from raw readings, by the export's term layout."""
    parts = []
    for term in meta["obs_terms"]:
        if term["name"] not in OBS_READERS:
            raise ValueError(f"deploy cannot build observation term '{term['name']}'; known: "
                             f"{sorted(OBS_READERS)}")
        value = OBS_READERS[term["name"]](readings, meta).astype(np.float64)
        width = term["stop"] - term["start"]
        if value.shape[-1] != width:
            raise ValueError(f"reading for '{term['name']}' has {value.shape[-1]} values, "
                             f"the policy expects {width}")
        parts.append(value * np.asarray(term["scale"], dtype=np.float64))
    obs = np.concatenate(parts, axis=-1)
    clip = meta["obs_clip"]
    return np.clip(np.nan_to_num(obs, nan=0.0, posinf=clip, neginf=-clip), -clip, clip).astype(np.float32)


class DeployPolicy:
    """An exported policy plus the metadata that turns raw readings into its observation."""

    def __init__(self, onnx_path: str | Path, providers: list[str] | None = None):
        import onnxruntime as ort

        self.path = Path(onnx_path)
        if not self.path.is_file():
            raise FileNotFoundError(f"no exported policy at '{self.path}'")
        self.meta = load_metadata(self.path)
        unknown = [t["name"] for t in self.meta["obs_terms"] if t["name"] not in OBS_READERS]
        if unknown:
            raise ValueError(f"deploy cannot build observation terms {unknown}; known: "
                             f"{sorted(OBS_READERS)}")
        self.session = ort.InferenceSession(str(self.path), providers=providers or ["CPUExecutionProvider"])
        act = self.meta["action"]
        self.scale = float(act["scale"])
        self.offset = np.asarray(act["offset"], dtype=np.float64)
        self.clip = float(act["clip"])
        self.kp = np.asarray(act["kp"])
        self.kd = np.asarray(act["kd"])
        self.last_action = np.zeros(self.meta["num_actions"], dtype=np.float32)

    @property
    def obs_dim(self) -> int:
        return int(self.meta["obs_dim"])

    def observation(self, readings: dict[str, Any]) -> np.ndarray:
        """The training observation (float32, (obs_dim,) or (batch, obs_dim)) from readings."""
        r = dict(readings)
        r.setdefault("last_action", self.last_action)
        return observation(self.meta, r)

    def infer(self, obs: np.ndarray) -> np.ndarray:
        """Raw policy actions for observations (obs_dim,) or (batch, obs_dim)."""
        batch = np.atleast_2d(obs).astype(np.float32)
        out = self.session.run(["actions"], {"obs": batch})[0]
        return out[0] if np.ndim(obs) == 1 else out

    def act(self, readings: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(joint position targets, kp, kd) for the readings; remembers the action."""
        action = np.clip(self.infer(self.observation(readings)), -self.clip, self.clip)
        self.last_action = action.astype(np.float32)
        lo, hi = np.asarray(self.meta["action"]["ctrl_range"]).T  # MuJoCo clamps ctrl the same way
        return np.clip(self.offset + self.scale * action, lo, hi), self.kp, self.kd
