"""GPU backend: MuJoCo Warp. Also runs on Warp's CPU device (slowly) so tests can exercise it.

Tensors are `wp.to_torch` views of the Warp data arrays (float32, zero-copy). On a CUDA device
the decimated step, `forward`, the masked reset and `set_const` are each captured once as a
CUDA graph and replayed; replacing a model array (per-world parameters) drops the graphs so they
re-capture. A call that cannot be captured warns once and runs uncaptured from then on.
"""

from __future__ import annotations

import os
import warnings

import mujoco
import mujoco_warp as mjw
import numpy as np
import torch
import warp as wp

from simrl.sim.base import DERIVED_FIELDS, SETCONST_FIELDS, STATE_FIELDS, Sim, SimError

if not os.environ.get("SIMRL_WARP_VERBOSE"):
    # no banner or per-module compile lines unless asked (warp >= 1.19 filters by log level)
    wp.config.quiet = True
    if hasattr(wp.config, "log_level"):
        wp.config.log_level = 30  # warnings and errors only

# Overflow bits that mean lost contacts or constraints (solver iteration limits are not errors).
_LOST = (
    mjw.OverflowType.NEFC
    | mjw.OverflowType.NJMAX_NNZ
    | mjw.OverflowType.BROADPHASE
    | mjw.OverflowType.NARROWPHASE
    | mjw.OverflowType.CCD
    | mjw.OverflowType.NVMAX
)


_EAGER = object()  # in WarpSim._graphs: this key could not be captured; run it uncaptured

# Model fields that `set_const` writes. They stay shared (leading dim 1) until an input of
# set_const is made per world; then they are tiled too, or every world would get world 0's.
_SETCONST_OUTPUTS = (
    "body_subtreemass", "dof_invweight0", "body_invweight0", "tendon_invweight0", "actuator_acc0",
    "tendon_length0", "eq_data", "cam_pos0", "cam_poscom0", "cam_mat0", "light_pos0",
    "light_poscom0", "light_dir0", "geom_aabb", "geom_rbound",
)


def contact_capacity(model: mujoco.MjModel) -> tuple[int, int]:
    """(nconmax, njmax) per world, sized so every colliding geom can hold 4 contacts at once.

    Each geom that collides at all may touch several others; 4 contacts per colliding geom
    covers box-on-plane faces and is generous for spheres and capsules. Each pyramidal contact
    of condim 3 adds 4 constraint rows (6 for condim 4, 10 for 6); joint limits add one each.
    """
    colliding = int(np.count_nonzero((model.geom_contype | model.geom_conaffinity) != 0))
    nconmax = max(16, 4 * colliding)
    rows = {1: 1, 3: 4, 4: 6, 6: 10}
    per_contact = max(rows.get(int(c), 10) for c in model.geom_condim) if model.ngeom else 4
    njmax = nconmax * per_contact + int(np.count_nonzero(model.jnt_limited)) + model.neq * 6 + 16
    return nconmax, njmax


