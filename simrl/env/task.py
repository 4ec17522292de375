"""What a task adds to the env batch: the hooks a task fills (its model, its buffers, its own
term entries built from its fields, its part of a reset) and the facts export and deploy read
(the action and deploy specs, joint limits, the mirror image of actions). Each has a default
that suits a task whose config says everything (cartpole's)."""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np
import torch

from simrl.errors import ConfigError
from simrl.paths import ASSETS


class TaskHooks:
    """Mixin of `EnvBatch`: the hooks and specs, with their defaults."""

    @property
    def num_actions(self) -> int:
        """The policy's actuators: the model's first `num_actions`; any after them hold a
        robot's held joints (RobotCfg.held_joints) at their keyframe targets."""
        scene = getattr(self, "scene", None)
        return int(self.model.nu) - (len(scene.robot.held_joints) if scene is not None else 0)

    def build_model(self) -> str | mujoco.MjModel:
        """The model to simulate: a config with a `robot` assembles its scene (the robot and the
        config's `objects`, simrl.scene); otherwise `cfg.model`, an MJCF path relative to assets/."""
        robot = getattr(self.cfg, "robot", None)
        if robot is not None:
            from simrl.scene import assemble

            self.scene = assemble(robot, objects=getattr(self.cfg, "objects", None))
            self._check_base(getattr(self.cfg, "ROBOT_BASE", None))
            return self.scene.model
        return self.cfg.model if self.cfg.model.startswith("/") else str(ASSETS / self.cfg.model)

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
        """Allocate task buffers (called once, before the first reset). Over a robot scene: the
        robot's policy joints (`joint_pos`, `joint_vel`, read from the sim after each step and
        reset), its default pose as the action offset, and its action scale where the config
        gives none."""
        scene = getattr(self, "scene", None)
        if scene is None:
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
        self.refresh()

    def apply_actions(self, actions: torch.Tensor) -> None:
        """Write `actions` (N, num_actions), clipped, into `sim.ctrl`: each action term drives
        its actuators (simrl.mdp.actions; by default ctrl = offset + scale * action)."""
        self.action_manager.apply(self, actions)

    def task_actions(self) -> dict[str, dict[str, Any]]:
        """The task's own action entries (by default, simrl.env.config.own_entries: one
        joint_position_action over every policy actuator, at the task's scale and offset)."""
        return {}

    def task_events(self) -> dict[str, dict[str, Any]]:
        """The task's own event entries, built from its fields (a legged task's pushes); they
        run before the config's `events`, and a config event of the same name merges into one."""
        return {}

    def task_terminations(self) -> dict[str, dict[str, Any]]:
        """The task's own termination entries, built from its fields (a legged task's tilt
        limit); the config's `terminations` of the same name merge into them."""
        return {}

    def task_commands(self) -> dict[str, dict[str, Any]]:
        """The task's own command entries, built from its fields (a legged task's velocity
        ranges); the config's `commands` of the same name merge into them."""
        return {}

    def task_curriculum(self) -> dict[str, dict[str, Any]]:
        """The task's own curriculum entries, built from its fields (a velocity task's
        command_curriculum); the config's `curriculum` entries are merged over them."""
        return {}

    def link_terms(self) -> None:
        """Keep references into the bound terms as task attributes (a command's tensors), once,
        after the terms are bound and before the first reset."""

    def refresh(self) -> None:
        """Re-read task state from the sim views (after physics and after resets): over a robot
        scene, the policy joints' angles and velocities."""
        if getattr(self, "reads_joint_state", False):
            self.joint_pos = self.sim.qpos[:, self.joint_qpos].float()
            self.joint_vel = self.sim.qvel[:, self.joint_dof].float()

    def update(self) -> None:
        """Task state after the physics (commands, contact timers...); calls `refresh`."""
        self.refresh()

    def end_episodes(self, done: torch.Tensor) -> None:
        """The episodes where bool `done` (N,) end this step, their reward sums still in
        `episode_sums` (they are cleared next): a curriculum reads them here. No host sync."""

    def reset_envs(self, mask: torch.Tensor) -> None:
        """Task part of resetting the envs where bool `mask` (N,) is True; the sim is already at
        its keyframe for them. Write with `torch.where(mask, new, old)` (or `masked_fill_`),
        never `x[mask] = ...`: boolean indexing waits on the device for the count."""

    def resolved_cfg(self) -> dict[str, Any]:
        """Config fields whose value this env chose at build time (a None default resolved), as
        plain data: a run's saved config records them, so replaying it under other overrides
        (evaluation on another terrain) builds the same network inputs. Tasks with such fields extend it."""
        return {}

    # --- what export and deploy read -----------------------------------------------------------
    def action_spec(self) -> dict[str, Any]:
        """How actions become actuator commands, as plain data (simrl.managers.action)."""
        return self.action_manager.spec(self)

    def deploy_spec(self) -> dict[str, Any]:
        """What sim-to-sim needs to rehearse this task in plain MuJoCo C, as data (export writes
        it into policy.json): how to rebuild the scene, where episodes start, how long they
        last, what ends them, whether the policy tracks velocity commands. Tasks extend it."""
        from simrl.managers.metric import sim_twins, success_rule
        from simrl.managers.termination import merge_facts

        scene = getattr(self, "scene", None)
        spec = {
            "scene": {"mjcf": self.cfg.model} if scene is None else
            {"robot": scene.robot.to_dict(), "objects": dict(getattr(self.cfg, "objects", None) or {})},
            "keyframe": self.cfg.keyframe,
            "episode_length_s": float(self.cfg.episode_length_s),
            "tracks_commands": False,
            # the termination terms' facts: max_abs_qpos {qpos index: limit}, max_tilt_cos, ...
            "termination": merge_facts({}, self.termination_manager.facts),
            # the reset events' facts: qpos_noise (uniform +- on every qpos), joint_scale [lo, hi]
            "reset": merge_facts({}, self.event_manager.facts),
            "limits": self.joint_limits(),
            # the commands' facts: tracks_commands (a velocity), target (a pose's or position's draw)
            **self.command_manager.deploy_facts(self),
        }
        # readings a robot's perception or controller supplies, and how sim-to-sim makes them;
        # figures sim-to-sim computes by the metric terms' MuJoCo C twins (simrl.managers.metric)
        # and the success rule a metric term declares (simrl.rl.sim2sim.Success)
        extra = {"sim_readings": self.sim_readings(),
                 "metrics": sim_twins(self.METRIC_TERMS, self.TRACKING_TERMS),
                 "success": success_rule(self, self.METRIC_TERMS)}
        return {**spec, **{k: v for k, v in extra.items() if v}}

    def sim_readings(self) -> dict[str, Any]:
        """{reading: how sim-to-sim makes it from MuJoCo's state}, from the `sim` part of every
        observation group's declared reads (an object's pose: simrl.mdp.objects; an
        end-effector's: envs/manipulation); a reading only
        a critic's term declares is made too, and the policy does not ask for it."""
        from simrl.managers.observation import deploy_read
        from simrl.managers.terms import resolve
        from simrl.mdp.frames import ee_site, site_id

        out = {}
        for layout in self.obs_layout.values():
            for slot in layout:
                read = deploy_read(self.OBS_TERMS[slot.func], slot.params) or {}
                if "sim" not in read:
                    continue
                named = read["sim"] if isinstance(read["reading"], list) else {read["reading"]: read["sim"]}
                for reading, rule in named.items():  # a list of readings: {reading: rule}
                    rule = dict(rule)
                    if "body" in rule:  # a name or an entity-qualified pattern: the MJCF name
                        (body,) = resolve(self.model, mujoco.mjtObj.mjOBJ_BODY, rule["body"],
                                          f"reading '{reading}'", self.scene.entities)
                        rule["body"] = self.model.body(body).name
                    if "site" in rule:  # a name, or None: the task's end-effector (ee_site)
                        site = rule["site"]
                        sid = ee_site(self) if site is None else site_id(self.model, site, "site")
                        rule["site"] = self.model.site(sid).name
                    out[reading] = rule
        return out

    def joint_limits(self) -> dict[str, Any]:
        """The actuated joints' position ranges, in action order (None where a joint is
        unlimited): the deploy controller's safety envelope (simrl.deploy.controller)."""
        from simrl.scene import joint_ranges, per_joint

        m = self.model
        joints = [int(m.actuator_trnid[i, 0]) for i in range(self.num_actions)]
        limits: dict[str, Any] = {"joint_pos": joint_ranges(m, joints)}
        robot = getattr(self, "robot", None)
        if robot is not None and robot.velocity_limit is not None:
            limits["joint_vel"] = per_joint(robot.velocity_limit, robot.joints, "velocity_limit").tolist()
        return limits

    # --- left-right mirror (symmetry augmentation) ---------------------------------------------
    def action_mirror(self) -> tuple[np.ndarray, np.ndarray]:
        """The mirror image of an action vector as (perm, sign); tasks with a mirror override it."""
        raise ConfigError(f"task '{self.task_name}' defines no mirror image of its actions, so symmetry "
                          "is not available for it: train without symmetry")

    def mirror_maps(self) -> dict[str, Any]:
        """{"obs": {group: (perm, sign)}, "actions": (perm, sign)} as device tensors: the mirror
        image of every observation group and of the actions (simrl.mirror.apply). Built on the
        first call and kept (not state: a checkpoint does not hold it)."""
        import simrl.mirror as mirror

        if "_mirror_maps" in self.__dict__:
            return self._mirror_maps
        perm, sign = self.action_mirror()
        declared = {slot.name: getattr(self.OBS_TERMS[slot.func], "mirror", None)
                    for layout in self.obs_layout.values() for slot in layout}
        terms = {name: f(self) for name, f in declared.items() if f is not None}
        self._mirror_maps = {
            "obs": {g: mirror.group_map(layout, terms, self.device, g)
                    for g, layout in self.obs_layout.items()},
            "actions": (torch.as_tensor(perm, device=self.device, dtype=torch.long),
                        torch.as_tensor(sign, device=self.device, dtype=torch.float32)),
        }
        return self._mirror_maps

    # --- rendering ----------------------------------------------------------------------------
    def render(self, world: int = 0, width: int = 640, height: int = 480, camera: str | int | None = None):
        """rgb_array frame (height, width, 3) of env `world`, from the model's tracking camera."""
        from simrl.render import Renderer, default_camera

        if getattr(self, "_renderer", None) is None or self._renderer_size != (width, height):
            self._renderer = Renderer(self.sim, width, height)
            self._renderer_size = (width, height)
        return self._renderer.frame(world, default_camera(self.sim) if camera is None else camera)
