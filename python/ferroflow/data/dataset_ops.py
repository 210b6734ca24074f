"""``tf.data.Dataset``: a pipeline built as dataset ops in the graph, run by Rust iterators.

Each method adds one dataset op (TensorFlow's op names, inputs and attrs)
whose ``variant`` output describes the pipeline; ``make_one_shot_iterator``
/ ``make_initializable_iterator`` add the iterator ops that run it. Functions
given to ``map``, ``filter``, ``flat_map`` and ``interleave`` are traced once
into graph functions; tensors they use from the enclosing graph are passed
to the op as its ``other_arguments`` (a variable stays a reference, so the
function reads its current value).
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from ferroflow.data import _structure as structure
from ferroflow.framework import dtypes, ops, random_seed
from ferroflow.framework.func_graph import FuncGraph, call_function_op, leaf_to_tensor, to_function
from ferroflow.framework.sparse_tensor import SparseTensor
from ferroflow.framework.tensor_shape import TensorShape
from ferroflow.ops._op_util import make

__all__ = ["AUTOTUNE", "Dataset"]

#: Let the runtime pick a parallelism or buffer size (the core count).
AUTOTUNE = -1


def _int64(value, name):
    return ops.convert_to_tensor(value, dtype=dtypes.int64, name=name)


def _bool(value, name):
    return ops.convert_to_tensor(value, dtype=dtypes.bool, name=name)


def _string(value, name):
    return ops.convert_to_tensor(value, dtype=dtypes.string, name=name)


class _NotReplayable(Exception):
    """A dataset that cannot be rebuilt inside a function (it uses a tensor that is not a constant)."""


def _rebuilt(x):
    """``x`` with every Dataset in it rebuilt in the current graph (see ``Dataset._rebuilt``)."""
    if isinstance(x, Dataset):
        return x._rebuilt()
    if isinstance(x, tuple) and any(isinstance(v, Dataset) for v in structure.flatten(x)):
        return structure.map_structure(_rebuilt, x)
    if isinstance(x, dict) and any(isinstance(v, Dataset) for v in structure.flatten(x)):
        return structure.map_structure(_rebuilt, x)
    return x


def _replayable(fn):
    """Makes the datasets ``fn`` (a method, or a constructor when static) returns rebuildable: the same call
    again, on the rebuilt inputs. ``make_one_shot_iterator`` rebuilds a pipeline inside TensorFlow's
    ``dataset_factory`` function this way."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        out = fn(*args, **kwargs)
        # The outermost call wins: list_files' inner from_tensor_slices, say, reads a non-constant tensor.
        if isinstance(out, Dataset) and not any(out is a for a in args):
            out._rebuild = lambda: fn(*[_rebuilt(a) for a in args], **{k: _rebuilt(v) for k, v in kwargs.items()})
        return out

    return wrapper


class _Traced:
    """A user function traced into a graph function over a dataset's elements."""

    def __init__(self, fn, input_structure, what, dataset_result=False):
        outer = ops.get_default_graph()
        base = getattr(fn, "__name__", what)
        if not base.isidentifier():
            base = what
        g = FuncGraph(f"{what}_{base}", outer)
        with g.as_default():
            args = [
                g.add_arg(dtype, shape, name=f"args_{i}")
                for i, (dtype, shape) in enumerate(structure.component_specs(input_structure))
            ]
            value = structure.from_components(input_structure, args)
            # A tuple element is unpacked into positional arguments, as TF does.
            if isinstance(value, tuple) and not hasattr(type(value), "_fields"):
                result = fn(*value)
            else:
                result = fn(value)
            if dataset_result:
                if not isinstance(result, Dataset):
                    raise TypeError(f"`{what}` must return a Dataset object, got {type(result).__name__}.")
                self.result_structure = result._structure
                flat = [leaf_to_tensor(result._variant_tensor)]
            else:
                if result is None:
                    raise ValueError(f"The function given to `{what}` must return a value.")
                result = structure.normalize(result, lists_are_structure=True)
                comps, self.result_structure = structure.to_components(result)
                flat = [leaf_to_tensor(t) for t in comps]
        g.inputs = args + [inner for _, inner in g.captures]
        self.graph = g
        self.outputs = flat
        self.name = to_function(g, flat, f"{what}_{base}")
        self.captures = list(g.external_captures)

    def op(self, op_type, inputs_before, inputs_after, attrs, name, func_attr="f"):
        attrs = dict(attrs)
        attrs[func_attr] = self.name
        attrs["Targuments"] = ("list_type", [t.dtype.base_dtype.as_datatype_enum for t in self.captures])
        outer = ops.get_default_graph()
        inputs = list(inputs_before) + self.captures + list(inputs_after)
        return call_function_op(outer, op_type, inputs, attrs, name, [self.graph])._outputs[0]


