"""TF1's queues: ``tf.FIFOQueue``, ``tf.PaddingFIFOQueue``, ``tf.RandomShuffleQueue``, ``tf.PriorityQueue``
and their base ``tf.QueueBase`` (also under ``tf.queue`` and, all but FIFOQueue, ``tf.io``).

Each queue is a resource created by its op (``FIFOQueueV2`` ...); enqueues and dequeues are ops on its handle
that run in Rust and may wait (for room, for elements) without holding the GIL or a kernel thread.
``Session.close()`` wakes every waiter with ``CancelledError``; a closed, empty queue ends dequeues with
``OutOfRangeError``.

Also the gradient accumulators ``tf.ConditionalAccumulator`` and ``tf.SparseConditionalAccumulator`` (what
``SyncReplicasOptimizer`` aggregates with): ``apply_grad`` adds a gradient unless its ``local_step`` is older
than the accumulator's global step, ``take_grad(n)`` waits for ``n`` gradients and returns their mean (or sum).
"""

from __future__ import annotations

import hashlib

from ferroflow.framework import dtypes as _dtypes
from ferroflow.framework import ops, random_seed, tensor_util
from ferroflow.framework.tensor_shape import Dimension, TensorShape, as_shape, unknown_shape
from ferroflow.ops._op_util import make, make_op, shape_attr

__all__ = [
    "QueueBase",
    "FIFOQueue",
    "PaddingFIFOQueue",
    "RandomShuffleQueue",
    "PriorityQueue",
    "ConditionalAccumulatorBase",
    "ConditionalAccumulator",
    "SparseConditionalAccumulator",
    "count_up_to",
]


def _as_type_list(dtypes):
    if not isinstance(dtypes, (list, tuple)):
        dtypes = [dtypes]
    return [_dtypes.as_dtype(d) for d in dtypes]


def _as_shape_list(shapes, dtypes, unknown_dim_allowed=False, unknown_rank_allowed=False):
    """``shapes`` as a list of TensorShapes, one per dtype ([] when not given)."""
    if shapes is None:
        return []
    if isinstance(shapes, TensorShape) or (
        isinstance(shapes, (list, tuple)) and all(s is None or isinstance(s, (int, Dimension)) for s in shapes)
        and len(dtypes) == 1 and not (len(shapes) == 1 and isinstance(shapes[0], (list, tuple)))
    ):
        shapes = [shapes]
    shapes = [as_shape(s) if s is not None else unknown_shape() for s in shapes]
    if len(shapes) != len(dtypes):
        raise ValueError(f"shapes must have the same length as dtypes: got {len(shapes)} shapes for "
                         f"{len(dtypes)} dtypes")
    if not unknown_dim_allowed and any(not s.is_fully_defined() for s in shapes):
        raise ValueError(f"All shapes must be fully defined: {shapes}")
    if not unknown_rank_allowed and any(s.dims is None for s in shapes):
        raise ValueError(f"All shapes must have a defined rank: {shapes}")
    return shapes


def _as_name_list(names, dtypes):
    if names is None:
        return None
    if not isinstance(names, (list, tuple)):
        names = [names]
    if len(names) != len(dtypes):
        raise ValueError("List of names must have the same length as the list of dtypes")
    return list(names)


def _shape_list_attr(shapes):
    return ("list_shape", [s.as_list() if s.dims is not None else None for s in shapes])


def _type_list_attr(dtypes):
    return ("list_type", [d.as_datatype_enum for d in dtypes])


