"""GPU backend: MuJoCo Warp. Also runs on Warp's CPU device (slowly) so tests can exercise it.

Tensors are `wp.to_torch` views of the Warp data arrays (float32, zero-copy). On a CUDA device
the decimated step, `forward`, the masked reset and `set_const` are each captured once as a
CUDA graph and replayed on torch's current stream (so torch's writes to `ctrl` or a reset mask
and the replay are ordered whatever stream torch uses); replacing a model array (per-world
parameters) drops the graphs so they re-capture. Capture is strict: its preconditions are
checked up front, and a call that cannot be captured raises instead of running uncaptured
(uncaptured, the solver's conditional loop syncs the host every iteration).

Nothing here waits on the device in a step or a masked reset: buffer overflows are accumulated
on the device (MuJoCo Warp's `d.overflow`, kept across resets) and read by `raise_on_overflow`,
which the env batch calls once per iteration; a bare `Sim` checks after each `step` unless
`check_overflow=False`.
"""

from __future__ import annotations

import gc
import os

import mujoco
import mujoco_warp as mjw
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
# Of those, the ones about the contact buffer all worlds share (naconmax): MuJoCo Warp sets
# BROADPHASE and NARROWPHASE in every world at once, so they say nothing about which world had
# too many contacts; CCD (the CCD contact buffer, also shared) marks the world that overflowed.
_SHARED = mjw.OverflowType.BROADPHASE | mjw.OverflowType.NARROWPHASE | mjw.OverflowType.CCD
_ROWS = mjw.OverflowType.NEFC | mjw.OverflowType.NJMAX_NNZ  # per world: njmax

# Model fields that `set_const` writes from mass/inertia inputs. They stay shared (leading dim
# 1) until an input is made per world; then they are tiled too, or every world would get world
# 0's. Geom bounds (geom_aabb, geom_rbound) depend on geom sizes only: they stay shared.
_SETCONST_OUTPUTS = (
    "body_subtreemass", "dof_invweight0", "body_invweight0", "tendon_invweight0", "actuator_acc0",
    "tendon_length0", "eq_data", "cam_pos0", "cam_poscom0", "cam_mat0", "light_pos0",
    "light_poscom0", "light_dir0",
)


def check_capture(device, conditional: bool) -> None:
    """Raise SimError naming the fix when CUDA graphs cannot be captured on `device`.

    Capture needs Warp's memory pool on the device (allocations inside MuJoCo Warp's step come
    from it) and, where the model's solver loops on a graph conditional, CUDA >= 12.4 in both the
    driver and the toolkit Warp was built with.
    """
    if not device.is_cuda:
        return
    if not wp.is_mempool_supported(device):
        raise SimError(f"CUDA graphs need a memory pool on {device}, which it does not support: "
                       "run with sim.kwargs.graphs=false (slower: every launch from Python)")
    if not wp.is_mempool_enabled(device):
        raise SimError(f"Warp's memory pool is disabled on {device}, and CUDA graph capture needs "
                       f"it: call wp.set_mempool_enabled('{device}', True) before building the "
                       "sim, or run with sim.kwargs.graphs=false")
    if conditional and not wp.is_conditional_graph_supported():
        rt = wp._src.context.runtime
        raise SimError(
            "MuJoCo Warp's solver loops on a CUDA graph conditional, which needs CUDA >= 12.4 in "
            f"the driver (here {rt.driver_version}) and in Warp's build (here "
            f"{rt.toolkit_version}): update the driver / warp-lang, or run with "
            "sim.kwargs.graphs=false"
        )


