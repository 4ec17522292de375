"""The learning benchmark: how fast a task is learned, over seeds, by a fixed evaluation protocol.

    python -m simrl.bench learn task=quadruped seeds=3 iterations=300
    python -m simrl.bench learn robot=unitree_go1 seeds=3 iterations=250 out=runs/learn/go1
    python -m simrl.bench learn seeds=3 iterations=200 checkout=/path/to/old/tree   # another commit
    python -m simrl.bench learn seeds=3 iterations=200 first_eval=100   # skip the early checkpoints
    python -m simrl.bench learn task=humanoid experiment=g1_walk "commands=[[0.5,0,0],[0,0,0]]"

Each seed trains as `train.py seed=<s> max_iterations=<iterations>` would (any other `key=value`
is a train override: `task=`, `robot=`, `task.cfg.<field>=`, `agent.<...>=`), saving a checkpoint
every `eval_every` iterations; each checkpoint is then evaluated exactly as `eval.py` evaluates it
(`simrl.evaluate`: one full episode in each of `eval_envs` envs per command, pushes off, seed 123).
A checkpoint meets the criterion where, on every command, the lin-vel error is at most
`max_lin_vel_error` m/s (tasks that track commands) and at most `max_fall_share` of episodes end
by termination (and, if set, the mean return is at least `min_return` and the share of
successful episodes at least `min_success`: tasks with a success metric, e.g. `task=reach
min_success=0.95`).

Printed: per seed and checkpoint the figures, then per seed the first checkpoint that meets the
criterion with its env steps and training minutes, and the median and worst seed. Written into
`out`: one run dir per seed, `learn.csv` (one row per seed and checkpoint; draw it with
`python -m simrl.plot <out>/learn.csv`), `learn.md` (the tables). Seeds and evaluations run in
subprocesses (with `checkout=`, in that source tree's code); rerunning the same command skips
seeds whose last checkpoint exists and evaluations already stored, so an interrupted benchmark
loses only the work in flight, and rerunning it with a larger `iterations=` continues every
seed's run from its last checkpoint, bit for bit, rather than training it again.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from simrl.errors import ConfigError, MissingFileError
from simrl.rl.learnreport import seed_rows, summarize, write_csv


@dataclass
class Criterion:
    """When a policy counts as having learned the task (the walking criterion by default)."""

    max_lin_vel_error: float = 0.2  # m/s, on every tracked command
    max_fall_share: float = 0.05  # of episodes ended by termination, on every command
    min_return: float | None = None  # mean episode return, on every command; None: not checked
    min_success: float | None = None  # share of successful episodes (tasks with a `success`
    # metric: reach, lift), on every evaluation; None: not checked

    def failures(self, results: list[dict[str, Any]]) -> list[str]:
        """What misses the criterion in one checkpoint's evaluation (empty: it is met)."""
        if not results:
            return ["no evaluation"]
        out = []
        for r in results:
            cmd = r.get("command")
            where = f"cmd {cmd}" if cmd is not None else "episodes"
            if cmd is not None and not r["lin_vel_error"] <= self.max_lin_vel_error:
                out.append(f"{where}: lin-vel error {r['lin_vel_error']:.3f} > {self.max_lin_vel_error}")
            if not r["fall_share"] <= self.max_fall_share:
                out.append(f"{where}: falls {r['fall_share']:.1%} > {self.max_fall_share:.0%}")
            if self.min_return is not None and not r["mean_return"] >= self.min_return:
                out.append(f"{where}: return {r['mean_return']:.2f} < {self.min_return}")
            if self.min_success is not None and not r.get("success", math.nan) >= self.min_success:
                got = f"{r['success']:.1%}" if "success" in r else "none (the task has no success metric)"
                out.append(f"{where}: success {got} < {self.min_success:.0%}")
        return out

    def met(self, results: list[dict[str, Any]]) -> bool:
        return not self.failures(results)


@dataclass
class LearnCfg:
    seeds: list[int] = field(default_factory=lambda: [1, 2, 3])
    iterations: int = 300
    eval_every: int = 50
    first_eval: int | None = None  # the first checkpoint evaluated (None: eval_every)
    eval_envs: int = 64
    sim2sim_at: list[int] = field(default_factory=list)  # checkpoints also exported and run sim-to-sim
    sim2sim_episodes: int = 10
    out: Path | None = None
    checkout: Path | None = None  # another source tree whose code trains and evaluates
    criterion: Criterion = field(default_factory=Criterion)
    overrides: list[str] = field(default_factory=list)  # train.py overrides
    commands: list[list[float]] | None = None  # evaluated commands (None: eval.py's default)

    @property
    def checkpoints(self) -> list[int]:
        its = list(range(self.first_eval or self.eval_every, self.iterations + 1, self.eval_every))
        return its if its and its[-1] == self.iterations else [*its, self.iterations]


