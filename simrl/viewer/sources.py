"""What a viewer shows: worlds that advance one control step at a time under a policy.

- `EnvSource`: an env batch (either backend) under a policy over its observation dicts, the
  policy of a checkpoint (`simrl.rl.app.policy_from_checkpoint`).
- `DeploySource`: an exported `policy.onnx` through `simrl.deploy`, the controller and runtime
  the robot runs, each world its own simulated robot in MuJoCo C (as sim-to-sim runs it).

Both give the same face to a viewer: `model`, `num_worlds`, `control_dt`, `step()`,
`reset()`, `data(world)` (a forwarded host MjData), a velocity command with its trained
`command_ranges` (None where the task tracks none), and `signals(world)`: the latest reward
terms and observation terms of one world, for plots.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
import torch


class EnvSource:
    """The worlds of `env` driven by `policy(obs) -> actions`; commands pinned from the viewer."""

    def __init__(self, env: Any, policy: Callable[[dict], torch.Tensor]):
        self.env, self.policy = env, policy
        self.model = env.sim.model
        self.num_worlds = int(env.num_envs)
        self.control_dt = float(env.dt)
        self.on_terrain = getattr(getattr(env, "scene", None), "terrain", None) is not None
        self._data = mujoco.MjData(self.model)
        spec = env.deploy_spec()
        self.command_ranges = spec.get("command_ranges") if spec.get("tracks_commands") else None
        self.command = np.zeros(3) if self.command_ranges else None
        self._sums: torch.Tensor | None = None
        self._rewards: dict[str, float] = {}
        self.reset()

    def reset(self) -> None:
        self.env.reset()
        self._pin()
        self.obs = self.env.compute_observations()
        self._sums = None

    def set_command(self, command: np.ndarray) -> None:
        self.command = np.asarray(command, dtype=np.float64)
        self._pin()

    def _pin(self) -> None:
        if self.command is not None:
            self.env.fix_command(self.command.tolist())

    @torch.inference_mode()
    def step(self) -> None:
        self.obs, *_ = self.env.step(self.policy(self.obs))
        self._pin()  # a reset draws a new command for the world it resets

    def data(self, world: int) -> mujoco.MjData:
        return self.env.sim.get_mjdata(world, self._data)

    def signals(self, world: int) -> dict[str, dict[str, np.ndarray]]:
        """This step's weighted reward terms (x dt, as summed into the return) and the policy's
        observation terms, of `world`."""
        rm = self.env.reward_manager
        sums = rm.sums[world].detach().cpu().clone()
        step = sums if self._sums is None else sums - self._sums
        step = torch.where(sums.abs() < step.abs(), sums, step)  # the episode restarted
        self._sums = sums
        obs = self.obs["policy"][world].detach().cpu().numpy()
        layout = self.env.obs_layout["policy"]
        return {"reward": {n: step[i:i + 1].numpy() for i, n in enumerate(rm.names)},
                "observation": {s.name: obs[s.slice] for s in layout}}


class DeploySource:
    """`num_envs` simulated robots, each under the deploy controller running `policy.onnx`."""

    def __init__(self, onnx_path: str | Path, num_envs: int = 1, seed: int = 0,
                 command: Any = (0.5, 0.0, 0.0)):
        from simrl.deploy import DeployPolicy
        from simrl.rehearse.mujoco_robot import MujocoRobot
        from simrl.rehearse.scene import scene_model
        from simrl.rl.sim2sim import controller_limits, free_root

        worlds = int(num_envs)
        self.policies = [DeployPolicy(onnx_path) for _ in range(worlds)]
        meta = self.meta = self.policies[0].meta
        self.model, _ = scene_model(meta, None)
        self.robots = [MujocoRobot(meta, keyframe=False, model=self.model) for _ in range(worlds)]
        self.num_worlds = int(worlds)
        self.control_dt = float(meta["control_dt"])
        self.on_terrain = False
        spec = meta["deploy"]
        self.spec = spec
        self.command_ranges = spec.get("command_ranges") if spec.get("tracks_commands") else None
        if spec.get("tracks_commands") and not self.command_ranges:
            self.command_ranges = [[-1.0, 1.0], [-0.5, 0.5], [-1.0, 1.0]]  # exported without ranges
        self.command = np.asarray(command, dtype=np.float64) if self.command_ranges else None
        self.root_qpos, _ = free_root(self.model, meta)
        self.limits = controller_limits(meta, self.model, self.robots[0].read)
        self.key = (mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_KEY, spec["keyframe"])
                    if spec.get("keyframe") else -1)
        self.fall_bodies = [self.model.body(b).id for b in spec["termination"].get("contact_bodies", [])]
        self.rng = np.random.default_rng(seed)
        self._obs: list[np.ndarray | None] = [None] * worlds
        for w, p in enumerate(self.policies):  # keep each world's latest observation for plots
            p.observation = self._keeping(w, p.observation)
        self.controllers: list[Any] = [None] * worlds
        self.t = np.zeros(worlds, dtype=np.int64)
        self.t0 = np.zeros(worlds)
        self.reset()

    def _keeping(self, world: int, observe: Callable[[dict], np.ndarray]) -> Callable[[dict], np.ndarray]:
        def observation(readings: dict) -> np.ndarray:
            obs = observe(readings)
            self._obs[world] = obs
            return obs
        return observation

    def reset(self, world: int | None = None) -> None:
        from simrl.deploy.controller import Controller
        from simrl.rl.sim2sim import sample_target, start_episode

        for w in range(self.num_worlds) if world is None else [world]:
            robot = self.robots[w]
            start_episode(self.model, robot.d, robot.read, self.spec.get("reset", {}), self.rng, self.key)
            target = sample_target(self.spec["target"], self.rng) if self.spec.get("target") else None
            robot.restart()
            self.policies[w].reset()
            ctl = Controller(self.policies[w], robot, self.limits,
                             command=self.command if self.command is not None else None)
            if target is not None:
                ctl.extra_readings = {robot.read.target_name: target}
            ctl.request("stand")  # the default pose at once, then the policy (as sim-to-sim starts)
            ctl.cycle()
            ctl.request("policy")
            self.controllers[w] = ctl
            self.t[w], self.t0[w] = 0, robot.clock()

    def set_command(self, command: np.ndarray) -> None:
        self.command = np.asarray(command, dtype=np.float64)
        for ctl in self.controllers:
            ctl.command = self.command.copy()

    def step(self) -> None:
        from simrl.rehearse.scene import fell

        for w, (robot, ctl) in enumerate(zip(self.robots, self.controllers, strict=True)):
            ctl.cycle()
            self.t[w] += 1
            robot.sleep_until(self.t0[w] + self.t[w] * self.control_dt)
            robot.sent.clear()  # a viewer runs for hours: keep no history
            ctl.log.rows.clear()
            r = robot.latest().readings
            term = self.spec["termination"]
            down = fell(self.model, robot.d, r, term, self.root_qpos, self.fall_bodies, 0.0)
            if down or ctl.state != "policy":
                self.reset(w)

    def data(self, world: int) -> mujoco.MjData:
        return self.robots[world].d

    def signals(self, world: int) -> dict[str, dict[str, np.ndarray]]:
        obs = self._obs[world]
        terms = {} if obs is None else {t["name"]: obs[t["start"]:t["stop"]] for t in self.meta["obs_terms"]}
        return {"reward": {}, "observation": terms}


class WatchSource:
    """The worlds of an env that something else steps (a training run), read at `rate_hz`:
    `step()` does nothing, `data(world)` copies the world as it is. Reading never draws a
    random number or writes the env, so training runs as it would unwatched."""

    def __init__(self, env: Any, rate_hz: float = 10.0):
        self.env = env
        self.model = env.sim.model
        self.num_worlds = int(env.num_envs)
        self.control_dt = 1.0 / float(rate_hz)
        self.on_terrain = getattr(getattr(env, "scene", None), "terrain", None) is not None
        self.command = self.command_ranges = None
        self._data = mujoco.MjData(self.model)

    def step(self) -> None:
        pass

    def reset(self) -> None:
        pass  # the run resets its own worlds

    def set_command(self, command: np.ndarray) -> None:
        pass

    def data(self, world: int) -> mujoco.MjData:
        return self.env.sim.get_mjdata(world, self._data)

    def signals(self, world: int) -> dict[str, dict[str, np.ndarray]]:
        return {"reward": {}, "observation": {}}
