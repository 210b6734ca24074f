"""``on_flat_values``: TensorFlow's ragged dispatch for elementwise functions. A function decorated with it, given a
RaggedTensor for the named argument, runs on that tensor's flat values and returns a RaggedTensor with the same
rows; anything else reaches the function as before. The decorated function keeps its name and signature.

This module imports nothing of ferroflow, so that the lowest op modules can use it.
"""

from __future__ import annotations

import functools
import inspect

__all__ = ["on_flat_values"]


def _is_ragged(v):
    return getattr(type(v), "_ragged_elementwise", False)


def on_flat_values(param):
    """Decorator: when argument ``param`` is a RaggedTensor, the function applies to its flat values."""

    def decorate(f):
        pos = list(inspect.signature(f).parameters).index(param)

        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            if len(args) > pos and _is_ragged(args[pos]):
                rt = args[pos]
                return rt.with_flat_values(f(*args[:pos], rt.flat_values, *args[pos + 1:], **kwargs))
            if _is_ragged(kwargs.get(param)):
                rt = kwargs[param]
                return rt.with_flat_values(f(*args, **{**kwargs, param: rt.flat_values}))
            return f(*args, **kwargs)

        return wrapper

    return decorate
