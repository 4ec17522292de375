"""PPO training over an env batch: rsl-rl's runner and algorithm, simrl's logs and checkpoints.

rsl-rl's `OnPolicyRunner` builds the actor, critic, storage and PPO from the agent config, and its
own `learn` runs every iteration (rollout, returns, update). simrl drives it one iteration per
call and takes the place of its `logger` (the object `learn` reports every step and iteration to:
rsl-rl's one extension point inside the loop), so that the console shows one progress bar,
metrics land in TensorBoard and `metrics.csv`, checkpoints are written atomically, blown-up
iterations never reach the weights, and Ctrl-C or SIGTERM ends the run with a final checkpoint.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import io
import os
import signal
import sys
from pathlib import Path
from typing import Any

import torch
from rsl_rl.runners import OnPolicyRunner

from simrl.env import EnvBatch
from simrl.errors import ConfigError
from simrl.rl.checkpoint import (
    CheckpointError,
    RunWriteError,
    TrainingDiverged,
    check_compatible,
    dist_info,
    env_signature,
    latest_checkpoint,
    load_checkpoint,
    rng_state,
    set_rng_state,
)
from simrl.rl.metrics_csv import append_csv
from simrl.rl.vecenv import RslRlVecEnv


class _Runner(OnPolicyRunner):
    """rsl-rl's runner with multi-process setup that also works on the CPU (gloo).

    rsl-rl 5.5.1 insists on NCCL and `cuda:LOCAL_RANK`; data-parallel PPO over CPU ranks is the
    same algorithm with gloo, which lets the distributed path be tested without a GPU.
    """

    def _configure_multi_gpu(self) -> None:
        world, rank, local = dist_info()
        self.gpu_world_size, self.gpu_global_rank, self.gpu_local_rank = world, rank, local
        self.is_distributed = world > 1
        if not self.is_distributed:
            self.cfg["multi_gpu"] = None
            return
        self.cfg["multi_gpu"] = {"global_rank": rank, "local_rank": local, "world_size": world}
        cuda = str(self.device).startswith("cuda")
        if cuda and str(self.device) != f"cuda:{local}":
            raise ValueError(f"rank {rank} runs on '{self.device}' but its LOCAL_RANK is {local}: "
                             f"use device=auto (cuda:LOCAL_RANK) under torchrun")
        if not torch.distributed.is_initialized():
            torch.distributed.init_process_group(backend="nccl" if cuda else "gloo",
                                                 rank=rank, world_size=world)
        if cuda:
            torch.cuda.set_device(local)


class _Hooks:
    """What `OnPolicyRunner.learn` calls on its `logger`, answered for a Trainer.

    `process_env_step` sees every rollout step (episode sums on the device, video frames) and,
    after the last one, reads the env's episode log once and stops a blown-up iteration before
    `learn` reaches the update; `log` gets the iteration's timings, losses, learning rate and
    action noise. `writer` stays None, so rsl-rl itself writes and saves nothing.
    """

    writer = None

    def __init__(self, trainer: Trainer):
        self.trainer = trainer
        self.steps = 0
        self.iteration: dict[str, Any] = {}

    def init_logging_writer(self) -> None:
        self.steps = 0

    def process_env_step(self, rewards, dones, extras, intrinsic_rewards=None) -> None:
        t = self.trainer
        ret, length, ended = t._ret, t._length, t._ended
        ret += rewards  # on the device: nothing here waits on it
        length += 1
        d = dones.to(ret.dtype)
        ended += torch.stack([(ret * d).sum(), (length * d).sum(), d.sum()])
        ret *= 1 - d
        length *= 1 - d
        if t._frames is not None:
            t._record_frame()
        self.steps += 1
        if self.steps == t.agent_cfg["num_steps_per_env"]:  # the rollout's last step
            ep_log = t.env.episode_log()  # the iteration's one read of the device
            t._check_blowups(ep_log.get("sim/unstable_resets", 0.0), t.iteration + 1)
            t._episodes.append(ended.tolist())
            ended.zero_()
            self.iteration = {"ep_log": ep_log}

    def log(self, collect_time: float, learn_time: float, loss_dict: dict, learning_rate: float,
            action_std: torch.Tensor, rnd_weight: float | None = None, **_) -> None:
        self.iteration.update(collect_s=collect_time, learn_s=learn_time, losses=loss_dict,
                              learning_rate=learning_rate, action_std=float(action_std.detach().mean()),
                              rnd_weight=rnd_weight)

    def save_model(self, path: str, it: int) -> None:  # rsl-rl saves only with a writer
        pass

    def stop_logging_writer(self) -> None:
        pass


class Trainer:
    """Owns the rsl-rl runner for one env batch; `learn` runs iterations, `save`/`load` ckpts."""

    def __init__(
        self,
        env: EnvBatch,
        agent_cfg: dict,
        run_dir: str | Path | None = None,
        infos: dict | None = None,
    ):
        self.env = env
        self.venv = RslRlVecEnv(env, log_every=0)  # the episode log is read once per iteration
        self.agent_cfg = copy.deepcopy(agent_cfg)
        with contextlib.redirect_stdout(io.StringIO()):  # rsl-rl prints the whole networks
            self.runner = _Runner(
                self.venv, copy.deepcopy(agent_cfg), log_dir=None, device=str(env.device)
            )
        self.alg = self.runner.alg
        self.hooks = self.runner.logger = _Hooks(self)
        self.run_dir = Path(run_dir) if run_dir else None
        self.infos = {"env": env_signature(env), **(infos or {})}
        self.iteration = 0  # iterations completed
        self.writer = None
        self.history: list[dict[str, float]] = []
        self._episodes: collections.deque = collections.deque(maxlen=200)  # per iteration sums
        self._stop = False
        self._write_failed = False
        self._diverged = False
        # per-env return and length of the running episodes, and the iteration's ended sums
        self._ret = torch.zeros(env.num_envs, device=env.device)
        self._length = torch.zeros(env.num_envs, device=env.device)
        self._ended = torch.zeros(3, device=env.device, dtype=torch.float64)  # returns, lengths, n
        self.max_unstable_share = 1.0  # more worlds than this share blowing up in one iteration
        # stops the run without learning from it (1.0: never)
        self.purge_step: int | None = None  # TensorBoard: drop a stopped run's events from here
        self.video_interval = 0  # record world 0 every K iterations into run_dir/videos (0: off)
        self.video_steps = 150
        self._frames: list | None = None
        self._video_it = 0
        self._is_rank0 = int(os.environ.get("RANK", "0")) == 0

    # --- checkpoints ----------------------------------------------------------------------
    def state_dict(self, with_env: bool = True) -> dict[str, Any]:
        """The learner (rsl-rl's dict), the iteration, and with `with_env` everything else the
        next iteration depends on: the env batch's state, the random generators, the running
        episodes' sums. Resuming from it continues bit for bit (same backend and device)."""
        state = self.alg.save()
        state["iter"] = self.iteration
        state["infos"] = self.infos
        if with_env:
            state["env_state"] = self.env.state_dict()
            state["rng"] = rng_state()
            state["trainer"] = {"ret": self._ret.clone(), "length": self._length.clone(),
                                "ended": self._ended.clone(), "episodes": list(self._episodes)}
        return state

    def _check_short_episodes(self, m: dict[str, float]) -> None:
        """Warn once, in one line, where most episodes end in their first second after a few
        iterations: a termination whose params do not fit the robot (a height limit above a small
        humanoid's base) ends every episode and the run learns nothing, yet exits 0."""
        if getattr(self, "_warned_short", False) or self.iteration < 3:
            return
        length = m.get("Episode/length_s")
        if length is None or length >= 1.0:
            return
        self._warned_short = True
        shares = {k.split("/", 1)[1]: v for k, v in m.items() if k.startswith("Episode_Termination/")}
        worst = max(shares, key=shares.get) if shares and max(shares.values()) > 0 else None
        which = (f"termination '{worst}' ends {shares[worst]:.0%} of them: check its params"
                 if worst is not None else "no termination term fired: check the sim's stability")
        print(f"simrl: warning: at iteration {self.iteration} episodes last {length:.2f} s on average; "
              f"{which} (task.cfg.terminations.{worst or '<name>'})", file=sys.stderr, flush=True)

    def save(self, path: str | Path | None = None, with_env: bool = True) -> Path:
        """Write a checkpoint atomically (a crash mid-write never leaves a corrupt one). A failed
        write (disk full) raises RunWriteError naming the file and the last intact checkpoint."""
        path = Path(path) if path else self.run_dir / f"model_{self.iteration}.pt"
        state = self.state_dict(with_env)
        tmp = path.with_name(path.name + ".tmp")
        try:
            torch.save(state, tmp)
            os.replace(tmp, path)
        except OSError as e:
            self._write_failed = True
            tmp.unlink(missing_ok=True)
            try:
                intact = f"'{latest_checkpoint(path.parent)}' is intact"
            except CheckpointError:
                intact = "no earlier checkpoint exists"
            raise RunWriteError(f"could not write checkpoint '{path}' ({e.strerror or e}); {intact}: "
                                f"free space in '{path.parent}', then rerun the same command (it "
                                f"resumes from there)") from e
        return path

    def load(self, path: str | Path, with_env: bool = True) -> dict:
        """Load a checkpoint's learner and iteration, and where it holds them and `with_env`,
        the env state, random generators and episode sums (`ckpt["env_restored"]` says which;
        `ckpt["env_note"]` why not)."""
        ckpt = load_checkpoint(path, map_location=self.env.device)
        check_compatible(ckpt, self.env)
        try:
            self.alg.load(ckpt, None, strict=True)
        except RuntimeError as e:
            raise CheckpointError(f"checkpoint '{ckpt['path']}' does not fit this network: {e}") from e
        self.iteration = int(ckpt.get("iter", 0))
        ckpt["env_restored"], ckpt["env_note"] = False, None
        if not with_env:
            return ckpt
        if "env_state" not in ckpt:
            ckpt["env_note"] = "it holds no env state (saved before simrl kept it, or learner only)"
        elif self.runner.is_distributed:
            ckpt["env_note"] = "under torchrun each rank's envs start fresh (rank 0's state is saved)"
        else:
            try:
                self.env.load_state_dict(ckpt["env_state"])
            except ValueError as e:
                ckpt["env_note"] = str(e)
            else:
                set_rng_state(ckpt["rng"])
                t = ckpt["trainer"]
                self._ret.copy_(t["ret"])
                self._length.copy_(t["length"])
                self._ended.copy_(t["ended"])
                self._episodes.clear()
                self._episodes.extend(t["episodes"])
                ckpt["env_restored"] = True
        return ckpt

    # --- the loop -------------------------------------------------------------------------
    def _on_signal(self, signum, frame) -> None:
        if self._stop:  # second signal: give up at once
            raise KeyboardInterrupt
        self._stop = True
        print(f"\nsimrl: {signal.Signals(signum).name} received: finishing the iteration, "
              "then saving a final checkpoint (send again to abort)")

    def learn(self, iterations: int, progress: bool = True,
              max_minutes: float | None = None) -> list[dict[str, float]]:
        """Run `iterations` PPO iterations, or fewer where `max_minutes` of training time
        (collect + learn, rank 0's clock) run out first; returns one metrics dict per iteration."""
        from tqdm.auto import tqdm

        if max_minutes is not None and not max_minutes > 0:
            raise ConfigError(f"max_minutes must be > 0 (minutes of training) or null, got {max_minutes}")
        env, runner = self.env, self.runner
        n_steps = self.agent_cfg["num_steps_per_env"]
        save_interval = self.agent_cfg.get("save_interval", 50)
        writing = self.run_dir is not None and self._is_rank0
        if writing:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            if self.writer is None:
                from torch.utils.tensorboard import SummaryWriter

                self.writer = SummaryWriter(str(self.run_dir), flush_secs=10,
                                            purge_step=self.purge_step)
        old = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        env.episode_log()  # start the iteration's log from here
        self._diverged = False
        start, spent = self.iteration, 0.0
        budget = float("inf") if max_minutes is None else 60.0 * max_minutes
        bar = tqdm(range(start, start + iterations), disable=not progress or not self._is_rank0,
                   desc=f"train {env.task_name}", unit="it", dynamic_ncols=True)
        try:
            for it in bar:
                if (writing and self.video_interval and it % self.video_interval == 0
                        and self._frames is None):
                    self._frames, self._video_it = [], it
                # one iteration of rsl-rl's own loop; under torchrun it also re-broadcasts rank
                # 0's weights, which the ranks already share (the update averages gradients)
                runner.current_learning_iteration = it
                quiet = runner.is_distributed and it > start  # its "Synchronizing parameters"
                with contextlib.redirect_stdout(io.StringIO()) if quiet else contextlib.nullcontext():
                    runner.learn(1)  # line once per run, not once per iteration
                h = self.hooks.iteration
                self.iteration = it + 1
                t_iter = h["collect_s"] + h["learn_s"]
                m = {
                    "iteration": self.iteration,
                    "env_steps": self.iteration * n_steps * env.num_envs,
                    "steps_per_s": n_steps * env.num_envs / t_iter,
                    "collect_s": h["collect_s"],
                    "learn_s": h["learn_s"],
                    **self._recent_episodes(),
                    "action_std": h["action_std"],
                    "learning_rate": float(h["learning_rate"]),
                    **({} if h["rnd_weight"] is None else {"rnd_weight": float(h["rnd_weight"])}),
                    **{f"Loss/{k}": float(v) for k, v in h["losses"].items()},
                    **h["ep_log"],  # means over the iteration's episodes; sim/ counts are totals
                }
                self.history.append(m)
                self._check_short_episodes(m)
                bar.set_postfix(
                    steps_s=f"{m['steps_per_s']:,.0f}", rew=f"{m['mean_reward']:.2f}",
                    ep_len=f"{m['mean_episode_length']:.0f}", refresh=False,
                )
                if writing:
                    self._log(m)
                    if self.iteration % save_interval == 0:
                        self.save()
                spent += t_iter
                if budget < float("inf") and self._out_of_time(spent >= budget):
                    print(f"\nsimrl: max_minutes={max_minutes} of training reached at iteration "
                          f"{self.iteration}")
                    break
                if self._stop:
                    break
        finally:
            for s, h in old.items():
                signal.signal(s, h)
            bar.close()
            if writing and not (self._write_failed or self._diverged):
                path = self.save()
                print(f"simrl: saved {path}")
                self.writer.flush()
        return self.history

    def _check_blowups(self, count: float, iteration: int) -> None:
        """Stop the run, before the update, where more than `max_unstable_share` of the worlds
        blew up in this iteration: its data never reaches the weights."""
        if count <= self.max_unstable_share * self.env.num_envs:
            return
        self._diverged = True
        where = "nothing was saved (no run dir)"
        if self.run_dir is not None and self._is_rank0:
            path = self.run_dir / f"model_{self.iteration}.pt"
            if path.exists():  # saved at the end of the last iteration, envs and all
                where = f"the run as it was before it is in '{path}'"
            else:
                self.save(path, with_env=False)
                where = f"the weights before it are in '{path}' (learner only: envs restart fresh)"
        raise TrainingDiverged(
            f"{int(count)} worlds blew up in iteration {iteration} (resets for non-finite or "
            f"absurd physics, more than max_unstable_share={self.max_unstable_share} of "
            f"{self.env.num_envs}): stopped without learning from it; {where}. Lower the "
            f"timestep or the gains, or look for a bad action or model parameter")

    def _out_of_time(self, mine: bool) -> bool:
        """Rank 0's verdict on the time budget, shared so every rank stops at one iteration."""
        if not self.runner.is_distributed:
            return mine
        import torch.distributed as dist

        flag = torch.tensor([float(mine)], device=self.env.device)
        dist.broadcast(flag, src=0)
        return bool(flag.item())

    def _recent_episodes(self, min_episodes: int = 200) -> dict[str, float]:
        """Mean return and length of the last iterations' episodes, at least `min_episodes`
        where there are that many (a window like rsl-rl's, kept as per-iteration sums)."""
        total = [0.0, 0.0, 0.0]
        for r, n_steps, count in reversed(self._episodes):
            total = [total[0] + r, total[1] + n_steps, total[2] + count]
            if total[2] >= min_episodes:
                break
        if not total[2]:
            return {"mean_reward": float("nan"), "mean_episode_length": float("nan")}
        return {"mean_reward": total[0] / total[2], "mean_episode_length": total[1] / total[2]}

    def _record_frame(self) -> None:
        from simrl.render import Renderer, default_camera, write_video

        if not hasattr(self, "_renderer"):
            self._renderer = Renderer(self.env.sim, 320, 240)
        self._frames.append(self._renderer.frame(0, default_camera(self.env.sim)))
        if len(self._frames) >= self.video_steps:
            path = self.run_dir / "videos" / f"it_{self._video_it:05d}.mp4"
            write_video(self._frames, path, fps=1.0 / self.env.dt)
            self._frames = None

    def _log(self, m: dict[str, float]) -> None:
        it = m["iteration"]
        for k, v in m.items():
            if k != "iteration":
                self.writer.add_scalar(k if "/" in k else f"Train/{k}", v, it)
        try:
            append_csv(self.run_dir / "metrics.csv", m)
        except OSError as e:
            self._write_failed = True
            raise RunWriteError(f"could not append iteration {it} to '{self.run_dir / 'metrics.csv'}' "
                                f"({e.strerror or e}): free space, then rerun the same command "
                                "(it resumes from the last checkpoint)") from e

    def policy(self):
        """The deterministic inference policy: obs TensorDict -> actions."""
        return self.runner.get_inference_policy(device=str(self.env.device))
