"""``tf.train``'s queue-based input functions: the input producers (``input_producer``,
``string_input_producer``, ``range_input_producer``, ``slice_input_producer``), ``limit_epochs``,
``match_filenames_once`` and the batching functions (``batch``, ``batch_join``, ``shuffle_batch``,
``shuffle_batch_join`` and their ``maybe_`` variants).

Each function builds a queue, adds a ``QueueRunner`` that fills it (to the ``QUEUE_RUNNERS`` collection) and a
scalar summary of how full the queue is, with TensorFlow's names (``fraction_of_32_full``,
``fraction_over_10_of_90_full``). Run the runners with ``tf.train.start_queue_runners`` (a
``MonitoredTrainingSession`` or ``Supervisor`` starts them itself). ``num_epochs`` counts epochs in a local
variable: initialize it with ``tf.local_variables_initializer()``.

SparseTensor components travel through the queues serialized (``serialize_sparse``, or
``serialize_many_sparse`` with ``enqueue_many``) and come back as one batched SparseTensor (rank one higher),
the result TensorFlow's batching gives.
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops, tensor_util
from ferroflow.framework.tensor_shape import TensorShape, as_shape
from ferroflow.ops import array_ops, control_flow_ops, data_flow_ops, io_ops, math_ops, random_ops
from ferroflow.ops import variables as variables_lib
from ferroflow.summary import summary_ops
from ferroflow.training import queue_runner_impl

__all__ = [
    "match_filenames_once",
    "limit_epochs",
    "input_producer",
    "string_input_producer",
    "range_input_producer",
    "slice_input_producer",
    "batch",
    "maybe_batch",
    "batch_join",
    "maybe_batch_join",
    "shuffle_batch",
    "maybe_shuffle_batch",
    "shuffle_batch_join",
    "maybe_shuffle_batch_join",
]


def match_filenames_once(pattern, name=None):
    """A local variable initialized once to the files matching ``pattern`` (initialize with
    ``tf.local_variables_initializer()``)."""
    with ops.name_scope(name, "matching_filenames", [pattern]) as name:
        return variables_lib.Variable(
            io_ops.matching_files(pattern), trainable=False, validate_shape=False,
            collections=[ops.GraphKeys.LOCAL_VARIABLES], name=name.rstrip("/"),
        )


def limit_epochs(tensor, num_epochs=None, name=None):
    """``tensor``, which raises ``OutOfRangeError`` after it has been evaluated ``num_epochs`` times
    (``None``: no limit). Counts in a local variable ``epochs``."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    with ops.name_scope(name, "limit_epochs", [tensor]) as name:
        zero64 = ops.convert_to_tensor(0, dtype=dtypes.int64)
        epochs = variables_lib.Variable(zero64, name="epochs", trainable=False,
                                        collections=[ops.GraphKeys.LOCAL_VARIABLES])
        counter = data_flow_ops.count_up_to(epochs, num_epochs)
        with ops.control_dependencies([counter]):
            return array_ops.identity(tensor, name=name.rstrip("/"))


