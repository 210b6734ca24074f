"""Numeric, bucketized, categorical (identity, vocabulary list/file, hash bucket), weighted, crossed and
indicator columns, with TensorFlow 1.x's transformations and argument checks."""

from __future__ import annotations

import collections

import numpy as np

from ferroflow.feature_column._base import (
    _CategoricalColumn,
    _DenseColumn,
    _FeatureColumn,
    _SequenceDenseColumn,
    _to_sparse_input_and_drop_ignore_values,
    assert_key_is_string,
    assert_string_or_int,
    check_default_value,
    sequence_length_from_sparse_tensor,
)
from ferroflow.feature_column._base import _check_shape as check_shape
from ferroflow.framework import dtypes, tensor_shape
from ferroflow.framework.sparse_tensor import SparseTensor, convert_to_tensor_or_sparse_tensor
from ferroflow.ops import array_ops, lookup_ops, math_ops, sparse_ops, string_ops
from ferroflow.ops.bucketize_ops import bucketize
from ferroflow.ops.parsing_ops import FixedLenFeature, VarLenFeature
from ferroflow.platform import gfile

__all__ = [
    "numeric_column", "bucketized_column", "categorical_column_with_hash_bucket",
    "categorical_column_with_identity", "categorical_column_with_vocabulary_file",
    "categorical_column_with_vocabulary_list", "weighted_categorical_column", "crossed_column",
    "indicator_column",
]


# --- numeric and bucketized ---------------------------------------------------------------------------------------


class _NumericColumn(_DenseColumn, collections.namedtuple(
        "_NumericColumn", ["key", "shape", "default_value", "dtype", "normalizer_fn"])):
    """See ``numeric_column``."""

    @property
    def name(self):
        return self.key

    @property
    def _parse_example_spec(self):
        return {self.key: FixedLenFeature(self.shape, self.dtype, self.default_value)}

    def _transform_feature(self, inputs):
        tensor = inputs.get(self.key)
        if isinstance(tensor, SparseTensor):
            raise ValueError("The corresponding Tensor of numerical column must be a Tensor. SparseTensor is not "
                             f"supported. key: {self.key}")
        if self.normalizer_fn is not None:
            tensor = self.normalizer_fn(tensor)
        return math_ops.cast(tensor, dtypes.float32)

    @property
    def _variable_shape(self):
        return tensor_shape.TensorShape(self.shape)

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        return inputs.get(self)


def numeric_column(key, shape=(1,), default_value=None, dtype=dtypes.float32, normalizer_fn=None):
    """A real-valued feature of ``shape`` per example (a ``FixedLenFeature``), cast to float32 after
    ``normalizer_fn``; ``default_value`` fills examples that lack it."""
    shape = check_shape(shape, key)
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype must be convertible to float. dtype: {dtype}, key: {key}")
    default_value = check_default_value(shape, default_value, dtype, key)
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable. Given: {normalizer_fn}")
    assert_key_is_string(key)
    return _NumericColumn(key, shape=shape, default_value=default_value, dtype=dtype, normalizer_fn=normalizer_fn)


class _BucketizedColumn(_DenseColumn, _CategoricalColumn,
                        collections.namedtuple("_BucketizedColumn", ["source_column", "boundaries"])):
    """See ``bucketized_column``."""

    @property
    def name(self):
        return f"{self.source_column.name}_bucketized"

    @property
    def _parse_example_spec(self):
        return self.source_column._parse_example_spec

    def _transform_feature(self, inputs):
        return bucketize(inputs.get(self.source_column), boundaries=self.boundaries)

    @property
    def _variable_shape(self):
        return tensor_shape.TensorShape(tuple(self.source_column.shape) + (len(self.boundaries) + 1,))

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        return array_ops.one_hot(indices=math_ops.cast(inputs.get(self), dtypes.int64),
                                 depth=len(self.boundaries) + 1, on_value=1.0, off_value=0.0)

    @property
    def _num_buckets(self):
        return (len(self.boundaries) + 1) * self.source_column.shape[0]

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        tensor = inputs.get(self)
        batch_size = array_ops.shape(tensor)[0]
        dim = self.source_column.shape[0]
        i1 = array_ops.reshape(array_ops.tile(array_ops.expand_dims(math_ops.range(0, batch_size), 1), [1, dim]),
                               (-1,))
        i2 = array_ops.tile(math_ops.range(0, dim), [batch_size])
        bucket_indices = array_ops.reshape(tensor, (-1,)) + (len(self.boundaries) + 1) * i2
        indices = math_ops.cast(array_ops.transpose(array_ops.stack((i1, i2))), dtypes.int64)
        dense_shape = math_ops.cast(array_ops.stack([batch_size, dim]), dtypes.int64)
        return _CategoricalColumn.IdWeightPair(SparseTensor(indices, bucket_indices, dense_shape), None)


