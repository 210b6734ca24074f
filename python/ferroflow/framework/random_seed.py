"""Graph- and op-level random seeds (TensorFlow's rules)."""

from __future__ import annotations

from ferroflow.framework import ops

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1


def get_seed(op_seed):
    """The (graph seed, op seed) pair a random op uses.

    With a graph seed and no op seed, the op seed is derived from the number
    of ops created so far, so a rebuilt graph replays the same numbers.
    """
    global_seed = ops.get_default_graph().seed
    if global_seed is not None:
        if op_seed is None:
            op_seed = ops.get_default_graph()._last_id
        seeds = (_truncate(global_seed), _truncate(op_seed))
    elif op_seed is not None:
        seeds = (DEFAULT_GRAPH_SEED, _truncate(op_seed))
    else:
        seeds = (None, None)
    if seeds == (0, 0):
        # (0, 0) means "draw a fresh seed" to the kernels; keep it deterministic.
        seeds = (0, _MAXINT32)
    return seeds


def _truncate(seed):
    return int(seed) % (2**63)


def set_random_seed(seed):
    """Sets the graph-level seed of the default graph."""
    ops.get_default_graph().seed = seed
