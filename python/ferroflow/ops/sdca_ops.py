"""The SDCA linear solver's raw ops (``tf.compat.v1.train.sdca_optimizer``, ``sdca_fprint``,
``sdca_shrink_l1``): proximal stochastic dual coordinate ascent for linear models with L1 and L2
regularization, one mini-batch per run, as TensorFlow's ``SdcaOptimizer`` kernels compute it."""

from __future__ import annotations

from ferroflow.framework import dtypes, ops
from ferroflow.ops._op_util import make, make_op
from ferroflow.ops.state_ops import _ref

_LOSSES = ("logistic_loss", "squared_loss", "hinge_loss", "smooth_hinge_loss", "poisson_loss")


def _tensors(values, dtype, arg):
    if isinstance(values, (ops.Tensor,)) or not isinstance(values, (list, tuple)):
        raise TypeError(f"Expected list for '{arg}' argument to 'sdca_optimizer' Op, not {values!r}.")
    return [ops.convert_to_tensor(v, dtype=dtype, name=arg) for v in values]


def sdca_optimizer(sparse_example_indices, sparse_feature_indices, sparse_feature_values, dense_features,
                   example_weights, example_labels, sparse_indices, sparse_weights, dense_weights,
                   example_state_data, loss_type, l1, l2, num_loss_partitions, num_inner_iterations,
                   adaptative=True, name=None):
    """One pass of SDCA over a mini-batch.

    Returns ``(out_example_state_data, out_delta_sparse_weights, out_delta_dense_weights)``: the
    updated ``[num_examples, 4]`` state (dual variable, primal loss, dual loss, example weight)
    and, per feature group, the weight deltas to add to the weights (scaled by the caller as
    TF's ``SdcaModel`` does). Examples are visited in a seeded order, one thread, so a run is
    repeatable (TensorFlow's is not); converged weights are the same."""
    if loss_type not in _LOSSES:
        raise ValueError(f"loss_type must be one of {', '.join(_LOSSES)}, got {loss_type!r}")
    sparse_example_indices = _tensors(sparse_example_indices, dtypes.int64, "sparse_example_indices")
    sparse_feature_indices = _tensors(sparse_feature_indices, dtypes.int64, "sparse_feature_indices")
    sparse_feature_values = _tensors(sparse_feature_values, dtypes.float32, "sparse_feature_values")
    dense_features = _tensors(dense_features, dtypes.float32, "dense_features")
    sparse_indices = _tensors(sparse_indices, dtypes.int64, "sparse_indices")
    sparse_weights = _tensors(sparse_weights, dtypes.float32, "sparse_weights")
    dense_weights = _tensors(dense_weights, dtypes.float32, "dense_weights")
    n_sparse, n_dense = len(sparse_example_indices), len(dense_features)
    for arg, lst in (("sparse_feature_indices", sparse_feature_indices), ("sparse_indices", sparse_indices),
                     ("sparse_weights", sparse_weights)):
        if len(lst) != n_sparse:
            raise ValueError(f"List argument '{arg}' to 'sdca_optimizer' Op with length {len(lst)} must match "
                             f"length {n_sparse} of argument 'sparse_example_indices'.")
    if len(dense_weights) != n_dense:
        raise ValueError(f"List argument 'dense_weights' to 'sdca_optimizer' Op with length {len(dense_weights)} "
                         f"must match length {n_dense} of argument 'dense_features'.")
    if num_loss_partitions < 1 or num_inner_iterations < 1:
        raise ValueError("num_loss_partitions and num_inner_iterations must be >= 1")
    inputs = [*sparse_example_indices, *sparse_feature_indices, *sparse_feature_values, *dense_features,
              ops.convert_to_tensor(example_weights, dtype=dtypes.float32, name="example_weights"),
              ops.convert_to_tensor(example_labels, dtype=dtypes.float32, name="example_labels"),
              *sparse_indices, *sparse_weights, *dense_weights,
              ops.convert_to_tensor(example_state_data, dtype=dtypes.float32, name="example_state_data")]
    attrs = {"loss_type": loss_type, "adaptative": bool(adaptative), "num_sparse_features": n_sparse,
             "num_sparse_features_with_values": len(sparse_feature_values), "num_dense_features": n_dense,
             "l1": float(l1), "l2": float(l2), "num_loss_partitions": int(num_loss_partitions),
             "num_inner_iterations": int(num_inner_iterations)}
    op = make_op("SdcaOptimizer", inputs, attrs, name)
    outs = op._outputs
    return outs[0], list(outs[1:1 + n_sparse]), list(outs[1 + n_sparse:])


def sdca_fprint(input, name=None):  # noqa: A002 (TensorFlow's argument name)
    """128-bit fingerprints of a vector of strings as an int64 ``[n, 2]`` tensor (FarmHash's
    Fingerprint128; the first word is never 0 or 1)."""
    return make("SdcaFprint", [ops.convert_to_tensor(input, dtype=dtypes.string, name="input")], {}, name)


def sdca_shrink_l1(weights, l1, l2, name=None):
    """Applies SDCA's L1 proximal step, ``w = sign(w) * max(|w| - l1 / l2, 0)``, to each variable in
    ``weights`` in place; returns the Operation."""
    refs = [_ref(w) for w in weights]
    return make_op("SdcaShrinkL1", refs, {"num_features": len(refs), "l1": float(l1), "l2": float(l2)}, name)
