"""Cartpole balance: the smoke test of the whole pipeline (trains in about a minute on a CPU).

A task as configuration: `CartpoleCfg` holds the task's fields, the terms only it uses (`TERMS`)
and the entries its fields imply (`own_entries`); the env is the library's `EnvBatch`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch

from simrl.env import EnvCfg, ObsTerm
from simrl.managers.observation import observation
from simrl.managers.termination import deploy_facts


@deploy_facts(lambda env, noise: {"qpos_noise": float(noise)})
def reset_state_uniform(env: Any, mask: torch.Tensor, noise: float) -> None:
    """Every qpos and qvel of the envs being reset drawn uniformly in +-`noise` (a model at rest
    at all zeros: the cart centred, the pole up)."""
    n, rows, sim = env.num_envs, mask[:, None], env.sim
    qpos = env.uniform((n, sim.qpos.shape[1]), -noise, noise).to(sim.dtype)
    sim.qpos[:] = torch.where(rows, qpos, sim.qpos)
    qvel = env.uniform((n, sim.qvel.shape[1]), -noise, noise).to(sim.dtype)
    sim.qvel[:] = torch.where(rows, qvel, sim.qvel)


_ENC = "joint encoder angles: [cart position m, pole angle rad]"
_VEL = "joint velocities: [cart m/s, pole rad/s]"
OBSERVATIONS = {  # each with how a robot supplies it (export writes it into policy.json)
    "cart_pos": observation(lambda env: env.sim.qpos[:, :1].float(),
                            read={"reading": "joint_pos", "columns": [0], "doc": _ENC}),
    "pole_angle": observation(lambda env: env.sim.qpos[:, 1:2].float(),
                              read={"reading": "joint_pos", "columns": [1], "doc": _ENC}),
    "cart_vel": observation(lambda env: env.sim.qvel[:, :1].float(),
                            read={"reading": "joint_vel", "columns": [0], "doc": _VEL}),
    "pole_vel": observation(lambda env: env.sim.qvel[:, 1:2].float(),
                            read={"reading": "joint_vel", "columns": [1], "doc": _VEL}),
}
REWARDS = {
    "alive": lambda env: torch.ones(env.num_envs, device=env.device),
    "upright": lambda env: torch.cos(env.sim.qpos[:, 1]).float(),
    "centered": lambda env: -env.sim.qpos[:, 0].abs().float(),
    "effort": lambda env: env.actions.square().sum(dim=1),
}


@dataclass
class CartpoleCfg(EnvCfg):
    task_name: ClassVar[str] = "cartpole"
    TERMS: ClassVar[dict[str, dict[str, Any]]] = {
        "observations": OBSERVATIONS, "rewards": REWARDS,
        "events": {"reset_state_uniform": reset_state_uniform}}

    model: str = "cartpole/cartpole.xml"
    decimation: int = 2  # 100 Hz physics, 50 Hz control
    episode_length_s: float = 5.0
    action_clip: float = 1.0
    observations: dict = field(
        default_factory=lambda: {
            "policy": [ObsTerm("cart_pos"), ObsTerm("pole_angle"), ObsTerm("cart_vel", 0.5),
                       ObsTerm("pole_vel", 0.2)],
        }
    )
    rewards: dict = field(default_factory=lambda: {"alive": 1.0, "upright": 1.0, "centered": 0.2,
                                                   "effort": -0.05})
    max_angle: float = 0.4  # rad: past this the pole has fallen
    max_cart_pos: float = 2.4  # m
    init_noise: float = 0.1

    def own_entries(self) -> dict[str, dict[str, Any]]:
        """The pole past `max_angle` or the cart past `max_cart_pos` ends an episode; each
        starts at rest within `init_noise`."""
        out_of_range = "joint_pos_out_of_range"
        pole = {"joint": "hinge", "limit": self.max_angle}
        cart = {"joint": "slider", "limit": self.max_cart_pos}
        return {
            "terminations": {"pole_down": {"func": out_of_range, "params": pole},
                             "off_rail": {"func": out_of_range, "params": cart}},
            "events": {"reset": {"func": "reset_state_uniform", "mode": "reset",
                                 "params": {"noise": self.init_noise}}},
        }
