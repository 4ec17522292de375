"""simrl.deploy: the robot-side runtime, and sim-to-sim through it in MuJoCo C."""
