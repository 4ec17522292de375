"""Generic terms, one module per kind: actions, commands, curricula, events, terminations.
A task's own terms live beside its config in envs/<family>/."""
