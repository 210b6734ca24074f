"""The ``tf.data`` transformations that group, scan or choose among elements, and those that consume a whole
dataset: ``window``, ``group_by_window``, ``group_by_reducer``, ``bucket_by_sequence_length``, ``scan``,
``reduce``, ``take_while``, ``unique``, ``choose_from_datasets``, ``sample_from_datasets``, ``get_single_element`` and ``cardinality``.

Each adds TensorFlow's dataset op (its name, inputs and attrs); the Rust side is
``crates/data/src/dataset/windows.rs``. ``Dataset`` methods and ``tf.data.experimental`` call these.
"""

from __future__ import annotations

import numpy as np

from ferroflow.data import _structure as structure
from ferroflow.data.dataset_ops import Dataset, _bool, _int64, _Traced
from ferroflow.framework import dtypes, ops, random_seed
from ferroflow.framework.func_graph import call_function_op
from ferroflow.framework.tensor_shape import TensorShape
from ferroflow.ops._op_util import make, make_op

#: ``cardinality()`` of a dataset without end.
INFINITE = -1
#: ``cardinality()`` of a dataset whose size is not known without running it.
UNKNOWN = -2

_SCALAR_INT64 = structure.TensorSpec([], dtypes.int64)


def _is_scalar(s, dtype):
    return (type(s) is structure.TensorSpec and s.dtype == dtype
            and s.shape.is_compatible_with(TensorShape([])))


def window(ds, size, shift=None, stride=1, drop_remainder=False, name=None):
    if shift is None:
        shift = size
    for sp in structure.flatten(ds._structure):
        if isinstance(sp, structure.DatasetSpec):
            raise TypeError(f"ferroflow's `window` takes datasets of tensors, SparseTensors and RaggedTensors, "
                            f"got an element {sp!r}.")
    s = structure.map_structure(lambda sp: structure.DatasetSpec(sp, stacked=True), ds._structure)
    attrs = structure.type_attrs(s)
    # A window stacks its SparseTensor and RaggedTensor leaves as batching does.
    attrs.update(structure.layout_attrs(ds._structure, cut=False))
    with ops.name_scope(name, "WindowDataset"):
        v = make("WindowDataset", [
            ds._variant_tensor, _int64(size, "size"), _int64(shift, "shift"), _int64(stride, "stride"),
            _bool(drop_remainder, "drop_remainder"),
        ], attrs)
    return Dataset(v, s)


def group_by_window(ds, key_func, reduce_func, window_size=None, window_size_func=None, name=None):
    if (window_size is not None and window_size_func) or not (window_size is not None or window_size_func):
        raise ValueError("Either the `window_size` argument or the `window_size_func` argument must be "
                         "specified.")
    if window_size is not None:
        fixed = window_size

        def window_size_func(unused_key):
            return ops.convert_to_tensor(fixed, dtype=dtypes.int64)

    def key_wrapper(*args):
        return ops.convert_to_tensor(key_func(*args), dtype=dtypes.int64)

    with ops.name_scope(name, "GroupByWindowDataset"):
        key_f = _Traced(key_wrapper, ds._structure, "key_func")
        if not _is_scalar(key_f.result_structure, dtypes.int64):
            raise ValueError("Invalid `key_func`. `key_func` must return a single `tf.int64` scalar tensor but its "
                             f"return type is {key_f.result_structure}.")
        reduce_in = (_SCALAR_INT64, structure.DatasetSpec(ds._structure))
        reduce_f = _Traced(reduce_func, reduce_in, "reduce_func", dataset_result=True)
        size_f = _Traced(window_size_func, _SCALAR_INT64, "window_size_func")
        if not _is_scalar(size_f.result_structure, dtypes.int64):
            raise ValueError("Invalid `window_size_func`. `window_size_func` must return a single `tf.int64` "
                             f"scalar tensor but its return type is {size_f.result_structure}.")
        s = reduce_f.result_structure
        attrs = structure.type_attrs(s)
        for attr, f in (("key_func", key_f), ("reduce_func", reduce_f), ("window_size_func", size_f)):
            attrs[attr] = f.name
            attrs[f"T{attr}_other_arguments"] = (
                "list_type", [t.dtype.base_dtype.as_datatype_enum for t in f.captures])
        inputs = [ds._variant_tensor] + key_f.captures + reduce_f.captures + size_f.captures
        v = call_function_op(ops.get_default_graph(), "GroupByWindowDataset", inputs, attrs, None,
                             [key_f.graph, reduce_f.graph, size_f.graph])._outputs[0]
    return Dataset(v, s)


