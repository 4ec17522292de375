"""simrl.rl: training, the rsl-rl view, checkpoints, export, distributed runs."""
