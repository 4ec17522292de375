"""Cost of the termination manager per control step (quadruped, 1024 envs, mujoco backend):
the terms + per-term log against the inline rule it replaced, and against a whole env step."""
import time, torch, simrl
torch.set_num_threads(1)
env = simrl.make("quadruped", 1024, device="cpu", seed=0)
env.reset(seed=0)
a = torch.zeros(1024, 12)
for _ in range(5): env.step(a)
done = torch.zeros(1024, dtype=torch.bool)
def new():
    t = env.terminated()
    env._term_acc += (env._term_hits & done[:, None]).sum(dim=0)
    return t
def old():
    d = env.gravity_b[:, 2] > -env.cfg.max_tilt_cos
    d |= (env.sim.contact_force(env.terminators).norm(dim=-1) > 1.0).any(dim=1)
    return d
assert torch.equal(new(), old())
res = {"new": [], "old": [], "step": []}
for rep in range(5):  # interleaved
    for name, f, k in (("new", new, 2000), ("old", old, 2000), ("step", lambda: env.step(a), 20)):
        t0 = time.perf_counter()
        for _ in range(k): f()
        res[name].append((time.perf_counter() - t0) / k * 1e6)
med = {k: sorted(v)[len(v) // 2] for k, v in res.items()}
print(f"per control step, median of 5 interleaved repeats (us): terms+log {med['new']:.1f}, "
      f"inline rule {med['old']:.1f}, whole env step {med['step']:.0f}; "
      f"added {med['new'] - med['old']:.1f} us = {(med['new'] - med['old']) / med['step']:.3%} of a step")
