"""The deploy runtime (see the package docstring). Imports numpy and onnxruntime only."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

# the newest policy.json this runtime reads, and the one simrl.rl.export writes. 4: each obs term
# says how it is read ("read"), and reading_docs; 5: action scales per actuator and binary
# columns, obs terms' own clip and delay; 6: action priors (a reference gait) the runtime adds
FORMAT_VERSION = 6


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


def rot6d(quat: np.ndarray) -> np.ndarray:
    """The first two columns of the rotation matrices of wxyz quaternions (..., 4), as (..., 6)."""
    w, x, y, z = np.moveaxis(np.asarray(quat, dtype=np.float64), -1, 0)
    return np.stack([1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y),
                     2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)], axis=-1)


def _quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw], axis=-1)


def pose_error(pose: np.ndarray, target: np.ndarray) -> np.ndarray:
    """From pose to target, both [x, y, z, qw, qx, qy, qz] in one frame: the position difference
    (3) and the rotation vector (3) of target * pose^-1, in that frame."""
    conj = pose[..., 3:7] * np.array([1.0, -1.0, -1.0, -1.0])
    q = _quat_mul(target[..., 3:7], conj)
    q = np.where(q[..., :1] < 0, -q, q)
    s = np.linalg.norm(q[..., 1:], axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(s, q[..., :1])
    rotvec = q[..., 1:] * np.where(s > 1e-7, angle / np.maximum(s, 1e-7), 2.0)
    return np.concatenate([target[..., :3] - pose[..., :3], rotvec], axis=-1)


def phase_sincos(t: np.ndarray, period: float, offsets: list[float]) -> np.ndarray:
    """[sin, cos] of 2 pi (t / period + offset) for each offset, in order: a clock of phases."""
    phase = np.asarray(t, dtype=np.float64)[..., None] / period + np.asarray(offsets, dtype=np.float64)
    angle = 2 * np.pi * np.remainder(phase, 1.0)
    return np.stack([np.sin(angle), np.cos(angle)], axis=-1).reshape(*angle.shape[:-1], -1)


# How an observation term is built from raw readings: policy.json's `obs_terms[i].read` is
# {"reading": <name, or a list of names the op combines>, "op": <one of OPS>, "args": {...}
# (the op's keyword arguments, optional), "columns": [...] (optional), "minus": [...] or a
# policy.json key (optional)}. The ops are math, not tasks: the runtime knows no task or term
# names.
OPS: dict[str, Callable[..., np.ndarray]] = {
    "value": lambda v: v,
    "gravity": projected_gravity,  # a base orientation (wxyz) as unit gravity in its frame
    "pos_rot6d": lambda v: np.concatenate([v[..., :3], rot6d(v[..., 3:7])], axis=-1),  # a pose
    "pose_error": pose_error,  # two poses: from the first to the second
    "difference": lambda a, b: b[..., :3] - a[..., :3],  # two positions (or poses): second - first
    "phase_sincos": phase_sincos,  # a gait clock
}


def _names(read: dict[str, Any]) -> list[str]:
    r = read["reading"]
    return [r] if isinstance(r, str) else list(r)

# readings the runtime supplies itself: the last action, and the time since the policy state
# began (control steps since `reset` x control_dt: a gait clock's time)
OWN = ("last_action", "policy_time")


def term_read(meta: dict[str, Any], term: dict[str, Any]) -> dict[str, Any]:
    """How `term` is read: its own `read` (policy.json format 4 on)."""
    read = term.get("read")
    if read is None:
        raise ValueError(f"policy.json does not say how to read observation term '{term['name']}' (no "
                         f"'read' entry): export the checkpoint again with export.py")
    op = read.get("op", "value")
    if op not in OPS:
        raise ValueError(f"observation term '{term['name']}' reads with op '{op}', which this runtime "
                         f"lacks; known: {sorted(OPS)} (update simrl.deploy)")
    return read


def reading_docs(meta: dict[str, Any]) -> dict[str, str]:
    """Every raw reading the policy's observation needs -> what it means, in a stable order."""
    docs = meta.get("reading_docs") or {}
    needed = {}
    for t in meta["obs_terms"]:
        for name in _names(term_read(meta, t)):
            if name not in OWN:
                needed[name] = docs.get(name, "")
    return needed


def required_readings(meta: dict[str, Any]) -> list[str]:
    """The raw readings a policy's observation is built from, in a stable order."""
    return list(reading_docs(meta))


def check_readings(meta: dict[str, Any], readings: dict[str, Any]) -> None:
    """Refuse readings that lack one the policy needs (naming it and what it means)."""
    docs = reading_docs(meta)
    missing = [r for r in docs if r not in readings and not (r == "quat" and "gravity" in readings)]
    if missing:
        what = "; ".join(f"'{r}': {docs[r]}" for r in missing)
        raise KeyError(f"readings lack {missing}, which this policy observes ({what}). It needs "
                       f"{list(docs)}; got {sorted(readings)}")


