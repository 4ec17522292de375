"""What export, deploy and symmetry read from an env batch: the action and deploy specs (as
plain data for policy.json), joint limits, the readings sim-to-sim makes, the mirror image of
observations and actions; and rendering. Every fact comes from a term's or a view's declaration:
nothing here knows a task."""

from __future__ import annotations

import functools
from typing import Any

import mujoco
import numpy as np
import torch

from simrl.errors import ConfigError


class TaskSpecs:
    """Mixin of `EnvBatch`: the specs, the mirror and rendering."""

    # --- what export and deploy read -----------------------------------------------------------
    def action_spec(self) -> dict[str, Any]:
        """How actions become actuator commands, as plain data (simrl.managers.action)."""
        return self.action_manager.spec(self)

    def deploy_spec(self) -> dict[str, Any]:
        """What sim-to-sim needs to rehearse this task in plain MuJoCo C, as data (export writes
        it into policy.json): how to rebuild the scene, where episodes start, how long they
        last, what ends them, whether the policy tracks velocity commands; the action delay and
        the views' facts (a terrain grid)."""
        from simrl.managers.metric import sim_twins, success_rule
        from simrl.managers.termination import merge_facts

        scene = getattr(self, "scene", None)
        objects = dict(getattr(self.cfg, "objects", None) or {})
        spec = {
            "scene": {"mjcf": self.cfg.model} if scene is None else
            {"robot": scene.robot.to_dict(), **({"objects": objects} if objects else {})},
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
        if self.action_manager.delay_range is not None:  # documented: on the robot it is its own
            spec["action_delay"] = list(self.action_manager.delay_range)
        for view in self.views.values():
            spec.update(view.deploy_facts(self) if hasattr(view, "deploy_facts") else {})
        return {**spec, **{k: v for k, v in extra.items() if v}}

    def sim_readings(self) -> dict[str, Any]:
        """{reading: how sim-to-sim makes it from MuJoCo's state}, from the `sim` part of every
        observation group's declared reads (an object's pose: simrl.mdp.objects; an
        end-effector's: envs/manipulation); a reading only
        a critic's term declares is made too, and the policy does not ask for it."""
        from simrl.managers.observation import deploy_read
        from simrl.managers.terms import resolve
        from simrl.mdp.frames import ee_site

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
                    if "site" in rule:  # a name or a pattern, or None: the task's end-effector (ee_site)
                        (site,) = ([ee_site(self)] if rule["site"] is None else
                                   resolve(self.model, mujoco.mjtObj.mjOBJ_SITE, rule["site"],
                                           f"reading '{reading}'", self.scene.entities))
                        rule["site"] = self.model.site(site).name
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
    @functools.cached_property
    def robot_mirror(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(joint index, joint sign, foot index): the robot's mirror by its config's `mirror`
        rule (simrl.mirror.robot_mirror), derived once."""
        import simrl.mirror as mirror

        if getattr(self, "scene", None) is None:
            raise ConfigError(f"task '{self.task_name}' has no robot, so no mirror image of its actions: "
                              "train without symmetry")
        return mirror.robot_mirror(self.scene)

    def action_mirror(self) -> tuple[np.ndarray, np.ndarray]:
        """The mirror image of an action vector as (perm, sign): the robot's joints swapped."""
        index, sign, _ = self.robot_mirror
        return index, sign

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
