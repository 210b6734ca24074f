"""Higher-order functions over the first axis: ``tf.map_fn``, ``tf.scan``, ``tf.foldl``, ``tf.foldr``.

Each is one ``tf.while_loop`` reading its elements from TensorArrays and,
for ``map_fn`` and ``scan``, writing its results into TensorArrays that are
stacked at the end, as in TF1.
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops
from ferroflow.framework.tensor_shape import TensorShape, dimension_value
from ferroflow.ops import _nest as nest
from ferroflow.ops import array_ops
from ferroflow.ops.tensor_array_ops import TensorArray
from ferroflow.ops.while_loop import while_loop


def _elements(elems, name):
    """``(flat element tensors, their count n as a tensor, static n or None)``."""
    flat = [ops.convert_to_tensor(e, name="elem") for e in nest.flatten(elems)]
    if not flat:
        raise ValueError(f"{name}: elems must contain at least one tensor")
    for e in flat:
        if e.shape.rank == 0:
            raise ValueError(f"Elements in elems must be 1+ dimensional Tensors, not scalars ({e.name})")
    static_n = None
    for e in flat:
        if e.shape.rank is not None:
            static_n = dimension_value(e.shape[0]) if static_n is None else static_n
    n = static_n if static_n is not None else array_ops.shape(flat[0])[0]
    return flat, ops.convert_to_tensor(n, dtype=dtypes.int32, name="n"), static_n


def _unstacked(flat):
    return [TensorArray(e.dtype, size=0, dynamic_size=True, infer_shape=True).unstack(e) for e in flat]


def _ragged_row(values, splits, i):
    """Row ``i`` of the RaggedTensor of ``values`` and nested row ``splits``: a RaggedTensor of one ragged
    dimension less, or a Tensor for a ragged rank of 1."""
    from ferroflow.ops.ragged import RaggedTensor

    start, end = splits[0][i], splits[0][i + 1]
    inner = []
    for s in splits[1:]:
        inner.append(s[start:end + 1] - s[start])
        start, end = s[start], s[end]
    row = values[start:end]
    return RaggedTensor.from_nested_row_splits(row, inner, validate=False) if inner else row


def _ragged_map_fn(fn, elems, dtype, parallel_iterations, back_prop, swap_memory, infer_shape, name):
    """``map_fn`` over ``elems`` holding RaggedTensors (read row by row) or with RaggedTensorSpec results
    (TensorFlow's ``fn_output_signature``): a result of ragged rank 0 (a Tensor whose first dimension varies)
    is stacked into a RaggedTensor of ragged rank 1; dense results stack as usual."""
    from ferroflow.ops import math_ops
    from ferroflow.ops.ragged import RaggedTensor, RaggedTensorSpec

    leaves = nest.flatten(elems)
    with ops.name_scope(name, "map", [getattr(x, "flat_values", x) for x in leaves]):
        parts = []
        for x in leaves:
            if isinstance(x, RaggedTensor):
                parts.append(("ragged", x.flat_values, list(x.nested_row_splits)))
            else:
                t = ops.convert_to_tensor(x, name="elem")
                if t.shape.rank == 0:
                    raise ValueError(f"Elements in elems must be 1+ dimensional Tensors, not scalars ({t.name})")
                parts.append(("dense", t, None))
        kind, first, splits = parts[0]
        first_shape = leaves[0].shape if kind == "ragged" else first.shape
        static_n = dimension_value(first_shape[0]) if first_shape.rank else None
        n = array_ops.shape(splits[0], out_type=dtypes.int32)[0] - 1 if kind == "ragged" else (
            array_ops.shape(first, out_type=dtypes.int32)[0])
        if dtype is None:
            dtype = nest.pack_sequence_as(elems, [
                RaggedTensorSpec(x.shape[1:], x.dtype, x.ragged_rank - 1, x.row_splits_dtype)
                if isinstance(x, RaggedTensor) else x.dtype for x in leaves])
        out_specs = nest.flatten(dtype)
        for sp in out_specs:
            if isinstance(sp, RaggedTensorSpec) and sp.ragged_rank > 0:
                raise TypeError("ferroflow's map_fn stacks RaggedTensor results of ragged_rank 0 (a Tensor per "
                                f"element) only, got fn_output_signature {sp}.")
        ragged_out = [isinstance(sp, RaggedTensorSpec) for sp in out_specs]
        out_dtypes = [sp.dtype if hasattr(sp, "dtype") and not isinstance(sp, dtypes.DType)
                      else dtypes.as_dtype(sp) for sp in out_specs]
        dense_tas = [TensorArray(p[1].dtype, size=0, dynamic_size=True, infer_shape=True).unstack(p[1])
                     if p[0] == "dense" else None for p in parts]
        accs = [TensorArray(d, size=n, dynamic_size=False, infer_shape=infer_shape and not r)
                for d, r in zip(out_dtypes, ragged_out)]
        lengths = [TensorArray(dtypes.int64, size=n) for r in ragged_out if r]

        def element(i):
            return nest.pack_sequence_as(elems, [
                _ragged_row(p[1], p[2], i) if p[0] == "ragged" else ta.read(i) for p, ta in zip(parts, dense_tas)])

        def body(i, tas, lens):
            y = fn(element(i))
            try:
                nest.assert_same_structure(dtype, y, check_types=False)
            except (TypeError, ValueError) as e:
                raise ValueError(
                    f"The structure of fn's result does not match the expected output (dtype): {e}") from None
            flat_y = [ops.convert_to_tensor(v) for v in nest.flatten(y)]
            k, new_lens = 0, []
            for v, r in zip(flat_y, ragged_out):
                if r:
                    new_lens.append(lens[k].write(i, array_ops.shape(v, out_type=dtypes.int64)[0]))
                    k += 1
            return i + 1, [ta.write(i, v) for ta, v in zip(tas, flat_y)], new_lens

        _, accs, lengths = while_loop(lambda i, *_: i < n, body, [0, accs, lengths],
                                      parallel_iterations=parallel_iterations, back_prop=back_prop,
                                      swap_memory=swap_memory, return_same_structure=True)
        results, k = [], 0
        for ta, r, sp in zip(accs, ragged_out, out_specs):
            if not r:
                out = ta.stack()
                out.set_shape(TensorShape([static_n]).concatenate(ta.element_shape))
                results.append(out)
                continue
            row_lengths = math_ops.cast(lengths[k].stack(), sp.row_splits_dtype)
            k += 1
            row_splits = array_ops.concat([array_ops.zeros([1], sp.row_splits_dtype),
                                           math_ops.cumsum(row_lengths)], 0)
            results.append(RaggedTensor.from_row_splits(ta.concat(), row_splits, validate=False))
        return nest.pack_sequence_as(dtype, results)


def _has_ragged(*structures):
    from ferroflow.ops.ragged import RaggedTensor, RaggedTensorSpec

    return any(isinstance(x, (RaggedTensor, RaggedTensorSpec)) for s in structures for x in nest.flatten(s))


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None, fn_output_signature=None):
    """``fn`` applied to each element of ``elems`` (unpacked along axis 0), the results stacked.

    ``dtype`` (or its newer name ``fn_output_signature``) gives the structure and dtypes of
    ``fn``'s result when they differ from ``elems``'. RaggedTensors in ``elems`` are read row by row, and a
    ``RaggedTensorSpec`` of ragged rank 0 in the signature stacks results of varying length into a
    RaggedTensor.
    """
    if not callable(fn):
        raise TypeError("fn must be callable.")
    if fn_output_signature is not None:
        if dtype is not None:
            raise ValueError("Only one of dtype and fn_output_signature may be given.")
        dtype = fn_output_signature
    parallel_iterations = parallel_iterations or 10
    if _has_ragged(elems, dtype):
        return _ragged_map_fn(fn, elems, dtype, parallel_iterations, back_prop, swap_memory, infer_shape, name)
    with ops.name_scope(name, "map", nest.flatten(elems)):
        flat, n, static_n = _elements(elems, "map_fn")
        out_structure = elems if dtype is None else dtype
        out_dtypes = [e.dtype for e in flat] if dtype is None else [dtypes.as_dtype(d) for d in nest.flatten(dtype)]
        elems_ta = _unstacked(flat)
        accs = [TensorArray(d, size=n, dynamic_size=False, infer_shape=infer_shape) for d in out_dtypes]

        def body(i, tas):
            x = nest.pack_sequence_as(elems, [ta.read(i) for ta in elems_ta])
            y = fn(x)
            try:
                nest.assert_same_structure(out_structure, y, check_types=False)
            except (TypeError, ValueError) as e:
                raise ValueError(
                    f"The structure of fn's result does not match the expected output (dtype): {e}"
                ) from None
            flat_y = [ops.convert_to_tensor(v) for v in nest.flatten(y)]
            return i + 1, [ta.write(i, v) for ta, v in zip(tas, flat_y)]

        _, accs = while_loop(lambda i, _: i < n, body, [0, accs], parallel_iterations=parallel_iterations,
                             back_prop=back_prop, swap_memory=swap_memory, return_same_structure=True)
        results = [ta.stack() for ta in accs]
        for r, ta in zip(results, accs):
            r.set_shape(TensorShape([static_n]).concatenate(ta.element_shape))
        return nest.pack_sequence_as(out_structure, results)


def _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, default_name, reverse):
    if not callable(fn):
        raise TypeError("fn must be callable.")
    with ops.name_scope(name, default_name, nest.flatten(elems)):
        flat, n, _ = _elements(elems, default_name)
        elems_ta = _unstacked(flat)

        def element(i):
            return nest.pack_sequence_as(elems, [ta.read(i) for ta in elems_ta])

        if initializer is None:
            acc = element(n - 1 if reverse else 0)
            start = 1
        else:
            acc = nest.map_structure(ops.convert_to_tensor, initializer)
            start = 0

        def body(k, a):
            i = n - 1 - k if reverse else k
            return k + 1, fn(a, element(i))

        _, acc = while_loop(lambda k, _: k < n, body, [start, acc], parallel_iterations=parallel_iterations,
                            back_prop=back_prop, swap_memory=swap_memory, return_same_structure=True)
        return acc


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """``fn(...fn(fn(initializer, elems[0]), elems[1])..., elems[n-1])``."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, "foldl", False)


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False, name=None):
    """Like ``foldl``, from the last element to the first."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name, "foldr", True)


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True, swap_memory=False,
         infer_shape=True, reverse=False, name=None):
    """Every accumulated value of ``a = fn(a, x)`` over the elements of ``elems``, stacked."""
    if not callable(fn):
        raise TypeError("fn must be callable.")
    with ops.name_scope(name, "scan", nest.flatten(elems)):
        flat, n, static_n = _elements(elems, "scan")
        elems_ta = _unstacked(flat)

        def element(i):
            return nest.pack_sequence_as(elems, [ta.read(i) for ta in elems_ta])

        first = n - 1 if reverse else 0
        if initializer is None:
            acc = element(first)
            start = 1
        else:
            acc = nest.map_structure(ops.convert_to_tensor, initializer)
            start = 0
        acc_structure = acc
        flat_acc = nest.flatten(acc)
        outs = [TensorArray(a.dtype, size=n, dynamic_size=False, infer_shape=infer_shape) for a in flat_acc]
        if initializer is None:
            outs = [ta.write(first, a) for ta, a in zip(outs, flat_acc)]

        def body(k, a, tas):
            i = n - 1 - k if reverse else k
            a = fn(a, element(i))
            flat_a = [ops.convert_to_tensor(v) for v in nest.flatten(a)]
            return k + 1, nest.pack_sequence_as(acc_structure, flat_a), [t.write(i, v) for t, v in zip(tas, flat_a)]

        _, _, outs = while_loop(lambda k, a, t: k < n, body, [start, acc, outs],
                                parallel_iterations=parallel_iterations, back_prop=back_prop,
                                swap_memory=swap_memory, return_same_structure=True)
        results = [ta.stack() for ta in outs]
        for r, ta in zip(results, outs):
            r.set_shape(TensorShape([static_n]).concatenate(ta.element_shape))
        return nest.pack_sequence_as(acc_structure, results)


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """``fn`` applied to each element of ``elems`` along axis 0, results stacked.

    TensorFlow first tries to vectorize ``fn`` (pfor) and falls back to a
    while loop; ferroflow always runs the loop (``map_fn``), which gives the
    same values. The result structure is found by applying ``fn`` to the
    first element once.
    """
    first = nest.map_structure(lambda t: ops.convert_to_tensor(t)[0], elems)
    with ops.name_scope("vectorized_map_signature"):
        sample = fn(first)
    signature = nest.map_structure(lambda t: ops.convert_to_tensor(t).dtype, sample)
    return map_fn(fn, elems, dtype=signature, name="vectorized_map")
