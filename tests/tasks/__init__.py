"""The env batch and its tasks (envs/): gymnasium contract, task terms, robots, soak."""