def group_by_reducer(ds, key_func, reducer, name=None):
    """``tf.data.experimental.group_by_reducer``: TensorFlow's ``ExperimentalGroupByReducerDataset``."""
    with ops.name_scope(name, "GroupByReducerDataset"):
        key_f = _Traced(key_func, ds._structure, "key_func")
        if not _is_scalar(key_f.result_structure, dtypes.int64):
            raise ValueError("Invalid `key_func`. Expected `key_func` to return a scalar tf.int64 tensor, but "
                             f"instead `key_func` has output {key_f.result_structure}.")
        init_f = _Traced(reducer.init_func, _SCALAR_INT64, "init_func")
        reduce_f, state_s, _ = _trace_state_func(reducer.reduce_func, init_f.result_structure, ds._structure,
                                                 "reduce_func", False)
        finalize_f = _Traced(reducer.finalize_func, state_s, "finalize_func")
        s = finalize_f.result_structure
        attrs = structure.type_attrs(s)
        funcs = (("key_func", key_f), ("init_func", init_f), ("reduce_func", reduce_f),
                 ("finalize_func", finalize_f))
        inputs = [ds._variant_tensor]
        for attr, f in funcs:
            attrs[attr] = f.name
            attrs[f"T{attr}_other_arguments"] = (
                "list_type", [t.dtype.base_dtype.as_datatype_enum for t in f.captures])
            inputs += f.captures
        v = call_function_op(ops.get_default_graph(), "ExperimentalGroupByReducerDataset", inputs, attrs, None,
                             [f.graph for _, f in funcs])._outputs[0]
    return Dataset(v, s)


def bucket_by_sequence_length(ds, element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes=None,
                              padding_values=None, pad_to_bucket_boundary=False, no_padding=False,
                              drop_remainder=False, name=None):
    from ferroflow.ops import array_ops, check_ops, math_ops

    if len(bucket_batch_sizes) != len(bucket_boundaries) + 1:
        raise ValueError("`len(bucket_batch_sizes)` must equal `len(bucket_boundaries) + 1` but "
                         f"`len(bucket_batch_sizes)={len(bucket_batch_sizes)}` and "
                         f"`len(bucket_boundaries)={len(bucket_boundaries)}`.")
    boundaries = [int(b) for b in bucket_boundaries]
    lows = [np.iinfo(np.int32).min] + boundaries
    highs = boundaries + [np.iinfo(np.int32).max]

    def bucket_of(*args):
        # The bounds are int32 tensors, as in TensorFlow: the length must be an int32 too.
        length = element_length_func(*args)
        inside = math_ops.logical_and(math_ops.less_equal(ops.convert_to_tensor(lows), length),
                                      math_ops.less(length, ops.convert_to_tensor(highs)))
        # The first bucket whose range holds the length.
        return math_ops.argmax(math_ops.cast(inside, dtypes.int32), output_type=dtypes.int64)

    def size_of(bucket):
        return array_ops.gather(ops.convert_to_tensor(list(bucket_batch_sizes), dtype=dtypes.int64), bucket)

    def batch_bucket(bucket, window_ds):
        batch_size = size_of(bucket)
        if no_padding:
            return window_ds.batch(batch_size, drop_remainder=drop_remainder)
        filler = None
        if pad_to_bucket_boundary:
            check = check_ops.assert_less(
                bucket, ops.convert_to_tensor(len(bucket_batch_sizes) - 1, dtype=dtypes.int64),
                message="When pad_to_bucket_boundary=True, elements must have length < max(bucket_boundaries).")
            with ops.control_dependencies([check]):
                filler = array_ops.gather(ops.convert_to_tensor(boundaries, dtype=dtypes.int64), bucket) - 1
        shapes = padded_shapes if padded_shapes is not None else window_ds.output_shapes

        def fill(shape):
            dims = [getattr(d, "value", d) for d in TensorShape(shape).as_list()] if not isinstance(
                shape, (list, tuple)) else [getattr(d, "value", d) for d in shape]
            if filler is None or all(d is not None for d in dims):
                return [d for d in dims]
            return array_ops.stack([filler if d is None else ops.convert_to_tensor(d, dtype=dtypes.int64)
                                    for d in dims])

        flat = [fill(sh) for sh in _flat_shapes(window_ds._structure, shapes)]
        return window_ds.padded_batch(batch_size, structure.pack_as(window_ds._structure, flat), padding_values,
                                      drop_remainder=drop_remainder)

    return group_by_window(ds, bucket_of, batch_bucket, window_size_func=size_of, name=name)


