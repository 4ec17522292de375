"""rsl-rl's view of an env batch: the same buffers, `step` returning (obs, rew, dones, extras)."""

from __future__ import annotations

import dataclasses

import torch
from rsl_rl.env import VecEnv
from tensordict import TensorDict

from simrl.env import EnvBatch


class RslRlVecEnv(VecEnv):
    """rsl-rl's `VecEnv` over an `EnvBatch` (no copies).

    `extras["log"]` carries `env.episode_log()` every `log_every` steps (present only where an
    episode ended or a world was unstable), as rsl-rl's own runner and logger expect. Reading
    the log is a host sync: a loop that reads it once per iteration (simrl's Trainer) passes
    `log_every=0` and calls `env.episode_log()` itself.
    """

    def __init__(self, env: EnvBatch, log_every: int = 1):
        self.env = env
        self.num_envs = env.num_envs
        self.num_actions = env.num_actions
        self.max_episode_length = env.max_episode_length
        self.device = env.device
        self.cfg = dataclasses.asdict(env.cfg)
        self.log_every = log_every
        self._steps = 0

    @property
    def episode_length_buf(self) -> torch.Tensor:
        return self.env.episode_length_buf

    @episode_length_buf.setter
    def episode_length_buf(self, value: torch.Tensor) -> None:
        self.env.episode_length_buf[:] = value

    def get_observations(self) -> TensorDict:
        return self.env.get_observations()

    def step(self, actions: torch.Tensor):
        obs, rew, term, trunc, _ = self.env.advance(actions, final_obs=False)
        td = TensorDict(dict(obs), batch_size=[self.num_envs], device=self.device)
        extras = {"time_outs": self.env.time_out_buf}
        self._steps += 1
        if self.log_every and self._steps % self.log_every == 0:
            log = self.env.episode_log()
            if log:
                extras["log"] = log
        return td, rew, term | trunc, extras