def _fraction_summary(name, value):
    summary_ops.scalar(name, value)


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None, capacity=32,
                   shared_name=None, summary_name=None, name=None, cancel_op=None):
    """A FIFOQueue filled, by a queue runner, with the rows of ``input_tensor``: once per epoch (shuffled
    each epoch with ``shuffle``), ``num_epochs`` times or forever."""
    with ops.name_scope(name, "input_producer", [input_tensor]) as name:
        input_tensor = ops.convert_to_tensor(input_tensor, name="input_tensor")
        shape = input_tensor.get_shape()
        row = TensorShape(shape.dims[1:]) if shape.dims is not None else TensorShape(None)
        element_shape = row.merge_with(as_shape(element_shape)) if element_shape is not None else row
        if not element_shape.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or `element_shape` must be "
                             "specified")
        if shuffle:
            input_tensor = random_ops.random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        q = data_flow_ops.FIFOQueue(capacity=capacity, dtypes=[input_tensor.dtype.base_dtype],
                                    shapes=[element_shape], shared_name=shared_name, name=name)
        enq = q.enqueue_many([input_tensor])
        queue_runner_impl.add_queue_runner(queue_runner_impl.QueueRunner(q, [enq], cancel_op=cancel_op))
        if summary_name is not None:
            _fraction_summary(summary_name,
                              array_ops.cast(q.size(), dtypes.float32) * (1.0 / capacity))
        return q


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None, capacity=32,
                          shared_name=None, name=None, cancel_op=None):
    """A queue of the strings (file names) of ``string_tensor``, for a reader."""
    not_null_err = "string_input_producer requires a non-null input tensor"
    if not isinstance(string_tensor, ops.Tensor) and not string_tensor:
        raise ValueError(not_null_err)
    with ops.name_scope(name, "input_producer", [string_tensor]) as name:
        string_tensor = ops.convert_to_tensor(string_tensor, dtype=dtypes.string)
        with ops.control_dependencies([control_flow_ops.Assert(
                math_ops.greater(array_ops.size(string_tensor), 0), [not_null_err])]):
            string_tensor = array_ops.identity(string_tensor)
        return input_producer(
            input_tensor=string_tensor, element_shape=[], num_epochs=num_epochs, shuffle=shuffle, seed=seed,
            capacity=capacity, shared_name=shared_name, name=name, summary_name=f"fraction_of_{capacity}_full",
            cancel_op=cancel_op)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None,
                         name=None):
    """A queue of the integers ``0 .. limit-1``."""
    with ops.name_scope(name, "input_producer", [limit]) as name:
        range_tensor = array_ops.range(limit)
        return input_producer(range_tensor, [], num_epochs, shuffle, seed, capacity, shared_name,
                              f"fraction_of_{capacity}_full", name)


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None,
                         name=None):
    """One row of each tensor of ``tensor_list`` at a time (the same row of each), from a
    ``range_input_producer`` over the rows."""
    with ops.name_scope(name, "input_producer", list(tensor_list)):
        tensor_list = [ops.convert_to_tensor(t) for t in tensor_list]
        if not tensor_list:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        range_size = array_ops.shape(tensor_list[0])[0]
        queue = range_input_producer(range_size, num_epochs=num_epochs, shuffle=shuffle, seed=seed,
                                     capacity=capacity, shared_name=shared_name)
        index = queue.dequeue()
        return [array_ops.gather(t, index) for t in tensor_list]


# -- batching ---------------------------------------------------------------------------------------------


def _as_tensor_list(tensors):
    if isinstance(tensors, ops.Tensor):
        return [tensors]
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors, key=str)]
    return tensors


def _as_tensor_list_list(tensors_list):
    if not tensors_list:
        raise ValueError("Expected at least one set of tensors")
    if isinstance(tensors_list[0], dict):
        keys = set(tensors_list[0].keys())
        for d in tensors_list[1:]:
            if set(d.keys()) != keys:
                raise ValueError("All dictionaries in tensors_list must have the same keys")
        return [_as_tensor_list(d) for d in tensors_list]
    return tensors_list


def _as_original_type(original_tensors, tensor_list):
    if isinstance(original_tensors, dict):
        if len(original_tensors) == 1:
            return {next(iter(original_tensors)): tensor_list}
        return {k: tensor_list[i] for i, k in enumerate(sorted(original_tensors, key=str))}
    return tensor_list


def _validate(tensor_list):
    from ferroflow.framework import sparse_tensor

    if not tensor_list:
        raise ValueError("Expected at least one tensor in batch().")
    return [t if sparse_tensor.is_sparse(t) else ops.convert_to_tensor(t) for t in tensor_list]


class _SparseInfo:
    """How a SparseTensor component was stored in the queue: its dtype and rank (of one element)."""

    def __init__(self, dtype, rank):
        self.dtype = dtype
        self.rank = rank


def _store_sparse(tensor_list, enqueue_many):
    """``tensor_list`` with each SparseTensor replaced by its serialized form, and per component the
    ``_SparseInfo`` needed to restore it (``None`` for dense components)."""
    from ferroflow.framework import sparse_tensor
    from ferroflow.ops import parsing_ops

    stored, info = [], []
    for t in tensor_list:
        if not sparse_tensor.is_sparse(t):
            stored.append(t)
            info.append(None)
            continue
        rank = t.dense_shape.get_shape().dims[0] if t.dense_shape.get_shape().dims else None
        rank = None if rank is None else int(rank)
        if enqueue_many:
            stored.append(parsing_ops.serialize_many_sparse(t))
            info.append(_SparseInfo(t.dtype, None if rank is None else rank - 1))
        else:
            stored.append(parsing_ops.serialize_sparse(t))
            info.append(_SparseInfo(t.dtype, rank))
    return stored, info


def _restore_sparse(dequeued, info):
    """The dequeued batch with serialized sparse components deserialized into batched SparseTensors."""
    if not any(info):
        return dequeued
    from ferroflow.ops import parsing_ops

    single = not isinstance(dequeued, (list, tuple))
    items = [dequeued] if single else list(dequeued)
    out = [parsing_ops.deserialize_many_sparse(t, i.dtype, rank=None if i.rank is None else i.rank + 1)
           if i is not None else t for t, i in zip(items, info)]
    return out[0] if single else out


