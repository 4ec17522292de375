"""Cartpole balance: the smoke test of the whole pipeline (trains in about a minute on a CPU)."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from simrl.env import EnvBatch, EnvCfg, ObsTerm
from simrl.managers.observation import observation


@dataclass
class CartpoleCfg(EnvCfg):
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


class CartpoleEnv(EnvBatch):
    task_name = "cartpole"
    cfg: CartpoleCfg

    def task_terminations(self) -> dict:
        cfg = self.cfg
        out_of_range = "joint_pos_out_of_range"
        return {"pole_down": {"func": out_of_range, "params": {"joint": "hinge", "limit": cfg.max_angle}},
                "off_rail": {"func": out_of_range, "params": {"joint": "slider", "limit": cfg.max_cart_pos}}}

    def deploy_spec(self) -> dict:
        spec = super().deploy_spec()
        spec["reset"] = {"qpos_noise": self.cfg.init_noise}
        return spec

    def reset_envs(self, mask: torch.Tensor) -> None:
        n, s, rows = self.num_envs, self.cfg.init_noise, mask[:, None]
        self.sim.qpos[:] = torch.where(rows, self.uniform((n, 2), -s, s).to(self.sim.dtype), self.sim.qpos)
        self.sim.qvel[:] = torch.where(rows, self.uniform((n, 2), -s, s).to(self.sim.dtype), self.sim.qvel)


_ENC = "joint encoder angles: [cart position m, pole angle rad]"
_VEL = "joint velocities: [cart m/s, pole rad/s]"
CartpoleEnv.OBS_TERMS = {  # each with how a robot supplies it (export writes it into policy.json)
    "cart_pos": observation(lambda env: env.sim.qpos[:, :1].float(),
                            read={"reading": "joint_pos", "columns": [0], "doc": _ENC}),
    "pole_angle": observation(lambda env: env.sim.qpos[:, 1:2].float(),
                              read={"reading": "joint_pos", "columns": [1], "doc": _ENC}),
    "cart_vel": observation(lambda env: env.sim.qvel[:, :1].float(),
                            read={"reading": "joint_vel", "columns": [0], "doc": _VEL}),
    "pole_vel": observation(lambda env: env.sim.qvel[:, 1:2].float(),
                            read={"reading": "joint_vel", "columns": [1], "doc": _VEL}),
}
CartpoleEnv.REWARD_TERMS = {
    "alive": lambda env: torch.ones(env.num_envs, device=env.device),
    "upright": lambda env: torch.cos(env.sim.qpos[:, 1]).float(),
    "centered": lambda env: -env.sim.qpos[:, 0].abs().float(),
    "effort": lambda env: env.actions.square().sum(dim=1),
}
