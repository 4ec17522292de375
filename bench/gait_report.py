"""What a legged checkpoint does at each forward command: its speed second by second, how its
feet step, and what each reward term pays per second of episode (the training sim, pushes off).

    python bench/gait_report.py <run>/model_100.pt [0.3 0.5 0.7 1.0]

Made to tell a policy that stands at a command from one that walks slowly: at 0.5 m/s a
standing robot keeps its feet down (contact share near 1) and lands a foot about once a second.
"""

from __future__ import annotations

import sys

import torch
from omegaconf import OmegaConf

from simrl.rl.app import _env_for_checkpoint, policy_from_checkpoint


@torch.inference_mode()
def report(checkpoint: str, speeds: list[float], envs: int = 64, seconds: float = 10.0,
           settle_s: float = 2.0) -> None:
    env, run_cfg = _env_for_checkpoint(checkpoint, num_envs=envs, task_cfg={"push_vel": 0.0})
    policy, _ = policy_from_checkpoint(env, checkpoint, OmegaConf.to_container(run_cfg.agent))
    steps, settle = int(seconds / env.dt), int(settle_s / env.dt)
    per_s = int(round(1.0 / env.dt))
    feet = env.legged.contact.shape[1]
    print(f"{checkpoint}: {envs} envs, {seconds:g} s per command; feet figures after {settle_s:g} s")
    for v in speeds:
        command = (v, 0.0, 0.0)
        env.reset()
        env.fix_command(command)
        obs = env.compute_observations()
        vx, contact, landings, air = [], 0.0, 0.0, 0.0
        for t in range(steps):
            obs, *_ = env.step(policy(obs))
            env.fix_command(command)
            vx.append(env.legged.base_lin_vel_b[:, 0].mean().item())
            if t >= settle:
                contact += env.legged.contact.float().mean().item()
                landings += env.legged.first_contact.float().sum().item()
                air += env.legged.air_time_on_landing.sum().item()
        n = steps - settle
        speed = " ".join(f"{sum(vx[i:i + per_s]) / per_s:.2f}" for i in range(0, steps, per_s))
        print(f"command {v:.2f} m/s | forward speed by second: {speed}")
        rate = landings / (n * env.dt * envs * feet)
        print(f"  contact share {contact / n:.2f}, landings per foot and s {rate:.2f}, "
              f"air time per landing {air / max(landings, 1):.3f} s")
        # episode sums restart at a fall's reset: divide each env's by its own episode's time
        elapsed = (env.episode_length_buf.float() * env.dt).clamp(min=env.dt)
        terms = {k: (s / elapsed).mean().item() for k, s in env.episode_sums.items()}
        print("  reward per s: " + ", ".join(f"{k} {x:+.3f}" for k, x in terms.items() if x))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    report(sys.argv[1], [float(s) for s in sys.argv[2:]] or [0.3, 0.5, 0.7, 1.0])
    print(f"rerun: python bench/gait_report.py {' '.join(sys.argv[1:])}")
