"""The ``sequence_*`` columns (per-example sequences parsed as ``VarLenFeature``s) and
``sequence_input_layer``, the ``tf.contrib.feature_column`` function that turns them into a
``[batch, time, units]`` tensor with each example's sequence length."""

from __future__ import annotations

import collections

from ferroflow.feature_column import _categorical as cat
from ferroflow.feature_column._base import (
    _CategoricalColumn,
    _normalize_feature_columns,
    _SequenceDenseColumn,
    _verify_static_batch_size_equality,
    check_default_value,
    dynamic_shape,
    sequence_length_from_sparse_tensor,
)
from ferroflow.feature_column._base import _check_shape as check_shape
from ferroflow.framework import dtypes, ops, tensor_shape
from ferroflow.ops import array_ops, check_ops, math_ops, sparse_ops
from ferroflow.ops import variable_scope as vs
from ferroflow.ops.parsing_ops import VarLenFeature

__all__ = [
    "sequence_categorical_column_with_hash_bucket", "sequence_categorical_column_with_identity",
    "sequence_categorical_column_with_vocabulary_file", "sequence_categorical_column_with_vocabulary_list",
    "sequence_numeric_column", "sequence_input_layer", "concatenate_context_input",
]


class _SequenceCategoricalColumn(_CategoricalColumn, collections.namedtuple(
        "_SequenceCategoricalColumn", ["categorical_column"])):
    """A categorical column whose ids form a sequence per example: ids ``[batch, time, n]``."""

    @property
    def name(self):
        return self.categorical_column.name

    @property
    def _parse_example_spec(self):
        return self.categorical_column._parse_example_spec

    def _transform_feature(self, inputs):
        return self.categorical_column._transform_feature(inputs)

    @property
    def _num_buckets(self):
        return self.categorical_column._num_buckets

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        pair = self.categorical_column._get_sparse_tensors(inputs)
        ids, weights = pair.id_tensor, pair.weight_tensor
        shape = dynamic_shape(ids)
        target = [shape[0], shape[1], math_ops.reduce_prod(shape[2:])]
        ids = sparse_ops.sparse_reshape(ids, target)
        if weights is not None:
            weights = sparse_ops.sparse_reshape(weights, target)
        return _CategoricalColumn.IdWeightPair(ids, weights)


def sequence_categorical_column_with_identity(key, num_buckets, default_value=None):
    """A sequence of integer ids in ``[0, num_buckets)`` (see ``categorical_column_with_identity``)."""
    return _SequenceCategoricalColumn(cat.categorical_column_with_identity(key, num_buckets, default_value))


def sequence_categorical_column_with_hash_bucket(key, hash_bucket_size, dtype=dtypes.string):
    """A sequence of hashed ids (see ``categorical_column_with_hash_bucket``)."""
    return _SequenceCategoricalColumn(cat.categorical_column_with_hash_bucket(key, hash_bucket_size, dtype))


def sequence_categorical_column_with_vocabulary_file(key, vocabulary_file, vocabulary_size=None,
                                                     num_oov_buckets=0, default_value=None, dtype=dtypes.string):
    """A sequence of vocabulary-file ids (see ``categorical_column_with_vocabulary_file``)."""
    return _SequenceCategoricalColumn(cat.categorical_column_with_vocabulary_file(
        key, vocabulary_file, vocabulary_size=vocabulary_size, num_oov_buckets=num_oov_buckets,
        default_value=default_value, dtype=dtype))


def sequence_categorical_column_with_vocabulary_list(key, vocabulary_list, dtype=None, default_value=-1,
                                                     num_oov_buckets=0):
    """A sequence of vocabulary-list ids (see ``categorical_column_with_vocabulary_list``)."""
    return _SequenceCategoricalColumn(cat.categorical_column_with_vocabulary_list(
        key, vocabulary_list, dtype=dtype, default_value=default_value, num_oov_buckets=num_oov_buckets))