class QueueBase:
    """Base class for queues: the enqueue and dequeue methods over a queue handle (``queue_ref``).

    ``dtypes``: the component types; ``shapes``: their shapes (or ``None``); ``names``: component names, for
    queues whose elements are dicts (or ``None``).
    """

    def __init__(self, dtypes, shapes, names, queue_ref):
        self._dtypes = list(dtypes)
        if shapes is not None:
            if len(shapes) != len(dtypes):
                raise ValueError("Queue shapes must have the same length as dtypes")
            self._shapes = [as_shape(s) for s in shapes]
        else:
            self._shapes = [unknown_shape() for _ in self._dtypes]
        if names is not None:
            if len(names) != len(dtypes):
                raise ValueError("Queue names must have the same length as dtypes")
            self._names = list(names)
        else:
            self._names = None
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name.split("/")[-1]

    @staticmethod
    def from_list(index, queues):
        """A queue that is ``queues[index]``; not available in ferroflow (no op selects among resource
        handles yet)."""
        raise NotImplementedError("QueueBase.from_list is not available in ferroflow")

    @property
    def queue_ref(self):
        """The queue's resource handle."""
        return self._queue_ref

    @property
    def name(self):
        """The name of the queue op."""
        return self._queue_ref.op.name

    @property
    def dtypes(self):
        """The component types."""
        return self._dtypes

    @property
    def shapes(self):
        """The component shapes."""
        return self._shapes

    @property
    def names(self):
        """The component names (``None`` for a queue of tuples)."""
        return self._names

    def _check_enqueue_dtypes(self, vals):
        """``vals`` (a tensor, list, tuple or dict) as a list of tensors of the component types."""
        if isinstance(vals, dict):
            if not self._names:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names, key=str) != sorted(vals.keys(), key=str):
                raise ValueError(f"Keys in dictionary to enqueue do not match names of Queue.  "
                                 f"Dictionary: {sorted(vals.keys())}, Queue: {sorted(self._names)}")
            vals = [vals[k] for k in self._names]
        else:
            if self._names:
                raise ValueError("You must enqueue a dictionary in a Queue with names")
            if not isinstance(vals, (list, tuple)):
                vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError(f"Expected {len(self._dtypes)} components to enqueue in {self._name}, "
                             f"got {len(vals)}")
        return [ops.convert_to_tensor(v, dtype=d, name=f"component_{i}")
                for i, (v, d) in enumerate(zip(vals, self._dtypes))]

    def _enqueue_attrs(self, tensors):
        return {"Tcomponents": _type_list_attr([t.dtype for t in tensors]), "timeout_ms": -1}

    def enqueue(self, vals, name=None):
        """An op that adds one element (a tensor, a tuple/list of tensors, or a dict for a named queue)."""
        with ops.name_scope(name, f"{self._name}_enqueue") as scope:
            vals = self._check_enqueue_dtypes(vals)
            for val, shape in zip(vals, self._shapes):
                if not shape.is_compatible_with(val.get_shape()):
                    raise ValueError(f"Shapes {shape} and {val.get_shape()} are incompatible "
                                     f"(enqueue in queue {self._name})")
            return make_op("QueueEnqueueV2", [self._queue_ref] + vals, self._enqueue_attrs(vals),
                           name=scope.rstrip("/"))

    def enqueue_many(self, vals, name=None):
        """An op that adds the elements sliced from ``vals`` along their first dimension."""
        with ops.name_scope(name, f"{self._name}_EnqueueMany") as scope:
            vals = self._check_enqueue_dtypes(vals)
            batch_dim = Dimension(None)
            for val in vals:
                shape = val.get_shape()
                if shape.dims is not None:
                    if len(shape.dims) < 1:
                        raise ValueError(f"Shape must be at least rank 1 but is rank 0 (enqueue_many in "
                                         f"queue {self._name})")
                    batch_dim = batch_dim.merge_with(shape.dims[0])
            for val, shape in zip(vals, self._shapes):
                vs = val.get_shape()
                if vs.dims is not None and not shape.is_compatible_with(TensorShape(vs.dims[1:])):
                    raise ValueError(f"Shapes {shape} and {TensorShape(vs.dims[1:])} are incompatible "
                                     f"(enqueue_many in queue {self._name})")
            return make_op("QueueEnqueueManyV2", [self._queue_ref] + vals, self._enqueue_attrs(vals),
                           name=scope.rstrip("/"))

    def _dequeue_return_value(self, tensors):
        if self._names:
            return {n: t for n, t in zip(self._names, tensors)}
        if len(tensors) == 1:
            return tensors[0]
        return tensors

    def _dequeue_op(self, op_type, inputs, name, batch):
        op = make_op(op_type, [self._queue_ref] + inputs,
                     {"component_types": _type_list_attr(self._dtypes), "timeout_ms": -1}, name=name)
        tensors = list(op.outputs)
        for t, shape in zip(tensors, self._shapes):
            if batch is False:
                t.set_shape(shape)
            elif shape.dims is not None:
                t.set_shape(TensorShape([batch]).concatenate(shape))
        return self._dequeue_return_value(tensors)

    def dequeue(self, name=None):
        """One element; waits while the queue is empty, ``OutOfRangeError`` once it is closed and empty."""
        if name is None:
            name = f"{self._name}_Dequeue"
        return self._dequeue_op("QueueDequeueV2", [], name, False)

    def dequeue_many(self, n, name=None):
        """``n`` elements stacked along a new first dimension; waits for all ``n``."""
        if name is None:
            name = f"{self._name}_DequeueMany"
        n = ops.convert_to_tensor(n, dtype=_dtypes.int32, name="n")
        value = tensor_util.constant_value(n)
        return self._dequeue_op("QueueDequeueManyV2", [n], name, None if value is None else int(value))

    def dequeue_up_to(self, n, name=None):
        """Like ``dequeue_many``, but after the queue is closed returns the fewer elements left."""
        if name is None:
            name = f"{self._name}_DequeueUpTo"
        n = ops.convert_to_tensor(n, dtype=_dtypes.int32, name="n")
        return self._dequeue_op("QueueDequeueUpToV2", [n], name, None)

    def close(self, cancel_pending_enqueues=False, name=None):
        """An op that closes the queue (with ``cancel_pending_enqueues``, waiting enqueues fail)."""
        if name is None:
            name = f"{self._name}_Close"
        return make_op("QueueCloseV2", [self._queue_ref],
                       {"cancel_pending_enqueues": bool(cancel_pending_enqueues)}, name=name)

    def is_closed(self, name=None):
        """A bool tensor: whether the queue is closed."""
        if name is None:
            name = f"{self._name}_IsClosed"
        return make("QueueIsClosedV2", [self._queue_ref], {}, name=name)

    def size(self, name=None):
        """An int32 tensor: the number of elements in the queue."""
        if name is None:
            name = f"{self._name}_Size"
        return make("QueueSizeV2", [self._queue_ref], {}, name=name)


