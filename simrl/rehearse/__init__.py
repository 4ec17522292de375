"""Rehearsal of deployment before hardware: the robot side, simulated in MuJoCo C.

`simrl.deploy` is what runs on the robot (numpy, onnxruntime, cyclonedds; nothing else of simrl).
This package is what stands in for the robot: `mujoco_robot.MujocoRobot` (the controller's robot
in-process, on the simulation's clock), `robot_server` (`simrl-robot-sim`: a MuJoCo robot on
Unitree SDK2's DDS topics, on the wall clock) and `loop_timing` (the controller and policy timed
in real time on recorded states).
"""
