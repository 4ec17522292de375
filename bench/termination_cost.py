"""What the termination terms cost per control step: the terms and their per-term log against
the inline rule they replaced (tilt + trunk contact), and against a whole env step measured in
the same run (quadruped, 1024 envs, MuJoCo C, torch on one thread), interleaved 5 times.

    python bench/termination_cost.py
"""

import time

import torch

import simrl

torch.set_num_threads(1)
env = simrl.make("quadruped", 1024, device="cpu", seed=0)
env.reset(seed=0)
actions = torch.zeros(1024, 12)
for _ in range(5):
    env.step(actions)
done = torch.zeros(1024, dtype=torch.bool)
terminators = torch.as_tensor(env.scene.terminate_contacts)  # the trunk, as the rule had it


def terms() -> torch.Tensor:
    t = env.terminated()
    env.termination_manager.count_ended(done)
    return t


def inline() -> torch.Tensor:
    d = env.legged.gravity_b[:, 2] > -env.cfg.max_tilt_cos
    d |= (env.sim.contact_force(terminators).norm(dim=-1) > 1.0).any(dim=1)
    return d


assert torch.equal(terms(), inline())
runs = {"terms": (terms, 2000), "inline": (inline, 2000), "step": (lambda: env.step(actions), 20)}
res: dict[str, list[float]] = {k: [] for k in runs}
for _ in range(5):
    for name, (f, k) in runs.items():
        t0 = time.perf_counter()
        for _ in range(k):
            f()
        res[name].append((time.perf_counter() - t0) / k * 1e6)
med = {k: sorted(v)[len(v) // 2] for k, v in res.items()}
added = med["terms"] - med["inline"]
print(f"per control step, median of 5 interleaved repeats (us): terms + log {med['terms']:.1f}, inline "
      f"rule {med['inline']:.1f}, whole env step {med['step']:.0f}; added {added:.1f} us = "
      f"{added / med['step']:.3%} of a step\nrerun: python bench/termination_cost.py")