def _flat_shapes(s, shapes):
    from ferroflow.data.dataset_ops import _flatten_up_to

    return _flatten_up_to(s, shapes)


def _relaxed(old, new):
    """The state structure ``old`` with each shape relaxed to what ``new`` (the function's new state) allows."""
    def one(a, b):
        a_s, b_s = TensorShape(a.shape), TensorShape(b.shape)
        if a_s.rank is None or b_s.rank is None or a_s.rank != b_s.rank:
            shape = TensorShape(None)
        else:
            shape = TensorShape([x if x == y else None for x, y in zip(a_s.as_list(), b_s.as_list())])
        return structure.with_shape(a, shape)

    return structure.pack_as(old, [one(a, b) for a, b in zip(structure.flatten(old), structure.flatten(new))])


def _dims(shape):
    shape = TensorShape(shape)
    return None if shape.rank is None else shape.as_list()


def _trace_state_func(fn, state_s, element_s, what, with_output):
    """Traces ``fn(state, element)`` until the new state's shapes fit the state's (relaxing them, as TF does);
    returns (traced function, state structure, output structure or None)."""
    for _ in range(8):
        f = _Traced(fn, (state_s, element_s), what)
        result = f.result_structure
        if with_output:
            if not (isinstance(result, tuple) and len(result) == 2):
                raise TypeError(f"Invalid `{what}`. `{what}` should return a pair consisting of new state and the "
                                f"output value but its return type is {result}.")
            new_state, out = result
        else:
            new_state, out = result, None
        if not structure.same_structure(state_s, new_state):
            raise TypeError(f"Invalid `{what}`. The element structure for the new state must match the initial "
                            f"state. Expected {state_s}, got {new_state}.")
        old_flat, new_flat = structure.flatten(state_s), structure.flatten(new_state)
        if any(type(a) is not type(b) for a, b in zip(old_flat, new_flat)):
            raise TypeError(f"Invalid `{what}`. The element classes for the new state must match the initial "
                            f"state. Expected {structure.classes_of(state_s)}, got "
                            f"{structure.classes_of(new_state)}.")
        if any(a.dtype != b.dtype for a, b in zip(old_flat, new_flat)):
            raise TypeError(f"Invalid `{what}`. The element types for the new state must match the initial "
                            f"state. Expected {structure.types_of(state_s)}, got {structure.types_of(new_state)}.")
        relaxed = _relaxed(state_s, new_state)
        if all(_dims(a.shape) == _dims(b.shape) for a, b in zip(structure.flatten(relaxed), old_flat)):
            return f, state_s, out
        state_s = relaxed
    raise ValueError(f"`{what}`: the state's shapes did not settle")


def _state_attrs(state_comps, f):
    return {
        "Tstate": ("list_type", [t.dtype.base_dtype.as_datatype_enum for t in state_comps]),
        "Targuments": ("list_type", [t.dtype.base_dtype.as_datatype_enum for t in f.captures]),
    }


