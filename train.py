"""Train a policy: `python train.py task=quadruped` (Hydra; configs/ holds every option).

    python train.py                                  # quadruped, CPU default (mujoco backend)
    python train.py task=cartpole                    # the one-minute smoke test
    python train.py device=cuda num_envs=4096        # GPU: mjwarp backend
    python train.py resume=runs/quadruped/<run>      # continue from the latest checkpoint
    python train.py -m seed=1,2,3                    # sweep (Hydra multirun)
"""

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig


@hydra.main(config_path="configs", config_name="train", version_base=None)
def main(cfg: DictConfig) -> None:
    from simrl.rl.app import train

    train(cfg, HydraConfig.get().runtime.output_dir)


if __name__ == "__main__":
    main()