def bucketized_column(source_column, boundaries):
    """``source_column`` (a one-dimensional ``numeric_column``) discretized by sorted ``boundaries``: bucket
    ``i`` holds ``boundaries[i-1] <= x < boundaries[i]``; dense as one-hot, categorical as bucket ids."""
    if not isinstance(source_column, _NumericColumn):
        raise ValueError(f"source_column must be a column generated with numeric_column(). Given: {source_column}")
    if len(source_column.shape) > 1:
        raise ValueError(f"source_column must be one-dimensional column. Given: {source_column}")
    if not boundaries:
        raise ValueError("boundaries must not be empty.")
    if not isinstance(boundaries, (list, tuple)):
        raise ValueError("boundaries must be a sorted list.")
    for i in range(len(boundaries) - 1):
        if boundaries[i] >= boundaries[i + 1]:
            raise ValueError("boundaries must be a sorted list.")
    return _BucketizedColumn(source_column, tuple(boundaries))


# --- categorical ----------------------------------------------------------------------------------------------------


def _check_compatible(key, column_dtype, tensor_dtype):
    if column_dtype.is_integer != tensor_dtype.is_integer:
        raise ValueError("Column dtype and SparseTensors dtype must be compatible. "
                         f"key: {key}, column dtype: {column_dtype}, tensor dtype: {tensor_dtype}")


class _HashedCategoricalColumn(_CategoricalColumn, collections.namedtuple(
        "_HashedCategoricalColumn", ["key", "hash_bucket_size", "dtype"])):
    """See ``categorical_column_with_hash_bucket``."""

    @property
    def name(self):
        return self.key

    @property
    def _parse_example_spec(self):
        return {self.key: VarLenFeature(self.dtype)}

    def _transform_feature(self, inputs):
        tensor = _to_sparse_input_and_drop_ignore_values(inputs.get(self.key))
        if not isinstance(tensor, SparseTensor):
            raise ValueError("SparseColumn input must be a SparseTensor.")
        assert_string_or_int(tensor.dtype, prefix=f"column_name: {self.key} input_tensor")
        _check_compatible(self.key, self.dtype, tensor.dtype)
        values = tensor.values if self.dtype == dtypes.string else string_ops.as_string(tensor.values)
        ids = string_ops.string_to_hash_bucket_fast(values, self.hash_bucket_size, name="lookup")
        return SparseTensor(tensor.indices, ids, tensor.dense_shape)

    @property
    def _num_buckets(self):
        return self.hash_bucket_size

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        return _CategoricalColumn.IdWeightPair(inputs.get(self), None)


def categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=dtypes.string):
    """Sparse string (or integer, formatted as a string) features mapped to ids by TensorFlow's FarmHash
    fingerprint modulo ``hash_bucket_size``."""
    if hash_bucket_size is None:
        raise ValueError(f"hash_bucket_size must be set. key: {key}")
    if hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be at least 1. hash_bucket_size: {hash_bucket_size}, key: {key}")
    assert_key_is_string(key)
    dtype = dtypes.as_dtype(dtype)
    assert_string_or_int(dtype, prefix=f"column_name: {key}")
    return _HashedCategoricalColumn(key, hash_bucket_size, dtype)


