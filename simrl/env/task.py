"""What the env batch builds from a task config: the model (a robot's scene with the config's
objects and terrain, or an MJCF), the robot's joint state, and the config's data views (state
computed once per step that the task's terms read, simrl.env.config.EnvCfg.VIEWS)."""

from __future__ import annotations

from typing import Any

import mujoco
import torch

from simrl.errors import ConfigError
from simrl.paths import ASSETS


class TaskModel:
    """Mixin of `EnvBatch`: the model, the robot's joints and the data views."""

    @property
    def num_actions(self) -> int:
        """The policy's actuators: the model's first `num_actions`; any after them hold a
        robot's held joints (RobotCfg.held_joints) at their keyframe targets."""
        scene = getattr(self, "scene", None)
        return int(self.model.nu) - (len(scene.robot.held_joints) if scene is not None else 0)

    def build_model(self) -> str | mujoco.MjModel:
        """The model to simulate: a config with a `robot` assembles its scene (the robot, the
        config's `objects` and `terrain`, simrl.scene) and completes itself from it
        (`cfg.bind_scene`); otherwise `cfg.model`, an MJCF path relative to assets/."""
        robot = getattr(self.cfg, "robot", None)
        if robot is None:
            return self.cfg.model if self.cfg.model.startswith("/") else str(ASSETS / self.cfg.model)
        from simrl.scene import assemble

        self.scene = assemble(robot, terrain=getattr(self.cfg, "terrain", None),
                              objects=getattr(self.cfg, "objects", None))
        self._check_base(getattr(self.cfg, "ROBOT_BASE", None))
        self.cfg = self.cfg.bind_scene(self.scene)
        return self.scene.model

    def _check_base(self, base: str | None) -> None:
        """The robot's base is the kind the config asks for (`ROBOT_BASE`: fixed, floating)."""
        fixed, r = self.scene.fixed_base, self.scene.robot
        if base is None or base == ("fixed" if fixed else "floating"):
            return
        default = type(self.cfg)().robot
        use = default if isinstance(default, str) else f"<a {base}-base robot>"
        has = "is bolted to the world" if fixed else f"has a free joint on root_body '{r.root_body}'"
        raise ConfigError(f"task '{self.task_name}' needs a {base}-base robot, but robot '{r.name}' {has}: "
                          f"use robot={use}")

    def setup(self) -> None:
        """Before the terms bind: over a robot scene, the robot's policy joints (`joint_pos`,
        `joint_vel`, read after each step and reset), its default pose as the action offset, its
        action scale where the config gives none; then the config's data views, in order."""
        scene = getattr(self, "scene", None)
        self.views: dict[str, Any] = {}
        if scene is None:
            if getattr(self.cfg, "VIEWS", None):
                raise ConfigError(f"task '{self.task_name}' declares views {sorted(self.cfg.VIEWS)}, which "
                                  "read a robot's scene, but its config has no robot: give it `robot`")
            return
        from simrl.managers.terms import index_of

        self.robot = scene.robot
        self.default_joint_pos = torch.as_tensor(scene.default_joint_pos, device=self.device,
                                                 dtype=torch.float32)
        self.action_offset = self.default_joint_pos
        if getattr(self.cfg, "action_scale", None) is None:
            self.action_scale = float(scene.robot.action_scale)
        self.joint_qpos = index_of(scene.joint_qpos, self.device)
        self.joint_dof = index_of(scene.joint_dof, self.device)
        self.reads_joint_state = True
        for name, cls in getattr(self.cfg, "VIEWS", {}).items():
            view = cls(self)
            setattr(self, name, view)
            self.views[name] = view
        self.refresh()

    def refresh(self) -> None:
        """Re-read state from the sim (after physics and after resets): over a robot scene the
        policy joints' angles and velocities, then each view's."""
        if getattr(self, "reads_joint_state", False):
            self.joint_pos = self.sim.qpos[:, self.joint_qpos].float()
            self.joint_vel = self.sim.qvel[:, self.joint_dof].float()
        for view in self.views.values():
            view.refresh(self)

    def update(self) -> None:
        """State after a physics step: `refresh`, then each view's update (contact timers...)."""
        self.refresh()
        for view in self.views.values():
            view.update(self)

    def reset_views(self, mask: torch.Tensor) -> None:
        """Tell the views which envs are being reset (bool `mask`, (N,))."""
        for view in self.views.values():
            view.reset(self, mask)

    def view_metrics(self) -> dict[str, Any]:
        """Metric terms that exist with a view (a terrain grid's crossing share)."""
        out: dict[str, Any] = {}
        for view in self.views.values():
            out.update(view.metrics() if hasattr(view, "metrics") else {})
        return out

    def view_log(self) -> dict[str, float]:
        """The views' per-iteration figures (a terrain curriculum's levels)."""
        out: dict[str, float] = {}
        for view in self.views.values():
            out.update(view.log(self) if hasattr(view, "log") else {})
        return out

    def resolved_cfg(self) -> dict[str, Any]:
        """Config fields whose value this env chose at build time (a None default resolved, by a
        view), as plain data: a run's saved config records them, so replaying it under other
        overrides (evaluation on another terrain) builds the same network inputs."""
        out: dict[str, Any] = {}
        for view in self.views.values():
            out.update(view.resolved_cfg() if hasattr(view, "resolved_cfg") else {})
        return out
