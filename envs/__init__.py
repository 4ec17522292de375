"""Tasks: one file each (its config dataclass, its term functions). Registered in simrl.registry."""
