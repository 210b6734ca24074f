"""Traceback filtering: ``tf.debugging.enable_traceback_filtering`` and its two siblings.

TensorFlow drops its own frames from the tracebacks of errors its public functions raise, so a traceback
ends at the user's line. ferroflow does the same where an error reaches the user through ``Session.run``:
the frames below that call that lie inside the ``ferroflow`` package are removed, leaving the filter's own
frame where the error left ferroflow (TensorFlow's tracebacks keep its error handler's frame the same way).
Frames of user code that ferroflow called (a ``py_func``, a hook) stay. The switch is per thread and on by
default, as in TensorFlow; ``disable_traceback_filtering()`` shows every frame again, which is what to do
when debugging ferroflow itself.
"""

from __future__ import annotations

import functools
import os
import threading
import types

__all__ = [
    "disable_traceback_filtering",
    "enable_traceback_filtering",
    "filter_traceback",
    "is_traceback_filtering_enabled",
    "strip_internal_frames",
]

_STATE = threading.local()
# The package directory, with a separator, so that a sibling such as ``ferroflow_extra`` is not matched.
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def is_traceback_filtering_enabled():
    """Whether ferroflow drops its own frames from the tracebacks of errors it raises (the default)."""
    return getattr(_STATE, "enabled", True)


def enable_traceback_filtering():
    """Drop ferroflow-internal frames from error tracebacks in this thread (the default)."""
    _STATE.enabled = True


def disable_traceback_filtering():
    """Keep every frame, ferroflow's included, in error tracebacks raised in this thread."""
    _STATE.enabled = False


def include_frame(filename):
    """True if a frame of ``filename`` belongs in a filtered traceback (it is not ferroflow's)."""
    return not os.path.abspath(filename).startswith(_PACKAGE_DIR)


def strip_internal_frames(tb):
    """``tb`` without its ferroflow frames (a new chain of the kept entries, None if none is kept), or
    ``tb`` itself when filtering is off."""
    if tb is None or not is_traceback_filtering_enabled():
        return tb
    kept = []
    entry = tb
    while entry is not None:
        if include_frame(entry.tb_frame.f_code.co_filename):
            kept.append(entry)
        entry = entry.tb_next
    head = None
    for entry in reversed(kept):
        head = types.TracebackType(head, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return head


def filter_traceback(fn):
    """Decorates a public entry point: an exception leaving ``fn`` loses the ferroflow frames below it."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            if not is_traceback_filtering_enabled():
                raise
            raise e.with_traceback(strip_internal_frames(e.__traceback__)) from e.__cause__

    return wrapper
