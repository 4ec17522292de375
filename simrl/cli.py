"""The apps as console scripts (`simrl-train`, `simrl-eval`, `simrl-play`, `simrl-export`,
`simrl-bench`), which work from any directory of an installed simrl; `train.py`, `eval.py`,
`play.py` and `export.py` at the repository root call the same functions. Each parses a Hydra
config from simrl's configs (`simrl.paths.CONFIGS`: the checkout's, or the copy a wheel ships)
and runs the app's function (simrl.rl.app, simrl.rl.evaluation_app, simrl.viewer.launch).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from omegaconf import DictConfig

from simrl.paths import CONFIGS

# keys of the metrics table (configs/eval.yaml) that play does not take: given to play they
# mean the evaluation, so play refuses them naming the eval command
EVAL_ONLY_KEYS = ("episodes", "commands", "pushes", "terrain_tiles", "terrain_level",
                  "terrain_type")


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


def evaluate() -> None:
    """`simrl-eval checkpoint=<run>` or `policy=<policy.onnx>` (eval.py): the metrics table."""

    def work(cfg: DictConfig) -> None:
        from simrl.rl.evaluation_app import evaluate_app

        evaluate_app(cfg)

    run_hydra_app("eval", work)


def refuse_eval_keys(argv: Sequence[str]) -> None:
    """Exit with one `simrl: error:` line where play's command line (`argv`, the script first)
    holds a key of the metrics table, naming the same command under eval."""
    from simrl.errors import ConfigError, exit_on_user_error

    words = list(argv[1:])
    keys = {w.lstrip("+~").partition("=")[0] for w in words if not w.startswith("-")}
    if not keys.intersection(EVAL_ONLY_KEYS):
        return
    command = "python eval.py" if Path(argv[0]).name == "play.py" else "simrl-eval"
    with exit_on_user_error():
        raise ConfigError("play shows the robot; the metrics table is simrl-eval: "
                          + shlex.join([*command.split(), *words]))


def play() -> None:
    """`simrl-play checkpoint=<run>` (play.py): the robot under its policy, in simrl.viewer."""
    refuse_eval_keys(sys.argv)  # before Hydra composes: whatever play.yaml holds

    def work(cfg: DictConfig) -> None:
        from simrl.viewer.launch import play as launch_play

        launch_play(cfg)

    run_hydra_app("play", work)


def export() -> None:
    """`simrl-export checkpoint=<run>` (export.py)."""
    from simrl.rl import app

    run_hydra_app("export", lambda cfg: app.export(cfg))


def bench() -> None:
    """`simrl-bench [mode] [key=value ...]` (python -m simrl.bench)."""
    from simrl.bench import main
    from simrl.errors import exit_on_user_error

    with exit_on_user_error():
        main()
