"""``tf.data.experimental``: the transformations TF1 programs use."""

from __future__ import annotations

import weakref

from ferroflow.data import _structure as structure
from ferroflow.data.dataset_ops import AUTOTUNE, Dataset, _bool, _int64, _Traced
from ferroflow.data.iterator_ops import make_initializable_iterator, make_one_shot_iterator
from ferroflow.framework import dtypes, ops
from ferroflow.ops.optional_ops import Optional

__all__ = [
    "AUTOTUNE", "AutoShardPolicy", "AutotuneOptions", "Counter", "CsvDataset", "DistributeOptions",
    "ExternalStatePolicy", "OptimizationOptions", "Optional", "Options", "ThreadingOptions", "make_csv_dataset", "dense_to_ragged_batch", "ignore_errors", "make_initializable_iterator",
    "make_one_shot_iterator", "map_and_batch", "parallel_interleave", "parse_example_dataset", "shuffle_and_repeat", "unbatch",
    "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "RandomDataset", "bucket_by_sequence_length", "cardinality",
    "choose_from_datasets", "get_single_element", "Reducer", "group_by_reducer", "group_by_window", "reduce", "sample_from_datasets", "scan",
    "take_while", "unique",
]

INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


class Reducer:
    """The reduction of ``group_by_reducer``: ``init_func(key)`` starts a group's state,
    ``reduce_func(state, element)`` updates it, ``finalize_func(state)`` makes the group's output."""

    def __init__(self, init_func, reduce_func, finalize_func):
        self._init_func = init_func
        self._reduce_func = reduce_func
        self._finalize_func = finalize_func

    init_func = property(lambda self: self._init_func)
    reduce_func = property(lambda self: self._reduce_func)
    finalize_func = property(lambda self: self._finalize_func)


def group_by_reducer(key_func, reducer):
    """A transformation grouping elements by ``key_func`` (a scalar int64) and reducing each group with
    ``reducer`` (a ``Reducer``); one output per key once the input is done, keys in order of first appearance."""
    from ferroflow.data import _windowing

    return lambda ds: _windowing.group_by_reducer(ds, key_func, reducer)


def group_by_window(key_func, reduce_func, window_size=None, window_size_func=None):
    """A transformation: ``Dataset.group_by_window``."""
    return lambda ds: ds.group_by_window(key_func, reduce_func, window_size, window_size_func)


def bucket_by_sequence_length(element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes=None,
                              padding_values=None, pad_to_bucket_boundary=False, no_padding=False,
                              drop_remainder=False):
    """A transformation: ``Dataset.bucket_by_sequence_length``."""
    return lambda ds: ds.bucket_by_sequence_length(
        element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes, padding_values,
        pad_to_bucket_boundary, no_padding, drop_remainder)


def scan(initial_state, scan_func):
    """A transformation: ``Dataset.scan``."""
    return lambda ds: ds.scan(initial_state, scan_func)


def take_while(predicate):
    """A transformation: ``Dataset.take_while``."""
    return lambda ds: ds.take_while(predicate)


def unique():
    """A transformation: ``Dataset.unique``."""
    return lambda ds: ds.unique()


def reduce(dataset, initial_state, reduce_func):
    """``dataset.reduce(initial_state, reduce_func)``."""
    return dataset.reduce(initial_state, reduce_func)


def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=False):
    """``Dataset.choose_from_datasets`` (this endpoint runs on past an exhausted input by default)."""
    return Dataset.choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset)


def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False):
    """``Dataset.sample_from_datasets``."""
    return Dataset.sample_from_datasets(datasets, weights, seed, stop_on_empty_dataset)


def RandomDataset(seed=None, rerandomize_each_iteration=None, name=None):  # noqa: N802 - TensorFlow's name
    """int64s drawn without end."""
    return Dataset.random(seed)


def get_single_element(dataset):
    """``dataset.get_single_element()``."""
    from ferroflow.data._windowing import get_single_element as single

    return single(dataset)


def cardinality(dataset):
    """``dataset.cardinality()``."""
    from ferroflow.data._windowing import cardinality as card

    return card(dataset)



def ignore_errors(log_warning=False):
    """A transformation dropping the elements whose computation failed."""

    def apply(ds):
        return ds._unary("IgnoreErrorsDataset", [], attrs={"log_warning": bool(log_warning)})

    return apply


