"""The apps as console scripts (`simrl-train`, `simrl-play`, `simrl-export`, `simrl-bench`), which
work from any directory of an installed simrl; `train.py`, `play.py` and `export.py` at the
repository root call the same functions. Each parses a Hydra config from simrl's configs
(`simrl.paths.CONFIGS`: the checkout's, or the copy a wheel ships) and runs simrl.rl.app.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from omegaconf import DictConfig

from simrl.paths import CONFIGS


def run_hydra_app(config_name: str, work: Callable[[DictConfig], object]) -> None:
    """`work(cfg)` under Hydra's command line (overrides, --cfg job, -m sweeps), a user's mistake
    ending as one `simrl: error:` line."""
    import hydra

    from simrl.config import cli_overrides, register_configs
    from simrl.errors import exit_on_user_error

    @hydra.main(config_path=str(CONFIGS), config_name=config_name, version_base=None)
    def main(cfg: DictConfig) -> None:
        with exit_on_user_error():
            work(cfg)

    register_configs()  # task.cfg nodes from the task dataclasses, before Hydra composes
    sys.argv[1:] = cli_overrides(sys.argv[1:])  # robot=/path/to/robot.yaml -> task.cfg.robot=...
    main()


def train() -> None:
    """`simrl-train task=quadruped ...` (train.py)."""

    def work(cfg: DictConfig) -> None:
        from hydra.core.hydra_config import HydraConfig

        from simrl.rl.app import train as app_train

        app_train(cfg, HydraConfig.get().runtime.output_dir)

    run_hydra_app("train", work)


def play() -> None:
    """`simrl-play checkpoint=<run>` or `policy=<policy.onnx>` (play.py)."""
    from simrl.rl import app

    run_hydra_app("play", lambda cfg: app.play(cfg))


def export() -> None:
    """`simrl-export checkpoint=<run>` (export.py)."""
    from simrl.rl import app

    run_hydra_app("export", lambda cfg: app.export(cfg))


def bench() -> None:
    """`simrl-bench [mode] ...` (python -m simrl.bench)."""
    from simrl.bench import main
    from simrl.errors import exit_on_user_error

    with exit_on_user_error():
        main()