def read_term(meta: dict[str, Any], term: dict[str, Any], readings: dict[str, Any]) -> np.ndarray:
    """One term's value (before scale and history) from the raw readings, as its `read` says."""
    read = term_read(meta, term)
    names, op = _names(read), read.get("op", "value")
    if op == "gravity" and names[0] not in readings and "gravity" in readings:
        value = np.asarray(readings["gravity"], dtype=np.float64)  # given as gravity already
    else:
        value = OPS[op](*(np.asarray(readings[n], dtype=np.float64) for n in names), **read.get("args", {}))
    if read.get("columns") is not None:
        value = value[..., list(read["columns"])]
    minus = read.get("minus")
    if minus is not None:
        value = value - np.asarray(meta[minus] if isinstance(minus, str) else minus, dtype=np.float64)
    return value


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
        value = read_term(meta, term, readings)
        frames = int(term.get("history", 1))
        width = term.get("width", term["stop"] - term["start"])
        if value.shape[-1] != width:
            raise ValueError(f"reading for '{term['name']}' has {value.shape[-1]} values, "
                             f"the policy expects {width}")
        value = value * np.asarray(term["scale"], dtype=np.float64)
        if term.get("clip") is not None:  # the term's own clip, as in training
            value = np.clip(value, -float(term["clip"]), float(term["clip"]))
        keep = frames + int(term.get("delay", 0))  # a delay of D: the first H of the last H + D frames
        if keep > 1:
            past = history.get(term["name"])
            if past is None:
                stack = np.repeat(value[..., None, :], keep, axis=-2)
            else:
                stack = np.concatenate([past[..., 1:, :], value[..., None, :]], axis=-2)
            history[term["name"]] = stack
            value = stack[..., :frames, :].reshape(*value.shape[:-1], frames * width)
        parts.append(value)
    obs = np.concatenate(parts, axis=-1)
    clip = meta["obs_clip"]
    return np.clip(np.nan_to_num(obs, nan=0.0, posinf=clip, neginf=-clip), -clip, clip).astype(np.float32)


def joint_targets(action_meta: dict[str, Any], action: np.ndarray, base: np.ndarray) -> np.ndarray:
    """Actuator targets for a (clipped) action, as policy.json's `action` section says: `base +
    scale x action` (base: the offsets, or the last targets in delta mode), binary columns (a
    gripper) at `open` where the action is > 0 else `closed`, clamped to the control ranges."""
    scale = action_meta["scale"]  # one number (a Python float: the product in the action's dtype, as
    # the env's); a list per actuator multiplies in float64 (the env in float32: < 1e-7 apart)
    scale = float(scale) if isinstance(scale, (int, float)) else np.asarray(scale, dtype=np.float64)
    targets = base + scale * action
    for b in action_meta.get("binary", []):
        i = int(b["index"])
        targets[..., i] = np.where(action[..., i] > 0, float(b["open"]), float(b["closed"]))
    lo, hi = np.asarray(action_meta["ctrl_range"]).T  # MuJoCo clamps ctrl the same way
    return np.where(lo < hi, np.clip(targets, lo, hi), targets)  # [0, 0]: an unlimited actuator


def prior_offsets(action_meta: dict[str, Any], steps: int, control_dt: float, command: Any) -> np.ndarray:
    """What policy.json's action priors add to the policy's actions `steps` control steps after
    the policy state began, under `command` ([vx, vy, yaw rate]): a reference gait's swing in
    each leg's swing phase, while a move is commanded (as the env adds it, from the same clock)."""
    out = np.zeros(len(action_meta["offset"]))
    for p in action_meta.get("priors", []):
        if p["kind"] != "reference_gait":
            raise ValueError(f"policy.json action prior '{p['kind']}' is unknown to this runtime; known: "
                             "reference_gait (update simrl.deploy)")
        if command is None:
            raise KeyError("readings lack 'command': the policy's reference gait is on only while a move "
                           "is commanded, so the runtime needs the command reading")
        cmd = np.asarray(command, dtype=np.float64)
        moving = np.linalg.norm(cmd[..., :2], axis=-1, keepdims=True) > p["threshold"]  # per row
        # float32 as the env computes it: steps x (dt / period), then each column's offset
        t = np.float32(steps) * np.float32(control_dt / p["period"])
        phase = np.remainder(t + np.asarray(p["offsets"], dtype=np.float32), np.float32(1.0))
        swing = np.clip((phase - np.float32(p["stance"])) / np.float32(1.0 - p["stance"]), 0.0, None)
        values = np.sin(np.float32(np.pi) * swing.astype(np.float32)) * np.asarray(p["amplitude"], np.float32)
        out = out + np.zeros(moving.shape[:-1] + out.shape[-1:])  # a batch of commands: one row each
        out[..., np.asarray(p["columns"], dtype=int)] += values * moving
    return out


