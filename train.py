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

from simrl.cli import train

if __name__ == "__main__":
    train()  # the same function as the console script simrl-train