def scan(ds, initial_state, scan_func, name=None):
    state = structure.normalize(initial_state, lists_are_structure=True)
    state_comps, state_s = structure.to_components(state)
    with ops.name_scope(name, "ScanDataset"):
        f, state_s, out_s = _trace_state_func(scan_func, state_s, ds._structure, "scan_func", True)
        attrs = structure.type_attrs(out_s)
        attrs.update(_state_attrs(state_comps, f))
        attrs.update(preserve_cardinality=True, use_default_device=True)
        attrs["f"] = f.name
        v = call_function_op(ops.get_default_graph(), "ScanDataset",
                             [ds._variant_tensor] + state_comps + f.captures, attrs, None, [f.graph])._outputs[0]
    return Dataset(v, out_s)


def reduce(ds, initial_state, reduce_func, name=None):
    state = structure.normalize(initial_state, lists_are_structure=True)
    state_comps, state_s = structure.to_components(state)
    with ops.name_scope(name, "ReduceDataset"):
        f, state_s, _ = _trace_state_func(reduce_func, state_s, ds._structure, "reduce_func", False)
        attrs = structure.type_attrs(state_s)
        attrs.update(_state_attrs(state_comps, f))
        attrs.update(use_inter_op_parallelism=True)
        attrs["f"] = f.name
        op = call_function_op(ops.get_default_graph(), "ReduceDataset",
                              [ds._variant_tensor] + state_comps + f.captures, attrs, None, [f.graph])
    return structure.from_components(state_s, op._outputs)


def take_while(ds, predicate, name=None):
    with ops.name_scope(name, "TakeWhileDataset"):
        f = _Traced(predicate, ds._structure, "take_while")
        if not _is_scalar(f.result_structure, dtypes.bool):
            raise ValueError("Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor but its return "
                             f"type is {f.result_structure}.")
        v = f.op("TakeWhileDataset", [ds._variant_tensor], [], structure.type_attrs(ds._structure), None,
                 func_attr="predicate")
    return Dataset(v, ds._structure)


def unique(ds, name=None):
    for sp in structure.flatten(ds._structure):
        if sp.dtype not in (dtypes.int32, dtypes.int64, dtypes.string):
            raise TypeError(f"`tf.data.Dataset.unique` does not support type {sp.dtype} -- only `tf.int32`, "
                            "`tf.int64`, and `tf.string` are supported.")
    return ds._unary("UniqueDataset", [], name=name)


def _common_structure(datasets):
    first = datasets[0]._structure
    for d in datasets[1:]:
        ok = structure.same_structure(first, d._structure) and all(
            type(a) is type(b) and a.dtype == b.dtype
            for a, b in zip(structure.flatten(first), structure.flatten(d._structure)))
        if not ok:
            raise TypeError("Invalid `datasets`. `datasets` must have compatible element specs.\n Dataset 0 "
                            f"element_spec={first}.\nDataset element_spec={d._structure}.")
    from ferroflow.data.dataset_ops import _most_specific

    flat = structure.flatten(first)
    for d in datasets[1:]:
        flat = [structure.with_shape(a, _most_specific(a.shape, b.shape))
                for a, b in zip(flat, structure.flatten(d._structure))]
    return structure.pack_as(first, flat)


def _directed_interleave(selector, datasets, stop_on_empty_dataset):
    s = _common_structure(datasets)
    attrs = structure.type_attrs(s)
    attrs["N"] = len(datasets)
    attrs["stop_on_empty_dataset"] = bool(stop_on_empty_dataset)
    with ops.name_scope(None, "DirectedInterleaveDataset"):
        v = make("DirectedInterleaveDataset", [selector._variant_tensor] + [d._variant_tensor for d in datasets],
                 attrs)
    return Dataset(v, s)


def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
    datasets = list(datasets) if datasets is not None else []
    if not datasets:
        raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
    if not isinstance(choice_dataset, Dataset):
        raise TypeError("Invalid `choice_dataset`. `choice_dataset` should be a `tf.data.Dataset` but is "
                        f"{type(choice_dataset)}.")
    if not _is_scalar(choice_dataset._structure, dtypes.int64):
        raise TypeError("Invalid `choice_dataset`. Elements of `choice_dataset` must be scalar `tf.int64` tensors "
                        f"but are {choice_dataset._structure}.")
    return _directed_interleave(choice_dataset, datasets, stop_on_empty_dataset)


