"""Watch a policy: the browser viewer (`WebViewer`, viser), MuJoCo's native viewer
(`run_native`) and clips (`record`), over worlds of a checkpoint's env (`EnvSource`) or of an
exported policy run by the deploy runtime (`DeploySource`). `simrl-play` and `simrl-demo` start
them from the command line; `show(...)` from Python and Jupyter."""

from simrl.viewer.sources import DeploySource, EnvSource

__all__ = ["DeploySource", "EnvSource", "show"]


def show(source, port: int = 8080, **kwargs):
    """A browser viewer of `source`, stepping in a background thread; returns the viewer (its
    `url`; `close()` ends it). In Jupyter, `viewer.embed()` shows it inline."""
    import threading

    from simrl.viewer.web import WebViewer

    viewer = WebViewer(source, port=port, **kwargs)
    threading.Thread(target=viewer.run, daemon=True, name="simrl-viewer").start()
    return viewer