class Dataset(structure.HasElements):
    """A sequence of elements, each a structure of tensors (TF1's ``tf.data.Dataset``)."""

    def __init__(self, variant_tensor, element_structure):
        self._variant_tensor = variant_tensor
        self._structure = element_structure
        #: Builds this dataset again in the current graph (None: it cannot be).
        self._rebuild = None

    def _rebuilt(self):
        if self._rebuild is None:
            raise _NotReplayable("this dataset cannot be rebuilt in a function")
        return self._rebuild()

    # -- element structure ---------------------------------------------------

    def _attrs(self, s=None):
        return structure.type_attrs(self._structure if s is None else s)

    @_replayable
    def _unary(self, op_type, inputs, s=None, attrs=None, name=None):
        s = self._structure if s is None else s
        a = structure.type_attrs(s)
        a.update(attrs or {})
        with ops.name_scope(name, op_type):
            v = make(op_type, [self._variant_tensor] + list(inputs), a)
        return Dataset(v, s)

    def __repr__(self):
        return f"<Dataset shapes: {self.output_shapes}, types: {self.output_types}>"

    # -- sources -------------------------------------------------------------
    @staticmethod
    @_replayable
    def from_tensors(tensors):
        """A dataset of one element, ``tensors``."""
        value = structure.normalize(tensors)
        comps, s = structure.to_components(value)
        with ops.name_scope(None, "TensorDataset"):
            v = make("TensorDataset", comps, structure.type_attrs(s, "Toutput_types"))
        return Dataset(v, s)

    @staticmethod
    @_replayable
    def from_tensor_slices(tensors):
        """A dataset of the slices of ``tensors`` along their first dimension."""
        value = structure.normalize(tensors)
        for leaf in structure.flatten(value):
            if not isinstance(leaf, SparseTensor) and leaf.shape.rank == 0:
                raise ValueError(f"Unbatching a tensor is only supported for rank >= 1, got {leaf.name}")
        comps, s = structure.to_components(value)
        first = None
        for leaf in structure.flatten(value):
            d = leaf.shape[0] if leaf.shape.rank else None
            d = getattr(d, "value", d)
            if first is None:
                first = d
            elif d is not None and first is not None and d != first:
                raise ValueError(
                    f"Dimensions {first} and {d} are not compatible: all components must have the same size "
                    "in their first dimension."
                )
        layout = structure.layout_attrs(s, cut=True)
        s = structure.unbatched(s)
        attrs = structure.type_attrs(s, "Toutput_types")
        attrs.update(layout)
        with ops.name_scope(None, "TensorSliceDataset"):
            v = make("TensorSliceDataset", comps, attrs)
        return Dataset(v, s)

    @staticmethod
    @_replayable
    def range(*args, output_type=dtypes.int64):
        """``range(stop)``, ``range(start, stop)`` or ``range(start, stop, step)``."""
        if len(args) == 1:
            start, stop, step = 0, args[0], 1
        elif len(args) == 2:
            start, stop, step = args[0], args[1], 1
        elif len(args) == 3:
            start, stop, step = args
        else:
            raise ValueError(f"Invalid arguments to range: {args}")
        s = structure.TensorSpec([], output_type)
        with ops.name_scope(None, "RangeDataset"):
            v = make(
                "RangeDataset",
                [_int64(start, "start"), _int64(stop, "stop"), _int64(step, "step")],
                structure.type_attrs(s),
            )
        return Dataset(v, s)

    @staticmethod
    @_replayable
    def zip(*args, datasets=None, name=None):
        """Elements of ``datasets`` (a nested tuple or dict of datasets, or several datasets) side by side."""
        if datasets is None:
            if not args:
                raise TypeError("Must pass at least one dataset to `zip`.")
            datasets = args[0] if len(args) == 1 else tuple(args)
        elif args:
            raise TypeError("Both `*args` and `datasets` cannot be set.")
        flat = structure.flatten(datasets)
        for d in flat:
            if not isinstance(d, Dataset):
                raise TypeError(f"The argument to `Dataset.zip()` must be a (nested) structure of Dataset objects, got {type(d).__name__}.")
        s = structure.pack_as(datasets, [d._structure for d in flat])
        with ops.name_scope(None, "ZipDataset"):
            v = make("ZipDataset", [d._variant_tensor for d in flat], structure.type_attrs(s))
        return Dataset(v, s)

    @staticmethod
    @_replayable
    def list_files(file_pattern, shuffle=None, seed=None, name=None):
        """The files matching ``file_pattern`` (a pattern or list), shuffled unless ``shuffle=False``."""
        with ops.name_scope(None, "list_files"):
            pattern = _string(file_pattern, "file_pattern")
            matching = make("MatchingFiles", [pattern], {})
            ds = Dataset.from_tensor_slices(matching)
            if shuffle is None or shuffle:
                ds = ds.shuffle(10000, seed=seed)
        return ds

    @staticmethod
    @_replayable
    def from_generator(generator, output_types=None, output_shapes=None, args=None, output_signature=None,
                       name=None):
        """The elements a Python generator yields (``generator(*args)``, called afresh for each iteration).

        Each element must match ``output_types`` (and ``output_shapes``, when given); the generator runs
        with the GIL on the thread that pulls elements.
        """
        if not callable(generator):
            raise TypeError("`generator` must be callable.")
        if output_signature is not None:
            if output_types is not None or output_shapes is not None:
                raise TypeError("The `output_types` and `output_shapes` arguments cannot be used together with "
                                "`output_signature`.")
            output_types = structure.map_structure(lambda sp: sp.dtype, output_signature)
            output_shapes = structure.map_structure(lambda sp: sp.shape, output_signature)
        if output_types is None:
            raise TypeError("To specify the output signature you need to provide either the `output_signature` "
                            "argument or the `output_types` argument.")
        s = structure.structure_from(output_types, output_shapes)
        for sp in structure.flatten(s):
            if isinstance(sp, structure.SparseTensorSpec):
                raise TypeError("from_generator yields dense tensors only.")
        args = tuple(args) if args is not None else ()
        token = next(_GENERATOR_TOKENS)
        _GENERATORS[token] = (generator, args, s)
        a = structure.type_attrs(s)
        a["token"] = token
        with ops.name_scope(None, "FromGenerator"):
            v = make("PyGeneratorDataset", [], a)
        return Dataset(v, s)

    # -- transformations -----------------------------------------------------
    @_replayable
    def concatenate(self, dataset):
        """This dataset's elements, then ``dataset``'s."""
        if not structure.same_structure(self._structure, dataset._structure):
            raise TypeError(f"Two datasets to concatenate have different structures: {self._structure} vs {dataset._structure}")
        a = structure.flatten(self._structure)
        b = structure.flatten(dataset._structure)
        for x, y in zip(a, b):
            if x.dtype != y.dtype or type(x) is not type(y) or (
                    isinstance(x, structure.RaggedTensorSpec)
                    and (x.ragged_rank, x.row_splits_dtype) != (y.ragged_rank, y.row_splits_dtype)):
                raise TypeError(f"Two datasets to concatenate have different types {self.output_types} and {dataset.output_types}")
        merged = structure.pack_as(
            self._structure,
            [structure.with_shape(x, _most_specific(x.shape, y.shape)) for x, y in zip(a, b)],
        )
        return self._unary("ConcatenateDataset", [dataset._variant_tensor], merged)

    @_replayable
    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """``map_func`` of each element (calls run in parallel with ``num_parallel_calls``; order kept)."""
        with ops.name_scope(name, "MapDataset"):
            f = _Traced(map_func, self._structure, "map")
            attrs = structure.type_attrs(f.result_structure)
            # TF1's map does not promise to keep the number of elements (cardinality() is unknown after it).
            if num_parallel_calls is None:
                attrs.update(use_inter_op_parallelism=True, preserve_cardinality=False)
                v = f.op("MapDataset", [self._variant_tensor], [], attrs, None)
            else:
                attrs.update(
                    use_inter_op_parallelism=True, preserve_cardinality=False,
                    deterministic="default" if deterministic is None else ("true" if deterministic else "false"),
                )
                v = f.op(
                    "ParallelMapDatasetV2", [self._variant_tensor],
                    [_int64(num_parallel_calls, "num_parallel_calls")], attrs, None,
                )
        return Dataset(v, f.result_structure)

    @_replayable
    def filter(self, predicate, name=None):
        """The elements for which ``predicate`` (a scalar bool) holds."""
        with ops.name_scope(name, "FilterDataset"):
            f = _Traced(predicate, self._structure, "filter")
            specs = structure.flatten(f.result_structure)
            if len(specs) != 1 or specs[0].dtype != dtypes.bool or specs[0].shape.rank not in (None, 0):
                raise ValueError("`predicate` return type must be convertible to a scalar boolean tensor.")
            v = f.op("FilterDataset", [self._variant_tensor], [], self._attrs(), None, func_attr="predicate")
        return Dataset(v, self._structure)

    @_replayable
    def flat_map(self, map_func, name=None):
        """The elements of the dataset ``map_func`` returns for each element, in turn."""
        with ops.name_scope(name, "FlatMapDataset"):
            f = _Traced(map_func, self._structure, "flat_map", dataset_result=True)
            v = f.op("FlatMapDataset", [self._variant_tensor], [], structure.type_attrs(f.result_structure), None)
        return Dataset(v, f.result_structure)

    @_replayable
    def interleave(self, map_func, cycle_length=None, block_length=None, num_parallel_calls=None,
                   deterministic=None, name=None):
        """``block_length`` elements of each of ``cycle_length`` datasets ``map_func`` returns, in turn."""
        cycle_length = AUTOTUNE if cycle_length is None else cycle_length
        block_length = 1 if block_length is None else block_length
        with ops.name_scope(name, "InterleaveDataset"):
            f = _Traced(map_func, self._structure, "interleave", dataset_result=True)
            attrs = structure.type_attrs(f.result_structure)
            after = [_int64(cycle_length, "cycle_length"), _int64(block_length, "block_length")]
            if num_parallel_calls is None:
                v = f.op("InterleaveDataset", [self._variant_tensor], after, attrs, None)
            else:
                attrs["deterministic"] = "default" if deterministic is None else ("true" if deterministic else "false")
                after += [
                    _int64(-1, "buffer_output_elements"),
                    _int64(-1, "prefetch_input_elements"),
                    _int64(num_parallel_calls, "num_parallel_calls"),
                ]
                v = f.op("ParallelInterleaveDatasetV4", [self._variant_tensor], after, attrs, None)
        return Dataset(v, f.result_structure)

    def _batched(self, batch_size, drop_remainder):
        static = None
        if drop_remainder is True and isinstance(batch_size, (int, np.integer)):
            static = int(batch_size)
        return structure.batched(self._structure, static)

    @_replayable
    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        """Consecutive elements stacked ``batch_size`` at a time (the last batch may be smaller).

        SparseTensor components batch into one SparseTensor of one more dimension, RaggedTensor components
        (and ragged rank 0 ones: dense rows of any length) into one RaggedTensor of one more ragged
        dimension, as in TensorFlow. (``num_parallel_calls``/``deterministic`` are accepted; batches are
        always made in order.)
        """
        s = self._batched(batch_size, drop_remainder)
        attrs = {"parallel_copy": False}
        attrs.update(structure.layout_attrs(self._structure, cut=False))
        return self._unary(
            "BatchDatasetV2",
            [_int64(batch_size, "batch_size"), _bool(drop_remainder, "drop_remainder")],
            s, attrs, name,
        )

    @_replayable
    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False, name=None):
        """Like ``batch``, each component padded to ``padded_shapes`` (-1 or None: the batch's largest)."""
        flat_specs = structure.flatten(self._structure)
        if padded_shapes is None:
            flat_shapes = [sp.shape for sp in flat_specs]
            for i, shape in enumerate(flat_shapes):
                if shape.rank is None:
                    raise ValueError(f"You must provide `padded_shapes` argument because component {i} has "
                                     "unknown rank.")
        for sp in flat_specs:
            if type(sp) is not structure.TensorSpec:
                raise TypeError("`padded_batch` is only supported for datasets that produce tensor elements but "
                                "type spec of elements in the input dataset is not a subclass of TensorSpec: "
                                f"`{sp!r}`.")
        if padded_shapes is not None:
            flat_shapes = _flatten_up_to(self._structure, padded_shapes)
        if padding_values is None:
            flat_values = [None] * len(flat_specs)
        else:
            flat_values = _flatten_up_to(self._structure, padding_values)
        shape_tensors, value_tensors, out_shapes = [], [], []
        static = int(batch_size) if drop_remainder is True and isinstance(batch_size, (int, np.integer)) else None
        for sp, shape, value in zip(flat_specs, flat_shapes, flat_values):
            if isinstance(shape, ops.Tensor):
                shape_t = ops.convert_to_tensor(shape, dtype=dtypes.int64)
                padded = TensorShape([None] * (sp.shape.rank or 0))
            else:
                if isinstance(shape, (list, tuple)):
                    dims = [-1 if d is None else int(getattr(d, "value", d) if d is not None else -1) for d in shape]
                else:
                    ts = TensorShape(shape)
                    if ts.rank is None:
                        raise ValueError("padded_batch needs the rank of each component's padded shape")
                    dims = [-1 if d is None else int(d) for d in ts.as_list()]
                ts = TensorShape([None if d < 0 else d for d in dims])
                if sp.shape.rank is not None and len(dims) != sp.shape.rank:
                    raise ValueError(
                        f"The padded shape {ts} is not compatible with the shape {sp.shape} of the element."
                    )
                shape_t = ops.convert_to_tensor(np.array(dims, np.int64), dtype=dtypes.int64)
                padded = TensorShape([None if d < 0 else d for d in dims])
            if value is None:
                value = b"" if sp.dtype == dtypes.string else np.zeros((), sp.dtype.as_numpy_dtype)
            value_tensors.append(ops.convert_to_tensor(value, dtype=sp.dtype, name="padding_value"))
            shape_tensors.append(shape_t)
            out_shapes.append(structure.TensorSpec(TensorShape([static]).concatenate(padded), sp.dtype))
        s = structure.pack_as(self._structure, out_shapes)
        attrs = structure.type_attrs(s)
        attrs["Toutput_types"] = ("list_type", [t.dtype.base_dtype.as_datatype_enum for t in value_tensors])
        attrs["N"] = len(shape_tensors)
        attrs["parallel_copy"] = False
        del attrs["output_types"]
        with ops.name_scope(name, "PaddedBatchDatasetV2"):
            v = make(
                "PaddedBatchDatasetV2",
                [self._variant_tensor, _int64(batch_size, "batch_size")] + shape_tensors + value_tensors
                + [_bool(drop_remainder, "drop_remainder")],
                attrs,
            )
        return Dataset(v, s)

    @_replayable
    def unbatch(self, name=None):
        """The rows of each element (the inverse of ``batch``; a RaggedTensor loses its outermost ragged
        dimension)."""
        known = None
        for sp in structure.flatten(self._structure):
            if type(sp) is not structure.TensorSpec or sp.shape.rank is None:
                continue  # TensorFlow checks the dense leaves only here
            if sp.shape.rank == 0:
                raise ValueError("Cannot unbatch an input with scalar components.")
            d = sp.shape.as_list()[0]
            if d is not None and known is not None and d != known:
                raise ValueError("`unbatch()` is only supported for datasets of elements whose components have a "
                                 f"matching leading dimension. Encountered both {known} and {d}.")
            known = d if known is None else known
        s = structure.unbatched(self._structure)
        return self._unary("UnbatchDataset", [], s, attrs=structure.layout_attrs(self._structure, cut=True),
                           name=name)

    def ragged_batch(self, batch_size, drop_remainder=False, row_splits_dtype=dtypes.int64, name=None):
        """Like ``batch``, with each dense component whose shape is not fully known made ragged first (ragged
        rank: its last unknown dimension), so that elements of different shapes batch into RaggedTensors
        (row splits of ``row_splits_dtype``); RaggedTensor components batch as in ``batch``."""
        return _dense_to_ragged(self, dtypes.as_dtype(row_splits_dtype)).batch(batch_size, drop_remainder,
                                                                               name=name)

    @_replayable
    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None, name=None):
        """The elements in a random order drawn through a buffer of ``buffer_size``."""
        seed1, seed2 = random_seed.get_seed(seed)
        seed1, seed2 = (0, 0) if seed1 is None else (seed1, seed2)
        reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)
        return self._unary(
            "ShuffleDataset",
            [_int64(buffer_size, "buffer_size"), _int64(seed1, "seed"), _int64(seed2, "seed2")],
            attrs={"reshuffle_each_iteration": reshuffle}, name=name,
        )

    @_replayable
    def repeat(self, count=None, name=None):
        """The elements ``count`` times over (forever for None or -1)."""
        return self._unary("RepeatDataset", [_int64(-1 if count is None else count, "count")], name=name)

    @_replayable
    def take(self, count, name=None):
        """The first ``count`` elements (-1: all)."""
        return self._unary("TakeDataset", [_int64(count, "count")], name=name)

    @_replayable
    def skip(self, count, name=None):
        """All but the first ``count`` elements (-1: none)."""
        return self._unary("SkipDataset", [_int64(count, "count")], name=name)

    @_replayable
    def prefetch(self, buffer_size, name=None):
        """The same elements, up to ``buffer_size`` made ahead on a background thread."""
        return self._unary(
            "PrefetchDataset", [_int64(buffer_size, "buffer_size")],
            attrs={"slack_period": 0, "legacy_autotune": True, "buffer_size_min": 0}, name=name,
        )

    @_replayable
    def cache(self, filename="", name=None):
        """The same elements, kept after the first full pass: in memory, or with ``filename`` in the file
        ``filename + ".ffcache"``, which later iterations (in any session) read instead of the input."""
        return self._unary("CacheDataset", [_string(filename, "filename")], name=name)

    @_replayable
    def shard(self, num_shards, index, name=None):
        """Every ``num_shards``-th element, starting at ``index``."""
        return self._unary(
            "ShardDataset", [_int64(num_shards, "num_shards"), _int64(index, "index")],
            attrs={"require_non_empty": False}, name=name,
        )

    def with_options(self, options, name=None):
        """This dataset with ``options`` (a ``tf.data.Options``) merged over those set before; ferroflow runs the
        pipeline the same way whatever they say."""
        from ferroflow.data.experimental import _with_options

        return _with_options(self, options)

    def options(self):
        """The ``tf.data.Options`` set on this dataset and the ones it is built from (later ones win)."""
        from ferroflow.data.experimental import _options_of

        return _options_of(self)

    def enumerate(self, start=0, name=None):
        """``(index, element)`` pairs, the int64 index counting from ``start``."""
        return Dataset.zip((Dataset.range(start, np.iinfo(np.int64).max), self))

    @staticmethod
    def counter(start=0, step=1, dtype=dtypes.int64, name=None):
        """``start, start + step, ...`` without end (``tf.data.experimental.Counter``)."""
        from ferroflow.data.experimental import Counter

        return Counter(start, step, dtype)

    def ignore_errors(self, log_warning=False, name=None):
        """The elements whose computation did not fail (``tf.data.experimental.ignore_errors``)."""
        from ferroflow.data.experimental import ignore_errors

        return self.apply(ignore_errors(log_warning))

    def map_with_legacy_function(self, map_func, num_parallel_calls=None, deterministic=None):
        """``map`` (TensorFlow's legacy tracing of ``map_func`` is the one map uses here)."""
        return self.map(map_func, num_parallel_calls=num_parallel_calls, deterministic=deterministic)

    def filter_with_legacy_function(self, predicate):
        """``filter`` (TensorFlow's legacy tracing of ``predicate`` is the one filter uses here)."""
        return self.filter(predicate)

    def apply(self, transformation_func):
        """``transformation_func(self)``, which must return a Dataset."""
        ds = transformation_func(self)
        if not isinstance(ds, Dataset):
            raise TypeError("`transformation_func` must return a Dataset.")
        return ds

    # -- windows, groups, scans and choices (see _windowing.py) ---------------
    @_replayable
    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None):
        """Windows of ``size`` elements (every ``stride``-th, from a start every ``shift``, default ``size``),
        each a structure of datasets like the element's (fewer at the end unless ``drop_remainder``)."""
        from ferroflow.data import _windowing

        return _windowing.window(self, size, shift, stride, drop_remainder, name)

    @_replayable
    def group_by_window(self, key_func, reduce_func, window_size=None, window_size_func=None, name=None):
        """Elements grouped by ``key_func`` (an int64) into windows of ``window_size`` (or
        ``window_size_func(key)``); each window (and, at the end, each partial one in key order) becomes the
        dataset ``reduce_func(key, window)``."""
        from ferroflow.data import _windowing

        return _windowing.group_by_window(self, key_func, reduce_func, window_size, window_size_func, name)

    @_replayable
    def bucket_by_sequence_length(self, element_length_func, bucket_boundaries, bucket_batch_sizes,
                                  padded_shapes=None, padding_values=None, pad_to_bucket_boundary=False,
                                  no_padding=False, drop_remainder=False, name=None):
        """Elements batched with others of similar length (buckets split at ``bucket_boundaries``), padded."""
        from ferroflow.data import _windowing

        return _windowing.bucket_by_sequence_length(
            self, element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes, padding_values,
            pad_to_bucket_boundary, no_padding, drop_remainder, name)

    @_replayable
    def scan(self, initial_state, scan_func, name=None):
        """``scan_func(state, element)`` gives ``(new_state, output)`` for each element in turn."""
        from ferroflow.data import _windowing

        return _windowing.scan(self, initial_state, scan_func, name)

    def reduce(self, initial_state, reduce_func, name=None):
        """The state after ``reduce_func(state, element)`` over every element (tensors, run in the graph)."""
        from ferroflow.data import _windowing

        return _windowing.reduce(self, initial_state, reduce_func, name)

    @_replayable
    def take_while(self, predicate, name=None):
        """The elements before the first for which ``predicate`` is false."""
        from ferroflow.data import _windowing

        return _windowing.take_while(self, predicate, name)

    @_replayable
    def unique(self, name=None):
        """Each element the first time it occurs (int32, int64 or string elements)."""
        from ferroflow.data import _windowing

        return _windowing.unique(self, name)

    @staticmethod
    @_replayable
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
        """The next element of ``datasets[i]`` for each ``i`` of ``choice_dataset``."""
        from ferroflow.data import _windowing

        return _windowing.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)

    @staticmethod
    @_replayable
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                             rerandomize_each_iteration=None):
        """Elements of ``datasets`` picked at random with probabilities ``weights`` (a list, tensor or dataset
        of them; default uniform)."""
        from ferroflow.data import _windowing

        return _windowing.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset,
                                               rerandomize_each_iteration)

    @staticmethod
    def random(seed=None, rerandomize_each_iteration=None, name=None):
        """int64s drawn without end."""
        from ferroflow.data import _windowing

        return _windowing.random_dataset(seed)

    def get_single_element(self, name=None):
        """The one element of this dataset, as tensors (InvalidArgumentError when it has none or more)."""
        from ferroflow.data import _windowing

        return _windowing.get_single_element(self, name)

    def cardinality(self):
        """An int64 scalar tensor: the number of elements, ``INFINITE_CARDINALITY`` (-1) or
        ``UNKNOWN_CARDINALITY`` (-2), as TensorFlow reckons it from the pipeline."""
        from ferroflow.data import _windowing

        return _windowing.cardinality(self)

    # -- iterators -----------------------------------------------------------
    def make_one_shot_iterator(self):
        """An iterator over this dataset that needs no initialization."""
        from ferroflow.data.iterator_ops import Iterator

        return Iterator._one_shot(self)

    def make_initializable_iterator(self, shared_name=None):
        """An iterator whose ``initializer`` (re)starts it at this dataset's beginning."""
        from ferroflow.data.iterator_ops import Iterator

        it = Iterator.from_structure(self.output_types, self.output_shapes, shared_name, self.output_classes)
        it._initializer = it.make_initializer(self)
        return it

    def __iter__(self):
        raise RuntimeError(
            "`tf.data.Dataset` only supports Python-style iteration in eager mode; use make_one_shot_iterator()."
        )


