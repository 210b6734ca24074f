"""Logging where ops run: ``ConfigProto(log_device_placement=True)`` and
``tf.debugging.set_log_device_placement``.

ferroflow runs every op on the CPU of the task that runs it (a ``/job:.../task:...`` device names a
cluster task). With placement logging on, a session writes each node's device to stderr the first
time it runs a graph holding that node, in TensorFlow's ``name: (Type): device`` lines.
"""

from __future__ import annotations

import sys

_LOCAL_CPU = "/job:localhost/replica:0/task:0/device:CPU:0"
_log_device_placement = False


def set_log_device_placement(enabled):
    """Turns placement logging on or off for sessions created from now on (as TF's own switch, which
    applies to new contexts)."""
    global _log_device_placement
    _log_device_placement = bool(enabled)


def get_log_device_placement():
    """Whether ``set_log_device_placement(True)`` is in effect."""
    return _log_device_placement


class PlacementLogger:
    """Writes the placement of the nodes a session has not logged yet, one line per node."""

    def __init__(self, stream=None):
        self._stream = stream
        self._logged = 0

    def __call__(self, graph):
        operations = graph.get_operations()
        if len(operations) <= self._logged:
            return
        stream = self._stream or sys.stderr
        for op in operations[self._logged:]:
            print(f"{op.name}: ({op.type}): {op.device or _LOCAL_CPU}", file=stream)
        self._logged = len(operations)
