"""Evaluate a trained policy: `python play.py checkpoint=runs/quadruped/<run>`.

Prints mean episode return, linear/yaw velocity tracking errors and the share of falls for each
command in configs/play.yaml (forward 0.5 and 1.0 m/s and standing still by default).
"""

import hydra
from omegaconf import DictConfig


@hydra.main(config_path="configs", config_name="play", version_base=None)
def main(cfg: DictConfig) -> None:
    from simrl.rl.app import play

    play(cfg)


if __name__ == "__main__":
    main()