def random_dataset(seed=None):
    """int64s drawn without end (``tf.data.experimental.RandomDataset``), from ``seed`` with the graph seed."""
    seed1, seed2 = random_seed.get_seed(seed)
    seed1, seed2 = (0, 0) if seed1 is None else (seed1, seed2)
    s = _SCALAR_INT64
    with ops.name_scope(None, "RandomDataset"):
        v = make("RandomDataset", [_int64(seed1, "seed"), _int64(seed2, "seed2")], structure.type_attrs(s))
    return Dataset(v, s)


def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                         rerandomize_each_iteration=None):
    from ferroflow.ops import array_ops, math_ops

    datasets = list(datasets) if datasets is not None else []
    if not datasets:
        raise ValueError("Invalid `datasets`. `datasets` should not be empty.")
    n = len(datasets)

    def pick(probs, r):
        # A uniform draw in [0, 1) from 53 random bits, placed on the cumulative probabilities.
        u = math_ops.cast(math_ops.floormod(r, np.int64(2**53)), dtypes.float64) / float(2**53)
        edges = math_ops.cumsum(math_ops.cast(probs, dtypes.float64))
        below = math_ops.reduce_sum(math_ops.cast(math_ops.less_equal(edges, u), dtypes.int64))
        return math_ops.minimum(below, np.int64(n - 1))

    def normalized(w):
        w = math_ops.cast(w, dtypes.float64)
        return w / math_ops.reduce_sum(w)

    randoms = random_dataset(seed)
    if weights is None:
        probs = np.full([n], 1.0 / n)
        selector = randoms.map(lambda r: pick(probs, r))
    elif isinstance(weights, Dataset):
        sp = weights._structure
        if type(sp) is not structure.TensorSpec or sp.dtype not in (dtypes.float32, dtypes.float64) or (
                sp.shape.rank is not None and not sp.shape.is_compatible_with(TensorShape([n]))):
            raise TypeError("Invalid `weights`. `weights` type must be either `tf.float32` or `tf.float64` and "
                            f"shape [{n}], got {sp}.")
        selector = Dataset.zip((weights, randoms)).map(lambda w, r: pick(normalized(w), r))
    else:
        if isinstance(weights, ops.Tensor):
            if not weights.shape.is_compatible_with(TensorShape([n])):
                raise ValueError("Invalid `weights`. The shape of `weights` should be compatible with "
                                 f"`[len(datasets)]` but is {weights.shape}.")
        else:
            weights = list(weights)
            if len(weights) != n:
                raise ValueError("Invalid `weights`. `weights` should have the same length as `datasets` but got "
                                 f"`len(weights)={len(weights)}` vs. `len(datasets)={n}`.")
            # As TensorFlow: inputs of weight 0 are left out (all of them: an empty dataset instead).
            kept = [(d, w) for d, w in zip(datasets, weights) if w > 0]
            datasets, weights = ([d for d, _ in kept], [w for _, w in kept]) if kept else (
                [datasets[0].take(0)], [1.0])
        w = ops.convert_to_tensor(weights, name="weights")
        if w.dtype not in (dtypes.float32, dtypes.float64):
            raise TypeError("Invalid `weights`. `weights` type must be either `tf.float32` or `tf.float64` but is "
                            f"{w.dtype}.")
        if len(datasets) == 1:
            return datasets[0]
        n = len(datasets)
        if w.shape.rank is None:
            w = array_ops.reshape(w, [n])
        probs = normalized(w)
        selector = randoms.map(lambda r: pick(probs, r))
    return _directed_interleave(selector, datasets, stop_on_empty_dataset)


def get_single_element(ds, name=None):
    if not isinstance(ds, Dataset):
        raise TypeError(f"Invalid `dataset`. Expected a `tf.data.Dataset` object but got {type(ds)}.")
    with ops.name_scope(name, "DatasetToSingleElement"):
        op = make_op("DatasetToSingleElement", [ds._variant_tensor], structure.type_attrs(ds._structure))
    return structure.from_components(ds._structure, op._outputs)


def cardinality(ds):
    with ops.name_scope(None, "DatasetCardinality"):
        return make("DatasetCardinality", [ds._variant_tensor], {})
