"""``embedding_column`` and ``shared_embedding_columns``: dense embeddings of categorical ids, combined per
example (mean, sum or sqrtn) by ``safe_embedding_lookup_sparse``, with TensorFlow's variable names
(``.../embedding_weights``) so TF checkpoints of such models restore."""

from __future__ import annotations

import collections
import math

from ferroflow.feature_column._base import (
    _CategoricalColumn,
    _DenseColumn,
    _SequenceDenseColumn,
    sequence_length_from_sparse_tensor,
)
from ferroflow.framework import dtypes, ops, tensor_shape
from ferroflow.framework.sparse_tensor import SparseTensor
from ferroflow.ops import array_ops, embedding_ops, init_ops, sparse_ops
from ferroflow.ops import variable_scope as vs
from ferroflow.training import checkpoint_utils

__all__ = ["embedding_column", "shared_embedding_columns"]

_SEQUENCE_MISUSE = (
    "In embedding_column: {}. categorical_column must not be of type _SequenceCategoricalColumn. Suggested fix A: "
    "If you wish to use input_layer, use a non-sequence categorical_column_with_*. Suggested fix B: If you wish to "
    "create sequence input, use sequence_input_layer instead of input_layer. Given (type {}): {}")
_NOT_SEQUENCE = (
    "In embedding_column: {}. categorical_column must be of type _SequenceCategoricalColumn to use "
    "sequence_input_layer. Suggested fix: Use one of sequence_categorical_column_with_*. Given (type {}): {}")


def _is_sequence(column):
    from ferroflow.feature_column._sequence import _SequenceCategoricalColumn

    return isinstance(column, _SequenceCategoricalColumn)


def _restore_from_checkpoint(column, weights):
    if column.ckpt_to_load_from is not None:
        target = weights
        if hasattr(target, "_get_variable_list"):
            target = target._get_variable_list()
        checkpoint_utils.init_from_checkpoint(column.ckpt_to_load_from, {column.tensor_name_in_ckpt: target})


def safe_lookup(weights, ids, sparse_weights, combiner, name, max_norm=None):
    """``safe_embedding_lookup_sparse``; for ids of static rank 2 (every non-sequence column) without the
    reshapes to and from ``[batch, n]``, which are identities there: the same values from fewer ops."""
    rank = tensor_shape.dimension_value(ids.dense_shape.get_shape()[0])
    if rank != 2:
        return embedding_ops.safe_embedding_lookup_sparse(weights, ids, sparse_weights, combiner=combiner,
                                                          name=name, max_norm=max_norm)
    if sparse_weights is not None:
        sparse_weights = SparseTensor(ids.indices, sparse_weights.values, ids.dense_shape)
    with ops.name_scope(name, "embedding_lookup", [ids]):
        ids, sparse_weights = embedding_ops._prune_invalid_ids(ids, sparse_weights)
        if combiner != "sum":
            ids, sparse_weights = embedding_ops._prune_invalid_weights(ids, sparse_weights)
        ids, is_row_empty = sparse_ops.sparse_fill_empty_rows(ids, 0)
        if sparse_weights is not None:
            sparse_weights, _ = sparse_ops.sparse_fill_empty_rows(sparse_weights, 1.0)
        result = embedding_ops.embedding_lookup_sparse(weights, ids, sparse_weights, combiner=combiner,
                                                       partition_strategy="div", max_norm=max_norm)
        empty = array_ops.tile(array_ops.reshape(is_row_empty, [-1, 1]),
                               array_ops.stack([1, array_ops.shape(result)[1]]))
        return array_ops.where(empty, array_ops.zeros_like(result), result)


def _lookup(column, weights, pair):
    ids, sparse_weights = pair.id_tensor, pair.weight_tensor
    rank = tensor_shape.dimension_value(ids.dense_shape.get_shape()[0])
    if not column.use_safe_embedding_lookup and rank is not None and rank <= 2:
        return embedding_ops.embedding_lookup_sparse(weights, ids, sparse_weights, combiner=column.combiner,
                                                     name=f"{column.name}_weights", max_norm=column.max_norm)
    return safe_lookup(weights, ids, sparse_weights, column.combiner, f"{column.name}_weights", column.max_norm)


