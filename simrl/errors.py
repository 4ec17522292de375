"""User errors: mistakes in what was asked for, which the apps print as one line, not a traceback.

    raise ConfigError("num_envs must be >= 1, got 0: pass num_envs=N or null (the task default)")

The apps (train.py, eval.py, play.py, export.py, `python -m simrl.bench`, `python -m simrl.plot`) run
their work inside `exit_on_user_error()`: a `UserError` (CheckpointError, ExportError and
RenderError are ones too) prints `simrl: error: <message>` on stderr and exits with status 1. Anything else
keeps its traceback: that is a bug. Raise these where user input is validated, never by
catching broad built-in errors from deep code. Imports nothing heavy.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

PREFIX = "simrl: error:"

class UserError(Exception):
    """A mistake in the user's input; the message names the bad value, the valid ones, the fix."""


class ConfigError(UserError, ValueError):
    """A config value, argument or environment (device, package) that cannot be used."""


class UnknownNameError(UserError, KeyError):
    """A name (task, config field, term) that is not among the valid ones, which it lists."""

    def __str__(self) -> str:  # KeyError's own str() would quote the message
        return str(self.args[0]) if self.args else ""


class MissingFileError(UserError, FileNotFoundError):
    """A path the user passed that does not hold what it should."""


def one_line(error: BaseException) -> str:
    """The error's message on one line (wrapped library messages can span several)."""
    return " ".join(str(error).split()) or type(error).__name__


@contextlib.contextmanager
def exit_on_user_error() -> Iterator[None]:
    """Run an app's work: a user error prints one `simrl: error:` line and exits with 1.

    Used inside the Hydra task function (Hydra would otherwise wrap the exception in its own
    report); SystemExit passes through Hydra untouched.
    """
    try:
        yield
    except UserError as e:
        print(f"{PREFIX} {one_line(e)}", file=sys.stderr, flush=True)
        raise SystemExit(1) from None