class _VocabularyFileCategoricalColumn(_CategoricalColumn, collections.namedtuple(
        "_VocabularyFileCategoricalColumn",
        ("key", "vocabulary_file", "vocabulary_size", "num_oov_buckets", "dtype", "default_value"))):
    """See ``categorical_column_with_vocabulary_file``."""

    @property
    def name(self):
        return self.key

    @property
    def _parse_example_spec(self):
        return {self.key: VarLenFeature(self.dtype)}

    def _transform_feature(self, inputs):
        tensor = _to_sparse_input_and_drop_ignore_values(inputs.get(self.key))
        _check_compatible(self.key, self.dtype, tensor.dtype)
        assert_string_or_int(tensor.dtype, prefix=f"column_name: {self.key} input_tensor")
        key_dtype = self.dtype
        if tensor.dtype.is_integer:
            key_dtype = dtypes.int64
            tensor = math_ops.cast(tensor, dtypes.int64)
        table = lookup_ops.index_table_from_file(
            vocabulary_file=self.vocabulary_file, num_oov_buckets=self.num_oov_buckets,
            vocab_size=self.vocabulary_size, default_value=self.default_value, key_dtype=key_dtype,
            name=f"{self.key}_lookup")
        return table.lookup(tensor)

    @property
    def _num_buckets(self):
        return self.vocabulary_size + self.num_oov_buckets

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        return _CategoricalColumn.IdWeightPair(inputs.get(self), None)


def categorical_column_with_vocabulary_file(key, vocabulary_file, vocabulary_size=None, num_oov_buckets=0,
                                            default_value=None, dtype=dtypes.string):
    """Sparse features mapped to their line number in ``vocabulary_file``; others to ``default_value`` (-1)
    or, with ``num_oov_buckets``, to a hash bucket after the vocabulary."""
    if not vocabulary_file:
        raise ValueError(f"Missing vocabulary_file in {key}.")
    if vocabulary_size is None:
        if not gfile.Exists(vocabulary_file):
            raise ValueError(f"vocabulary_file in {key} does not exist.")
        with gfile.GFile(vocabulary_file, mode="rb") as f:
            vocabulary_size = sum(1 for _ in f)
    if vocabulary_size < 1:
        raise ValueError(f"Invalid vocabulary_size in {key}.")
    if num_oov_buckets:
        if default_value is not None:
            raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
        if num_oov_buckets < 0:
            raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    dtype = dtypes.as_dtype(dtype)
    assert_string_or_int(dtype, prefix=f"column_name: {key}")
    assert_key_is_string(key)
    return _VocabularyFileCategoricalColumn(
        key=key, vocabulary_file=vocabulary_file, vocabulary_size=vocabulary_size,
        num_oov_buckets=0 if num_oov_buckets is None else num_oov_buckets,
        default_value=-1 if default_value is None else default_value, dtype=dtype)


class _VocabularyListCategoricalColumn(_CategoricalColumn, collections.namedtuple(
        "_VocabularyListCategoricalColumn",
        ("key", "vocabulary_list", "dtype", "default_value", "num_oov_buckets"))):
    """See ``categorical_column_with_vocabulary_list``."""

    @property
    def name(self):
        return self.key

    @property
    def _parse_example_spec(self):
        return {self.key: VarLenFeature(self.dtype)}

    def _transform_feature(self, inputs):
        tensor = _to_sparse_input_and_drop_ignore_values(inputs.get(self.key))
        _check_compatible(self.key, self.dtype, tensor.dtype)
        assert_string_or_int(tensor.dtype, prefix=f"column_name: {self.key} input_tensor")
        key_dtype = self.dtype
        if tensor.dtype.is_integer:
            key_dtype = dtypes.int64
            tensor = math_ops.cast(tensor, dtypes.int64)
        table = lookup_ops.index_table_from_tensor(
            vocabulary_list=tuple(self.vocabulary_list), default_value=self.default_value,
            num_oov_buckets=self.num_oov_buckets, dtype=key_dtype, name=f"{self.key}_lookup")
        return table.lookup(tensor)

    @property
    def _num_buckets(self):
        return len(self.vocabulary_list) + self.num_oov_buckets

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        return _CategoricalColumn.IdWeightPair(inputs.get(self), None)


def categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None, default_value=-1, num_oov_buckets=0):
    """Sparse features mapped to their position in ``vocabulary_list``; others to ``default_value`` or, with
    ``num_oov_buckets``, to a hash bucket after the vocabulary."""
    if vocabulary_list is None or len(vocabulary_list) < 1:
        raise ValueError(f"vocabulary_list {vocabulary_list} must be non-empty, column_name: {key}")
    if len(set(vocabulary_list)) != len(vocabulary_list):
        raise ValueError(f"Duplicate keys in vocabulary_list {vocabulary_list}, column_name: {key}")
    vocabulary_dtype = dtypes.as_dtype(np.array(vocabulary_list).dtype)
    if num_oov_buckets:
        if default_value != -1:
            raise ValueError(f"Can't specify both num_oov_buckets and default_value in {key}.")
        if num_oov_buckets < 0:
            raise ValueError(f"Invalid num_oov_buckets {num_oov_buckets} in {key}.")
    assert_string_or_int(vocabulary_dtype, prefix=f"column_name: {key} vocabulary")
    if dtype is None:
        dtype = vocabulary_dtype
    else:
        dtype = dtypes.as_dtype(dtype)
        if dtype.is_integer != vocabulary_dtype.is_integer:
            raise ValueError(f"dtype {dtype} and vocabulary dtype {vocabulary_dtype} do not match, "
                             f"column_name: {key}")
    assert_string_or_int(dtype, prefix=f"column_name: {key}")
    assert_key_is_string(key)
    return _VocabularyListCategoricalColumn(key=key, vocabulary_list=tuple(vocabulary_list), dtype=dtype,
                                            default_value=default_value, num_oov_buckets=num_oov_buckets)


class _IdentityCategoricalColumn(_CategoricalColumn, collections.namedtuple(
        "_IdentityCategoricalColumn", ("key", "num_buckets", "default_value"))):
    """See ``categorical_column_with_identity``."""

    @property
    def name(self):
        return self.key

    @property
    def _parse_example_spec(self):
        return {self.key: VarLenFeature(dtypes.int64)}

    def _transform_feature(self, inputs):
        tensor = _to_sparse_input_and_drop_ignore_values(inputs.get(self.key))
        if not tensor.dtype.is_integer:
            raise ValueError(f"Invalid input, not integer. key: {self.key} dtype: {tensor.dtype}")
        values = tensor.values
        if values.dtype != dtypes.int64:
            values = math_ops.cast(values, dtypes.int64, name="values")
        if self.default_value is not None:
            num_buckets = math_ops.cast(self.num_buckets, dtypes.int64, name="num_buckets")
            zero = math_ops.cast(0, dtypes.int64, name="zero")
            out_of_range = math_ops.logical_or(values < zero, values >= num_buckets, name="out_of_range")
            defaults = array_ops.fill(dims=array_ops.shape(values),
                                      value=math_ops.cast(self.default_value, dtypes.int64), name="default_values")
            values = array_ops.where(out_of_range, defaults, values)
        return SparseTensor(indices=tensor.indices, values=values, dense_shape=tensor.dense_shape)

    @property
    def _num_buckets(self):
        return self.num_buckets

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        return _CategoricalColumn.IdWeightPair(inputs.get(self), None)


def categorical_column_with_identity(key, num_buckets, default_value=None):
    """Integer features used as ids in ``[0, num_buckets)``; ids out of range become ``default_value`` (when
    given; otherwise they fail the lookup downstream, as in TensorFlow)."""
    if num_buckets < 1:
        raise ValueError(f"num_buckets {num_buckets} < 1, column_name {key}")
    if default_value is not None and (default_value < 0 or default_value >= num_buckets):
        raise ValueError(f"default_value {default_value} not in range [0, {num_buckets}), column_name {key}")
    assert_key_is_string(key)
    return _IdentityCategoricalColumn(key=key, num_buckets=num_buckets, default_value=default_value)


