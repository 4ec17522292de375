"""Run by test_distributed under torchrun: train cartpole briefly, dump this rank's weights."""

import os
import sys
from pathlib import Path

import torch
from hydra import compose, initialize_config_dir

from simrl import CONFIGS
from simrl.rl.app import train

out = Path(sys.argv[1])
rank = int(os.environ["RANK"])
with initialize_config_dir(config_dir=str(CONFIGS), version_base=None):
    cfg = compose("train", overrides=["task=cartpole", "device=cpu", "num_envs=16",
                                      "max_iterations=3", "progress=false"])
trainer = train(cfg, out / f"rank{rank}")
torch.save({k: v.clone() for k, v in trainer.alg.save()["actor_state_dict"].items()},
           out / f"params_rank{rank}.pt")
torch.save(trainer.env.sim.qpos.clone(), out / f"qpos_rank{rank}.pt")
