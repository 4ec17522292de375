"""Watch a trained policy: `python play.py checkpoint=runs/quadruped/<run>` (simrl.viewer).

The metrics table (return, tracking errors and falls per command) is eval.py, the console
script simrl-eval: its keys (episodes=, commands=, pushes=, ...) given here are refused in one
line that names the eval.py command to run instead.
"""

from simrl.cli import play

if __name__ == "__main__":
    play()  # the same function as the console script simrl-play
