"""``tf.data.experimental``: the transformations TF1 programs use."""

from __future__ import annotations

from ferroflow.data import _structure as structure
from ferroflow.data.dataset_ops import AUTOTUNE, Dataset, _bool, _int64, _Traced
from ferroflow.data.iterator_ops import make_initializable_iterator, make_one_shot_iterator
from ferroflow.framework import dtypes, ops
from ferroflow.ops.optional_ops import Optional

__all__ = [
    "AUTOTUNE", "CsvDataset", "Optional", "dense_to_ragged_batch", "ignore_errors", "make_initializable_iterator",
    "make_one_shot_iterator", "map_and_batch", "parallel_interleave", "parse_example_dataset", "shuffle_and_repeat", "unbatch",
]


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
