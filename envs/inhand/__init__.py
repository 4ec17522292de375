"""In-hand manipulation with a fixed-base hand: `inhand_rotate` (turn a cube about the vertical
axis in MuJoCo Menagerie's LEAP hand). A task as configuration: the library's env over
`InhandRotateCfg`, the scene's two entities (the hand, the cube) and the few terms only it uses."""

from simrl.envs.inhand.rotate import InhandRotateCfg

__all__ = ["InhandRotateCfg"]