class _EmbeddingMixin:
    @property
    def _parse_example_spec(self):
        return self.categorical_column._parse_example_spec

    def _transform_feature(self, inputs):
        return inputs.get(self.categorical_column)

    @property
    def _variable_shape(self):
        return tensor_shape.TensorShape([self.dimension])

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        if _is_sequence(self.categorical_column):
            raise ValueError(_SEQUENCE_MISUSE.format(self.name, type(self.categorical_column),
                                                     self.categorical_column))
        return self._get_dense_tensor_internal(inputs, weight_collections, trainable)

    def _get_sequence_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        if not _is_sequence(self.categorical_column):
            raise ValueError(_NOT_SEQUENCE.format(self.name, type(self.categorical_column), self.categorical_column))
        dense = self._get_dense_tensor_internal(inputs, weight_collections, trainable)
        ids = self.categorical_column._get_sparse_tensors(inputs).id_tensor
        return _SequenceDenseColumn.TensorSequenceLengthPair(
            dense_tensor=dense, sequence_length=sequence_length_from_sparse_tensor(ids))


class _EmbeddingColumn(_EmbeddingMixin, _DenseColumn, _SequenceDenseColumn, collections.namedtuple(
        "_EmbeddingColumn", ("categorical_column", "dimension", "combiner", "initializer", "ckpt_to_load_from",
                             "tensor_name_in_ckpt", "max_norm", "trainable", "use_safe_embedding_lookup"))):
    """See ``embedding_column``."""

    @property
    def name(self):
        return f"{self.categorical_column.name}_embedding"

    def _get_dense_tensor_internal(self, inputs, weight_collections=None, trainable=None):
        pair = self.categorical_column._get_sparse_tensors(inputs, weight_collections=weight_collections,
                                                           trainable=trainable)
        weights = vs.get_variable(
            name="embedding_weights", shape=(self.categorical_column._num_buckets, self.dimension),
            dtype=dtypes.float32, initializer=self.initializer,
            trainable=self.trainable and (trainable is None or trainable), collections=weight_collections)
        _restore_from_checkpoint(self, weights)
        return _lookup(self, weights, pair)


def _check_embedding_args(dimension, ckpt_to_load_from, tensor_name_in_ckpt):
    if dimension is None or dimension < 1:
        raise ValueError(f"Invalid dimension {dimension}.")
    if (ckpt_to_load_from is None) != (tensor_name_in_ckpt is None):
        raise ValueError("Must specify both `ckpt_to_load_from` and `tensor_name_in_ckpt` or none of them.")


def embedding_column(categorical_column, dimension, combiner="mean", initializer=None, ckpt_to_load_from=None,
                     tensor_name_in_ckpt=None, max_norm=None, trainable=True, use_safe_embedding_lookup=True):
    """A dense column of ``dimension`` per example: the ``combiner`` of the embeddings of
    ``categorical_column``'s ids. ``initializer`` defaults to a truncated normal of stddev
    ``1/sqrt(dimension)``; ``ckpt_to_load_from`` / ``tensor_name_in_ckpt`` initialize the table from a
    checkpoint; ``max_norm`` clips each embedding's l2-norm before combining."""
    _check_embedding_args(dimension, ckpt_to_load_from, tensor_name_in_ckpt)
    if initializer is not None and not callable(initializer):
        raise ValueError(f"initializer must be callable if specified. Embedding of column_name: "
                         f"{categorical_column.name}")
    if initializer is None:
        initializer = init_ops.truncated_normal_initializer(mean=0.0, stddev=1 / math.sqrt(dimension))
    return _EmbeddingColumn(categorical_column=categorical_column, dimension=dimension, combiner=combiner,
                            initializer=initializer, ckpt_to_load_from=ckpt_to_load_from,
                            tensor_name_in_ckpt=tensor_name_in_ckpt, max_norm=max_norm, trainable=trainable,
                            use_safe_embedding_lookup=use_safe_embedding_lookup)