def parse_args(argv: list[str]) -> LearnCfg:
    """`key=value` words: the benchmark's own keys, the criterion's, and train overrides."""
    cfg, crit = LearnCfg(), Criterion()
    for word in argv:
        if "=" not in word:
            raise ConfigError(f"learn takes key=value words (e.g. seeds=3 iterations=300 task=quadruped), "
                              f"got '{word}'")
        key, value = word.split("=", 1)
        try:
            if key == "seeds":
                v = json.loads(value)
                cfg.seeds = list(range(1, int(v) + 1)) if isinstance(v, int) else [int(s) for s in v]
            elif key == "commands":
                cfg.commands = [[float(x) for x in c] for c in json.loads(value)]
            elif key == "sim2sim_at":
                v = json.loads(value)
                cfg.sim2sim_at = [int(v)] if isinstance(v, int) else [int(i) for i in v]
            elif key in ("iterations", "eval_every", "eval_envs", "first_eval", "sim2sim_episodes"):
                setattr(cfg, key, int(value))
            elif key in ("out", "checkout"):
                setattr(cfg, key, Path(value))
            elif key in ("max_lin_vel_error", "max_fall_share"):
                setattr(crit, key, float(value))
            elif key in ("min_return", "min_success"):
                setattr(crit, key, None if value in ("null", "none", "") else float(value))
            elif key in ("seed", "max_iterations", "agent.save_interval", "hydra.run.dir"):
                raise ConfigError(f"'{key}' is set by the benchmark: use seeds=, iterations=, "
                                  f"eval_every=, out=")
            else:
                cfg.overrides.append(word)
        except (ValueError, TypeError, json.JSONDecodeError) as e:
            raise ConfigError(f"bad value for {key}: '{value}' ({e})") from None
    cfg.criterion = crit
    if not cfg.seeds or cfg.iterations < 1 or cfg.eval_every < 1 or cfg.eval_envs < 1:
        raise ConfigError(f"seeds must name at least one seed and iterations, eval_every, eval_envs be >= 1; "
                          f"got seeds={cfg.seeds} iterations={cfg.iterations} eval_every={cfg.eval_every} "
                          f"eval_envs={cfg.eval_envs}")
    if len(set(cfg.seeds)) != len(cfg.seeds):
        raise ConfigError(f"seeds repeat in {cfg.seeds}: a seed trains the same run twice")
    if cfg.first_eval is not None and not (1 <= cfg.first_eval <= cfg.iterations
                                           and cfg.first_eval % cfg.eval_every == 0):
        raise ConfigError(f"first_eval must be a multiple of eval_every={cfg.eval_every} (a saved "
                          f"checkpoint) up to iterations={cfg.iterations}, got {cfg.first_eval}")
    if any(it not in cfg.checkpoints for it in cfg.sim2sim_at):
        raise ConfigError(f"sim2sim_at={cfg.sim2sim_at} must name evaluated checkpoints: {cfg.checkpoints}")
    if cfg.checkout is not None and not (cfg.checkout / "simrl" / "api.py").is_file():
        raise MissingFileError(f"checkout={cfg.checkout} is not a simrl source tree (no simrl/api.py): "
                               f"pass a `git worktree add <dir> <commit>` of this project")
    if cfg.out is None:
        task = next((w.split("=", 1)[1] for w in cfg.overrides if w.startswith("task=")), "quadruped")
        cfg.out = Path("runs") / "learn" / f"{task}_{time.strftime('%Y-%m-%d_%H-%M-%S')}"
    return cfg


# the code each subprocess runs: the API of the tree on its PYTHONPATH (this one or checkout=);
# a tree older than simrl.evaluate evaluates through its simrl.play, the same function there
_TRAIN = "import sys, simrl; simrl.train(None, *sys.argv[2:], run_dir=sys.argv[1])"
_EVALUATE = "evaluate = getattr(simrl, 'evaluate', None) or simrl.play; "
_EVAL = ("import json, sys, simrl; " + _EVALUATE + "c = json.loads(sys.argv[4]); "
         "kw = {'commands': c} if c else {}; "
         "r = evaluate(sys.argv[1], num_envs=int(sys.argv[2]), progress=False, **kw)"
         ".results; open(sys.argv[3], 'w').write(json.dumps(r))")