def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False, num_parallel_calls=None):
    """``map(map_func)`` then ``batch(batch_size)``, fused (``MapAndBatchDataset``)."""
    if num_parallel_batches is not None and num_parallel_calls is not None:
        raise ValueError("`num_parallel_batches` and `num_parallel_calls` are mutually exclusive.")
    if num_parallel_calls is None:
        num_parallel_calls = batch_size * (num_parallel_batches or 1)

    def apply(ds):
        with ops.name_scope(None, "MapAndBatchDataset"):
            f = _Traced(map_func, ds._structure, "map_and_batch")
            static = batch_size if drop_remainder is True and isinstance(batch_size, int) else None
            s = structure.batched(f.result_structure, static)
            attrs = structure.type_attrs(s)
            attrs["preserve_cardinality"] = True
            attrs.update(structure.layout_attrs(f.result_structure, cut=False))
            v = f.op(
                "MapAndBatchDataset", [ds._variant_tensor],
                [_int64(batch_size, "batch_size"), _int64(num_parallel_calls, "num_parallel_calls"),
                 _bool(drop_remainder, "drop_remainder")],
                attrs, None,
            )
        out = Dataset(v, s)
        out._rebuild = lambda: apply(ds._rebuilt())
        return out

    return apply


def parse_example_dataset(features, num_parallel_calls=1, deterministic=None):
    """A transformation parsing serialized ``tf.train.Example`` batches with ``features``.

    A ``RaggedFeature`` gives RaggedTensor elements, carried through the pipeline as their components and
    rebuilt where the element is read; ``unbatch`` and ``batch`` cut and combine them as TensorFlow does
    (``padded_batch`` refuses them, as TensorFlow's does)."""
    from ferroflow.ops import parsing_ops

    def apply(ds):
        return ds.map(lambda serialized: parsing_ops.parse_example(serialized, features),
                      num_parallel_calls=num_parallel_calls)

    return apply


def dense_to_ragged_batch(batch_size, drop_remainder=False, row_splits_dtype=dtypes.int64):
    """A transformation batching elements whose dense components differ in shape into RaggedTensors
    (``Dataset.ragged_batch``)."""

    def apply(ds):
        return ds.ragged_batch(batch_size, drop_remainder=drop_remainder, row_splits_dtype=row_splits_dtype)

    return apply


def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False, buffer_output_elements=None,
                        prefetch_input_elements=None):
    """``interleave(map_func, cycle_length, block_length)`` reading its ``cycle_length`` datasets in parallel.

    The order is the deterministic one (``sloppy`` only allows TensorFlow to deviate from it).
    """

    def apply(ds):
        return ds.interleave(map_func, cycle_length=cycle_length, block_length=block_length,
                             num_parallel_calls=cycle_length)

    return apply


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """``shuffle(buffer_size, seed)`` then ``repeat(count)``, a new order each epoch."""

    def apply(ds):
        return ds.shuffle(buffer_size, seed=seed).repeat(count)

    return apply


def unbatch():
    """A transformation splitting each element into its rows (``Dataset.unbatch``)."""

    def apply(ds):
        return ds.unbatch()

    return apply


_CSV_TYPES = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.string)


class CsvDataset(Dataset):
    """The records of CSV files, one tuple of scalars per line (``tf.data.experimental.CsvDataset``).

    ``record_defaults`` gives each selected column's type: a dtype (the field is required) or a default
    value. Built as TensorFlow's graph would read them: each file's lines (``TextLineDataset``, the first one
    skipped with ``header``) parsed by ``decode_csv`` with the same options, so the errors are decode_csv's
    (a required field missing, a field not a number, too few or too many fields). Unlike TensorFlow's own
    reader, a quoted field cannot span lines.
    """

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None, header=False,
                 field_delim=",", use_quote_delim=True, na_value="", select_cols=None):
        from ferroflow.data.readers import TextLineDataset
        from ferroflow.ops import array_ops, parsing_ops

        args = (filenames, record_defaults, compression_type, buffer_size, header, field_delim, use_quote_delim,
                na_value, select_cols)
        specs = []
        for i, d in enumerate(record_defaults):
            if isinstance(d, dtypes.DType):
                dtype, value = d.base_dtype, None
            else:
                t = d if isinstance(d, ops.Tensor) else ops.convert_to_tensor(d, name=f"record_defaults_{i}")
                dtype, value = t.dtype.base_dtype, d
            if dtype not in _CSV_TYPES:
                raise TypeError(f"record_defaults[{i}] has type {dtype.name}; CsvDataset reads "
                                "float32, float64, int32, int64 and string columns.")
            specs.append((dtype, value))
        if select_cols is not None and len(select_cols) != len(specs):
            raise ValueError("Length of select_cols and record_defaults do not match.")
        with ops.name_scope(None, "CsvDataset"):
            names = ops.convert_to_tensor(filenames, dtype=dtypes.string, name="filenames")
            if names.shape.rank not in (None, 0, 1):
                raise TypeError("`filenames` must be a `tf.Tensor` of `tf.string` of rank 0 or 1.")
            files = Dataset.from_tensor_slices(array_ops.reshape(names, [-1]))

            def lines(f):
                ds = TextLineDataset(f, compression_type=compression_type, buffer_size=buffer_size)
                return ds.skip(1) if header else ds

            def parse(line):
                defaults = [ops.convert_to_tensor([], dtype=dt) if v is None else
                            (v if isinstance(v, ops.Tensor) else ops.convert_to_tensor(v, dtype=dt))
                            for dt, v in specs]
                return tuple(parsing_ops.decode_csv(line, defaults, field_delim=field_delim,
                                                    use_quote_delim=use_quote_delim, na_value=na_value,
                                                    select_cols=select_cols))

            ds = files.flat_map(lines).map(parse)
        super().__init__(ds._variant_tensor, ds._structure)
        self._rebuild = lambda: type(self)(*args)