def _queue_op(op_type, dtypes, shapes, capacity, shared_name, name, **extra):
    attrs = {
        "component_types": _type_list_attr(dtypes),
        "shapes": _shape_list_attr(shapes),
        "capacity": int(capacity),
        "container": "",
        "shared_name": shared_name or "",
    }
    attrs.update(extra)
    return make(op_type, [], attrs, name=name)


class FIFOQueue(QueueBase):
    """A queue that dequeues elements in the order they were enqueued."""

    def __init__(self, capacity, dtypes, shapes=None, names=None, shared_name=None, name="fifo_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes)
        names = _as_name_list(names, dtypes)
        ref = _queue_op("FIFOQueueV2", dtypes, shapes, capacity, shared_name, name)
        super().__init__(dtypes, shapes or None, names, ref)


class PaddingFIFOQueue(QueueBase):
    """A FIFOQueue whose ``dequeue_many`` pads each batch with zeros to its largest element; ``shapes`` is
    required and may have unknown (``None``) dimensions."""

    def __init__(self, capacity, dtypes, shapes, names=None, shared_name=None, name="padding_fifo_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes, unknown_dim_allowed=True)
        names = _as_name_list(names, dtypes)
        if len(dtypes) != len(shapes):
            raise ValueError(f"Shapes must be provided for all components, but received {len(dtypes)} dtypes "
                             f"and {len(shapes)} shapes.")
        ref = _queue_op("PaddingFIFOQueueV2", dtypes, shapes, capacity, shared_name, name)
        super().__init__(dtypes, shapes, names, ref)


class RandomShuffleQueue(QueueBase):
    """A queue that dequeues elements in a random order, keeping at least ``min_after_dequeue`` elements
    until it is closed. A seeded queue fed and drained by one thread gives TensorFlow's order."""

    def __init__(self, capacity, min_after_dequeue, dtypes, shapes=None, names=None, seed=None,
                 shared_name=None, name="random_shuffle_queue"):
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, dtypes)
        names = _as_name_list(names, dtypes)
        seed1, seed2 = random_seed.get_seed(seed)
        if seed1 is None and seed2 is None:
            seed1, seed2 = 0, 0
        elif seed is None and shared_name is not None:
            # As TensorFlow: queues shared by name get distinct op seeds from their names.
            digest = hashlib.md5((str(seed1) + shared_name).encode("utf-8")).hexdigest()
            seed2 = int(digest[:8], 16) & 0x7FFFFFFF
        ref = _queue_op("RandomShuffleQueueV2", dtypes, shapes, capacity, shared_name, name,
                        min_after_dequeue=int(min_after_dequeue), seed=int(seed1), seed2=int(seed2))
        super().__init__(dtypes, shapes or None, names, ref)


class PriorityQueue(QueueBase):
    """A queue that dequeues the element of lowest priority first. Each element's first component is its
    int64 scalar priority, followed by components of ``types``."""

    def __init__(self, capacity, types, shapes=None, names=None, shared_name=None, name="priority_queue"):
        types = _as_type_list(types)
        shapes = _as_shape_list(shapes, types)
        ref = _queue_op("PriorityQueueV2", types, shapes, capacity, shared_name, name)
        priority_dtypes = [_dtypes.int64] + types
        priority_shapes = [TensorShape([])] + shapes if shapes else shapes
        super().__init__(priority_dtypes, priority_shapes or None, names, ref)


class ConditionalAccumulatorBase:
    """Base class of the gradient accumulators: ``num_accumulated`` and ``set_global_step`` over an
    accumulator handle."""

    def __init__(self, dtype, shape, accumulator_ref):
        self._dtype = _dtypes.as_dtype(dtype)
        self._shape = as_shape(shape) if shape is not None else unknown_shape()
        self._accumulator_ref = accumulator_ref
        self._name = accumulator_ref.op.name.split("/")[-1]

    @property
    def accumulator_ref(self):
        """The accumulator's resource handle."""
        return self._accumulator_ref

    @property
    def name(self):
        """The name of the accumulator op."""
        return self._accumulator_ref.op.name

    @property
    def dtype(self):
        """The gradients' dtype."""
        return self._dtype

    def num_accumulated(self, name=None):
        """An int32 tensor: the gradients accumulated since the last take."""
        if name is None:
            name = f"{self._name}_NumAccumulated"
        return make(self._op_names["count"], [self._accumulator_ref], {}, name=name)

    def set_global_step(self, new_global_step, name=None):
        """An op setting the accumulator's global step (gradients older than it are dropped)."""
        step = _cast(new_global_step, _dtypes.int64)
        return make_op(self._op_names["step"], [self._accumulator_ref, step], {}, name=name)


def _cast(value, dtype):
    from ferroflow.ops import array_ops

    t = ops.convert_to_tensor(value)
    return t if t.dtype == dtype else array_ops.cast(t, dtype)


class ConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates dense gradients; ``take_grad(n)`` returns the mean (``reduction_type="MEAN"``) or sum
    (``"SUM"``) of the ``n`` or more gradients applied since the last take."""

    _op_names = {"count": "ResourceAccumulatorNumAccumulated", "step": "ResourceAccumulatorSetGlobalStep"}

    def __init__(self, dtype, shape=None, shared_name=None, name="conditional_accumulator", reduction_type="MEAN"):
        dtype = _dtypes.as_dtype(dtype)
        ref = make("ResourceConditionalAccumulator", [], {
            "dtype": ("type", dtype.as_datatype_enum),
            "shape": shape_attr(shape),
            "container": "",
            "shared_name": shared_name or "",
            "reduction_type": reduction_type,
        }, name=name)
        super().__init__(dtype, shape, ref)

    def apply_grad(self, grad, local_step=0, name=None):
        """An op adding ``grad`` if ``local_step`` is not older than the accumulator's global step."""
        grad = ops.convert_to_tensor(grad, self._dtype)
        if not self._shape.is_compatible_with(grad.get_shape()):
            raise ValueError(f"Shapes {grad.get_shape()} and {self._shape} are incompatible")
        step = _cast(local_step, _dtypes.int64)
        return make_op("ResourceAccumulatorApplyGradient", [self._accumulator_ref, step, grad],
                       {"dtype": ("type", self._dtype.as_datatype_enum)}, name=name)

    def take_grad(self, num_required, name=None):
        """The mean (or sum) of the accumulated gradients, once at least ``num_required`` were applied; then
        resets the sum and increments the global step."""
        n = ops.convert_to_tensor(num_required, dtype=_dtypes.int32, name="num_required")
        out = make("ResourceAccumulatorTakeGradient", [self._accumulator_ref, n],
                   {"dtype": ("type", self._dtype.as_datatype_enum)}, name=name)
        out.set_shape(self._shape)
        return out


class SparseConditionalAccumulator(ConditionalAccumulatorBase):
    """Accumulates sparse gradients (``IndexedSlices``): rows are summed by index and each row is averaged
    over the gradients that had it."""

    _op_names = {"count": "AccumulatorNumAccumulated", "step": "AccumulatorSetGlobalStep"}

    def __init__(self, dtype, shape=None, shared_name=None, name="sparse_conditional_accumulator",
                 reduction_type="MEAN"):
        dtype = _dtypes.as_dtype(dtype)
        ref = make("SparseConditionalAccumulator", [], {
            "dtype": ("type", dtype.as_datatype_enum),
            "shape": shape_attr(shape),
            "container": "",
            "shared_name": shared_name or "",
            "reduction_type": reduction_type,
        }, name=name)
        super().__init__(dtype, shape, ref)

    def apply_indexed_slices_grad(self, grad, local_step=0, name=None):
        """``apply_grad`` of an ``IndexedSlices``."""
        return self.apply_grad(grad.indices, grad.values, grad.dense_shape, local_step, name=name)

    def apply_grad(self, grad_indices, grad_values, grad_shape=None, local_step=0, name=None):
        """An op adding the rows ``grad_values`` at ``grad_indices`` if ``local_step`` is not stale."""
        indices = _cast(grad_indices, _dtypes.int64)
        values = ops.convert_to_tensor(grad_values, self._dtype)
        known = grad_shape is not None
        shape = _cast(grad_shape if known else [], _dtypes.int64)
        step = _cast(local_step, _dtypes.int64)
        return make_op("SparseAccumulatorApplyGradient", [self._accumulator_ref, step, indices, values, shape],
                       {"dtype": ("type", self._dtype.as_datatype_enum), "has_known_shape": known}, name=name)

    def take_grad(self, num_required, name=None):
        """``(indices, values, shape)`` of the mean (or summed) gradient, once ``num_required`` were
        applied."""
        n = ops.convert_to_tensor(num_required, dtype=_dtypes.int32, name="num_required")
        op = make_op("SparseAccumulatorTakeGradient", [self._accumulator_ref, n],
                     {"dtype": ("type", self._dtype.as_datatype_enum)}, name=name)
        return op.outputs[0], op.outputs[1], op.outputs[2]

    def take_indexed_slices_grad(self, num_required, name=None):
        """``take_grad`` as an ``IndexedSlices``."""
        from ferroflow.framework.indexed_slices import IndexedSlices

        indices, values, shape = self.take_grad(num_required, name=name)
        return IndexedSlices(values=values, indices=indices, dense_shape=shape)


def count_up_to(ref, limit, name=None):
    """Increments the integer variable ``ref`` and returns its value before the increment; once it has
    reached ``limit``, ``OutOfRangeError`` instead."""
    from ferroflow.ops import state_ops

    r = state_ops._ref(ref)
    return make("CountUpTo", [r], {"limit": int(limit), "T": ("type", r.dtype.base_dtype.as_datatype_enum)},
                name=name)
