"""Bit-identity of env traces and trained weights between two versions of simrl.

A restructuring of the env must leave what a task computes unchanged. This script records, for
every task that exists, on fixed seeds:
- 200 control steps of a 16-env batch under seeded random actions: every observation group,
  the reward, terminated and truncated at every step, and the episode log at the end;
- the actor's and critic's weights after 4 PPO iterations of the train app (32 envs).

    python bench/equivalence.py record out/new.pt            # this checkout
    python bench/equivalence.py compare out/old.pt out/new.pt

To record an older version, run the same file from a worktree of it with that worktree first
on the path (the script imports only `simrl`'s public entry points, which both versions share):

    git worktree add /tmp/simrl_old <commit>
    cd /tmp/simrl_old && PYTHONPATH=/tmp/simrl_old python /path/to/bench/equivalence.py record /tmp/old.pt

`compare` prints one line per case (identical, or the first field and step that differs) and
exits 1 if any differs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import torch

# name -> train.yaml overrides. Cases cover every task, the primitive quadruped flat and rough,
# Menagerie Go1 and the legs-only G1.
CASES: dict[str, list[str]] = {
    "quadruped": ["task=quadruped"],
    "quadruped_rough": ["task=quadruped", "terrain=rough"],
    "go1": ["task=quadruped", "robot=unitree_go1"],
    "g1_legs": ["task=humanoid", "experiment=g1_legs"],
    "g1_walk": ["task=humanoid", "experiment=g1_walk"],  # the reference gait, an action prior
    "cartpole": ["task=cartpole"],
    "reach": ["task=reach"],
    "lift": ["task=lift"],
    "inhand_rotate": ["task=inhand_rotate"],
    "quadruped_mjwarp": ["task=quadruped", "sim=mjwarp"],  # the GPU code path, on Warp's CPU device
}
TRACE_ONLY = {"quadruped_mjwarp": 100}  # case -> steps: no training (Warp's CPU device is slow)
# Short episodes, so that 200 steps cross several resets (time-outs and falls) in every case.
SHORT = ["task.cfg.episode_length_s=1.5"]
STEPS, ENVS, TRAIN_ENVS, ITERATIONS = 200, 16, 32, 4


def _compose(overrides: list[str]):
    from hydra import compose, initialize_config_dir

    from simrl import CONFIGS

    with initialize_config_dir(config_dir=str(CONFIGS), version_base=None):
        return compose("train", overrides=overrides)


def trace(overrides: list[str], steps: int = STEPS) -> dict[str, torch.Tensor]:
    """Every step's observations, reward, terminated and truncated of a seeded random rollout."""
    from simrl.rl.app import build_env, seed_everything

    cfg = _compose([*overrides, *SHORT, "device=cpu", "seed=3"])
    seed_everything(3)
    env, _ = build_env(cfg, num_envs=ENVS if steps == STEPS else 4)
    gen = torch.Generator().manual_seed(7)
    obs, _ = env.reset()
    rows: dict[str, list[torch.Tensor]] = {f"obs/{g}": [v.clone()] for g, v in obs.items()}
    rows.update({"reward": [], "terminated": [], "truncated": []})
    for _ in range(steps):
        actions = torch.randn(env.num_envs, env.num_actions, generator=gen)
        obs, rew, term, trunc, _ = env.step(actions)
        for g, v in obs.items():
            rows[f"obs/{g}"].append(v.clone())
        rows["reward"].append(rew.clone())
        rows["terminated"].append(term.clone())
        rows["truncated"].append(trunc.clone())
    out = {k: torch.stack(v) for k, v in rows.items()}
    for k, v in sorted(env.episode_log().items()):
        out[f"log/{k}"] = torch.tensor(v, dtype=torch.float64)
    return out


def weights(overrides: list[str]) -> dict[str, torch.Tensor]:
    """The actor's and critic's parameters after a short training run of the train app."""
    from simrl.rl.app import train

    with tempfile.TemporaryDirectory() as run_dir:
        cfg = _compose([*overrides, *SHORT, "device=cpu", "seed=1", f"num_envs={TRAIN_ENVS}",
                        f"max_iterations={ITERATIONS}", "progress=false", "agent.num_steps_per_env=8"])
        trainer = train(cfg, run_dir)
        state = trainer.alg.save()
    out = {}
    for part in ("actor_state_dict", "critic_state_dict"):
        for k, v in state[part].items():
            out[f"{part}/{k}"] = v.detach().clone()
    return out


def record(path: Path, cases: list[str]) -> None:
    result = {}
    for name in cases:
        print(f"{name}: trace", flush=True)
        result[f"{name}/trace"] = trace(CASES[name], TRACE_ONLY.get(name, STEPS))
        if name in TRACE_ONLY:
            continue
        print(f"{name}: weights", flush=True)
        result[f"{name}/weights"] = weights(CASES[name])
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(result, path)
    print(f"wrote {path}")


def compare(a: Path, b: Path) -> int:
    old, new = torch.load(a, weights_only=True), torch.load(b, weights_only=True)
    bad = 0
    for case in sorted(old.keys() | new.keys()):
        if case not in old or case not in new:
            print(f"{case}: only in {'new' if case not in old else 'old'}")
            bad += 1
            continue
        x, y = old[case], new[case]
        diff = [k for k in sorted(x.keys() | y.keys())
                if k not in x or k not in y or x[k].shape != y[k].shape or not torch.equal(x[k], y[k])]
        if not diff:
            print(f"{case}: identical ({len(x)} fields)")
            continue
        bad += 1
        k = diff[0]
        where = ""
        if k in x and k in y and x[k].shape == y[k].shape and x[k].dim() > 0:
            where = f", first at index {(x[k] != y[k]).nonzero()[0].tolist()}"
        print(f"{case}: DIFFERS in {diff[:6]}{where}")
    return 1 if bad else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("out", type=Path)
    r.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    c = sub.add_parser("compare")
    c.add_argument("old", type=Path)
    c.add_argument("new", type=Path)
    args = p.parse_args()
    if args.cmd == "record":
        record(args.out, args.cases)
        return 0
    return compare(args.old, args.new)


if __name__ == "__main__":
    sys.exit(main())