class _SequenceNumericColumn(_SequenceDenseColumn, collections.namedtuple(
        "_SequenceNumericColumn", ["key", "shape", "default_value", "dtype", "normalizer_fn"])):
    """See ``sequence_numeric_column``."""

    @property
    def name(self):
        return self.key

    @property
    def _parse_example_spec(self):
        return {self.key: VarLenFeature(self.dtype)}

    def _transform_feature(self, inputs):
        tensor = inputs.get(self.key)
        if self.normalizer_fn is not None:
            tensor = self.normalizer_fn(tensor)
        return tensor

    @property
    def _variable_shape(self):
        return tensor_shape.TensorShape(self.shape)

    def _get_sequence_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        sp = inputs.get(self)
        dense = sparse_ops.sparse_tensor_to_dense(sp, default_value=self.default_value)
        dense_shape = array_ops.concat([array_ops.shape(dense)[:1], [-1], self._variable_shape.as_list()], axis=0)
        dense = array_ops.reshape(dense, shape=dense_shape)
        if sp.shape.ndims == 2:
            num_elements = self._variable_shape.num_elements()
        else:
            num_elements = 1
        length = sequence_length_from_sparse_tensor(sp, num_elements=num_elements)
        return _SequenceDenseColumn.TensorSequenceLengthPair(dense_tensor=dense, sequence_length=length)


def sequence_numeric_column(key, shape=(1,), default_value=0.0, dtype=dtypes.float32, normalizer_fn=None):
    """A sequence of numeric values of ``shape`` per step; missing steps are ``default_value``."""
    shape = check_shape(shape, key)
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_integer or dtype.is_floating):
        raise ValueError(f"dtype must be convertible to float. dtype: {dtype}, key: {key}")
    if normalizer_fn is not None and not callable(normalizer_fn):
        raise TypeError(f"normalizer_fn must be a callable. Given: {normalizer_fn}")
    check_default_value((), default_value, dtype, key)
    return _SequenceNumericColumn(key, shape=shape, default_value=default_value, dtype=dtype,
                                  normalizer_fn=normalizer_fn)


def _assert_all_equal_and_return(tensors, name=None):
    with ops.name_scope(name, "assert_all_equal", values=tensors):
        if len(tensors) == 1:
            return tensors[0]
        asserts = [check_ops.assert_equal(tensors[0], t) for t in tensors[1:]]
        with ops.control_dependencies(asserts):
            return array_ops.identity(tensors[0])


def sequence_input_layer(features, feature_columns, weight_collections=None, trainable=True):
    """``tf.contrib.feature_column.sequence_input_layer``: the sequence columns' dense tensors concatenated
    into ``[batch, T, units]`` and the sequence length of each example (equal across columns)."""
    feature_columns = _normalize_feature_columns(feature_columns)
    for c in feature_columns:
        if not isinstance(c, _SequenceDenseColumn):
            raise ValueError("All feature_columns must be of type _SequenceDenseColumn. You can wrap a "
                             "sequence_categorical_column with an embedding_column or indicator_column. "
                             f"Given (type {type(c)}): {c}")
    from ferroflow.feature_column._base import _LazyBuilder

    with vs.variable_scope(None, default_name="sequence_input_layer", values=list(features.values())):
        builder = _LazyBuilder(features)
        outputs, lengths = [], []
        ordered = sorted(feature_columns, key=lambda x: x.name)
        for column in ordered:
            with vs.variable_scope(None, default_name=column._var_scope_name):
                dense, length = column._get_sequence_dense_tensor(builder, weight_collections=weight_collections,
                                                                  trainable=trainable)
                num_elements = column._variable_shape.num_elements()
                target = array_ops.concat([array_ops.shape(dense)[:2], [num_elements]], axis=0)
                outputs.append(array_ops.reshape(dense, shape=target))
                lengths.append(length)
        _verify_static_batch_size_equality(outputs, ordered)
        _verify_static_batch_size_equality(lengths, ordered)
        return array_ops.concat(outputs, -1), _assert_all_equal_and_return(lengths, name="sequence_length")


def concatenate_context_input(context_input, sequence_input):
    """Tiles ``context_input`` ``[batch, d]`` along the time axis of ``sequence_input`` ``[batch, T, d2]``
    and concatenates: ``[batch, T, d2 + d]``."""
    seq_len = array_ops.shape(sequence_input)[1]
    tiled = array_ops.tile(array_ops.expand_dims(context_input, 1), array_ops.concat([[1], [seq_len], [1]], 0))
    return array_ops.concat([sequence_input, tiled], 2)


