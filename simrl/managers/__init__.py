"""Managers: one per kind of term, each owning its terms' parsing, binding, per-step work,
logging and checkpointed state. The env batch's step is a loop over them (simrl.env.batch).

    actions -> physics -> commands -> terminations -> rewards -> curricula -> resets (events,
    commands) -> observations
"""

from simrl.managers.action import ActionManager
from simrl.managers.command import CommandManager
from simrl.managers.curriculum import CurriculumManager
from simrl.managers.event import EventManager
from simrl.managers.metric import MetricManager
from simrl.managers.observation import ObservationManager, ObsSlot, deploy_read, observation
from simrl.managers.reward import RewardManager
from simrl.managers.termination import TerminationManager

__all__ = ["ActionManager", "CommandManager", "CurriculumManager", "EventManager", "MetricManager",
           "ObsSlot", "ObservationManager", "RewardManager", "TerminationManager", "deploy_read",
           "observation"]
