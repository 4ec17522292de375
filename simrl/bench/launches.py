"""Warp launches, host syncs and torch ops per quadruped env step on mjwarp (the launches mode)."""

from __future__ import annotations

from argparse import Namespace

import torch

from simrl.rl.vecenv import RslRlVecEnv


def bench_launches(n: int, steps: int, device: str = "cpu", graphs: bool = False) -> dict:
    """Warp launches, host syncs and torch ops per quadruped env step on mjwarp (as training
    steps it: rsl-rl's view), for steps without resets and steps where 2% of the envs time out.

    Graphs off by default: a replayed graph counts as one launch, which hides what it replays.
    """
    from simrl.profile import count_launches, count_syncs
    from simrl.registry import make

    env = make("quadruped", num_envs=n, device=device, backend="mjwarp", sim={"graphs": graphs})
    venv = RslRlVecEnv(env, log_every=0)  # the training path (the trainer reads the log per iteration)
    actions = torch.zeros(n, env.num_actions, device=env.device)
    venv.step(actions)  # warm-up: kernels compiled, graphs captured
    rows = {}
    for label, share in (("no resets", 0.0), ("with resets", 0.02)):
        launches = syncs = ops = 0
        by_op: dict[str, int] = {}
        for _ in range(steps):
            env.episode_length_buf.zero_()  # nobody times out, unless set below
            k = max(1, round(share * n)) if share else 0
            env.episode_length_buf[:k] = env.max_episode_length - 1
            with torch.inference_mode(), count_syncs() as s, count_launches() as c:
                venv.step(actions)
            launches, syncs, ops = launches + c.total, syncs + s.total, ops + s.ops
            for kind, v in s.by_op.items():
                by_op[kind] = by_op.get(kind, 0) + v
        rows[label] = {"launches": launches / steps, "syncs": syncs / steps, "torch_ops": ops / steps,
                       "syncs_by_kind": {k: v / steps for k, v in sorted(by_op.items())}}
    if env.device.type == "cuda":  # CUDA's own check too, as training runs (graphs on)
        env = make("quadruped", num_envs=n, device=device, backend="mjwarp")
        venv = RslRlVecEnv(env, log_every=0)
        for _ in range(3):  # compile, capture, first replay
            venv.step(actions)
        env.episode_length_buf[: max(1, n // 50)] = env.max_episode_length - 1
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")  # any torch op that syncs raises
        try:
            for _ in range(steps):
                venv.step(actions)
            rows["cuda_sync_debug"] = "clean"
        except RuntimeError as e:
            rows["cuda_sync_debug"] = f"raised: {str(e).splitlines()[0]}"
        finally:
            torch.cuda.set_sync_debug_mode("default")
    return rows


def run(args: Namespace) -> None:
    """The launches mode: the first of `num_worlds`, `steps` steps each, graphs off."""
    n, steps = args.num_worlds[0], args.steps
    device = "cpu" if args.device == "auto" else args.device
    print(f"per quadruped env step on mjwarp ({device}, {n} envs, graphs off, "
          f"{steps} steps each): Warp launches, host syncs, torch ops")
    rows = bench_launches(n, steps, device)
    print(f"{'step':>12} {'launches':>9} {'syncs':>6} {'torch ops':>10}  syncs by kind")
    debug = rows.pop("cuda_sync_debug", None)
    for label, r in rows.items():
        kinds = ", ".join(f"{k} {v:g}" for k, v in r["syncs_by_kind"].items()) or "-"
        print(f"{label:>12} {r['launches']:>9.0f} {r['syncs']:>6.1f} {r['torch_ops']:>10.0f}  {kinds}")
    if debug is not None:
        print(f"torch.cuda.set_sync_debug_mode('error') over {steps} steps with resets: {debug}")
