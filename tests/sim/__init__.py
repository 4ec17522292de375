"""simrl.sim: the mujoco and mjwarp backends, and the GPU path's host-sync/launch budget."""
