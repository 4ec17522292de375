"""Learning: rsl-rl PPO glue, checkpoints, the train/play apps' logic."""