class _WeightedCategoricalColumn(_CategoricalColumn, collections.namedtuple(
        "_WeightedCategoricalColumn", ("categorical_column", "weight_feature_key", "dtype"))):
    """See ``weighted_categorical_column``."""

    @property
    def name(self):
        return f"{self.categorical_column.name}_weighted_by_{self.weight_feature_key}"

    @property
    def _parse_example_spec(self):
        config = dict(self.categorical_column._parse_example_spec)
        if self.weight_feature_key in config:
            raise ValueError(f"Parse config {config[self.weight_feature_key]} already exists for "
                             f"{self.weight_feature_key}.")
        config[self.weight_feature_key] = VarLenFeature(self.dtype)
        return config

    @property
    def _num_buckets(self):
        return self.categorical_column._num_buckets

    def _transform_feature(self, inputs):
        weights = inputs.get(self.weight_feature_key)
        if weights is None:
            raise ValueError(f"Missing weights {self.weight_feature_key}.")
        weights = convert_to_tensor_or_sparse_tensor(weights)
        if self.dtype != weights.dtype.base_dtype:
            raise ValueError(f"Bad dtype, expected {self.dtype}, but got {weights.dtype}.")
        if not isinstance(weights, SparseTensor):
            weights = _to_sparse_input_and_drop_ignore_values(weights, ignore_value=0.0)
        if not weights.dtype.is_floating:
            weights = math_ops.cast(weights, dtypes.float32)
        return (inputs.get(self.categorical_column), weights)

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        tensors = inputs.get(self)
        return _CategoricalColumn.IdWeightPair(tensors[0], tensors[1])


def weighted_categorical_column(categorical_column, weight_feature_key, dtype=dtypes.float32):
    """``categorical_column`` with a weight per id, read from the feature ``weight_feature_key`` (same
    indices as the ids)."""
    dtype = None if dtype is None else dtypes.as_dtype(dtype)
    if dtype is None or not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype {dtype} is not convertible to float.")
    return _WeightedCategoricalColumn(categorical_column=categorical_column, weight_feature_key=weight_feature_key,
                                      dtype=dtype)


class _CrossedColumn(_CategoricalColumn, collections.namedtuple(
        "_CrossedColumn", ["keys", "hash_bucket_size", "hash_key"])):
    """See ``crossed_column``."""

    @property
    def name(self):
        names = [k.name if isinstance(k, _FeatureColumn) else k for k in _collect_leaf_level_keys(self)]
        return "_X_".join(sorted(names))

    @property
    def _parse_example_spec(self):
        config = {}
        for key in self.keys:
            if isinstance(key, _FeatureColumn):
                config.update(key._parse_example_spec)
            else:
                config.update({key: VarLenFeature(dtypes.string)})
        return config

    def _transform_feature(self, inputs):
        tensors = []
        for key in _collect_leaf_level_keys(self):
            if isinstance(key, str):
                tensors.append(inputs.get(key))
            elif isinstance(key, _CategoricalColumn):
                pair = key._get_sparse_tensors(inputs)
                if pair.weight_tensor is not None:
                    raise ValueError("crossed_column does not support weight_tensor, but the given column "
                                     f"populates weight_tensor. Given column: {key.name}")
                tensors.append(pair.id_tensor)
            else:
                raise ValueError(f"Unsupported column type. Given: {key}")
        return sparse_ops.cross_hashed(inputs=tensors, num_buckets=self.hash_bucket_size, hash_key=self.hash_key)

    @property
    def _num_buckets(self):
        return self.hash_bucket_size

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        return _CategoricalColumn.IdWeightPair(inputs.get(self), None)


def _collect_leaf_level_keys(cross):
    keys = []
    for k in cross.keys:
        if isinstance(k, _CrossedColumn):
            keys.extend(_collect_leaf_level_keys(k))
        else:
            keys.append(k)
    return keys


