"""Evaluate a trained policy: `python eval.py checkpoint=runs/quadruped/<run>`.

Evaluation overrides of the run's task config: `task.cfg.push_vel=0.5` (fields as in train.py).

Prints mean episode return, linear/yaw velocity tracking errors and the share of falls for each
command in configs/eval.yaml (forward 0.5 and 1.0 m/s and standing still by default).
`policy=<run>/export/policy.onnx` runs an exported policy sim-to-sim in MuJoCo C instead.
"""

from simrl.cli import evaluate

if __name__ == "__main__":
    evaluate()  # the same function as the console script simrl-eval