# -- from_generator: the registry the PyGeneratorDataset kernel calls into (with the GIL) --

_GENERATORS = {}
_GENERATOR_TOKENS = itertools.count(1)


def _generator_start(token):
    """A fresh iterator over the generator registered as ``token``."""
    generator, args, _ = _GENERATORS[token]
    return iter(generator(*[_as_numpy_arg(a) for a in args]))


def _as_numpy_arg(a):
    """An argument as TensorFlow hands it to the generator: through a tensor (strings become bytes)."""
    if isinstance(a, str):
        return a.encode()
    if isinstance(a, bytes):
        return a
    arr = np.asarray(a)
    if arr.dtype.kind == "U":
        arr = np.char.encode(arr)
    return arr[()] if arr.ndim == 0 else arr


def _as_component(value, spec):
    np_dtype = spec.dtype.as_numpy_dtype
    if spec.dtype == dtypes.string:
        arr = np.asarray(value, dtype=object)
        flat = [v.encode() if isinstance(v, str) else bytes(v) for v in arr.ravel()]
        shape = arr.shape
    else:
        try:
            arr = np.asarray(value)
            if arr.dtype != np_dtype:
                if arr.dtype == object or (arr.dtype.kind in "fc" and np.dtype(np_dtype).kind in "iub") or (
                    arr.dtype.kind in "SU"
                ):
                    raise TypeError
                arr = arr.astype(np_dtype)
        except (TypeError, ValueError):
            raise TypeError(
                "`generator` yielded an element that could not be converted to the expected type. The expected "
                f"type was {spec.dtype.name}, but the yielded element was {value!r}."
            ) from None
        shape = arr.shape
    if not spec.shape.is_compatible_with(TensorShape(list(shape))):
        raise ValueError(
            f"`generator` yielded an element of shape {tuple(shape)} where an element of shape "
            f"{tuple(spec.shape.as_list()) if spec.shape.rank is not None else None} was expected."
        )
    if spec.dtype == dtypes.string:
        return ("strings", list(shape), flat)
    return arr if arr.flags.c_contiguous else arr.copy(order="C")


