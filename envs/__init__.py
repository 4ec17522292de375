"""The tasks, each in its own file. TASKS is their table, read by simrl.registry.

Plain strings, so importing this package (as `import simrl` does, to register the gymnasium
ids) loads no task code, torch or mujoco.
"""

# name -> ("module:EnvClass", "module:CfgClass", gymnasium id)
TASKS: dict[str, tuple[str, str, str]] = {
    "quadruped": ("envs.locomotion:LocomotionEnv", "envs.locomotion:QuadrupedCfg", "simrl/Quadruped-v0"),
    "humanoid": ("envs.locomotion:LocomotionEnv", "envs.locomotion:HumanoidCfg", "simrl/Humanoid-v0"),
    "cartpole": ("envs.cartpole:CartpoleEnv", "envs.cartpole:CartpoleCfg", "simrl/Cartpole-v0"),
    "reach": ("envs.manipulation:ReachEnv", "envs.manipulation:ReachCfg", "simrl/Reach-v0"),
    "lift": ("envs.manipulation:LiftEnv", "envs.manipulation:LiftCfg", "simrl/Lift-v0"),
}
