"""``tf.nn.embedding_lookup_sparse`` and ``tf.nn.safe_embedding_lookup_sparse``: embeddings of the ids in a
``SparseTensor``, combined per row (sum, mean or sqrtn, optionally weighted).

As in TensorFlow, the ids are looked up once each (``unique``), so the gradient to ``params`` is an
``IndexedSlices`` over the distinct ids; rows are combined with the ``SparseSegment*`` kernels.
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops
from ferroflow.framework.sparse_tensor import SparseTensor
from ferroflow.framework.tensor_shape import unknown_shape
from ferroflow.ops import array_ops, math_ops, sparse_ops
from ferroflow.ops.nn_ops import embedding_lookup

__all__ = ["embedding_lookup_sparse", "safe_embedding_lookup_sparse"]


def _as_param_list(params):
    if hasattr(params, "_get_variable_list"):  # a PartitionedVariable
        params = params._get_variable_list()
    return list(params) if isinstance(params, (list, tuple)) else [params]


def _segment_sum(data, segment_ids):
    """``segment_sum`` (ids sorted) as a sparse segment sum over every row."""
    n = array_ops.shape(data)[0]
    return sparse_ops.sparse_segment_sum(data, math_ops.range(0, n), segment_ids)


def embedding_lookup_sparse(params, sp_ids, sp_weights, partition_strategy="mod", name=None, combiner=None,
                            max_norm=None, allow_fast_lookup=False):
    """For each row ``r`` of ``sp_ids`` (``[batch, ...]`` int ids), the ``combiner`` of the embeddings
    ``params[id]`` of its ids, weighted by ``sp_weights`` (same indices) when given. Rows without ids get no
    output row past the last row that has one, as in TensorFlow."""
    if combiner is None:
        combiner = "mean"
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner}")
    params = _as_param_list(params)
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError(f"sp_ids must be SparseTensor, got {type(sp_ids)}")
    ignore_weights = sp_weights is None
    if not ignore_weights:
        if not isinstance(sp_weights, SparseTensor):
            raise TypeError(f"sp_weights must be either None or SparseTensor, got {type(sp_weights)}")
        sp_ids.values.get_shape().assert_is_compatible_with(sp_weights.values.get_shape())
        sp_ids.indices.get_shape().assert_is_compatible_with(sp_weights.indices.get_shape())
        sp_ids.dense_shape.get_shape().assert_is_compatible_with(sp_weights.dense_shape.get_shape())
    with ops.name_scope(name, "embedding_lookup_sparse", params + [sp_ids]) as scope:
        segment_ids = sp_ids.indices[:, 0]
        ids, idx = array_ops.unique(sp_ids.values)
        embeddings = embedding_lookup(params, ids, partition_strategy=partition_strategy, max_norm=max_norm)
        if ignore_weights:
            op = {"sum": sparse_ops.sparse_segment_sum, "mean": sparse_ops.sparse_segment_mean,
                  "sqrtn": sparse_ops.sparse_segment_sqrt_n}[combiner]
            return op(embeddings, idx, segment_ids, name=scope)
        weights = sp_weights.values
        embeddings = array_ops.gather(embeddings, idx)
        original_dtype = embeddings.dtype
        if embeddings.dtype in (dtypes.float16, dtypes.bfloat16):
            embeddings = math_ops.cast(embeddings, dtypes.float32)
        if weights.dtype != embeddings.dtype:
            weights = math_ops.cast(weights, embeddings.dtype)
        # Weights as a column broadcasting over each embedding.
        ones = array_ops.ones(array_ops.expand_dims(array_ops.rank(embeddings) - 1, 0), dtype=dtypes.int32)
        orig_weights_shape = weights.get_shape()
        weights = array_ops.reshape(weights, array_ops.concat([array_ops.shape(weights), ones], 0))
        if embeddings.get_shape().rank is not None:
            weights.set_shape(orig_weights_shape.concatenate([1] * (embeddings.get_shape().rank - 1)))
        embeddings = math_ops.multiply(embeddings, weights)
        summed = _segment_sum(embeddings, segment_ids)
        if combiner == "sum":
            out = summed
        elif combiner == "mean":
            out = math_ops.div_no_nan(summed, _segment_sum(weights, segment_ids))
        else:
            norm = math_ops.sqrt(_segment_sum(math_ops.pow(weights, 2), segment_ids))
            out = math_ops.div_no_nan(summed, norm)
        if out.dtype != original_dtype:
            out = math_ops.cast(out, original_dtype)
        return array_ops.identity(out, name=scope)


def _prune_invalid_ids(sparse_ids, sparse_weights):
    valid = math_ops.greater_equal(sparse_ids.values, 0)
    if sparse_weights is not None:
        valid = math_ops.logical_and(valid, array_ops.ones_like(sparse_weights.values, dtype=dtypes.bool))
    sparse_ids = sparse_ops.sparse_retain(sparse_ids, valid)
    if sparse_weights is not None:
        sparse_weights = sparse_ops.sparse_retain(sparse_weights, valid)
    return sparse_ids, sparse_weights


def _prune_invalid_weights(sparse_ids, sparse_weights):
    if sparse_weights is not None:
        valid = math_ops.greater(sparse_weights.values, 0)
        sparse_ids = sparse_ops.sparse_retain(sparse_ids, valid)
        sparse_weights = sparse_ops.sparse_retain(sparse_weights, valid)
    return sparse_ids, sparse_weights


def safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights=None, combiner="mean",
                                 default_id=None, name=None, partition_strategy="div", max_norm=None,
                                 allow_fast_lookup=False):
    """``embedding_lookup_sparse`` that tolerates invalid input: ids < 0 (and, unless summing, weights <= 0)
    are dropped; rows left empty get the embedding of ``default_id``, or zeros without one. Ids of any rank
    ``[d0, ..., dn, k]`` give a result ``[d0, ..., dn, dim]``."""
    if embedding_weights is None:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    embedding_weights = _as_param_list(embedding_weights)
    if len(embedding_weights) < 1:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    dtype = sparse_weights.dtype if sparse_weights is not None else None
    embedding_weights = [w if hasattr(w, "_variable") or dtype in (None, getattr(w, "dtype", None))
                         else ops.convert_to_tensor(w, dtype=dtype) for w in embedding_weights]
    with ops.name_scope(name, "embedding_lookup", embedding_weights + [sparse_ids, sparse_weights]) as scope:
        original_shape = sparse_ids.dense_shape
        rank_dim = sparse_ids.dense_shape.get_shape().as_list()[0] if sparse_ids.dense_shape.get_shape().rank else None
        original_rank = array_ops.size(original_shape) if rank_dim is None else rank_dim
        outer = math_ops.reduce_prod(array_ops.slice(original_shape, [0], array_ops.reshape(original_rank - 1, [1])))
        inner = array_ops.gather(original_shape, original_rank - 1)
        sparse_ids = sparse_ops.sparse_reshape(sparse_ids, array_ops.stack([outer, inner]))
        if sparse_weights is not None:
            sparse_weights = SparseTensor(sparse_ids.indices, sparse_weights.values, sparse_ids.dense_shape)
        sparse_ids, sparse_weights = _prune_invalid_ids(sparse_ids, sparse_weights)
        if combiner != "sum":
            sparse_ids, sparse_weights = _prune_invalid_weights(sparse_ids, sparse_weights)
        sparse_ids, is_row_empty = sparse_ops.sparse_fill_empty_rows(sparse_ids, default_id or 0)
        if sparse_weights is not None:
            sparse_weights, _ = sparse_ops.sparse_fill_empty_rows(sparse_weights, 1.0)
        result = embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights, combiner=combiner,
                                         partition_strategy=partition_strategy,
                                         name=None if default_id is None else scope, max_norm=max_norm)
        if default_id is None:
            is_row_empty = array_ops.tile(array_ops.reshape(is_row_empty, [-1, 1]),
                                          array_ops.stack([1, array_ops.shape(result)[1]]))
            result = array_ops.where(is_row_empty, array_ops.zeros_like(result), result, name=scope)
        lead = array_ops.slice(math_ops.cast(original_shape, dtypes.int32), [0],
                               array_ops.reshape(original_rank - 1, [1]))
        final = array_ops.reshape(result, array_ops.concat([lead, array_ops.slice(array_ops.shape(result), [1], [-1])], 0))
        lead_rank = None if rank_dim is None else rank_dim - 1
        final.set_shape(unknown_shape(rank=lead_rank).concatenate(result.get_shape()[1:])
                        if lead_rank is not None else unknown_shape())
        return final