class WarpSim(Sim):
    """`num_worlds` worlds in MuJoCo Warp on one Warp device ('cuda:N' or 'cpu').

    `nconmax`/`njmax`: contacts and constraint rows per world; None sizes them from the model
    as MuJoCo Warp does. `graphs`: capture and replay CUDA graphs (default: on CUDA).
    """

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
        # True (the env batch sets it): a world that overflowed its own constraint rows is
        # reported by `unstable` (and reset and counted) instead of raising; the contact buffer
        # all worlds share still raises, since no one world is to blame
        self.reset_row_overflow = False
        self._graphs: dict = {}
        self._streams: dict = {}
        self._capture_stream = None

        mjd = mujoco.MjData(model)
        if self.keyframe >= 0:
            mujoco.mj_resetDataKeyframe(model, mjd, self.keyframe)
        mujoco.mj_forward(model, mjd)
        with wp.ScopedDevice(self.wp_device):
            self.m = mjw.put_model(model)
            self.m.opt.run_rne_postconstraint = True  # fill cfrc_ext for contact forces
            # no device printf per world per substep from inside replayed graphs (put_model turns
            # it on for every class, solver iteration caps included): overflows are read from
            # d.overflow below, with the setting to raise named
            self.m.opt.warn_overflow = 0
            if self.use_graphs:
                check_capture(self.wp_device, bool(self.m.opt.graph_conditional))
            try:
                self.d = mjw.put_data(model, mjd, nworld=num_worlds, nconmax=nconmax, njmax=njmax)
            except ValueError as e:
                raise SimError(
                    f"MuJoCo Warp buffers too small for the initial state: {e}. Raise nconmax "
                    f"(now {nconmax}) / njmax (now {njmax}), or leave them unset (None) to size "
                    "them from the model."
                ) from e
            self._reset_mask = wp.zeros(num_worlds, dtype=bool)
        d = self.d
        self.nconmax = int(d.naconmax) // num_worlds  # as sized (given, or MuJoCo Warp's default)
        self.njmax = int(d.njmax)
        for name in STATE_FIELDS:
            setattr(self, name, wp.to_torch(getattr(d, name)))
        for name in DERIVED_FIELDS:
            setattr(self, name, wp.to_torch(getattr(d, name)))
        self._overflow = wp.to_torch(d.overflow)
        self._overflow_seen = torch.zeros_like(self._overflow)  # bits that resets cleared
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
    def _stream(self):
        """Warp's handle on torch's current stream (cached per stream), None on the CPU."""
        if not self.wp_device.is_cuda:
            return None
        ts = torch.cuda.current_stream(self.device)
        stream = self._streams.get(ts.cuda_stream)
        if stream is None:
            stream = self._streams[ts.cuda_stream] = wp.stream_from_torch(ts)
        return stream

    def _scope(self):
        stream = self._stream()
        return wp.ScopedStream(stream) if stream is not None else wp.ScopedDevice(self.wp_device)

    def _run(self, key, fn) -> None:
        """Run `fn` (Warp launches only) on torch's current stream, through a captured CUDA
        graph when enabled.

        The first call runs `fn` once (compiling kernels, allocating outside the capture), then
        captures it; a capture records launches without executing them, so `fn` ran exactly
        once. The capture runs on a private stream (CUDA cannot capture torch's default stream,
        the legacy null stream); a graph replays on whichever stream it is launched on, here
        torch's current one. Python's garbage collector is off during the capture: a finalizer
        freeing an old graph or array inside it would break the capture.
        """
        graph = self._graphs.get(key) if self.use_graphs else None
        if graph is not None:
            wp.capture_launch(graph, stream=self._stream())
            return
        with self._scope():
            fn()
        if not self.use_graphs:
            return
        gc_enabled = gc.isenabled()
        gc.disable()
        try:
            with self._capture_scope(), wp.ScopedCapture(device=self.wp_device) as capture:
                fn()
        except Exception as e:
            raise SimError(
                f"MuJoCo Warp: '{key}' could not be captured as a CUDA graph ({type(e).__name__}: "
                f"{e}). Uncaptured, it would sync the host on every solver iteration; fix the "
                "cause, or run uncaptured on purpose with sim.kwargs.graphs=false."
            ) from e
        finally:
            if gc_enabled:
                gc.enable()
        self._graphs[key] = capture.graph

    def _capture_scope(self):
        """The private stream captures run on (created once), or the CPU device."""
        if not self.wp_device.is_cuda:
            return wp.ScopedDevice(self.wp_device)
        if self._capture_stream is None:
            self._capture_stream = wp.Stream(self.wp_device)
        return wp.ScopedStream(self._capture_stream)

    def step(self, nstep: int = 1) -> None:
        m, d = self.m, self.d

        def substeps():
            for _ in range(nstep):
                mjw.step(m, d)

        self._run(("step", nstep), substeps)
        if self.check_overflow:
            self.raise_on_overflow()

    def raise_on_overflow(self) -> None:
        """Raise SimError if any world lost contacts or constraints since the last check.

        One host sync: the env batch calls it once per iteration, not per step.
        """
        bits = self._overflow | self._overflow_seen
        if self.reset_row_overflow:
            bits = bits & ~int(_ROWS)
        lost = (bits & int(_LOST)) != 0
        if not bool(lost.any()):
            return
        worlds = torch.nonzero(lost).flatten()
        seen = mjw.OverflowType(_or_all(bits[worlds]) & int(_LOST))
        self._overflow.zero_()
        self._overflow_seen.zero_()
        where = []
        if seen & _ROWS:
            per_world = ((bits & int(_ROWS)) != 0).nonzero().flatten().tolist()
            where.append(f"{len(per_world)} of {self.num_worlds} worlds {per_world[:10]} overflowed "
                         f"their constraint rows (njmax={self.njmax} per world)")
        if seen & mjw.OverflowType.NVMAX:
            where.append("the compacted active-dof buffer (nvmax, with sleeping islands) "
                         "overflowed; this sim leaves nvmax at nv: disable sleep in the model")
        if seen & _SHARED:
            where.append(f"the contact buffer all {self.num_worlds} worlds share (nconmax="
                         f"{self.nconmax} per world, {self.nconmax * self.num_worlds} in all) overflowed")
        raise SimError(
            f"MuJoCo Warp buffer overflow ({seen!r}): {'; '.join(where)}, so contacts or "
            f"constraints were dropped. Raise them: make_sim(..., nconmax={2 * self.nconmax}, "
            f"njmax={2 * self.njmax}) or, in train.py, sim.kwargs.nconmax={2 * self.nconmax} "
            f"sim.kwargs.njmax={2 * self.njmax}."
        )

    def forward(self, ids: torch.Tensor | None = None) -> None:
        """All worlds (MuJoCo Warp has no per-world forward); the state is unchanged by it."""
        self._run("forward", lambda: mjw.forward(self.m, self.d))

    def unstable(self, max_qvel: float = float("inf")) -> torch.Tensor:
        """The base check, and with `reset_row_overflow` the worlds that overflowed their
        constraint rows (njmax) in the last step: their physics dropped constraints."""
        bad = super().unstable(max_qvel)
        if self.reset_row_overflow:
            bad |= (self._overflow & int(_ROWS)) != 0
        return bad

    def _reset_worlds(self, ids: torch.Tensor) -> None:
        mask = torch.zeros(self.num_worlds, dtype=torch.bool, device=self.device)
        mask[ids] = True
        self._reset_masked(mask)

    def _reset_masked(self, mask: torch.Tensor) -> None:
        """Reset the worlds where `mask` (N,) is True: no host sync, fixed launches."""
        self._overflow_seen |= self._overflow  # what happened before the reset still counts
        self._reset_torch.copy_(mask)
        self._run("reset", lambda: mjw.reset_data(self.m, self.d, reset=self._reset_mask))
        for view, value in self._init.values():
            rows = mask.view(-1, *([1] * (view.dim() - 1)))
            view.copy_(torch.where(rows, value, view))
        self._overflow.masked_fill_(mask, 0)

    def _state_views(self) -> dict[str, torch.Tensor]:
        """The base views plus what the solver carries from step to step (its warmstart) and
        the overflow bits a reset has not cleared yet."""
        views = super()._state_views()
        views["qacc_warmstart"] = wp.to_torch(self.d.qacc_warmstart)
        views["overflow"] = self._overflow
        return views

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
        tiled = wp.empty((self.num_worlds, *arr.shape[1:]), dtype=arr.dtype, device=self.wp_device)
        dst = wp.to_torch(tiled)
        dst.copy_(wp.to_torch(arr).expand_as(dst))
        setattr(self.m, name, tiled)
        self._graphs.clear()  # captured graphs hold the old array's address
        return tiled

    def set_const(self, ids: torch.Tensor | None = None) -> None:
        """All worlds (MuJoCo Warp has no per-world set_const); unchanged worlds stay equal.

        Costly (hundreds of launches): tasks call it when they randomize mass or inertia, at
        start-up, not per reset."""
        self._run("set_const", lambda: mjw.set_const(self.m, self.d))

    def get_mjdata(self, world: int, data: mujoco.MjData | None = None) -> mujoco.MjData:
        data = data if data is not None else mujoco.MjData(self.model)
        mjw.get_data_into(data, self.model, self.d, world_id=int(world))
        mujoco.mj_forward(self.model, data)
        return data


def _or_all(bits: torch.Tensor) -> int:
    """Bitwise OR of an int tensor's elements, as a Python int (host side, small tensors)."""
    out = 0
    for b in bits.tolist():
        out |= int(b)
    return out
