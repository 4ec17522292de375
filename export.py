"""Export a trained policy for the robot: `python export.py checkpoint=runs/quadruped/<run>`.

Writes policy.onnx (dynamic batch, normalizer folded in, metadata) and policy.json, verified
with onnxruntime against the torch policy; `format=tensorrt precision=fp16` builds an engine.
"""

import hydra
from omegaconf import DictConfig

from simrl.config import register_configs
from simrl.errors import exit_on_user_error


@hydra.main(config_path="configs", config_name="export", version_base=None)
def main(cfg: DictConfig) -> None:
    with exit_on_user_error():  # a user's mistake: one line, no traceback
        from simrl.rl.app import export

        export(cfg)


if __name__ == "__main__":
    register_configs()  # task.cfg nodes from the task dataclasses, before Hydra composes
    main()
