"""simrl tests; the folders mirror the package (sim, tasks, rl, deploy) plus the apps around it."""
