"""``tf.debugging.enable_check_numerics`` / ``disable_check_numerics``.

While enabled (on the calling thread, as in TensorFlow), every op created gets the node attr
``_check_numerics``; the executor then checks the op's floating-point outputs after each run and
fails the run with InvalidArgumentError ("Detected Infinity or NaN in output i of graph op ...") at
the first op that produces one. TensorFlow inserts a ``CheckNumericsV2`` node per output instead;
the error is the same and the graph the user sees is not changed.
"""

from __future__ import annotations

import threading

#: The node attr the executor looks for (``crates/runtime/src/check_numerics.rs``).
CHECK_NUMERICS_ATTR = "_check_numerics"

_state = threading.local()


def enabled():
    """Whether ops created now on this thread get checked."""
    return getattr(_state, "on", False)


def enable_check_numerics(stack_height_limit=30, path_length_limit=50):
    """Checks every floating-point output of the ops created from now on (this thread) for NaN and
    infinity when they run. The two limits shape TensorFlow's stack-trace printout; they are
    accepted for compatibility and have no effect."""
    del stack_height_limit, path_length_limit
    _state.on = True


def disable_check_numerics():
    """Stops marking new ops for checking; ops already marked stay checked, as in TensorFlow."""
    _state.on = False