def Counter(start=0, step=1, dtype=dtypes.int64):  # noqa: N802 - TensorFlow's name
    """The numbers ``start, start + step, ...`` without end (``tf.data.experimental.Counter``)."""
    from ferroflow.ops import math_ops

    with ops.name_scope(None, "Counter"):
        end = -(2**63) if (not isinstance(step, ops.Tensor) and step < 0) else 2**63 - 1
        ds = Dataset.range(start, end, step)
        if dtypes.as_dtype(dtype) != dtypes.int64:
            ds = ds.map(lambda x: math_ops.cast(x, dtype))
    return ds


def _csv_rows(filenames, field_delim, use_quote_delim, header):
    import csv

    from ferroflow.platform import gfile

    for fn in filenames:
        with gfile.GFile(fn, "r") as f:
            rdr = csv.reader(f, delimiter=field_delim,
                             quoting=csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE)
            if header:
                next(rdr, None)
            yield from rdr


def _csv_type(value, na_value, prev):
    """TensorFlow's type inference for one field: the first of int32, int64, float32, float64, string that
    holds it and every value seen before (empty and na values say nothing)."""
    import numpy as np

    if value in ("", na_value):
        return prev

    def is_int(bits):
        try:
            v = int(value)
        except ValueError:
            return False
        return -(2 ** (bits - 1)) <= v < 2 ** (bits - 1)

    def is_float(np_type):
        try:
            with np.errstate(over="ignore"):
                return bool(np_type(value) < np.inf)
        except ValueError:
            return False

    order = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64, dtypes.string]
    checks = [lambda: is_int(32), lambda: is_int(64), lambda: is_float(np.float32), lambda: is_float(np.float64),
              lambda: True]
    for i, (dt, ok) in enumerate(zip(order, checks)):
        if ok() and (prev is None or prev in order[: i + 1]):
            return dt
    return dtypes.string


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None, label_name=None,
                     select_columns=None, field_delim=",", use_quote_delim=True, na_value="", header=True,
                     num_epochs=None, shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                     prefetch_buffer_size=None, num_parallel_reads=None, sloppy=False, num_rows_for_inference=100,
                     compression_type=None, ignore_errors=False):
    """Batches of CSV rows as an OrderedDict of columns (and the label column apart with ``label_name``), as
    TensorFlow's ``make_csv_dataset``: column names from the header, types inferred from the first
    ``num_rows_for_inference`` rows where ``column_defaults`` are not given, files read in turn, shuffled and
    repeated ``num_epochs`` times (forever by default, whole batches only then)."""
    import collections
    import csv

    from ferroflow.platform import gfile

    patterns = file_pattern if isinstance(file_pattern, (list, tuple)) else [file_pattern]
    filenames = []
    for p in patterns:
        matched = sorted(gfile.Glob(p))
        if not matched:
            raise ValueError(f"No files match `file_pattern` {p}.")
        filenames.extend(matched)
    if column_names is None:
        if not header:
            raise ValueError("Cannot infer column names without a header line.")
        for i, fn in enumerate(filenames):
            with gfile.GFile(fn, "r") as f:
                names = next(csv.reader(f, delimiter=field_delim,
                                        quoting=csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE))
            if i == 0:
                column_names = names
            elif names != column_names:
                raise ValueError("Files have different column names in the header row.")
    column_names = list(column_names)
    if len(column_names) != len(set(column_names)):
        raise ValueError("Cannot have duplicate column names.")
    if label_name is not None and label_name not in column_names:
        raise ValueError(f"`label_name` provided must be one of the columns: {column_names}. Received: {label_name}.")
    if select_columns is not None:
        if all(isinstance(c, int) for c in select_columns):
            indices = sorted(select_columns)
            if indices and (indices[0] < 0 or indices[-1] >= len(column_names)):
                raise ValueError("Column index out of range in `select_columns`.")
        else:
            missing = [c for c in select_columns if c not in column_names]
            if missing:
                raise ValueError(f"Column names in `select_columns` are not in the header: {missing}")
            indices = sorted(column_names.index(c) for c in select_columns)
        if label_name is not None and column_names.index(label_name) not in indices:
            raise ValueError("`label_name` provided must be in `select_columns`.")
        column_names = [column_names[i] for i in indices]
    else:
        indices = None
    if column_defaults is not None:
        if len(column_defaults) != len(column_names):
            raise ValueError("The number of `column_defaults` must match the number of selected columns.")
        record_defaults = [c if isinstance(c, dtypes.DType) else c if isinstance(c, ops.Tensor) else [c]
                           for c in column_defaults]
    else:
        types = [None] * len(column_names)
        n_cols = len(column_names) if indices is None else None
        for i, row in enumerate(_csv_rows(filenames, field_delim, use_quote_delim, header)):
            if num_rows_for_inference is not None and i >= num_rows_for_inference:
                break
            if n_cols is not None and len(row) != n_cols:
                raise ValueError("Problem inferring types: CSV row has different number of fields than expected.")
            for j, col in enumerate(indices if indices is not None else range(len(column_names))):
                types[j] = _csv_type(row[col], na_value, types[j])
        record_defaults = [ops.convert_to_tensor(["" if t in (None, dtypes.string) else 0],
                                                 dtype=t or dtypes.string) for t in types]

    def filename_to_dataset(filename):
        ds = CsvDataset(filename, record_defaults, compression_type=compression_type, header=header,
                        field_delim=field_delim, use_quote_delim=use_quote_delim, na_value=na_value,
                        select_cols=indices)
        return ds.apply(ignore_errors()) if ignore_errors else ds

    def map_fn(*columns):
        features = collections.OrderedDict(zip(column_names, columns))
        if label_name is not None:
            return features, features.pop(label_name)
        return features

    ds = Dataset.from_tensor_slices(filenames)
    if shuffle:
        ds = ds.shuffle(len(filenames), shuffle_seed)
    ds = ds.interleave(filename_to_dataset, cycle_length=num_parallel_reads or 1, block_length=1)
    if num_epochs != 1 and shuffle:
        ds = ds.shuffle(shuffle_buffer_size, shuffle_seed).repeat(num_epochs)
    elif shuffle:
        ds = ds.shuffle(shuffle_buffer_size, shuffle_seed)
    elif num_epochs != 1:
        ds = ds.repeat(num_epochs)
    ds = ds.batch(batch_size, drop_remainder=num_epochs is None).map(map_fn)
    return ds.prefetch(prefetch_buffer_size or AUTOTUNE)