def _generator_next(state, token):
    """The next element's components, converted, or None at the end."""
    try:
        value = next(state)
    except StopIteration:
        return None
    s = _GENERATORS[token][2]
    if structure.is_nested(s):
        if isinstance(value, list):
            value = tuple(value)
        if not structure.same_structure(s, value):
            raise TypeError(
                f"`generator` yielded an element that did not match the expected structure. The expected "
                f"structure was {structure.types_of(s)}, but the yielded element was {value!r}."
            )
        leaves = structure.flatten(value)
    else:
        leaves = [value]
    return [_as_component(v, sp) for v, sp in zip(leaves, structure.flatten(s))]


def _dense_to_ragged(ds, row_splits_dtype):
    """``ds`` with each dense leaf of known rank and not fully known shape taken as a RaggedTensor, of ragged
    rank its last unknown dimension (TensorFlow's ``_DenseToRaggedDataset``). A ragged rank of 0 only
    relabels the leaf (its one component is the tensor itself); a higher one maps the tensor through
    ``RaggedTensor.from_tensor``."""
    from ferroflow.ops.ragged import RaggedTensor, RaggedTensorSpec

    def ragged_spec(sp):
        if type(sp) is not structure.TensorSpec or sp.shape.rank is None or sp.shape.is_fully_defined():
            return sp
        rank = max(i for i, d in enumerate(sp.shape.as_list()) if d is None)
        return RaggedTensorSpec(sp.shape, sp.dtype, rank, row_splits_dtype)

    target = structure.map_structure(ragged_spec, ds._structure)
    leaves = list(zip(structure.flatten(ds._structure), structure.flatten(target)))
    if all(not isinstance(b, RaggedTensorSpec) or a is b or b.ragged_rank == 0 for a, b in leaves):
        out = Dataset(ds._variant_tensor, target)
        out._rebuild = lambda: _dense_to_ragged(ds._rebuilt(), row_splits_dtype)
        return out

    def convert(value):
        flat = [
            RaggedTensor.from_tensor(v, ragged_rank=sp.ragged_rank, row_splits_dtype=row_splits_dtype)
            if isinstance(sp, RaggedTensorSpec) and sp is not old and sp.ragged_rank > 0 else v
            for v, (old, sp) in zip(structure.flatten(value), leaves)
        ]
        return structure.pack_as(value, flat)

    s = ds._structure
    fn = (lambda *v: convert(v)) if isinstance(s, tuple) and not hasattr(type(s), "_fields") else convert
    mapped = ds.map(fn)
    out = Dataset(mapped._variant_tensor, target)
    out._rebuild = lambda: _dense_to_ragged(ds._rebuilt(), row_splits_dtype)
    return out


def get_output_types(dataset_or_iterator):
    """TF1's ``tf.data.get_output_types``: the dtypes of the elements' leaves."""
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator):
    """TF1's ``tf.data.get_output_shapes``: the static shapes of the elements' leaves."""
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator):
    """TF1's ``tf.data.get_output_classes``: each leaf's class (a RaggedTensorSpec for a ragged leaf)."""
    return dataset_or_iterator.output_classes


def _most_specific(a, b):
    a, b = TensorShape(a), TensorShape(b)
    if a.rank is None or b.rank is None or a.rank != b.rank:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


def _flatten_up_to(shallow, value):
    """The parts of ``value`` matching the leaves of ``shallow`` (a shape or value per component)."""
    if not structure.is_nested(shallow):
        return [value]
    if isinstance(shallow, dict):
        return [x for k in sorted(shallow) for x in _flatten_up_to(shallow[k], value[k])]
    if not isinstance(value, (tuple, list)) or len(value) != len(shallow):
        raise ValueError(f"The structure {value!r} does not match the dataset's element structure.")
    return [x for s, v in zip(shallow, value) for x in _flatten_up_to(s, v)]