def _validate_join(tensor_list_list):
    tensor_list_list = [_validate(tl) for tl in tensor_list_list]
    if not tensor_list_list:
        raise ValueError("Expected at least one input in batch_join().")
    return tensor_list_list


def _validate_keep_input(keep_input, enqueue_many):
    keep_input = ops.convert_to_tensor(keep_input, dtype=dtypes.bool)
    ndims = keep_input.get_shape().ndims
    if ndims is None:
        raise ValueError("`keep_input` dimensions must be known at graph construction.")
    if not enqueue_many and ndims == 1:
        raise ValueError("`keep_input` cannot be a vector when `enqueue_many=False`.")
    if ndims > 1:
        raise ValueError("`keep_input` must be 0 or 1 dimensions.")
    return keep_input


def _dtypes(tensor_list_list):
    types = [t.dtype.base_dtype for t in tensor_list_list[0]]
    for other in tensor_list_list[1:]:
        if len(other) != len(types):
            raise ValueError("Expected all tensor lists to have the same number of tensors")
        if [t.dtype.base_dtype for t in other] != types:
            raise TypeError("Expected types to be consistent: "
                            f"{', '.join(t.name for t in types)} vs. "
                            f"{', '.join(t.dtype.base_dtype.name for t in other)}.")
    return types


def _shapes(tensor_list_list, shapes, enqueue_many, sparse_info=None):
    if shapes is not None:
        shapes = [as_shape(s) for s in shapes]
        # A serialized SparseTensor element is a string vector of 3.
        return [TensorShape([3]) if i is not None else s for s, i in zip(shapes, sparse_info or [None] * len(shapes))]
    n = len(tensor_list_list[0])
    out = []
    for i in range(n):
        merged = None
        for tl in tensor_list_list:
            shape = tl[i].get_shape()
            if shape.ndims is None:
                raise ValueError(f"Cannot infer Tensor's rank: {tl[i]}")
            if enqueue_many:
                shape = TensorShape(shape.dims[1:])
            merged = shape if merged is None else merged.merge_with(shape)
        out.append(merged)
    return out


def _which_queue(dynamic_pad):
    return data_flow_ops.PaddingFIFOQueue if dynamic_pad else data_flow_ops.FIFOQueue


def _select_kept(tensor_list, keep_input, enqueue_many):
    """The rows of ``tensor_list`` that ``keep_input`` keeps, as a batch for ``enqueue_many`` (a scalar
    ``keep_input`` keeps the whole element or nothing)."""
    if not enqueue_many:
        tensor_list = [array_ops.expand_dims(t, 0) for t in tensor_list]
    mask = keep_input
    if keep_input.get_shape().ndims == 0:
        rows = array_ops.shape(tensor_list[0])[:1]
        mask = array_ops.fill(rows, keep_input)
    return [array_ops.boolean_mask(t, mask) for t in tensor_list]


def _enqueue_ops(queue, tensor_list_list, threads_per_list, enqueue_many, keep_input):
    kept = tensor_util.constant_value(keep_input)
    ops_ = []
    for tl in tensor_list_list:
        if kept is not None and kept.ndim == 0 and bool(kept):
            op = queue.enqueue_many(tl) if enqueue_many else queue.enqueue(tl)
        else:
            op = queue.enqueue_many(_select_kept(tl, keep_input, enqueue_many))
        ops_.extend([op] * threads_per_list)
    queue_runner_impl.add_queue_runner(queue_runner_impl.QueueRunner(queue, ops_))


def _batch(tensors, batch_size, keep_input, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
           dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None, join=False):
    lists = _as_tensor_list_list(tensors) if join else [_as_tensor_list(tensors)]
    flat = [t for tl in lists for t in tl]
    with ops.name_scope(name, "batch_join" if join else "batch", flat + [keep_input]) as name:
        lists = _validate_join(lists)
        keep_input = _validate_keep_input(keep_input, enqueue_many)
        stored = [_store_sparse(tl, enqueue_many) for tl in lists]
        lists, info = [tl for tl, _ in stored], stored[0][1]
        types = _dtypes(lists)
        shapes = _shapes(lists, shapes, enqueue_many, info)
        queue = _which_queue(dynamic_pad)(capacity=capacity, dtypes=types, shapes=shapes,
                                          shared_name=shared_name)
        _enqueue_ops(queue, lists, 1 if join else num_threads, enqueue_many, keep_input)
        _fraction_summary(f"fraction_of_{capacity}_full",
                          array_ops.cast(queue.size(), dtypes.float32) * (1.0 / capacity))
        dequeue = queue.dequeue_up_to if allow_smaller_final_batch else queue.dequeue_many
        dequeued = _restore_sparse(dequeue(batch_size, name=name), info)
        return _as_original_type(tensors[0] if join else tensors, dequeued)


