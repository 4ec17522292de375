"""gymnasium ids after `import simrl` (fresh interpreter), and gymnasium's vector wrappers over
the torch env batch through `ArrayConversion` to numpy."""

from __future__ import annotations

import re
import subprocess
import sys

import gymnasium as gym
import numpy as np
import torch
from gymnasium.wrappers.vector import ArrayConversion, RecordEpisodeStatistics

import simrl  # noqa: F401  (registers the ids)
from simrl import ROOT


def readme_python_blocks() -> list[str]:
    """The documented env and gymnasium snippets (not the training ones, nor the sim layer's)."""
    text = (ROOT / "docs" / "how-to" / "runs.md").read_text()
    return [b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "gym." in b]


def test_import_simrl_registers_ids_cheaply_and_readme_snippets_run(tmp_path):
    """A fresh interpreter: `import simrl` loads no torch/mujoco/task code; the documented env
    and gymnasium snippets then run as written."""
    blocks = readme_python_blocks()
    assert any("gym.make_vec(" in b for b in blocks) and any("ArrayConversion" in b for b in blocks)
    probe = ("import sys, simrl, gymnasium as gym\n"
             "heavy = ('torch', 'mujoco', 'simrl.env', 'simrl.envs.locomotion')\n"
             "heavy = [m for m in heavy if m in sys.modules]\n"
             "assert not heavy, heavy\n"
             "assert {'simrl/Quadruped-v0', 'simrl/Cartpole-v0'} <= set(gym.registry)\n"
             "vec = gym.make_vec('simrl/Quadruped-v0', num_envs=4, device='cpu')\n"
             "assert vec.num_envs == 4 and vec.observation_space['policy'].shape[0] == 4\n")
    code = probe + "\n".join(blocks) + "\nprint('README_OK')\n"
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and "README_OK" in r.stdout, r.stderr[-3000:]


def test_record_episode_statistics_over_array_conversion_matches_the_reward_stream():
    """Episodes end by falling and by time-out; the wrapper's returns and lengths equal what we
    sum from the numpy reward stream, and time-outs last exactly the env's episode length."""
    n = 16
    base = gym.make_vec("simrl/Cartpole-v0", num_envs=n, device="cpu", seed=3,
                        cfg={"episode_length_s": 0.4})  # 20 control steps: some episodes time out
    env = RecordEpisodeStatistics(ArrayConversion(base, env_xp=torch, target_xp=np))
    obs, _ = env.reset(seed=3)
    assert isinstance(obs["policy"], np.ndarray) and obs["policy"].shape == (n, 4)
    rng = np.random.default_rng(0)
    ret, length = np.zeros(n), np.zeros(n, dtype=np.int64)
    ends = {"terminated": 0, "truncated": 0}
    for _ in range(120):
        action = rng.uniform(-1, 1, (n, 1)).astype(np.float32)
        obs, rew, term, trunc, info = env.step(action)
        assert isinstance(rew, np.ndarray) and rew.shape == (n,) and rew.dtype == np.float32
        assert isinstance(term, np.ndarray) and term.shape == trunc.shape == (n,) and term.dtype == bool
        assert isinstance(obs["policy"], np.ndarray) and obs["policy"].shape == (n, 4)
        ret += rew
        length += 1
        done = term | trunc
        if not done.any():
            assert "episode" not in info
            continue
        np.testing.assert_array_equal(info["_episode"], done)
        np.testing.assert_allclose(info["episode"]["r"][done], ret[done], rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(info["episode"]["l"][done], length[done])
        assert (length[trunc] == base.max_episode_length).all()
        assert (length[term] <= base.max_episode_length).all()
        final = info["final_obs"]["policy"]
        assert isinstance(final, np.ndarray) and final.shape == (n, 4)
        # a terminated episode's last observation shows why: the pole or the cart out of bounds
        cfg = base.cfg
        out = (np.abs(final[:, 1]) > cfg.max_angle) | (np.abs(final[:, 0]) > cfg.max_cart_pos)
        np.testing.assert_array_equal(out[term], True)
        ends["terminated"] += int(term.sum())
        ends["truncated"] += int(trunc.sum())
        ret[done], length[done] = 0.0, 0
    assert ends["terminated"] > 5 and ends["truncated"] > 5, ends
    assert len(env.return_queue) == min(sum(ends.values()), env.return_queue.maxlen)
