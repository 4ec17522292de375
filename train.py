"""Train a policy: `python train.py task=quadruped` (Hydra; configs/ holds every option).

    python train.py                                  # quadruped, CPU default (mujoco backend)
    python train.py task=cartpole                    # the one-minute smoke test
    python train.py device=cuda num_envs=4096        # GPU: mjwarp backend
    python train.py resume=runs/quadruped/<run>      # continue from the latest checkpoint
    python train.py -m seed=1,2,3                    # sweep (Hydra multirun)
    python train.py task.cfg.push_vel=0.5            # a task config field (envs/<task>.py)
    python train.py robot=/path/to/my_dog.yaml       # a robot config anywhere (or configs/robot/<name>)
    python train.py logger=wandb                     # W&B beside TensorBoard (pip install wandb)
"""

import sys

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from simrl.config import cli_overrides, register_configs
from simrl.errors import exit_on_user_error


@hydra.main(config_path="configs", config_name="train", version_base=None)
def main(cfg: DictConfig) -> None:
    with exit_on_user_error():  # a user's mistake: one line, no traceback
        from simrl.rl.app import train

        train(cfg, HydraConfig.get().runtime.output_dir)


if __name__ == "__main__":
    register_configs()  # task.cfg nodes from the task dataclasses, before Hydra composes
    sys.argv[1:] = cli_overrides(sys.argv[1:])  # robot=/path/to/robot.yaml -> task.cfg.robot=...
    main()