# tf.data.Options: what TensorFlow's options hold and how they merge. ferroflow's pipelines run the same way
# whatever they say (deterministic order, no graph rewrites): with_options records them and options() reads them.
class AutoShardPolicy:
    OFF, AUTO, FILE, DATA, HINT = -1, 0, 1, 2, 3


class ExternalStatePolicy:
    WARN, IGNORE, FAIL = 0, 1, 2


class _OptionsBase:
    """Options with a fixed set of typed properties (None: unset); unknown names and wrong types raise."""

    _PROPS = {}
    _NESTED = {}

    def __init__(self):
        object.__setattr__(self, "_values", {})
        for name, cls in self._NESTED.items():
            self._values[name] = cls()

    def __getattr__(self, name):
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        if name in type(self)._PROPS:
            return type(self)._PROPS[name][1]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setattr__(self, name, value):
        props, nested = type(self)._PROPS, type(self)._NESTED
        if name in nested:
            if not isinstance(value, nested[name]):
                raise TypeError(f"Property \"{name}\" must be of type {nested[name]}, got: {value!r} "
                                f"(type: {type(value)})")
        elif name in props:
            ty = props[name][0]
            if value is not None and not (isinstance(value, ty) and not (ty is int and isinstance(value, bool))):
                raise TypeError(f"Property \"{name}\" must be of type {ty}, got: {value!r} (type: {type(value)})")
        else:
            raise AttributeError(f"Cannot set the property {name} on {type(self).__name__}.")
        self._values[name] = value

    def __eq__(self, other):
        return type(self) is type(other) and self._all() == other._all()

    __hash__ = None

    def _all(self):
        out = {n: getattr(self, n) for n in type(self)._PROPS}
        out.update({n: getattr(self, n)._all() for n in type(self)._NESTED})
        return out

    def _merge_from(self, other):
        for name in type(other)._PROPS:
            if name in other._values and other._values[name] is not None:
                self._values[name] = other._values[name]
        for name in type(other)._NESTED:
            self._values[name]._merge_from(other._values[name])


