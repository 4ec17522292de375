"""Evaluate a trained policy: `python play.py checkpoint=runs/quadruped/<run>`.

Evaluation overrides of the run's task config: `task.cfg.push_vel=0.5` (fields as in train.py).

Prints mean episode return, linear/yaw velocity tracking errors and the share of falls for each
command in configs/play.yaml (forward 0.5 and 1.0 m/s and standing still by default).
"""

import hydra
from omegaconf import DictConfig

from simrl.config import register_configs
from simrl.errors import exit_on_user_error


@hydra.main(config_path="configs", config_name="play", version_base=None)
def main(cfg: DictConfig) -> None:
    with exit_on_user_error():  # a user's mistake: one line, no traceback
        from simrl.rl.app import play

        play(cfg)


if __name__ == "__main__":
    register_configs()  # task.cfg nodes from the task dataclasses, before Hydra composes
    main()
