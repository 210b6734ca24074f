"""The global step: an int64 scalar variable counting training steps (``tf.train.get_or_create_global_step``)."""

from __future__ import annotations

import logging

from ferroflow.framework import dtypes, ops
from ferroflow.ops import init_ops, variable_scope, variables

__all__ = [
    "assert_global_step",
    "create_global_step",
    "get_global_step",
    "get_or_create_global_step",
    "global_step",
]

_log = logging.getLogger(__name__)


def global_step(sess, global_step_tensor):
    """The value of ``global_step_tensor`` (a Variable, Tensor or tensor name) in ``sess``, as a Python int."""
    return int(sess.run(global_step_tensor))


def get_global_step(graph=None):
    """The global step of ``graph`` (default graph): the one tensor in the GLOBAL_STEP collection, else the
    tensor named ``global_step:0``, else None.

    Raises TypeError if what is found is not an integer scalar Variable or Tensor.
    """
    graph = graph or ops.get_default_graph()
    found = graph.get_collection(ops.GraphKeys.GLOBAL_STEP)
    if len(found) == 1:
        step = found[0]
    elif not found:
        try:
            step = graph.get_tensor_by_name("global_step:0")
        except KeyError:
            return None
    else:
        _log.error("Multiple tensors in global_step collection.")
        return None
    assert_global_step(step)
    return step


def create_global_step(graph=None):
    """Creates the global step of ``graph``: an int64 scalar variable ``global_step`` initialised to 0.

    It is non-trainable and in the GLOBAL_VARIABLES and GLOBAL_STEP collections. As in TensorFlow it is
    made with ``get_variable`` outside any name scope, so the current *variable* scope still prefixes it.
    Raises ValueError if the graph already has a global step.
    """
    graph = graph or ops.get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError('"global_step" already exists.')
    with graph.as_default(), ops.name_scope(None):
        return variable_scope.get_variable(
            ops.GraphKeys.GLOBAL_STEP,
            shape=[],
            dtype=dtypes.int64,
            initializer=init_ops.zeros_initializer(),
            trainable=False,
            aggregation=variables.VariableAggregation.ONLY_FIRST_REPLICA,
            collections=[ops.GraphKeys.GLOBAL_VARIABLES, ops.GraphKeys.GLOBAL_STEP],
        )


def get_or_create_global_step(graph=None):
    """The global step of ``graph``, created first if there is none."""
    graph = graph or ops.get_default_graph()
    step = get_global_step(graph)
    if step is None:
        step = create_global_step(graph)
    return step


def assert_global_step(global_step_tensor):
    """Raises TypeError unless ``global_step_tensor`` is an integer scalar Variable or Tensor.

    A tensor whose shape is not fully defined passes, as in TensorFlow.
    """
    if not isinstance(global_step_tensor, (variables.Variable, ops.Tensor)):
        raise TypeError(f'Existing "global_step" must be a Variable or Tensor: {global_step_tensor}.')
    if not global_step_tensor.dtype.base_dtype.is_integer:
        raise TypeError(f'Existing "global_step" does not have integer type: {global_step_tensor.dtype}')
    shape = global_step_tensor.get_shape()
    if shape.ndims != 0 and shape.is_fully_defined():
        raise TypeError(f'Existing "global_step" is not scalar: {shape}')