class AutotuneOptions(_OptionsBase):
    _PROPS = {"enabled": (bool, None), "cpu_budget": (int, None), "ram_budget": (int, None),
              "autotune_algorithm": (int, None), "initial_parallelism": (int, None),
              "min_parallelism": (int, None)}


class DistributeOptions(_OptionsBase):
    _PROPS = {"auto_shard_policy": (int, AutoShardPolicy.AUTO), "num_devices": (int, None)}


class OptimizationOptions(_OptionsBase):
    _PROPS = {name: (bool, None) for name in (
        "apply_default_optimizations", "filter_fusion", "filter_parallelization", "inject_prefetch",
        "map_and_batch_fusion", "map_and_filter_fusion", "map_fusion", "map_parallelization", "noop_elimination",
        "parallel_batch", "seq_interleave_prefetch", "shuffle_and_repeat_fusion")}


class ThreadingOptions(_OptionsBase):
    _PROPS = {"max_intra_op_parallelism": (int, None), "private_threadpool_size": (int, None)}


class _ServiceOptions(_OptionsBase):
    _PROPS = {"pinned": (bool, None)}


class Options(_OptionsBase):
    """``tf.data.Options`` (TF 2.21's properties; ``experimental_deterministic`` and ``experimental_threading``
    are the older names of ``deterministic`` and ``threading``)."""

    _PROPS = {"deterministic": (bool, None), "experimental_external_state_policy": (int, None),
              "experimental_slack": (bool, None), "experimental_symbolic_checkpoint": (bool, None),
              "experimental_warm_start": (bool, None), "dataset_name": (str, None), "framework_type": (list, None)}
    _NESTED = {"autotune": AutotuneOptions, "experimental_distribute": DistributeOptions,
               "experimental_optimization": OptimizationOptions, "threading": ThreadingOptions,
               "experimental_service": _ServiceOptions}
    _ALIASES = {"experimental_deterministic": "deterministic", "experimental_threading": "threading"}

    def __getattr__(self, name):
        return super().__getattr__(Options._ALIASES.get(name, name))

    def __setattr__(self, name, value):
        super().__setattr__(Options._ALIASES.get(name, name), value)

    def merge(self, options):
        """A new Options: this one's values, overridden by those ``options`` sets."""
        out = Options()
        out._merge_from(self)
        out._merge_from(options)
        return out


_GRAPH_OPTIONS = weakref.WeakKeyDictionary()  # graph -> {with_options op name: Options}


def _with_options(ds, options):
    from ferroflow.ops import array_ops

    if not isinstance(options, Options):
        raise TypeError(f"`options` must be a tf.data.Options, got {type(options).__name__}")
    v = array_ops.identity(ds._variant_tensor, name="OptionsDataset")
    _GRAPH_OPTIONS.setdefault(v.graph, {})[v.op.name] = options
    out = Dataset(v, ds._structure)
    out._rebuild = lambda: _with_options(ds._rebuilt(), options)
    return out


def _options_of(ds):
    """The options set by with_options on ``ds`` and the datasets it is built from, later ones winning."""
    table = _GRAPH_OPTIONS.get(ds._variant_tensor.graph, {})
    found, seen = [], set()

    def walk(op):
        if op.name in seen:
            return
        seen.add(op.name)
        for t in op.inputs:
            if t.dtype == dtypes.variant:
                walk(t.op)
        if op.name in table:
            found.append(table[op.name])

    walk(ds._variant_tensor.op)
    out = Options()
    for o in found:
        out._merge_from(o)
    return out
