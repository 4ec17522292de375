"""The apps as Python functions, for notebooks and scripts: train, evaluate, export.

    run = simrl.train("cartpole", num_envs=128, max_iterations=40, device="cpu")
    run.history[-1]["mean_reward"], run.run_dir
    simrl.evaluate(run.run_dir).results
    simrl.export(run.run_dir).onnx

Each composes its config exactly as its app does (`configs/`, Hydra's compose API, the same
defaults and overrides) and calls the same code (`simrl.rl.app`, `simrl.rl.evaluation_app`).
Keyword values become overrides (`num_envs=128` -> `num_envs=128`, nested dicts -> dotted keys:
`agent={"save_interval": 10}` -> `agent.save_interval=10`); positional strings pass through as
written (`"task.cfg.push_vel=0.5"`). Results are plain dataclasses; progress bars are `tqdm.auto`
(widgets in Jupyter).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf, open_dict

from simrl.errors import UserError


@dataclass
class TrainResult:
    """What a training run left: its dir, one metrics dict per iteration, the final summary."""

    run_dir: Path
    history: list[dict[str, float]]
    summary: dict[str, Any]
    checkpoint: Path | None  # the latest model_<iteration>.pt
    config: dict[str, Any] = field(repr=False)  # the resolved config (as config.yaml)

    def metric(self, name: str) -> tuple[list[float], list[float]]:
        """(env steps, values) of metric `name` over the iterations, for plotting."""
        rows = [m for m in self.history if name in m]
        if not rows:
            from simrl.errors import UnknownNameError

            valid = sorted({k for m in self.history for k in m})
            raise UnknownNameError(f"no metric '{name}' in this run; valid: {valid}")
        return [m["env_steps"] for m in rows], [m[name] for m in rows]


@dataclass
class EvalResult:
    """One dict of evaluation figures per command (return, tracking errors, fall share)."""

    results: list[dict[str, Any]]


@dataclass
class ExportResult:
    """The exported files and the parity check against the torch policy."""

    onnx: Path
    json: Path
    report: dict[str, Any]


def hydra_value(value: Any) -> str:
    """`value` in Hydra's override grammar (strings quoted, so any path or text survives)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(hydra_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{hydra_value(v)}" for k, v in value.items()) + "}"
    text = str(value).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{text}'"


def overrides_from(values: dict[str, Any], prefix: str = "") -> list[str]:
    """Keyword values as Hydra overrides; a non-empty dict sets its keys one by one."""
    out = []
    for key, value in values.items():
        if isinstance(value, dict) and value:
            out += overrides_from(value, f"{prefix}{key}.")
        else:
            out.append(f"{prefix}{key}={hydra_value(value)}")
    return out


def _fresh(path: Path) -> Path:
    """`path`, or path_1, path_2... if it already holds files (two runs in the same second)."""
    candidate, k = path, 0
    while candidate.exists() and any(candidate.iterdir()):
        k += 1
        candidate = path.with_name(f"{path.name}_{k}")
    return candidate


def _without_hydra(cfg: DictConfig) -> DictConfig:
    with open_dict(cfg):
        del cfg["hydra"]
    return cfg


def _task_cfg(cfg: dict[str, Any] | None) -> list[str]:
    return overrides_from(cfg, "task.cfg.") if cfg else []


def train(task: str | None = None, *overrides: str, cfg: dict[str, Any] | None = None,
          run_dir: str | Path | None = None, **values: Any) -> TrainResult:
    """Train `task` (None: train.yaml's default) as `python train.py task=<task> <overrides>` would.

    `cfg` sets task config fields (`cfg={"push_vel": 0.5}` is `task.cfg.push_vel=0.5`), as in
    `simrl.make`. The run dir follows train.yaml (`runs/<task>/<time>` under the current
    directory) unless `run_dir` is given.
    """
    from simrl.config import compose

    choice = [f"task={task}"] if task else []
    cfg = compose("train", [*choice, *_task_cfg(cfg), *overrides_from(values), *overrides], hydra=True)
    out = Path(run_dir) if run_dir is not None else _fresh(Path(cfg.hydra.run.dir))
    cfg = _without_hydra(cfg)
    from simrl.rl.app import train as app_train
    from simrl.rl.checkpoint import latest_checkpoint

    trainer = app_train(cfg, out)
    summary_file = out / "summary.json"
    summary = {}
    if summary_file.is_file():
        import json

        summary = json.loads(summary_file.read_text())
    ckpts = list(out.glob("model_*.pt"))
    return TrainResult(
        run_dir=out, history=list(trainer.history), summary=summary,
        checkpoint=latest_checkpoint(out) if ckpts else None,
        config=OmegaConf.to_container(cfg, resolve=True),
    )


def evaluate(run: str | Path, *overrides: str, cfg: dict[str, Any] | None = None,
             **values: Any) -> EvalResult:
    """Evaluate `run` as eval.py would: a run dir or checkpoint (`checkpoint=`), or an
    exported policy.onnx (`policy=`, sim-to-sim in MuJoCo C). `cfg` overrides task config
    fields for the evaluation."""
    from simrl.config import compose

    key = "policy" if str(run).endswith(".onnx") else "checkpoint"
    cfg = compose("eval", [f"{key}={hydra_value(str(run))}", *_task_cfg(cfg), *overrides_from(values),
                           *overrides])
    from simrl.rl.evaluation_app import evaluate_app

    return EvalResult(results=evaluate_app(cfg))


class RenamedError(UserError):
    """A name of the API that moved; the message names the new one."""


def play(*args: Any, **kwargs: Any) -> None:
    """Refused: the metrics table is `evaluate`; watching a policy is simrl-play / simrl.viewer."""
    raise RenamedError("simrl.play was renamed simrl.evaluate (the metrics table); to watch a policy "
                       "use simrl-play or simrl.viewer")


def export(run: str | Path, *overrides: str, **values: Any) -> ExportResult:
    """Export `run` (a run dir or checkpoint) as export.py would: policy.onnx + policy.json."""
    from simrl.config import compose

    cfg = compose("export", [f"checkpoint={hydra_value(str(run))}", *overrides_from(values), *overrides])
    from simrl.rl.app import export as app_export

    report = app_export(cfg)
    return ExportResult(onnx=Path(report["onnx"]), json=Path(report["json"]), report=report)


__all__ = ["EvalResult", "ExportResult", "TrainResult", "evaluate", "export", "train"]
