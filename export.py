"""Export a trained policy for the robot: `python export.py checkpoint=runs/quadruped/<run>`.

Writes policy.onnx (dynamic batch, normalizer folded in, metadata) and policy.json, verified
with onnxruntime against the torch policy; `format=tensorrt precision=fp16` builds an engine.
"""

from simrl.cli import export

if __name__ == "__main__":
    export()  # the same function as the console script simrl-export
