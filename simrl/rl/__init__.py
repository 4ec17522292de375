"""Learning: rsl-rl PPO glue, checkpoints, the train/eval/export apps' logic."""
