"""The tasks, each in its own file. TASKS is their table, read by simrl.registry.

Imported as `simrl.envs`: a wheel installs this folder there (setup.py), so an installed simrl
claims no top-level `envs`; a checkout maps it the same way (simrl.paths.CheckoutTasks).

Plain strings, so importing this package (as `import simrl` does, to register the gymnasium
ids) loads no task code, torch or mujoco.
"""

# name -> ("module:EnvClass", "module:CfgClass", gymnasium id)
_LOCO, _CART, _ARM = "simrl.envs.locomotion", "simrl.envs.cartpole", "simrl.envs.manipulation"
_HAND = "simrl.envs.inhand"
TASKS: dict[str, tuple[str, str, str]] = {
    "quadruped": ("simrl.env:EnvBatch", f"{_LOCO}:QuadrupedCfg", "simrl/Quadruped-v0"),
    "humanoid": ("simrl.env:EnvBatch", f"{_LOCO}:HumanoidCfg", "simrl/Humanoid-v0"),
    "cartpole": ("simrl.env:EnvBatch", f"{_CART}:CartpoleCfg", "simrl/Cartpole-v0"),
    "reach": ("simrl.env:EnvBatch", f"{_ARM}:ReachCfg", "simrl/Reach-v0"),
    "lift": ("simrl.env:EnvBatch", f"{_ARM}:LiftCfg", "simrl/Lift-v0"),
    "inhand_rotate": ("simrl.env:EnvBatch", f"{_HAND}:InhandRotateCfg", "simrl/InhandRotate-v0"),
}
