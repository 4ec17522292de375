"""Evaluate a trained policy: `python play.py checkpoint=runs/quadruped/<run>`.

Evaluation overrides of the run's task config: `task.cfg.push_vel=0.5` (fields as in train.py).

Prints mean episode return, linear/yaw velocity tracking errors and the share of falls for each
command in configs/play.yaml (forward 0.5 and 1.0 m/s and standing still by default).
"""

from simrl.cli import play

if __name__ == "__main__":
    play()  # the same function as the console script simrl-play
