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


# raw readings: what each means, as the robot must supply it
READINGS: dict[str, str] = {
    "joint_pos": "joint encoder angles (rad), in the policy's action order",
    "joint_vel": "joint velocities (rad/s), in the policy's action order",
    "gyro": "IMU angular velocity (rad/s), in the IMU frame",
    "quat": "IMU orientation, quaternion wxyz (or 'gravity': unit gravity in the IMU frame)",
    "command": "[forward m/s, lateral m/s, yaw rate rad/s]",
    "base_lin_vel": "base linear velocity (m/s) in the IMU frame: a state estimator's output",
    "foot_contact": "foot contact flags, in the robot config's feet order",
}
# observation term -> the readings it is built from (last_action is the runtime's own)
TERM_READINGS: dict[str, tuple[str, ...]] = {
    "base_lin_vel": ("base_lin_vel",), "base_ang_vel": ("gyro",), "projected_gravity": ("quat",),
    "command": ("command",), "joint_pos": ("joint_pos",), "joint_vel": ("joint_vel",),
    "last_action": (), "foot_contact": ("foot_contact",),
    "cart_pos": ("joint_pos",), "pole_angle": ("joint_pos",), "cart_vel": ("joint_vel",),
    "pole_vel": ("joint_vel",),
}


def required_readings(meta: dict[str, Any]) -> list[str]:
    """The raw readings a policy's observation is built from, in a stable order."""
    needed = {r for t in meta["obs_terms"] for r in TERM_READINGS.get(t["name"], ())}
    return [r for r in READINGS if r in needed]


def check_readings(meta: dict[str, Any], readings: dict[str, Any]) -> None:
    """Refuse readings that lack one the policy needs (naming it and what it means)."""
    needed = meta.get("readings") or required_readings(meta)
    missing = [r for r in needed if r not in readings and not (r == "quat" and "gravity" in readings)]
    if missing:
        what = "; ".join(f"'{r}': {READINGS[r]}" for r in missing)
        raise KeyError(f"readings lack {missing}, which this policy observes ({what}). It needs "
                       f"{needed}; got {sorted(readings)}")


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


def observation(
    meta: dict[str, Any], readings: dict[str, Any], history: dict[str, np.ndarray] | None = None
) -> np.ndarray:
    """The policy's observation (float32) from raw readings, by the export's term layout.

    Terms with a history of H frames stack their last H values, oldest first, as in training;
    `history` holds those frames between calls (updated in place). An empty one (a new episode)
    starts every stack with H copies of this frame, as the env does at a reset.
    """
    check_readings(meta, readings)
    history = {} if history is None else history
    parts = []
    for term in meta["obs_terms"]:
        if term["name"] not in OBS_READERS:
            raise ValueError(f"deploy cannot build observation term '{term['name']}'; known: "
                             f"{sorted(OBS_READERS)}")
        value = OBS_READERS[term["name"]](readings, meta).astype(np.float64)
        frames = int(term.get("history", 1))
        width = term.get("width", term["stop"] - term["start"])
        if value.shape[-1] != width:
            raise ValueError(f"reading for '{term['name']}' has {value.shape[-1]} values, "
                             f"the policy expects {width}")
        value = value * np.asarray(term["scale"], dtype=np.float64)
        if frames > 1:
            past = history.get(term["name"])
            if past is None:
                stack = np.repeat(value[..., None, :], frames, axis=-2)
            else:
                stack = np.concatenate([past[..., 1:, :], value[..., None, :]], axis=-2)
            history[term["name"]] = stack
            value = stack.reshape(*value.shape[:-1], frames * width)
        parts.append(value)
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
        self.readings = self.meta.get("readings") or required_readings(self.meta)
        self.last_action = np.zeros(self.meta["num_actions"], dtype=np.float32)
        self.history: dict[str, np.ndarray] = {}  # stacked frames of terms with a history

    def reset(self) -> None:
        """A new episode: forget the last action and the observation history."""
        self.last_action = np.zeros(self.meta["num_actions"], dtype=np.float32)
        self.history = {}

    @property
    def obs_dim(self) -> int:
        return int(self.meta["obs_dim"])

    def observation(self, readings: dict[str, Any]) -> np.ndarray:
        """The training observation (float32, (obs_dim,) or (batch, obs_dim)) from readings;
        advances the observation history (call once per control step)."""
        r = dict(readings)
        r.setdefault("last_action", self.last_action)
        return observation(self.meta, r, self.history)

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
