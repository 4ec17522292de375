"""The scene: a robot (simrl.scene.robot: robots as data), the terrain and objects assembled into
one MuJoCo model (simrl.scene.assemble), and its named entities (simrl.scene.entity)."""

from simrl.scene.assemble import Scene, assemble
from simrl.scene.entity import Entity
from simrl.scene.objects import ObjectCfg, ObjectIds, objects_from
from simrl.scene.robot import (
                               DEFAULT_KEY,
                               IMU_SENSORS,
                               RobotCfg,
                               joint_ranges,
                               load_robot,
                               per_joint,
                               robot_from_dict,
                               robot_names,
)

__all__ = ["DEFAULT_KEY", "IMU_SENSORS", "Entity", "ObjectCfg", "ObjectIds", "RobotCfg", "Scene", "assemble",
           "joint_ranges", "load_robot", "objects_from", "per_joint", "robot_from_dict", "robot_names"]
