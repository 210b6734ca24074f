"""``tf.compat``: ``tf.compat.v1`` and text helpers."""

from __future__ import annotations

from ferroflow.platform.compat import as_bytes, as_str, as_str_any, as_text, path_to_str  # noqa: F401


def __getattr__(name):
    # `tf.compat.v1` is the whole package; import lazily to avoid a cycle.
    if name == "v1":
        import importlib

        return importlib.import_module("ferroflow.compat.v1")
    raise AttributeError(name)