class WarpSim(Sim):
    """`num_worlds` worlds in MuJoCo Warp on one Warp device ('cuda:N' or 'cpu')."""

    backend = "mjwarp"

    def __init__(
        self,
        model: mujoco.MjModel,
        num_worlds: int,
        keyframe: str | int | None = None,
        device: str = "cuda:0",
        nconmax: int | None = None,
        njmax: int | None = None,
        graphs: bool | None = None,
        check_overflow: bool = True,
    ):
        super().__init__(model, num_worlds, keyframe)
        self.wp_device = wp.get_device(device)
        self.device = torch.device("cpu" if self.wp_device.is_cpu else f"cuda:{self.wp_device.ordinal}")
        self.dtype = torch.float32
        self.use_graphs = self.wp_device.is_cuda if graphs is None else graphs
        self.check_overflow = check_overflow
        default_ncon, default_njmax = contact_capacity(model)
        self.nconmax = nconmax or default_ncon
        self.njmax = njmax or default_njmax
        self._graphs: dict = {}

        mjd = mujoco.MjData(model)
        if self.keyframe >= 0:
            mujoco.mj_resetDataKeyframe(model, mjd, self.keyframe)
        mujoco.mj_forward(model, mjd)
        with wp.ScopedDevice(self.wp_device):
            self.m = mjw.put_model(model)
            self.m.opt.run_rne_postconstraint = True  # fill cfrc_ext for contact forces
            try:
                self.d = mjw.put_data(
                    model, mjd, nworld=num_worlds, nconmax=self.nconmax, njmax=self.njmax
                )
            except ValueError as e:
                raise SimError(
                    f"MuJoCo Warp buffers too small for the initial state: {e}. Raise nconmax "
                    f"(now {self.nconmax}) / njmax (now {self.njmax})."
                ) from e
            self._reset_mask = wp.zeros(num_worlds, dtype=bool)
        d = self.d
        for name in STATE_FIELDS:
            setattr(self, name, wp.to_torch(getattr(d, name)))
        for name in DERIVED_FIELDS:
            setattr(self, name, wp.to_torch(getattr(d, name)))
        self._overflow = wp.to_torch(d.overflow)
        self._reset_torch = wp.to_torch(self._reset_mask)
        # a keyframe's fields, written over reset_data's defaults (which already are mj_resetData's,
        # per world where a model field such as qpos0 or body_pos is per world)
        self._init: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}  # field -> (view, value)
        if self.keyframe >= 0:
            for f, value in self.reset_state().items():
                if value.size:
                    view = wp.to_torch(getattr(d, f))
                    self._init[f] = (view, torch.as_tensor(value, dtype=view.dtype, device=self.device))
        self._params: dict[str, torch.Tensor] = {}

    # --- graph helper ---------------------------------------------------------------------
    def _run(self, key, fn) -> None:
        """Run `fn` (Warp launches only), through a captured CUDA graph when enabled.

        The first call runs `fn` once (compiling kernels, allocating outside the capture) and
        records it; a capture records launches without executing them, so `fn` ran exactly once.
        """
        if not self.use_graphs:
            with wp.ScopedDevice(self.wp_device):
                fn()
            return
        graph = self._graphs.get(key)
        if graph is None:
            with wp.ScopedDevice(self.wp_device):
                fn()
                try:
                    with wp.ScopedCapture() as capture:
                        fn()
                    self._graphs[key] = capture.graph
                except Exception as e:  # e.g. allocations inside fn without a memory pool
                    warnings.warn(f"MuJoCo Warp: '{key}' cannot be captured as a CUDA graph "
                                  f"({e}); it runs uncaptured", RuntimeWarning, stacklevel=3)
                    self._graphs[key] = _EAGER
            return
        if graph is _EAGER:
            with wp.ScopedDevice(self.wp_device):
                fn()
            return
        wp.capture_launch(graph)

    def step(self, nstep: int = 1) -> None:
        m, d = self.m, self.d

        def substeps():
            for _ in range(nstep):
                mjw.step(m, d)

        self._run(("step", nstep), substeps)
        if self.check_overflow:
            self._raise_on_overflow()

    def _raise_on_overflow(self) -> None:
        lost = (self._overflow & int(_LOST)) != 0
        if bool(lost.any()):  # one host sync per step; disable with check_overflow=False
            worlds = torch.nonzero(lost).flatten().tolist()
            bits = mjw.OverflowType(int(self._overflow[worlds[0]]) & int(_LOST))
            self._overflow.zero_()
            raise SimError(
                f"MuJoCo Warp buffer overflow ({bits!r}) in {len(worlds)} worlds "
                f"{worlds[:10]}: contacts or constraints were dropped. Raise nconmax "
                f"(now {self.nconmax}) and njmax (now {self.njmax}): make_sim(..., "
                f"nconmax={2 * self.nconmax}, njmax={2 * self.njmax}) or, in train.py, "
                f"sim.kwargs.nconmax={2 * self.nconmax} sim.kwargs.njmax={2 * self.njmax}."
            )

    def forward(self, ids: torch.Tensor | None = None) -> None:
        """All worlds (MuJoCo Warp has no per-world forward); the state is unchanged by it."""
        self._run("forward", lambda: mjw.forward(self.m, self.d))

    def _reset_worlds(self, ids: torch.Tensor) -> None:
        self._reset_torch.zero_()
        self._reset_torch[ids] = True
        self._run("reset", lambda: mjw.reset_data(self.m, self.d, reset=self._reset_mask))
        for view, value in self._init.values():
            view[ids] = value
        self._overflow[ids] = 0

    # --- per-world parameters -------------------------------------------------------------
    def param(self, name: str) -> torch.Tensor:
        if name in self._params:
            return self._params[name]
        arr = getattr(self.m, name, None)
        if not isinstance(arr, wp.array):
            raise KeyError(f"cannot randomize model field '{name}' per world: not a Model array")
        if arr.shape[0] != self.num_worlds and arr.shape[0] != 1:
            raise KeyError(f"model field '{name}' has no per-world leading dim: {arr.shape}")
        arr = self._tile(name)
        if name in SETCONST_FIELDS:
            for out in _SETCONST_OUTPUTS:
                if getattr(self.m, out, None) is not None:
                    self._tile(out)
        view = wp.to_torch(arr)
        self._params[name] = view
        return view

    def _tile(self, name: str) -> wp.array:
        """Give model field `name` one row per world (a copy of its shared row), in place."""
        arr = getattr(self.m, name)
        if arr.shape[0] == self.num_worlds or arr.size == 0:
            return arr
        tiled = np.ascontiguousarray(np.repeat(arr.numpy(), self.num_worlds, axis=0))
        arr = wp.array(tiled, dtype=arr.dtype, device=self.wp_device)
        setattr(self.m, name, arr)
        self._graphs.clear()  # captured graphs hold the old array's address
        return arr

    def set_const(self, ids: torch.Tensor | None = None) -> None:
        """All worlds (MuJoCo Warp has no per-world set_const); unchanged worlds stay equal.

        Captured like the step: tasks that randomize mass on every reset call it most steps."""
        self._run("set_const", lambda: mjw.set_const(self.m, self.d))

    def get_mjdata(self, world: int, data: mujoco.MjData | None = None) -> mujoco.MjData:
        data = data if data is not None else mujoco.MjData(self.model)
        mjw.get_data_into(data, self.model, self.d, world_id=int(world))
        mujoco.mj_forward(self.model, data)
        return data
