"""Around the package: the apps (CLI errors), simrl.train/evaluate/export, gymnasium wrappers,
notebook, rendering and plots, benchmarks and bench/gpu.sh, packaging."""