def check_onnx_hash(path: Path, meta: dict[str, Any]) -> None:
    """Refuse an ONNX file whose SHA-256 is not the one policy.json pinned at export (a corrupted
    copy, or a file swapped or edited since): the robot must run what was verified."""
    want = meta.get("onnx_sha256")
    if want is None:
        return  # exported before policy.json pinned it
    import hashlib

    got = hashlib.sha256(path.read_bytes()).hexdigest()
    if got != want:
        raise ValueError(f"'{path}' has SHA-256 {got[:16]}..., not the {want[:16]}... policy.json pinned at "
                         "export: the file was corrupted or changed since; copy it again or re-export")


class DeployPolicy:
    """An exported policy plus the metadata that turns raw readings into its observation."""

    def __init__(self, onnx_path: str | Path, providers: list[str] | None = None):
        import onnxruntime as ort

        self.path = Path(onnx_path)
        if not self.path.is_file():
            raise FileNotFoundError(f"no exported policy at '{self.path}'")
        self.meta = load_metadata(self.path)
        found = int(self.meta.get("format_version", 0))
        if found > FORMAT_VERSION:
            raise ValueError(f"policy.json format_version {found} is newer than this runtime reads "
                             f"({FORMAT_VERSION}): update simrl.deploy on the robot")
        if found < 4:
            raise ValueError(f"policy.json format_version {found} predates per-term reads (format 4): "
                             "export the checkpoint again (python export.py checkpoint=<run>)")
        check_onnx_hash(self.path, self.meta)
        for term in self.meta["obs_terms"]:  # every term readable, before anything runs
            term_read(self.meta, term)
        self.session = ort.InferenceSession(str(self.path), providers=providers or ["CPUExecutionProvider"])
        act = self.meta["action"]
        self.offset = np.asarray(act["offset"], dtype=np.float64)
        self.clip = float(act["clip"])
        self.kp = np.asarray(act["kp"])
        self.kd = np.asarray(act["kd"])
        self.readings = required_readings(self.meta)
        self.last_action = np.zeros(self.meta["num_actions"], dtype=np.float32)
        self.history: dict[str, np.ndarray] = {}  # stacked frames of terms with a history
        # absolute: targets = offset + scale * action; delta: targets += scale * action, from
        # the offset (the default pose) at each reset
        self.mode = act.get("mode", "absolute")
        if self.mode not in ("absolute", "delta"):
            raise ValueError(f"policy.json action mode '{self.mode}' is unknown to this runtime; known: "
                             "absolute, delta (update simrl.deploy)")
        self.targets = self.offset.copy()
        self.steps = 0  # observations since reset: policy_time = steps x control_dt

    def reset(self) -> None:
        """A new episode: forget the last action and the observation history; delta-mode
        targets restart at the default pose."""
        self.last_action = np.zeros(self.meta["num_actions"], dtype=np.float32)
        self.history = {}
        self.targets = self.offset.copy()
        self.steps = 0

    @property
    def obs_dim(self) -> int:
        return int(self.meta["obs_dim"])

    def observation(self, readings: dict[str, Any]) -> np.ndarray:
        """The training observation (float32, (obs_dim,) or (batch, obs_dim)) from readings;
        advances the observation history (call once per control step)."""
        r = dict(readings)
        r.setdefault("last_action", self.last_action)
        r.setdefault("policy_time", np.float64(self.steps * float(self.meta["control_dt"])))
        obs = observation(self.meta, r, self.history)
        self.steps += 1
        return obs

    def infer(self, obs: np.ndarray) -> np.ndarray:
        """Raw policy actions for observations (obs_dim,) or (batch, obs_dim)."""
        batch = np.atleast_2d(obs).astype(np.float32)
        out = self.session.run(["actions"], {"obs": batch})[0]
        return out[0] if np.ndim(obs) == 1 else out

    def act(self, readings: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(joint position targets, kp, kd) for the readings; remembers the action (without the
        priors: the policy observes its own)."""
        action = np.clip(self.infer(self.observation(readings)), -self.clip, self.clip)
        self.last_action = action.astype(np.float32)
        base = self.targets if self.mode == "delta" else self.offset
        drive = action
        if self.meta["action"].get("priors"):  # the clock of the observation just built
            added = prior_offsets(self.meta["action"], self.steps - 1, float(self.meta["control_dt"]),
                                  readings.get("command"))
            drive = (action + added).astype(np.float32)
        targets = joint_targets(self.meta["action"], drive, base)
        if self.mode == "delta":
            self.targets = targets.copy()  # a caller editing what it got leaves the next base alone
        return targets, self.kp, self.kd