def _shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input, num_threads=1, seed=None,
                   enqueue_many=False, shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None,
                   join=False):
    lists = _as_tensor_list_list(tensors) if join else [_as_tensor_list(tensors)]
    flat = [t for tl in lists for t in tl]
    with ops.name_scope(name, "shuffle_batch_join" if join else "shuffle_batch", flat + [keep_input]) as name:
        if capacity <= min_after_dequeue:
            raise ValueError(f"capacity {capacity} must be bigger than min_after_dequeue {min_after_dequeue}.")
        lists = _validate_join(lists)
        keep_input = _validate_keep_input(keep_input, enqueue_many)
        stored = [_store_sparse(tl, enqueue_many) for tl in lists]
        lists, info = [tl for tl, _ in stored], stored[0][1]
        types = _dtypes(lists)
        shapes = _shapes(lists, shapes, enqueue_many, info)
        queue = data_flow_ops.RandomShuffleQueue(capacity=capacity, min_after_dequeue=min_after_dequeue, seed=seed,
                                                 dtypes=types, shapes=shapes, shared_name=shared_name)
        _enqueue_ops(queue, lists, 1 if join else num_threads, enqueue_many, keep_input)
        over = math_ops.maximum(0, queue.size() - min_after_dequeue)
        full = array_ops.cast(over, dtypes.float32) * (1.0 / (capacity - min_after_dequeue))
        _fraction_summary(f"fraction_over_{min_after_dequeue}_of_{capacity - min_after_dequeue}_full", full)
        dequeue = queue.dequeue_up_to if allow_smaller_final_batch else queue.dequeue_many
        dequeued = _restore_sparse(dequeue(batch_size, name=name), info)
        return _as_original_type(tensors[0] if join else tensors, dequeued)


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
          allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches of ``batch_size`` elements of ``tensors`` (a list or dict), filled by ``num_threads``
    threads through a FIFOQueue of ``capacity`` (a PaddingFIFOQueue with ``dynamic_pad``)."""
    return _batch(tensors, batch_size, True, num_threads, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, shared_name, name)


def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
                dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """``batch`` of the elements for which ``keep_input`` is true."""
    return _batch(tensors, batch_size, keep_input, num_threads, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, shared_name, name)


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None, dynamic_pad=False,
               allow_smaller_final_batch=False, shared_name=None, name=None):
    """``batch`` of several lists of tensors, one thread per list."""
    return _batch(tensors_list, batch_size, True, 1, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, shared_name, name, join=True)


def maybe_batch_join(tensors_list, keep_input, batch_size, capacity=32, enqueue_many=False, shapes=None,
                     dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """``batch_join`` of the elements for which ``keep_input`` is true."""
    return _batch(tensors_list, batch_size, keep_input, 1, capacity, enqueue_many, shapes, dynamic_pad,
                  allow_smaller_final_batch, shared_name, name, join=True)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None, enqueue_many=False,
                  shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Shuffled batches through a RandomShuffleQueue that keeps ``min_after_dequeue`` elements."""
    return _shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, True, num_threads, seed, enqueue_many,
                          shapes, allow_smaller_final_batch, shared_name, name)


def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input, num_threads=1, seed=None,
                        enqueue_many=False, shapes=None, allow_smaller_final_batch=False, shared_name=None,
                        name=None):
    """``shuffle_batch`` of the elements for which ``keep_input`` is true."""
    return _shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input, num_threads, seed,
                          enqueue_many, shapes, allow_smaller_final_batch, shared_name, name)


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None, enqueue_many=False,
                       shapes=None, allow_smaller_final_batch=False, shared_name=None, name=None):
    """``shuffle_batch`` of several lists of tensors, one thread per list."""
    return _shuffle_batch(tensors_list, batch_size, capacity, min_after_dequeue, True, 1, seed, enqueue_many,
                          shapes, allow_smaller_final_batch, shared_name, name, join=True)


def maybe_shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, keep_input, seed=None,
                             enqueue_many=False, shapes=None, allow_smaller_final_batch=False, shared_name=None,
                             name=None):
    """``shuffle_batch_join`` of the elements for which ``keep_input`` is true."""
    return _shuffle_batch(tensors_list, batch_size, capacity, min_after_dequeue, keep_input, 1, seed,
                          enqueue_many, shapes, allow_smaller_final_batch, shared_name, name, join=True)
