"""Where the Keras dataset files are cached, and a clear error when one is missing."""

from __future__ import annotations

import os

__all__ = ["cached"]


def cached(fname, origin):
    """The path of ``fname`` in ``~/.keras/datasets/`` (``$KERAS_HOME/datasets`` when set), which must exist."""
    home = os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")
    path = os.path.join(home, "datasets", fname)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path} not found: ferroflow does not download data sets. Download {origin} and "
                                f"save it as {path}.")
    return path
