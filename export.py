"""Export a trained policy for the robot: `python export.py checkpoint=runs/quadruped/<run>`.

Writes policy.onnx (dynamic batch, normalizer folded in, metadata) and policy.json, verified
with onnxruntime against the torch policy; `format=tensorrt precision=fp16` builds an engine.
"""

import hydra
from omegaconf import DictConfig


@hydra.main(config_path="configs", config_name="export", version_base=None)
def main(cfg: DictConfig) -> None:
    from simrl.rl.app import export

    export(cfg)


if __name__ == "__main__":
    main()
