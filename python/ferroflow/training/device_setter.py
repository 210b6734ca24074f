"""``tf.train.replica_device_setter``: place variables on ps tasks, everything else on the worker.

Between-graph replication (each worker builds its own copy of the model)
wraps model building in ``with tf.device(tf.train.replica_device_setter(...))``.
The device function it returns gives every op whose type is in ``ps_ops``
(the variable ops: ``VariableV2``, ``VarHandleOp``, the mutable hash tables,
...) the ``ps_device`` with a task the ``ps_strategy`` picks (round robin by
default: 0, 1, ..., ps_tasks-1, 0, ...), and every other op the
``worker_device``; fields an inner ``tf.device`` scope already set win.
Ops that use a variable (its ``Assign``, its ``read``, the optimizer's
update) follow it by colocation, not through this function.

``GreedyLoadBalancingStrategy`` and ``byte_size_load_fn`` are the
``tf.contrib.training`` strategy that puts each variable on the least-loaded
ps task; TensorFlow 1 never exported them outside contrib, so they are here,
in ``ferroflow.training.device_setter``, only.
"""

from __future__ import annotations

import logging

from ferroflow.framework.device_spec import DeviceSpec

__all__ = ["replica_device_setter"]

_logger = logging.getLogger("tensorflow")

# The op types TensorFlow places on ps tasks by default (its STANDARD_PS_OPS).
STANDARD_PS_OPS = (
    "Variable", "VariableV2", "AutoReloadVariable", "MutableHashTable", "MutableHashTableV2",
    "MutableHashTableOfTensors", "MutableHashTableOfTensorsV2", "MutableDenseHashTable",
    "MutableDenseHashTableV2", "VarHandleOp", "BoostedTreesEnsembleResourceHandleOp",
    "BoostedTreesQuantileStreamResourceHandleOp", "ResourceConditionalAccumulator", "DecisionTreeResource",
)


class _RoundRobinStrategy:
    """Task 0, 1, ..., num_tasks-1, 0, ... : one step per op placed on a ps task."""

    def __init__(self, num_tasks):
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op):
        task = self._next_task
        self._next_task = (task + 1) % self._num_tasks
        return task


def byte_size_load_fn(op):
    """The bytes of ``op``'s single output (a variable's size), for ``GreedyLoadBalancingStrategy``.

    A ``VarHandleOp`` (resource variable) counts the variable it holds
    (its ``shape`` and ``dtype`` attrs), not the handle. ValueError when the op
    has more than one output or the shape is not fully known.
    """
    from ferroflow.framework import dtypes
    from ferroflow.framework.tensor_shape import TensorShape

    if len(op.outputs) != 1:
        raise ValueError(f"Op {op} must have a single output")
    output = op.outputs[0]
    dtype = output.dtype
    shape = output.get_shape()
    if op.type == "VarHandleOp":
        dtype = dtypes.as_dtype(op.get_attr("dtype"))
        shape = TensorShape(op.get_attr("shape"))
    elif not shape.is_fully_defined():
        shape = TensorShape(op.get_attr("shape"))
    shape.assert_is_fully_defined()
    return shape.num_elements() * dtype.base_dtype.size


class GreedyLoadBalancingStrategy:
    """Puts each op on the ps task with the least load so far (``load_fn(op)`` summed per task;
    ties go to the lowest task index). Pass it as ``replica_device_setter(ps_strategy=...)``."""

    def __init__(self, num_tasks, load_fn):
        if num_tasks <= 0:
            raise ValueError(f"num_tasks must be positive, got {num_tasks}")
        self._num_tasks = num_tasks
        self._load_fn = load_fn
        self._ps_loads = [0] * num_tasks

    def __call__(self, op):
        task = min(range(self._num_tasks), key=self._ps_loads.__getitem__)
        self._ps_loads[task] += self._load_fn(op)
        return task


class _ReplicaDeviceChooser:
    """The device function ``replica_device_setter`` returns (``device_function``)."""

    def __init__(self, ps_tasks, ps_device, worker_device, merge_devices, ps_ops, ps_strategy):
        self._ps_tasks = ps_tasks
        self._ps_device = ps_device
        self._worker_device = worker_device
        self._merge_devices = merge_devices
        self._ps_ops = frozenset(ps_ops)
        self._ps_strategy = ps_strategy

    def device_function(self, op):
        """The device for ``op``: a ps task for a ps op, the worker device otherwise."""
        if not self._merge_devices and op.device:
            return op.device
        current = DeviceSpec.from_string(op.device or "")
        op_type = getattr(op, "type", None)
        if op_type is None:  # a NodeDef
            op_type = op.op
        if self._ps_tasks and self._ps_device and op_type in self._ps_ops:
            ps = DeviceSpec.from_string(self._ps_device)
            if ps.job and (not current.job or current.job == ps.job):
                ps = ps.replace(task=self._ps_strategy(op))
            return ps.make_merged_spec(current).to_string()
        worker = DeviceSpec.from_string(self._worker_device or "")
        return worker.make_merged_spec(current).to_string()


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker", merge_devices=True,
                          cluster=None, ps_ops=None, ps_strategy=None):
    """A device function for ``tf.device`` that places variables on ps tasks (round robin)
    and the other ops on ``worker_device``.

    Args:
      ps_tasks: number of ps tasks; taken from ``cluster`` when one is given.
      ps_device: the ps job's device (``"/job:ps"``); empty places nothing on a ps.
      worker_device: the device of every op that is not a ps op.
      merge_devices: when False an op that already has a device keeps it unchanged.
      cluster: a ``ClusterSpec``, a dict or a ``ClusterDef``.
      ps_ops: op types placed on ps tasks (default: TensorFlow's variable and table ops).
      ps_strategy: called with each ps op, returns its task index (default: round robin).

    Returns:
      The device function, or None when there are no ps tasks (no job of
      ``ps_device`` in ``cluster``, or ``ps_tasks`` 0).

    Raises:
      TypeError: ``cluster`` is not a cluster description, or ``ps_strategy`` is not callable.
    """
    from ferroflow.training.server_lib import ClusterSpec

    if cluster is not None:
        spec = cluster.as_dict() if isinstance(cluster, ClusterSpec) else ClusterSpec(cluster).as_dict()
        ps_job = DeviceSpec.from_string(ps_device).job
        if ps_job not in spec or spec[ps_job] is None:
            return None
        ps_tasks = len(spec[ps_job])
    if ps_tasks == 0:
        return None
    if ps_ops is None:
        ps_ops = list(STANDARD_PS_OPS)
    if not merge_devices:
        _logger.warning("DEPRECATION: It is recommended to set merge_devices=true in replica_device_setter")
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    chooser = _ReplicaDeviceChooser(ps_tasks, ps_device, worker_device, merge_devices, ps_ops, ps_strategy)
    return chooser.device_function
