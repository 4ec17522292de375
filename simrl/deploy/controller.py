"""The on-robot control loop: a fixed-rate, deadline-based cycle with a safety state machine.

    robot = MujocoRobot(policy.meta)            # or any object with the `Robot` methods
    ctl = Controller(policy, robot, log_path="deploy_log.csv")
    ctl.request("stand"); ctl.run(seconds=3.0)   # passive -> stand (default pose over stand_s)
    ctl.request("policy"); ctl.run(seconds=20.0) # the policy, until a fault or the end
    print(ctl.summary())

States: `passive` (damping only: kp 0, kd `damping_kd`) -> `stand` (joint targets interpolated
from the measured pose to the default pose over `stand_s`, with the policy's gains) -> `policy`
(the ONNX policy's targets and gains) -> `damping` (as passive, latched until `request("passive")`).
A fault in `stand` or `policy` moves to `damping` at once: no new state for `state_timeout_s`,
a NaN or inf in any reading or action, a joint past its position limit or velocity limit, the
base tilted past the policy's termination limit, or `overrun_streak` cycles in a row whose
work took longer than the period. `policy` is entered only from `stand` once the interpolation
has finished. Limits, gains and the default pose come from policy.json; nothing is per robot.
Numpy and the deploy runtime only: this runs on a Jetson without torch.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from simrl.deploy.runtime import DeployPolicy, projected_gravity

STATES = ("passive", "stand", "policy", "damping")


@dataclass
class RobotState:
    """One state report: `stamp` (the robot's clock, s), `seq` (rises with every new report) and
    the raw readings by name (`joint_pos`, `joint_vel` in the policy's joint order, IMU ...)."""

    stamp: float
    seq: int
    readings: dict[str, np.ndarray]


@dataclass
class JointCommand:
    """Per joint, in the policy's order and then the held joints' (`held_joints`): tau =
    kp (q - q_meas) + kd (dq - dq_meas) + tau_ff."""

    q: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    dq: np.ndarray | None = None
    tau_ff: np.ndarray | None = None


class Robot(Protocol):
    """What the controller needs of a robot (real, over a middleware, or simulated)."""

    def clock(self) -> float: ...  # monotonic seconds, the clock the loop keeps time by
    def sleep_until(self, t: float) -> None: ...  # return at clock() >= t
    def latest(self) -> RobotState | None: ...  # the newest state report (None before the first)
    def send(self, cmd: JointCommand) -> None: ...
    def close(self) -> None: ...


@dataclass
class Limits:
    """The safety envelope, from policy.json (`limits_from_meta`), overridable per run."""

    default_pose: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    joint_pos: np.ndarray  # (n, 2) lower, upper; inf where a joint is unlimited
    joint_vel: np.ndarray  # (n,) |velocity| limit, rad/s
    max_tilt_cos: float | None = None  # base tilt limit (cos of the angle from upright)
    damping_kd: np.ndarray | None = None  # passive/damping gain; default: the policy's kd
    stand_s: float = 2.0
    state_timeout_s: float = 0.05
    overrun_streak: int = 5
    joint_margin: float = 0.05  # rad past a position limit before it is a fault
    # where the actuated joints sit in the `joint_pos`/`joint_vel` readings; None: the first n, as
    # a robot reports its motors (a task over a whole model, cartpole, also reads unactuated ones)
    joint_index: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.damping_kd is None:
            self.damping_kd = np.asarray(self.kd, dtype=np.float64).copy()
        if self.joint_index is None:
            self.joint_index = np.arange(len(self.default_pose))


@dataclass
class Held:
    """Joints outside the policy (policy.json `robot.held`): held at `pos` with kp/kd from stand
    on, damped (kd only) in passive and damping."""

    names: list[str]
    pos: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    joint_pos: np.ndarray  # (n, 2) lower, upper; inf where unlimited (or not in the export)


def _ranges(ranges: list | None, n: int) -> np.ndarray:
    """(n, 2) lower, upper from policy.json's per-joint ranges (None, or no list: unlimited)."""
    rows = [r if r is not None else [-np.inf, np.inf] for r in (ranges or [None] * n)]
    return np.array(rows, dtype=np.float64).reshape(n, 2)


def _first_outside(q: np.ndarray, ranges: np.ndarray, margin: float) -> int | None:
    """The first joint of `q` more than `margin` past its (lower, upper) range, or None."""
    out = np.flatnonzero((q < ranges[:, 0] - margin) | (q > ranges[:, 1] + margin))
    return int(out[0]) if out.size else None


def held_joints(meta: dict[str, Any]) -> Held:
    """The export's held joints (none for a policy that drives every actuated joint)."""
    h = (meta.get("robot") or {}).get("held") or {}
    arr = lambda k: np.asarray(h.get(k, []), dtype=np.float64)  # noqa: E731
    names = list(h.get("joint_names", []))  # exports before the ranges: unchecked
    return Held(names, arr("pos"), arr("kp"), arr("kd"), _ranges(h.get("joint_pos"), len(names)))


def limits_from_meta(meta: dict[str, Any], **overrides) -> Limits:
    """The limits an export carries: default pose, gains, joint position and velocity limits
    (`deploy.limits`), and the tilt of its termination rule."""
    act, deploy = meta["action"], meta.get("deploy", {})
    n = int(meta["num_actions"])
    lim = deploy.get("limits") or {}
    pos = _ranges(lim.get("joint_pos"), n)
    vel = np.array([v if v is not None else np.inf for v in (lim.get("joint_vel") or [None] * n)],
                   dtype=np.float64)
    tilt = (deploy.get("termination") or {}).get("max_tilt_cos")
    values = dict(default_pose=np.asarray(meta["default_joint_pos"], dtype=np.float64),
                  kp=np.asarray(act["kp"], dtype=np.float64), kd=np.asarray(act["kd"], dtype=np.float64),
                  joint_pos=pos, joint_vel=vel, max_tilt_cos=tilt)
    values.update(overrides)
    return Limits(**values)


@dataclass
class CycleLog:
    """Per-cycle records, kept in memory and written as CSV at `close`."""

    rows: list[tuple] = field(default_factory=list)
    header: tuple = ("t", "period_s", "compute_s", "state", "fault", "seq", "q_cmd")

    def write(self, path: Path) -> None:
        with open(path, "w") as f:
            f.write(",".join(self.header) + "\n")
            for r in self.rows:
                *head, q = r
                f.write(",".join(str(v) for v in head) + "," + " ".join(f"{x:.5f}" for x in q) + "\n")


class Controller:
    """Runs `policy` on `robot` at the policy's control period (see the module docstring)."""

    def __init__(self, policy: DeployPolicy, robot: Robot, limits: Limits | None = None,
                 log_path: str | Path | None = None, command: np.ndarray | None = None):
        self.policy, self.robot = policy, robot
        self.limits = limits or limits_from_meta(policy.meta)
        self.period = float(policy.meta["control_dt"])
        self.n = int(policy.meta["num_actions"])
        self.held = held_joints(policy.meta)  # commanded after the policy's joints
        self.command = np.zeros(3) if command is None else np.asarray(command, dtype=np.float64)
        self.extra_readings: dict[str, np.ndarray] = {}  # e.g. a target pose, fed with the state
        self.inputs: list[Any] = []  # operator inputs polled each cycle (simrl.deploy.commands)
        self.state = "passive"
        self.fault: str | None = None
        self.log = CycleLog()
        self.log_path = Path(log_path) if log_path else None
        self._requested: str | None = None
        self._stand_from: np.ndarray | None = None
        self._held_from: np.ndarray | None = None
        self._stand_t0 = 0.0
        self._stood = False
        self._last_seq = -1
        self._last_new = None  # clock time the newest state arrived
        self._streak = 0
        self._t_prev: float | None = None
        self.overruns = 0
        self.cycles = 0
        self.transitions: list[tuple[float, str, str, str | None]] = []  # (t, from, to, why)

    # --- operator input ---------------------------------------------------------------------
    def request(self, state: str) -> None:
        """Ask for `state`; it is taken at the next cycle where the state machine allows it."""
        if state not in STATES:
            raise ValueError(f"unknown state '{state}'; known: {', '.join(STATES)}")
        self._requested = state

    @property
    def standing(self) -> bool:
        """In `stand`, the default pose itself already commanded (the interpolation is over)."""
        return self.state == "stand" and self._stood

    # --- the loop ---------------------------------------------------------------------------
    def run(self, seconds: float | None = None, cycles: int | None = None) -> None:
        """Cycle at the control period until `seconds` (robot clock) or `cycles` have passed.
        Deadlines are absolute (start + k * period), so the loop does not drift; a cycle that
        ends past its deadline skips the ticks it missed rather than bursting to catch up."""
        clock = self.robot.clock
        start = clock()
        deadline = start
        done = 0
        while (cycles is None or done < cycles) and (seconds is None or clock() - start < seconds - 1e-9):
            self.cycle()
            done += 1
            deadline += self.period
            now = clock()
            if now > deadline:  # late: next tick is the first one still ahead
                deadline += np.ceil((now - deadline) / self.period) * self.period
            self.robot.sleep_until(deadline)

    def cycle(self) -> JointCommand:
        """One control cycle: read, check, decide, command, log."""
        t0 = time.perf_counter()
        now = self.robot.clock()
        for source in self.inputs:
            command, request = source.poll()
            if command is not None:
                self.command = np.asarray(command, dtype=np.float64)
            if request is not None:
                self.request(request)
        s = self.robot.latest()
        if s is not None and s.seq != self._last_seq:
            self._last_seq, self._last_new = s.seq, now
        readings = None if s is None else {**s.readings, "command": self.command, **self.extra_readings}
        self._take_request(now, readings)
        fault = self._check(now, readings) if self.state in ("stand", "policy") else None
        if fault:
            self._to("damping", now, fault)
        cmd = self._command(now, readings)
        if self.state == "policy" and not np.isfinite(cmd.q).all():
            self._to("damping", now, "non-finite action from the policy")
            cmd = self._damping()
        self.robot.send(cmd)
        compute = time.perf_counter() - t0
        if compute > self.period:
            self.overruns += 1
            self._streak += 1
            if self._streak >= self.limits.overrun_streak and self.state in ("stand", "policy"):
                self._to("damping", now, f"{self._streak} cycles in a row over the {self.period * 1e3:.0f} "
                                         f"ms period (last {compute * 1e3:.1f} ms)")
                self.robot.send(self._damping())
        else:
            self._streak = 0
        period = float("nan") if self._t_prev is None else now - self._t_prev
        self._t_prev = now
        self.cycles += 1
        self.log.rows.append((f"{now:.6f}", f"{period:.6f}", f"{compute:.6f}", self.state,
                              self.fault or "", s.seq if s else -1, cmd.q))
        return cmd

    def clear_log(self) -> None:
        """Forget the cycles so far (the log, counts, overruns): timing starts over from here."""
        self.log.rows.clear()
        self.cycles = self.overruns = self._streak = 0
        self._t_prev = None

    def close(self) -> dict[str, float]:
        """Command damping, write the log, and return (and print) the summary."""
        self.robot.send(self._damping())
        if self.log_path is not None:
            self.log.write(self.log_path)
        summary = self.summary()
        print("simrl deploy: " + ", ".join(f"{k} {v}" for k, v in summary.items()))
        return summary

    def summary(self) -> dict[str, Any]:
        periods = np.array([float(r[1]) for r in self.log.rows[1:]] or [np.nan])
        compute = np.array([float(r[2]) for r in self.log.rows] or [np.nan])
        return {"cycles": self.cycles, "state": self.state, "fault": self.fault,
                "period_p50_ms": round(float(np.nanpercentile(periods, 50)) * 1e3, 3),
                "period_p99_ms": round(float(np.nanpercentile(periods, 99)) * 1e3, 3),
                "period_max_ms": round(float(np.nanmax(periods)) * 1e3, 3),
                "compute_p50_ms": round(float(np.nanpercentile(compute, 50)) * 1e3, 3),
                "compute_p99_ms": round(float(np.nanpercentile(compute, 99)) * 1e3, 3),
                "overruns": self.overruns}

    # --- the state machine ------------------------------------------------------------------
    def _to(self, state: str, now: float, why: str | None = None) -> None:
        if state == self.state:
            return
        self.transitions.append((now, self.state, state, why))
        if state == "damping":
            self.fault = why
        if state == "stand":
            self._stand_t0 = now
            self._stand_from = None  # the measured pose of the first cycle in stand
            self._stood = False
        if state == "policy":
            self.policy.reset()
        self.state = state

    def _take_request(self, now: float, readings: dict | None) -> None:
        want, self._requested = self._requested, None
        if want is None or want == self.state:
            return
        allowed = {("passive", "stand"), ("stand", "policy"), ("policy", "stand"),
                   ("damping", "passive")} | {(s, "damping") for s in STATES} | {
                   (s, "passive") for s in ("stand", "policy")}
        if (self.state, want) not in allowed:
            return  # e.g. policy from passive: stand first
        if want == "policy" and not self.standing:
            self._requested = want  # wait for the stand to finish, then take it
            return
        if want == "stand" and readings is None:
            self._requested = want  # no state yet: nothing to interpolate from
            return
        self._to(want, now, "requested" if want == "damping" else None)

    def _check(self, now: float, r: dict | None) -> str | None:
        lim = self.limits
        if r is None or self._last_new is None:
            return "no state from the robot"
        if now - self._last_new > lim.state_timeout_s:
            return (f"no new state for {(now - self._last_new) * 1e3:.0f} ms "
                    f"(limit {lim.state_timeout_s * 1e3:.0f})")
        for name, v in r.items():
            if not np.isfinite(np.asarray(v, dtype=np.float64)).all():
                return f"non-finite reading '{name}'"
        q, dq = np.asarray(r["joint_pos"])[lim.joint_index], np.asarray(r["joint_vel"])[lim.joint_index]
        i = _first_outside(q, lim.joint_pos, lim.joint_margin)
        if i is not None:
            lo_i, hi_i = lim.joint_pos[i]
            return f"joint {i} at {q[i]:.3f} rad, past its limits [{lo_i:.3f}, {hi_i:.3f}]"
        held = r.get("held_joint_pos")
        if held is not None and self.held.names:
            hq = np.asarray(held)
            i = _first_outside(hq, self.held.joint_pos, lim.joint_margin)
            if i is not None:
                lo_i, hi_i = self.held.joint_pos[i]
                return (f"held joint '{self.held.names[i]}' at {hq[i]:.3f} rad, past its limits "
                        f"[{lo_i:.3f}, {hi_i:.3f}]")
        fast = np.flatnonzero(np.abs(dq) > lim.joint_vel)
        if fast.size:
            i = int(fast[0])
            return f"joint {i} at {dq[i]:.1f} rad/s, past its velocity limit {lim.joint_vel[i]:.1f}"
        if lim.max_tilt_cos is not None and ("quat" in r or "gravity" in r):
            g = np.asarray(r["gravity"]) if "gravity" in r else projected_gravity(r["quat"])
            if g[2] > -lim.max_tilt_cos:
                return f"base tilted past the policy's limit (gravity z {g[2]:.2f} > {-lim.max_tilt_cos:.2f})"
        return None

    def _damping(self) -> JointCommand:
        z = np.zeros(self.n + len(self.held.names))
        return JointCommand(q=z, kp=z, kd=np.concatenate([self.limits.damping_kd, self.held.kd]))

    def _with_held(self, q, kp, kd, a: float = 1.0) -> JointCommand:
        """The policy joints' command, then the held joints' (moved from where they were
        measured at the stand's start to their pose over the stand, like the policy's)."""
        h = self.held
        if not h.names:
            return JointCommand(q=np.asarray(q, dtype=np.float64), kp=np.asarray(kp), kd=np.asarray(kd))
        start = self._held_from if self._held_from is not None else h.pos
        return JointCommand(q=np.concatenate([q, (1 - a) * start + a * h.pos]),
                            kp=np.concatenate([kp, h.kp]), kd=np.concatenate([kd, h.kd]))

    def _command(self, now: float, r: dict | None) -> JointCommand:
        lim = self.limits
        if self.state in ("passive", "damping") or r is None:
            return self._damping()
        if self.state == "stand":
            if self._stand_from is None:
                self._stand_from = np.asarray(r["joint_pos"], dtype=np.float64)[lim.joint_index].copy()
                held = r.get("held_joint_pos")
                self._held_from = None if held is None else np.asarray(held, dtype=np.float64).copy()
            # stand_s 0: the default pose at once (a simulation whose episode starts in it)
            a = 1.0 if lim.stand_s <= 0 else min(1.0, (now - self._stand_t0) / lim.stand_s)
            self._stood = a >= 1.0
            q = (1 - a) * self._stand_from + a * lim.default_pose
            return self._with_held(q, lim.kp, lim.kd, a)
        targets, kp, kd = self.policy.act(r)
        return self._with_held(np.asarray(targets, dtype=np.float64), kp, kd)
