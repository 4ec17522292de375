"""Generic terms, one module per kind: actions, commands, curricula, events, terminations, and
the observations and rewards every robot task shares. A task's own terms live beside its config
in envs/<family>/."""
