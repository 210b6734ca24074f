"""``tf.sparse``: ops on ``tf.SparseTensor`` (TensorFlow 1.x's names and arguments)."""

from ferroflow.framework.sparse_tensor import SparseTensor
from ferroflow.ops import sparse_ops as _ops
from ferroflow.ops.data_flow_ops import SparseConditionalAccumulator  # noqa: F401
from ferroflow.ops.sparse_ops import bincount, cross, cross_hashed, expand_dims, eye, from_dense

add = _ops.sparse_add
concat = _ops.sparse_concat
fill_empty_rows = _ops.sparse_fill_empty_rows
mask = _ops.sparse_mask
matmul = _ops.sparse_tensor_dense_matmul
maximum = _ops.sparse_maximum
merge = _ops.sparse_merge
minimum = _ops.sparse_minimum
placeholder = _ops.sparse_placeholder
reduce_max = _ops.sparse_reduce_max
reduce_max_sparse = _ops.sparse_reduce_max_sparse
reduce_sum = _ops.sparse_reduce_sum
reduce_sum_sparse = _ops.sparse_reduce_sum_sparse
reorder = _ops.sparse_reorder
reset_shape = _ops.sparse_reset_shape
reshape = _ops.sparse_reshape
retain = _ops.sparse_retain
segment_mean = _ops.sparse_segment_mean
segment_sqrt_n = _ops.sparse_segment_sqrt_n
segment_sum = _ops.sparse_segment_sum
slice = _ops.sparse_slice  # noqa: A001 - TensorFlow's name
softmax = _ops.sparse_softmax
sparse_dense_matmul = _ops.sparse_tensor_dense_matmul
split = _ops.sparse_split
to_dense = _ops.sparse_tensor_to_dense
to_indicator = _ops.sparse_to_indicator
transpose = _ops.sparse_transpose

__all__ = [
    "SparseTensor",
    "add",
    "bincount",
    "concat",
    "cross",
    "cross_hashed",
    "expand_dims",
    "eye",
    "fill_empty_rows",
    "from_dense",
    "mask",
    "matmul",
    "maximum",
    "merge",
    "minimum",
    "placeholder",
    "reduce_max",
    "reduce_max_sparse",
    "reduce_sum",
    "reduce_sum_sparse",
    "reorder",
    "reset_shape",
    "reshape",
    "retain",
    "segment_mean",
    "segment_sqrt_n",
    "segment_sum",
    "slice",
    "softmax",
    "sparse_dense_matmul",
    "split",
    "to_dense",
    "to_indicator",
    "transpose",
]
