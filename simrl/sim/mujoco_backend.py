"""CPU backend: MuJoCo's C engine through `mujoco.batch.Batch`, multi-threaded over worlds.

Every tensor is `torch.from_numpy` over a live Batch view (float64, on the CPU): writing
`sim.ctrl` writes the batch's state rows, and the views see each step's results in place.
"""

from __future__ import annotations

import copy
import os

import mujoco
import mujoco.batch
import numpy as np
import torch

from simrl.sim.base import DERIVED_FIELDS, STATE_FIELDS, Sim, SimError

# Sensor types whose evaluation makes MuJoCo run mj_rnePostConstraint (fills cfrc_ext).
_RNE_POST_SENSORS = {
    mujoco.mjtSensor.mjSENS_ACCELEROMETER,
    mujoco.mjtSensor.mjSENS_FORCE,
    mujoco.mjtSensor.mjSENS_TORQUE,
    mujoco.mjtSensor.mjSENS_FRAMELINACC,
    mujoco.mjtSensor.mjSENS_FRAMEANGACC,
}


def default_nthread() -> int:
    """Threads for the batch: all CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class MujocoSim(Sim):
    """`num_worlds` MjData stepped by `mujoco.batch.Batch` on `nthread` threads."""

    backend = "mujoco"

    def __init__(
        self,
        model: mujoco.MjModel,
        num_worlds: int,
        keyframe: str | int | None = None,
        nthread: int = 0,
    ):
        model = copy.copy(model)  # we change its flags; leave the caller's model alone
        # Keep MuJoCo from silently resetting a diverged world: we detect and report it.
        model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_AUTORESET
        super().__init__(model, num_worlds, keyframe)
        self.device = torch.device("cpu")
        self.dtype = torch.float64
        self.nthread = nthread or default_nthread()
        self.batch = mujoco.batch.Batch(model, num_worlds, nthread=self.nthread, persistent=False)
        b = self.batch
        for name in STATE_FIELDS:
            setattr(self, name, torch.from_numpy(b.bind(name)))
        for name in DERIVED_FIELDS:
            # derived fields are read-only numpy arrays refreshed in place by every call
            arr = b.bind(name)
            arr.flags.writeable = True  # torch.from_numpy needs a writable buffer; we only read
            setattr(self, name, torch.from_numpy(arr))
        self._has_rne_post = bool(set(model.sensor_type.tolist()) & {int(t) for t in _RNE_POST_SENSORS})
        self._params: dict[str, torch.Tensor] = {}
        # MuJoCo's warnings of a world gone wrong (contact or constraint buffer full, bad
        # qpos/qvel/qacc/ctrl): counts per world; a rise since the last check marks it unstable
        bad = [mujoco.mjtWarning.mjWARN_CONTACTFULL, mujoco.mjtWarning.mjWARN_CNSTRFULL,
               mujoco.mjtWarning.mjWARN_BADQPOS, mujoco.mjtWarning.mjWARN_BADQVEL,
               mujoco.mjtWarning.mjWARN_BADQACC, mujoco.mjtWarning.mjWARN_BADCTRL]
        self._warn_cols = [int(w) for w in bad]
        self._warn_seen = self._warnings()
        self.reset()

    def step(self, nstep: int = 1) -> None:
        try:
            self.batch.step(nstep=nstep)
        except mujoco.batch.SimulationError as e:
            raise SimError(
                f"MuJoCo failed in worlds {e.ids.tolist()[:10]}: {e}. The other worlds stepped "
                "and the failed ones kept their state; reset them with sim.reset(ids).",
                worlds=torch.as_tensor(np.asarray(e.ids), dtype=torch.long),
            ) from e

    def forward(self, ids: torch.Tensor | None = None) -> None:
        if ids is None:
            self.batch.forward()
            return
        ids = torch.as_tensor(ids)
        if ids.dtype == torch.bool:
            ids = ids.nonzero()
        if ids.numel():
            self.batch.forward(ids.numpy().astype(np.int32).reshape(-1))

    def _reset_worlds(self, ids: torch.Tensor) -> None:
        self.batch.reset(ids.numpy().astype(np.int32), keyframe=self.keyframe, stage=0)


    def unstable(self, max_qvel: float = float("inf")) -> torch.Tensor:
        """The base check, and worlds whose MuJoCo warning counts rose since the last check."""
        bad = super().unstable(max_qvel)
        count = self._warnings()
        bad |= ((count != self._warn_seen) & (count > 0)).any(dim=1)  # a reset zeroes them
        self._warn_seen = count
        return bad

    def _warnings(self) -> torch.Tensor:
        """(N, 6) counts of the warnings `unstable` watches (a copy)."""
        return torch.from_numpy(self.batch.warning[:, self._warn_cols, 1])

    def set_state(self, state: dict[str, torch.Tensor]) -> None:
        super().set_state(state)
        self._warn_seen = self._warnings()

    def _state_views(self) -> dict[str, torch.Tensor]:
        """The batch's whole mjSTATE_INTEGRATION rows (qpos, qvel, act, warmstart, ctrl, applied
        forces, mocap, plasticity, history), its warning counters, the derived outputs and the
        per-world model fields."""
        views = {k: v for k, v in super()._state_views().items() if k not in STATE_FIELDS}
        views["state"] = torch.from_numpy(self.batch.state)  # holds the STATE_FIELDS and more
        views["warning"] = torch.from_numpy(self.batch.warning)
        return views

    def param(self, name: str) -> torch.Tensor:
        if name not in self._params:
            try:
                arr = self.batch.expand(name)
            except (KeyError, ValueError) as e:
                raise KeyError(f"cannot randomize model field '{name}' per world: {e}") from e
            self._params[name] = torch.from_numpy(arr)
        return self._params[name]

    def set_const(self, ids: torch.Tensor | None = None) -> None:
        if ids is None:
            self.batch.set_const()
        else:
            self.batch.set_const(torch.as_tensor(ids).numpy().astype(np.int32).reshape(-1))

    def contact_force(self, body_ids):
        if not self._has_rne_post:
            raise SimError(
                "contact forces (cfrc_ext) are only computed by MuJoCo C when the model has an "
                "accelerometer, force or torque sensor: add e.g. <accelerometer site=.../>"
            )
        return super().contact_force(body_ids)

    def get_mjdata(self, world: int, data: mujoco.MjData | None = None) -> mujoco.MjData:
        data = self.batch.get_data(int(world), data)
        mujoco.mj_forward(self.batch.get_model(int(world)), data)
        return data
