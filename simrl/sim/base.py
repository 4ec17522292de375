"""The batched-simulator interface shared by both backends.

A `Sim` holds `num_worlds` copies of one MjModel and exposes their state as torch tensors of
shape `(num_worlds, ...)` that alias the backend's own arrays (no copies). Writes to the state
views (STATE_FIELDS: `qpos`, `qvel`, `act`, `ctrl`, mocap, applied forces) are the state the
next `step` starts from.

Derived views (DERIVED_FIELDS: `xpos`, `xquat`, `cvel`, `sensordata`, `cfrc_ext`,
`actuator_force`) follow `mj_step`'s convention: after `step` they describe the state before the
last substep; `forward()` makes them current.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from pathlib import Path

import mujoco
import numpy as np
import torch

from simrl.errors import ConfigError, MissingFileError

# Model fields that mj_setConst reads: writing one per world needs `set_const()` afterwards.
SETCONST_FIELDS = frozenset(
    {"body_mass", "body_inertia", "body_ipos", "body_iquat", "qpos0", "dof_armature"}
)

# MjData fields every backend exposes as (num_worlds, ...) torch views.
STATE_FIELDS = ("time", "qpos", "qvel", "act", "ctrl", "mocap_pos", "mocap_quat", "qfrc_applied",
                "xfrc_applied")
DERIVED_FIELDS = ("xpos", "xquat", "cvel", "sensordata", "cfrc_ext", "actuator_force")

# MjData fields a keyframe sets (mocap_pos is the keyframe's mpos, mocap_quat its mquat).
RESET_FIELDS = ("time", "qpos", "qvel", "act", "ctrl", "mocap_pos", "mocap_quat", "plastic")

# Fields tasks typically randomize per world; others work too where the backend allows.
COMMON_PARAMS = ("geom_friction", "body_mass", "actuator_gainprm", "actuator_biasprm")


class SimError(RuntimeError):
    """A simulation failed in a way the caller must act on (names the worlds and the fix).

    `worlds` holds the failed worlds' ids where only those failed and the others stepped (the
    env batch then resets them as unstable); None where the failure concerns the whole batch.
    """

    def __init__(self, message: str, worlds: torch.Tensor | None = None):
        super().__init__(message)
        self.worlds = worlds


def load_model(model: str | Path | mujoco.MjModel) -> mujoco.MjModel:
    """Return an MjModel from a path to an MJCF/MJB file or an MjModel, with clear errors."""
    if isinstance(model, mujoco.MjModel):
        return model
    if not isinstance(model, (str, Path)):
        raise TypeError(
            f"model must be an MJCF path or a mujoco.MjModel, got {type(model).__name__}"
        )
    path = Path(model).expanduser()
    if not path.is_file():
        raise MissingFileError(
            f"MJCF file not found: '{path}'. Pass the path to an existing .xml (or .mjb) file, "
            f"e.g. simrl.ASSETS / 'quadruped' / 'quadruped.xml'."
        )
    try:
        if path.suffix == ".mjb":
            return mujoco.MjModel.from_binary_path(str(path))
        return mujoco.MjModel.from_xml_path(str(path))
    except ValueError as e:
        raise ValueError(f"could not compile MJCF '{path}': {e}") from e


def check_num_worlds(num_worlds: int) -> int:
    if isinstance(num_worlds, bool) or not isinstance(num_worlds, (int, np.integer)):
        raise TypeError(f"num_worlds must be an int, got {num_worlds!r}")
    if num_worlds <= 0:
        raise ConfigError(f"num_worlds must be >= 1, got {num_worlds}")
    return int(num_worlds)


def name_ids(model: mujoco.MjModel, objtype: mujoco.mjtObj, names: Sequence[str]) -> list[int]:
    """Ids of named objects; an unknown name raises with the valid names listed."""
    ids = []
    for name in names:
        i = mujoco.mj_name2id(model, objtype, name)
        if i < 0:
            count = {
                mujoco.mjtObj.mjOBJ_BODY: model.nbody,
                mujoco.mjtObj.mjOBJ_JOINT: model.njnt,
                mujoco.mjtObj.mjOBJ_GEOM: model.ngeom,
                mujoco.mjtObj.mjOBJ_SITE: model.nsite,
                mujoco.mjtObj.mjOBJ_ACTUATOR: model.nu,
                mujoco.mjtObj.mjOBJ_SENSOR: model.nsensor,
            }.get(objtype, 0)
            valid = [mujoco.mj_id2name(model, objtype, j) for j in range(count)]
            kind = objtype.name.removeprefix("mjOBJ_").lower()
            raise KeyError(f"no {kind} named '{name}' in the model; valid: {valid}")
        ids.append(i)
    return ids


def sensor_slice(model: mujoco.MjModel, name: str) -> slice:
    """The columns of `sensordata` that hold sensor `name`."""
    (i,) = name_ids(model, mujoco.mjtObj.mjOBJ_SENSOR, [name])
    adr, dim = int(model.sensor_adr[i]), int(model.sensor_dim[i])
    return slice(adr, adr + dim)


def keyframe_id(model: mujoco.MjModel, keyframe: str | int | None) -> int:
    """Keyframe index, -1 for the model defaults (qpos0)."""
    if keyframe is None:
        return -1
    if isinstance(keyframe, str):
        i = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_KEY, keyframe)
        if i < 0:
            valid = [mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_KEY, j) for j in range(model.nkey)]
            raise KeyError(f"no keyframe named '{keyframe}'; valid: {valid}")
        return i
    if not -1 <= keyframe < model.nkey:
        raise IndexError(f"keyframe {keyframe} out of range: the model has {model.nkey}")
    return int(keyframe)


class Sim(abc.ABC):
    """`num_worlds` worlds of one model, stepped together. See the module docstring."""

    backend: str
    model: mujoco.MjModel
    num_worlds: int
    device: torch.device
    dtype: torch.dtype
    # state views (writable)
    time: torch.Tensor  # (N,) simulation time
    qpos: torch.Tensor  # (N, nq)
    qvel: torch.Tensor  # (N, nv)
    ctrl: torch.Tensor  # (N, nu)
    qfrc_applied: torch.Tensor  # (N, nv)
    xfrc_applied: torch.Tensor  # (N, nbody, 6)
    act: torch.Tensor  # (N, na) actuator activations
    mocap_pos: torch.Tensor  # (N, nmocap, 3)
    mocap_quat: torch.Tensor  # (N, nmocap, 4) wxyz
    # derived views (read)
    xpos: torch.Tensor  # (N, nbody, 3)
    xquat: torch.Tensor  # (N, nbody, 4) wxyz
    cvel: torch.Tensor  # (N, nbody, 6) com-based [rot, lin] velocity
    sensordata: torch.Tensor  # (N, nsensordata)
    cfrc_ext: torch.Tensor  # (N, nbody, 6) com-based [torque, force] external force
    actuator_force: torch.Tensor  # (N, nu) actuator forces of the last substep

    check_overflow: bool = False  # raise_on_overflow after every step (mjwarp sets it)

    def __init__(self, model: mujoco.MjModel, num_worlds: int, keyframe: str | int | None):
        self.model = model
        self.num_worlds = num_worlds
        self.keyframe = keyframe_id(model, keyframe)

    def reset_state(self) -> dict[str, np.ndarray]:
        """The state `reset` puts a world in, by MjData field (RESET_FIELDS, each shaped as in
        MjData): the reset keyframe's, as `mj_resetDataKeyframe` sets it, or `mj_resetData`'s
        model defaults (qpos0, zeros, mocap at its body pose) where no keyframe is set."""
        m, key = self.model, self.keyframe
        data = mujoco.MjData(m)
        if key < 0:
            return {f: np.array(getattr(data, f)) for f in RESET_FIELDS}
        key_field = {f: "key_" + f.replace("mocap_", "m") for f in RESET_FIELDS}  # key_mpos ...
        return {f: np.reshape(getattr(m, key_field[f])[key], np.shape(getattr(data, f))).copy()
                for f in RESET_FIELDS}  # copies: editing them must not edit the model

    # --- stepping -----------------------------------------------------------------------------
    @abc.abstractmethod
    def step(self, nstep: int = 1) -> None:
        """Advance every world by `nstep` physics substeps with `ctrl` held."""

    @abc.abstractmethod
    def forward(self, ids: torch.Tensor | None = None) -> None:
        """Recompute derived quantities (kinematics, sensors, contacts) at the current state.

        `ids` limits it to those worlds where the backend can (mujoco); mjwarp does all.
        """

    @abc.abstractmethod
    def _reset_worlds(self, ids: torch.Tensor) -> None:
        """Reset worlds `ids` (sorted, unique, on `device`) to the reset keyframe."""

    def _reset_masked(self, mask: torch.Tensor) -> None:
        """Reset the worlds where bool `mask` (N,) is True. Backends that reset by mask on the
        device (mjwarp) override this to avoid the host sync of `nonzero`."""
        ids = mask.nonzero().flatten()
        if ids.numel():
            self._reset_worlds(ids)

    def reset(
        self,
        ids: torch.Tensor | Sequence[int] | None = None,
        qpos: torch.Tensor | None = None,
        qvel: torch.Tensor | None = None,
        forward: bool = True,
    ) -> None:
        """Reset worlds `ids` (all if None) to the keyframe, then to `qpos`/`qvel` if given.

        `ids`: world indices, or a bool mask `(num_worlds,)` such as `unstable()`. `qpos:
        (len(ids), nq)` and `qvel: (len(ids), nv)` give one row per id in the order given (for a
        mask, per True world in ascending order). Other worlds are untouched. `forward`
        brings the derived views up to date; a caller that edits the state further and calls
        `forward` itself passes False (on mjwarp each forward costs a pass over all worlds).
        """
        if ids is None:
            ids = torch.ones(self.num_worlds, device=self.device, dtype=torch.bool)
        ids = torch.as_tensor(ids, device=self.device)
        if ids.dtype == torch.bool:  # a mask such as sim.unstable()
            if ids.shape != (self.num_worlds,):
                raise ValueError(f"a world mask must have shape ({self.num_worlds},), got {tuple(ids.shape)}")
            if qpos is None and qvel is None:  # no rows to place: no ids needed, no host sync
                self._reset_masked(ids)
                if forward:
                    self.forward(ids)
                return
            ids = ids.nonzero()
        ids = ids.to(torch.long).reshape(-1)
        if ids.numel() == 0:
            return
        unique = self._check_ids(ids, with_state=qpos is not None or qvel is not None)
        self._reset_worlds(unique)
        if qpos is not None:
            self.qpos[ids] = torch.as_tensor(qpos, device=self.device, dtype=self.dtype)
        if qvel is not None:
            self.qvel[ids] = torch.as_tensor(qvel, device=self.device, dtype=self.dtype)
        if forward:
            self.forward(unique)

    def _check_ids(self, ids: torch.Tensor, with_state: bool) -> torch.Tensor:
        """`ids` sorted and unique for the backend; out-of-range ids raise naming one.

        With `qpos`/`qvel` rows to write, a repeated id is ambiguous (which row wins) and raises.
        """
        lo, hi = torch.stack(torch.aminmax(ids)).tolist()  # one host sync for both
        if lo < 0 or hi >= self.num_worlds:
            bad = lo if lo < 0 else hi
            raise IndexError(f"world id {bad} out of range: this sim has worlds 0..{self.num_worlds - 1}")
        unique, counts = torch.unique(ids, return_counts=True)
        if with_state and unique.numel() != ids.numel():
            raise ValueError(f"world ids repeat {unique[counts > 1].tolist()[:10]} while qpos/qvel "
                             "give one row per id: pass each world once")
        return unique

    # --- health -------------------------------------------------------------------------------
    def raise_on_overflow(self) -> None:
        """Raise SimError if contacts or constraints were dropped since the last check (backends
        with fixed-size buffers: mjwarp). MuJoCo C grows its buffers: nothing to check."""
        return None

    def unstable(self, max_qvel: float = float("inf")) -> torch.Tensor:
        """Bool mask (N,) of worlds whose state is non-finite or has |qvel| > `max_qvel`."""
        bad = ~torch.isfinite(self.qpos).all(dim=1) | ~torch.isfinite(self.qvel).all(dim=1)
        if max_qvel != float("inf"):
            bad |= self.qvel.abs().amax(dim=1) > max_qvel
        return bad

    def check_finite(self) -> None:
        """Raise SimError naming the worlds whose state is non-finite."""
        bad = torch.nonzero(self.unstable()).flatten().tolist()
        if bad:
            shown = bad[:10] + (["..."] if len(bad) > 10 else [])
            raise SimError(
                f"non-finite state in {len(bad)} of {self.num_worlds} worlds: {shown}. "
                "Reset them with sim.reset(ids) (the env does this automatically), or lower "
                "the timestep / gains if it keeps happening."
            )

    # --- per-world parameters -----------------------------------------------------------------
    @abc.abstractmethod
    def param(self, name: str) -> torch.Tensor:
        """A writable per-world view `(N, ...)` of model field `name` (e.g. 'geom_friction').

        After writing a field in SETCONST_FIELDS (body_mass, ...), call `set_const()`.
        """

    @abc.abstractmethod
    def set_const(self, ids: torch.Tensor | None = None) -> None:
        """Recompute the constants derived from per-world mass/inertia edits (worlds `ids`)."""

    def set_param(
        self, name: str, values: torch.Tensor | float, ids: torch.Tensor | None = None
    ) -> None:
        """Write per-world values of model field `name` for worlds `ids` (all if None)."""
        view = self.param(name)
        values = torch.as_tensor(values, device=self.device, dtype=view.dtype)
        if ids is None:
            view[:] = values
        else:
            view[torch.as_tensor(ids, device=self.device, dtype=torch.long)] = values
        if name in SETCONST_FIELDS:
            self.set_const(ids)

    # --- checkpoints --------------------------------------------------------------------------
    def _state_views(self) -> dict[str, torch.Tensor]:
        """The live arrays a checkpoint holds: the state the next step starts from, the derived
        views a task reads before stepping (as the last step left them), and the per-world
        model fields a task has randomized. Backends add what their solver carries over."""
        views = {f: getattr(self, f) for f in STATE_FIELDS + DERIVED_FIELDS}
        views.update({f"param/{k}": v for k, v in self._params.items()})
        return views

    def get_state(self) -> dict[str, torch.Tensor]:
        """A copy of every world's state (see `_state_views`), for `set_state` to restore."""
        return {k: v.detach().clone() for k, v in self._state_views().items()}

    def set_state(self, state: dict[str, torch.Tensor]) -> None:
        """Put every world back in the state `get_state` copied, bit for bit.

        A model field this sim randomizes but the state lacks (saved by a version that did not
        randomize it) takes the model's own value, as that run had it.
        Raises ValueError naming the first array whose name or shape this sim lacks."""
        for key in state:
            if key.startswith("param/") and key[6:] not in self._params:
                self.param(key[6:])  # randomized in the saved run: give it per-world rows here
        views = self._state_views()
        for key in sorted(views.keys() - state.keys()):
            if key.startswith("param/"):  # not randomized in the saved run: the model's own value
                view = views.pop(key)
                nominal = torch.as_tensor(getattr(self.model, key[6:]))
                view.copy_(nominal.to(view.device, view.dtype).expand_as(view))
        missing, unknown = sorted(views.keys() - state.keys()), sorted(state.keys() - views.keys())
        if missing or unknown:
            raise ValueError(f"sim state does not fit this sim: missing {missing[:5]}, "
                             f"unknown {unknown[:5]}")
        for key, value in state.items():
            view = views[key]
            if tuple(view.shape) != tuple(value.shape):
                raise ValueError(f"sim state '{key}' has shape {tuple(value.shape)}, this sim "
                                 f"{tuple(view.shape)}: saved with another model or world count")
            view.copy_(value.to(view.device, view.dtype))
        if any(k[6:] in SETCONST_FIELDS for k in state if k.startswith("param/")):
            self.set_const()  # the derived constants follow the restored mass/inertia

    # --- names --------------------------------------------------------------------------------
    def body_ids(self, names: Sequence[str]) -> list[int]:
        return name_ids(self.model, mujoco.mjtObj.mjOBJ_BODY, names)

    def body_index(self, names: Sequence[str]) -> torch.Tensor:
        """Body ids as a long tensor on the sim device: index with it on the hot path (a Python
        list index is copied from the host on every use)."""
        return torch.tensor(self.body_ids(names), device=self.device, dtype=torch.long)

    def contact_force(self, body_ids: torch.Tensor | Sequence[int]) -> torch.Tensor:
        """World-frame net contact force on each body, (N, len(body_ids), 3).

        `body_ids`: a device tensor from `body_index` (no host copy), or a list of ids.
        Read from `cfrc_ext`, which MuJoCo computes when the model has an acceleration-stage
        sensor (accelerometer, force, torque, touch); the backends make sure it is computed.
        """
        if not isinstance(body_ids, torch.Tensor):
            body_ids = torch.as_tensor(list(body_ids), device=self.device, dtype=torch.long)
        return self.cfrc_ext[:, body_ids, 3:6]

    def sensor(self, name: str) -> torch.Tensor:
        """View `(N, dim)` of sensor `name` in `sensordata`."""
        return self.sensordata[:, sensor_slice(self.model, name)]

    def get_mjdata(self, world: int, data: mujoco.MjData | None = None) -> mujoco.MjData:
        """Copy world `world` into a host MjData (e.g. to render it), forwarded."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(backend={self.backend!r}, num_worlds={self.num_worlds}, "
            f"device={self.device}, nq={self.model.nq}, nv={self.model.nv}, nu={self.model.nu})"
        )