# sim-to-sim: export.py's ONNX + policy.json, then eval.py policy= (simrl.deploy in MuJoCo C)
_SIM2SIM = ("import json, sys, simrl; " + _EVALUATE + "e = simrl.export(sys.argv[1], out_dir=sys.argv[4]); "
            "c = json.loads(sys.argv[5]); kw = {'commands': c} if c else {}; "
            "r = evaluate(str(e.onnx), episodes=int(sys.argv[2]), **kw).results; "
            "open(sys.argv[3], 'w').write(json.dumps(r))")


def _python(cfg: LearnCfg, code: str, *args: str, log: Path) -> None:
    """Run `code` in a fresh interpreter on the chosen tree's code; its output goes to `log`."""
    env, flags = dict(os.environ), []
    if cfg.checkout is not None:  # its tree first; -P: the working directory's simrl must not shadow it
        tree = str(cfg.checkout.resolve())
        env["PYTHONPATH"] = os.pathsep.join([tree, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        flags = ["-P"]
    with open(log, "a") as f:
        r = subprocess.run([sys.executable, *flags, "-c", code, *args], env=env, stdout=f,
                           stderr=subprocess.STDOUT)
    if r.returncode:  # not a user error: the subprocess's own traceback is in the log
        tail = log.read_text().strip().splitlines()[-3:]
        raise RuntimeError(f"a benchmark subprocess failed (exit {r.returncode}); see {log}: "
                           + " | ".join(tail))


def train_seed(cfg: LearnCfg, seed: int) -> Path:
    """Train one seed into out/seed<s> unless its last checkpoint is already there.

    A seed cut off mid-training resumes itself from its newest checkpoint, bit for bit; a seed
    that finished fewer iterations than asked (an earlier benchmark with a smaller `iterations=`)
    is continued from its last checkpoint to the new count, also bit for bit (the env state is
    in every checkpoint), so `iterations=300` after `iterations=200` trains 100 more per seed."""
    from simrl.rl.app import _read_run_json  # run.json's one reader (train writes it)
    from simrl.rl.checkpoint import CKPT_RE, checkpoints

    run_dir = (cfg.out / f"seed{seed}").resolve()
    if (run_dir / f"model_{cfg.iterations}.pt").is_file():
        return run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    args = [f"seed={seed}", f"max_iterations={cfg.iterations}", f"agent.save_interval={cfg.eval_every}",
            "progress=false", *cfg.overrides]
    done = checkpoints(run_dir)
    target = _read_run_json(run_dir).get("target_iteration")
    if done and target is not None and target < cfg.iterations:  # finished short: continue it
        last = int(CKPT_RE.search(done[-1].name).group(1))
        args = [*args[:1], f"resume={done[-1]}", f"max_iterations={cfg.iterations - last}", *args[2:]]
    log = run_dir.parent / f"seed{seed}.train.log"
    _python(cfg, _TRAIN, str(run_dir), *args, log=log)
    if not (run_dir / f"model_{cfg.iterations}.pt").is_file():  # max_minutes=, or a SIGTERM
        done = checkpoints(run_dir)
        raise ConfigError(f"seed {seed} stopped before iteration {cfg.iterations} (last checkpoint: "
                          f"{done[-1].name if done else 'none'}; see {log}): drop max_minutes= or rerun")
    return run_dir


def check_manifest(cfg: LearnCfg) -> None:
    """out/learn.json records what trained the runs in `out`; a rerun with other training
    settings is refused, so stored runs are never reused for a different question. The
    iteration count is not a setting: more iterations continue the stored runs, fewer read
    their earlier checkpoints (the record keeps the largest)."""
    want = {"overrides": cfg.overrides, "iterations": cfg.iterations, "eval_every": cfg.eval_every,
            **({"commands": cfg.commands} if cfg.commands else {}),
            "checkout": str(cfg.checkout.resolve()) if cfg.checkout else None}
    path = cfg.out / "learn.json"
    if path.is_file():
        have = json.loads(path.read_text())
        diff = {k: (have.get(k), v) for k, v in want.items() if k != "iterations" and have.get(k) != v}
        if diff:
            what = ", ".join(f"{k}: {a!r} there, {b!r} now" for k, (a, b) in diff.items())
            raise ConfigError(f"out={cfg.out} holds runs trained with other settings ({what}): pass "
                              f"another out= or the same settings")
        want["iterations"] = max(cfg.iterations, int(have.get("iterations") or 0))
    path.write_text(json.dumps(want, indent=1))


def evaluate_checkpoint(cfg: LearnCfg, ckpt: Path, sim2sim: bool = False) -> list[dict[str, Any]]:
    """eval.py's figures for one checkpoint (sim2sim: of its export, in MuJoCo C through
    simrl.deploy), stored beside it (eval_<name>.json, eval_s2s_<name>.json) for reruns."""
    if sim2sim:
        cache = ckpt.with_name(f"eval_s2s_{ckpt.stem}_{cfg.sim2sim_episodes}.json")
        out_dir = ckpt.with_name(f"export_{ckpt.stem}")
        args = [str(cfg.sim2sim_episodes), str(cache.with_suffix(".part")), str(out_dir),
                json.dumps(cfg.commands)]
        code = _SIM2SIM
    else:
        cache = ckpt.with_name(f"eval_{ckpt.stem}_{cfg.eval_envs}.json")
        args, code = [str(cfg.eval_envs), str(cache.with_suffix(".part")), json.dumps(cfg.commands)], _EVAL
    if not cache.is_file():
        _python(cfg, code, str(ckpt), *args, log=ckpt.parent / "eval.log")
        os.replace(cache.with_suffix(".part"), cache)
    return json.loads(cache.read_text())


def run(cfg: LearnCfg, progress: bool = True) -> list[dict[str, Any]]:
    """Train and evaluate every seed; print and write the tables; return the CSV rows."""
    from tqdm.auto import tqdm

    cfg.out.mkdir(parents=True, exist_ok=True)
    check_manifest(cfg)
    crit = cfg.criterion
    tree = f"checkout {cfg.checkout}" if cfg.checkout else "this tree"
    print(f"simrl learn: seeds {cfg.seeds}, {cfg.iterations} iterations, checkpoints {cfg.checkpoints}, "
          f"{cfg.eval_envs} episodes per command, overrides {cfg.overrides or '-'}, code of {tree}, "
          f"out {cfg.out}")
    ret = f", return >= {crit.min_return}" if crit.min_return is not None else ""
    ret += f", success >= {crit.min_success:.0%}" if crit.min_success is not None else ""
    print(f"criterion on every command: lin-vel error <= {crit.max_lin_vel_error} m/s, falls <= "
          f"{crit.max_fall_share:.0%}{ret}")
    rows: list[dict[str, Any]] = []
    bar = tqdm(total=len(cfg.seeds) * (1 + len(cfg.checkpoints)), desc="learn", disable=not progress)
    for seed in cfg.seeds:
        bar.set_postfix_str(f"train seed {seed}")
        run_dir = train_seed(cfg, seed)
        bar.update()
        evals = {}
        for it in cfg.checkpoints:
            bar.set_postfix_str(f"seed {seed} evaluate model_{it}")
            ckpt = run_dir / f"model_{it}.pt"
            if not ckpt.is_file():
                raise MissingFileError(f"{ckpt} was not written: eval_every={cfg.eval_every} must match the "
                                       f"run's save interval")
            evals[it] = evaluate_checkpoint(cfg, ckpt)
            bar.update()
        s2s = {}
        for it in cfg.sim2sim_at:
            bar.set_postfix_str(f"seed {seed} sim-to-sim model_{it}")
            s2s[it] = evaluate_checkpoint(cfg, run_dir / f"model_{it}.pt", sim2sim=True)
        rows += seed_rows(cfg, seed, run_dir, evals, s2s)
        write_csv(cfg.out / "learn.csv", rows)  # after each seed: an interrupted run keeps its rows
    bar.close()
    text = summarize(cfg, rows)
    (cfg.out / "learn.md").write_text(text + "\n")
    print(text)
    return rows


def main(argv: list[str]) -> None:
    cfg = parse_args(argv)
    words = [w for w in argv if not w.startswith("out=")] + [f"out={cfg.out}"]
    print("rerun (continues where this stops): python -m simrl.bench learn " + " ".join(words))
    run(cfg)
    csv_path = cfg.out / "learn.csv"
    print(f"wrote {csv_path} (python -m simrl.plot {csv_path}) and {cfg.out / 'learn.md'}")
    print("rerun: python -m simrl.bench learn " + " ".join(words))
