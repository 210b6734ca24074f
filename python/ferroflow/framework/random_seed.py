"""Graph- and op-level random seeds, derived as TensorFlow 2.21 derives them.

``get_seed(op_seed)`` returns the ``(seed, seed2)`` attrs of a stateful
random op:

* with a graph seed (``tf.set_random_seed``) and an op seed: both, each
  reduced modulo ``2**31 - 1``;
* with a graph seed and no op seed: the op seed is a per-graph counter that
  starts at 0 and goes up by one on every such call (TF 2.21 counts calls;
  TF 1.x used the graph's last op id, which depends on how many ops each
  wrapper builds). Rebuilding the same program in a fresh graph therefore
  replays the same numbers, and ferroflow matches TF whenever the program
  draws its seeds in the same order;
* with only an op seed: the graph seed is ``DEFAULT_GRAPH_SEED``;
* with neither: ``(None, None)`` (the kernels draw a fresh seed per session).

``(0, 0)`` would mean "nondeterministic" to the kernels, so it becomes
``(0, 2**31 - 1)``. With equal seeds, the stateful kernels
(``RandomUniform``, ``RandomStandardNormal``, ``TruncatedNormal``,
``RandomUniformInt``, ``RandomShuffle``, ``Multinomial``, ``RandomGamma``,
``RandomPoisson(V2)``) give TF 2.21's CPU bits, run after run
(tests/python/test_random_tf_bits.py); so do the initializers, ``dropout``
and ``random_crop`` built on them, ``sample_distorted_bounding_box`` and
``Dataset.shuffle`` (each epoch of a reshuffling repeat too).

Random ops inside ``while_loop``/``map_fn`` bodies draw from their node's
stream in iteration order; TF's executor runs such draws (which wait on no
loop variable) in an order of its own scheduling (seen reversed on a second
run, and in ``map_fn``), so their sequence can differ from TF's.

Not matched: eager-mode seeds (TF draws eager op seeds from a Python
``random.Random(global_seed)``; ferroflow runs graphs only); ``tf.layers``
kernels, which TF 2.21 (tf_keras) initializes with stateless ops under a
fresh random seed per build even when a graph seed is set, so TF itself does
not repeat them; ``Multinomial`` when TF splits a large batch across threads
(each shard then skips ahead by its first row; ferroflow draws rows from one
stream, which is TF's layout for a single shard).
"""

from __future__ import annotations

import weakref

from ferroflow.framework import ops

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1

# Per graph: how many op seeds have been derived from its graph seed.
_graph_op_seed_counter: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def get_seed(op_seed):
    """The ``(graph seed, op seed)`` pair a random op uses (see the module doc)."""
    graph = ops.get_default_graph()
    global_seed = graph.seed
    if global_seed is not None:
        if op_seed is None:
            op_seed = _graph_op_seed_counter.get(graph, 0)
            _graph_op_seed_counter[graph] = op_seed + 1
        seeds = (_truncate(global_seed), _truncate(op_seed))
    elif op_seed is not None:
        seeds = (DEFAULT_GRAPH_SEED, _truncate(op_seed))
    else:
        seeds = (None, None)
    if seeds == (0, 0):
        return (0, _MAXINT32)
    return seeds


def _truncate(seed):
    return int(seed) % _MAXINT32


def set_random_seed(seed):
    """Sets the graph-level seed of the default graph."""
    ops.get_default_graph().seed = seed