class _SharedEmbeddingColumn(_EmbeddingMixin, _DenseColumn, _SequenceDenseColumn, collections.namedtuple(
        "_SharedEmbeddingColumn", ("categorical_column", "dimension", "combiner", "initializer",
                                   "shared_embedding_collection_name", "ckpt_to_load_from", "tensor_name_in_ckpt",
                                   "max_norm", "trainable", "use_safe_embedding_lookup"))):
    """See ``shared_embedding_columns``."""

    @property
    def name(self):
        return f"{self.categorical_column.name}_shared_embedding"

    @property
    def _var_scope_name(self):
        return self.shared_embedding_collection_name

    def _get_dense_tensor_internal(self, inputs, weight_collections=None, trainable=None):
        with ops.name_scope(None, default_name=self.name):
            pair = self.categorical_column._get_sparse_tensors(inputs, weight_collections=weight_collections,
                                                               trainable=trainable)
            shape = (self.categorical_column._num_buckets, self.dimension)
            shared = ops.get_collection(self.shared_embedding_collection_name)
            if shared:
                if len(shared) > 1:
                    raise ValueError(
                        f"Collection {shared} can only contain one variable. Suggested fix A: Choose a unique name "
                        "for this collection. Suggested fix B: Do not add any variables to this collection. The "
                        "feature_column library already adds a variable under the hood.")
                weights = shared[0]
                if tuple(weights.get_shape().as_list()) != shape:
                    raise ValueError(
                        f"Shared embedding collection {self.shared_embedding_collection_name} contains variable "
                        f"{weights.name} of unexpected shape {weights.get_shape()}. Expected shape is {shape}. "
                        "Suggested fix A: Choose a unique name for this collection. Suggested fix B: Do not add "
                        "any variables to this collection. The feature_column library already adds a variable "
                        "under the hood.")
            else:
                weights = vs.get_variable(
                    name="embedding_weights", shape=shape, dtype=dtypes.float32, initializer=self.initializer,
                    trainable=self.trainable and (trainable is None or trainable), collections=weight_collections)
                ops.add_to_collection(self.shared_embedding_collection_name, weights)
            _restore_from_checkpoint(self, weights)
            return _lookup(self, weights, pair)


def _unwrap(column):
    from ferroflow.feature_column._categorical import _WeightedCategoricalColumn
    from ferroflow.feature_column._sequence import _SequenceCategoricalColumn

    while isinstance(column, (_WeightedCategoricalColumn, _SequenceCategoricalColumn)):
        column = column.categorical_column
    return column


def shared_embedding_columns(categorical_columns, dimension, combiner="mean", initializer=None,
                             shared_embedding_collection_name=None, ckpt_to_load_from=None,
                             tensor_name_in_ckpt=None, max_norm=None, trainable=True,
                             use_safe_embedding_lookup=True):
    """Embedding columns of ``categorical_columns`` (same type and bucket count) sharing one table, created
    once under the scope (and collection) ``shared_embedding_collection_name`` (by default the sorted
    column names joined by '_' plus '_shared_embedding')."""
    _check_embedding_args(dimension, ckpt_to_load_from, tensor_name_in_ckpt)
    if initializer is not None and not callable(initializer):
        raise ValueError("initializer must be callable if specified.")
    if initializer is None:
        initializer = init_ops.truncated_normal_initializer(mean=0.0, stddev=1.0 / math.sqrt(dimension))
    sorted_columns = sorted(categorical_columns, key=lambda x: x.name)
    c0 = sorted_columns[0]
    if not isinstance(c0, _CategoricalColumn):
        raise ValueError(f"All categorical_columns must be subclasses of _CategoricalColumn. Given: {c0}, of type: "
                         f"{type(c0)}")
    num_buckets = c0._num_buckets
    c0 = _unwrap(c0)
    for c in sorted_columns[1:]:
        c = _unwrap(c)
        if not isinstance(c, type(c0)):
            raise ValueError(
                "To use shared_embedding_column, all categorical_columns must have the same type, or be "
                "weighted_categorical_column or sequence column of the same type. Given column: "
                f"{c0} of type: {type(c0)} does not match given column: {c} of type: {type(c)}")
        if num_buckets != c._num_buckets:
            raise ValueError(
                "To use shared_embedding_column, all categorical_columns must have the same number of buckets. "
                f"ven column: {c0} with buckets: {num_buckets} does  not match column: {c} with buckets: "
                f"{c._num_buckets}")
    if not shared_embedding_collection_name:
        shared_embedding_collection_name = "_".join(c.name for c in sorted_columns) + "_shared_embedding"
    return [_SharedEmbeddingColumn(
        categorical_column=column, dimension=dimension, combiner=combiner, initializer=initializer,
        shared_embedding_collection_name=shared_embedding_collection_name, ckpt_to_load_from=ckpt_to_load_from,
        tensor_name_in_ckpt=tensor_name_in_ckpt, max_norm=max_norm, trainable=trainable,
        use_safe_embedding_lookup=use_safe_embedding_lookup) for column in categorical_columns]