def crossed_column(keys, hash_bucket_size, hash_key=None):
    """The cross of ``keys`` (feature names or categorical columns other than hashed ones): each combination
    hashed with TensorFlow's ``FingerprintCat64`` (from ``hash_key``) into ``hash_bucket_size`` buckets."""
    if not hash_bucket_size or hash_bucket_size < 1:
        raise ValueError(f"hash_bucket_size must be > 1. hash_bucket_size: {hash_bucket_size}")
    if not keys or len(keys) < 2:
        raise ValueError(f"keys must be a list with length > 1. Given: {keys}")
    for key in keys:
        if not isinstance(key, (str, _CategoricalColumn)):
            raise ValueError("Unsupported key type. All keys must be either string, or categorical column except "
                             f"HashedCategoricalColumn. Given: {key}")
        if isinstance(key, _HashedCategoricalColumn):
            raise ValueError("categorical_column_with_hash_bucket is not supported for crossing. Hashing before "
                             "crossing will increase probability of collision. Instead, use the feature name as a "
                             f"string. Given: {key}")
    return _CrossedColumn(keys=tuple(keys), hash_bucket_size=hash_bucket_size, hash_key=hash_key)


# --- indicator ------------------------------------------------------------------------------------------------------


class _IndicatorColumn(_DenseColumn, _SequenceDenseColumn,
                       collections.namedtuple("_IndicatorColumn", ["categorical_column"])):
    """See ``indicator_column``."""

    @property
    def name(self):
        return f"{self.categorical_column.name}_indicator"

    def _transform_feature(self, inputs):
        pair = self.categorical_column._get_sparse_tensors(inputs)
        ids, weights = pair.id_tensor, pair.weight_tensor
        depth = int(self._variable_shape[-1])
        if weights is not None:
            merged = sparse_ops.sparse_merge(sp_ids=ids, sp_values=weights, vocab_size=depth)
            merged = sparse_ops.sparse_slice(merged, [0, 0], merged.dense_shape)
            from ferroflow.ops import segment_ops

            return segment_ops.scatter_nd(merged.indices, merged.values, merged.dense_shape)
        dense_ids = sparse_ops.sparse_tensor_to_dense(ids, default_value=-1)
        one_hot = array_ops.one_hot(dense_ids, depth=depth, on_value=1.0, off_value=0.0)
        return math_ops.reduce_sum(one_hot, axis=[-2])

    @property
    def _parse_example_spec(self):
        return self.categorical_column._parse_example_spec

    @property
    def _variable_shape(self):
        return tensor_shape.TensorShape([1, self.categorical_column._num_buckets])

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        from ferroflow.feature_column._sequence import _SequenceCategoricalColumn

        if isinstance(self.categorical_column, _SequenceCategoricalColumn):
            raise ValueError(
                f"In indicator_column: {self.name}. categorical_column must not be of type "
                "_SequenceCategoricalColumn. Suggested fix A: If you wish to use input_layer, use a non-sequence "
                "categorical_column_with_*. Suggested fix B: If you wish to create sequence input, use "
                f"sequence_input_layer instead of input_layer. Given (type {type(self.categorical_column)}): "
                f"{self.categorical_column}")
        return inputs.get(self)

    def _get_sequence_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        from ferroflow.feature_column._sequence import _SequenceCategoricalColumn

        if not isinstance(self.categorical_column, _SequenceCategoricalColumn):
            raise ValueError(
                f"In indicator_column: {self.name}. categorical_column must be of type _SequenceCategoricalColumn "
                "to use sequence_input_layer. Suggested fix: Use one of sequence_categorical_column_with_*. "
                f"Given (type {type(self.categorical_column)}): {self.categorical_column}")
        dense = inputs.get(self)
        sparse = self.categorical_column._get_sparse_tensors(inputs)
        return _SequenceDenseColumn.TensorSequenceLengthPair(
            dense_tensor=dense, sequence_length=sequence_length_from_sparse_tensor(sparse.id_tensor))


def indicator_column(categorical_column):
    """The multi-hot (or, with weights, weighted) dense representation of ``categorical_column``."""
    if not isinstance(categorical_column, _CategoricalColumn):
        raise ValueError(f"Unsupported input type. Input must be a CategoricalColumn. Given: {categorical_column}")
    return _IndicatorColumn(categorical_column)
