"""The env batch and its config: `EnvBatch` (a gymnasium VectorEnv stepping a loop of managers
over a Sim), `EnvCfg` and `ObsTerm` (what a task's config holds)."""

from simrl.env.batch import EnvBatch
from simrl.env.config import EnvCfg, ObsTerm, cfg_from_dict

__all__ = ["EnvBatch", "EnvCfg", "ObsTerm", "cfg_from_dict"]
