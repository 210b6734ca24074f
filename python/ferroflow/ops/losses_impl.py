"""``tf.losses`` (TF1): loss functions that weight, reduce and collect their result.

Every loss goes through ``compute_weighted_loss``: the per-element losses are cast to float32,
multiplied by ``weights`` (a scalar, or a tensor of the losses' rank whose every dimension is 1
or the losses' size), reduced as ``reduction`` says, cast back to the input dtype and added to
``loss_collection`` (``tf.GraphKeys.LOSSES`` by default).
"""

from __future__ import annotations

from ferroflow.framework import constant_op, dtypes, ops, tensor_util
from ferroflow.ops import array_ops, control_flow_ops, math_ops, nn_ops

__all__ = [
    "Reduction",
    "absolute_difference",
    "add_loss",
    "compute_weighted_loss",
    "cosine_distance",
    "get_losses",
    "get_regularization_loss",
    "get_regularization_losses",
    "get_total_loss",
    "hinge_loss",
    "huber_loss",
    "log_loss",
    "mean_pairwise_squared_error",
    "mean_squared_error",
    "sigmoid_cross_entropy",
    "softmax_cross_entropy",
    "sparse_softmax_cross_entropy",
]


class Reduction:
    """How ``compute_weighted_loss`` reduces weighted per-element losses.

    * ``NONE``: no reduction; the weighted losses keep their shape.
    * ``SUM``: the sum of the weighted losses.
    * ``MEAN``: that sum divided by the sum of the (broadcast) weights.
    * ``SUM_OVER_BATCH_SIZE``: that sum divided by the number of elements of the losses.
    * ``SUM_OVER_NONZERO_WEIGHTS`` (= ``SUM_BY_NONZERO_WEIGHTS``, the default): that sum divided by
      the number of elements whose weight is not zero.
    """

    NONE = "none"
    SUM = "weighted_sum"
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"
    MEAN = "weighted_mean"
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (
            cls.NONE,
            cls.SUM,
            cls.MEAN,
            cls.SUM_OVER_BATCH_SIZE,
            cls.SUM_OVER_NONZERO_WEIGHTS,
            cls.SUM_BY_NONZERO_WEIGHTS,
        )

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}. Key should be one of {cls.all()}.")


# -- weights broadcasting ------------------------------------------------------

_BROADCAST_ERROR = "weights can not be broadcast to values."


def _assert_broadcastable(weights, values):
    """Checks ``weights`` is a scalar or has ``values``' rank with each dimension 1 or equal.

    Decided at construction (ValueError, or a no_op when fine) when ranks and shapes are static;
    otherwise an Assert op.
    """
    with ops.name_scope(None, "assert_broadcastable", [weights, values]) as scope:
        with ops.name_scope(None, "weights", [weights]) as weights_scope:
            weights = ops.convert_to_tensor(weights, name=weights_scope)
            weights_shape = array_ops.shape(weights, name="shape")
            weights_rank = array_ops.rank(weights, name="rank")
        weights_rank_static = tensor_util.constant_value(weights_rank)
        with ops.name_scope(None, "values", [values]) as values_scope:
            values = ops.convert_to_tensor(values, name=values_scope)
            values_shape = array_ops.shape(values, name="shape")
            values_rank = array_ops.rank(values, name="rank")
        values_rank_static = tensor_util.constant_value(values_rank)

        if weights_rank_static is not None and values_rank_static is not None:
            if int(weights_rank_static) == 0:
                return control_flow_ops.no_op(name="static_scalar_check_success")
            if int(weights_rank_static) != int(values_rank_static):
                raise ValueError(
                    f"{_BROADCAST_ERROR} values.rank={int(values_rank_static)}. "
                    f"weights.rank={int(weights_rank_static)}. values.shape={values.shape}. "
                    f"weights.shape={weights.shape}. Received weights={weights}, values={values}"
                )
            weights_shape_static = tensor_util.constant_value(weights_shape)
            values_shape_static = tensor_util.constant_value(values_shape)
            if weights_shape_static is not None and values_shape_static is not None:
                for i, (w, v) in enumerate(zip(weights_shape_static, values_shape_static)):
                    if w not in (1, v):
                        raise ValueError(
                            f"{_BROADCAST_ERROR} Mismatch at dim {i}. values.shape={values_shape_static}, "
                            f"weights.shape={weights_shape_static}. Received weights={weights}, values={values}"
                        )
                return control_flow_ops.no_op(name="static_dims_check_success")

        is_scalar = math_ops.equal(0, weights_rank, name="is_scalar")
        # Pad both shapes to the larger rank (with sizes that never match) so that they can be
        # compared element-wise whatever the ranks; a rank mismatch fails through `same_rank`.
        longest = math_ops.maximum(weights_rank, values_rank)
        padded_weights = array_ops.concat(
            [weights_shape, array_ops.fill(array_ops.stack([longest - weights_rank]), -1)], 0
        )
        padded_values = array_ops.concat(
            [values_shape, array_ops.fill(array_ops.stack([longest - values_rank]), -2)], 0
        )
        dims_ok = math_ops.reduce_all(
            math_ops.logical_or(
                math_ops.equal(padded_weights, 1), math_ops.equal(padded_weights, padded_values)
            )
        )
        same_rank = math_ops.equal(values_rank, weights_rank, name="is_same_rank")
        is_valid = math_ops.logical_or(
            is_scalar, math_ops.logical_and(same_rank, dims_ok), name="is_valid_shape"
        )
        data = [
            _BROADCAST_ERROR,
            "weights.shape=",
            weights.name,
            weights_shape,
            "values.shape=",
            values.name,
            values_shape,
            "is_scalar=",
            is_scalar,
        ]
        return control_flow_ops.Assert(is_valid, data, name=scope)


def _broadcast_weights(weights, values):
    """``weights`` broadcast to the shape of ``values`` (checked by ``_assert_broadcastable``)."""
    with ops.name_scope(None, "broadcast_weights", [weights, values]) as scope:
        values = ops.convert_to_tensor(values, name="values")
        weights = ops.convert_to_tensor(weights, dtype=values.dtype.base_dtype, name="weights")
        ws, vs = weights.shape, values.shape
        if ws.is_fully_defined() and vs.is_fully_defined() and ws.is_compatible_with(vs):
            return weights
        with ops.control_dependencies([_assert_broadcastable(weights, values)]):
            return math_ops.multiply(weights, array_ops.ones_like(values), name=scope)


# -- reductions ----------------------------------------------------------------


def _safe_mean(losses, num_present):
    """``sum(losses) / num_present``, or 0 when ``num_present`` is 0."""
    total = math_ops.reduce_sum(losses)
    return math_ops.div_no_nan(total, num_present, name="value")


def _num_elements(losses):
    with ops.name_scope(None, "num_elements", [losses]) as scope:
        return array_ops.cast(array_ops.size(losses, name=scope), dtype=losses.dtype)


def _num_present(losses, weights, per_batch=False):
    """How many elements of ``losses`` have a non-zero (broadcast) weight; per batch row if asked."""
    if isinstance(weights, float) and weights != 0.0:
        return _num_elements(losses)
    with ops.name_scope(None, "num_present", [losses, weights]) as scope:
        weights = array_ops.cast(weights, dtype=dtypes.float32)
        present = array_ops.where(
            math_ops.equal(weights, 0.0), array_ops.zeros_like(weights), array_ops.ones_like(weights)
        )
        present = _broadcast_weights(present, losses)
        if per_batch:
            return math_ops.reduce_sum(
                present, axis=math_ops.range(1, array_ops.rank(present)), keepdims=True, name=scope
            )
        return math_ops.reduce_sum(present, name=scope)


def compute_weighted_loss(
    losses,
    weights=1.0,
    scope=None,
    loss_collection=ops.GraphKeys.LOSSES,
    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
):
    """``losses * weights`` reduced as ``reduction`` says, added to ``loss_collection`` and returned.

    ``weights`` is a scalar or a tensor of the rank of ``losses`` whose dimensions are each 1 or the
    matching size of ``losses``; anything else is a ValueError (when shapes are static) or fails at
    run time.
    """
    Reduction.validate(reduction)
    with ops.name_scope(scope, "weighted_loss", [losses, weights]):
        ops.get_default_graph()._last_loss_reduction = reduction
        with ops.control_dependencies([_assert_broadcastable(weights, losses)]):
            losses = ops.convert_to_tensor(losses)
            input_dtype = losses.dtype
            losses = array_ops.cast(losses, dtype=dtypes.float32)
            weights = array_ops.cast(weights, dtype=dtypes.float32)
            weighted_losses = math_ops.multiply(losses, weights)
            if reduction == Reduction.NONE:
                loss = weighted_losses
            else:
                loss = math_ops.reduce_sum(weighted_losses)
                if reduction == Reduction.MEAN:
                    loss = _safe_mean(
                        loss, math_ops.reduce_sum(math_ops.multiply(array_ops.ones_like(losses), weights))
                    )
                elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                    loss = _safe_mean(loss, _num_present(losses, weights))
                elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                    loss = _safe_mean(loss, _num_elements(losses))
            loss = array_ops.cast(loss, input_dtype)
            add_loss(loss, loss_collection)
            return loss


def _check_not_none(**kwargs):
    for name, value in kwargs.items():
        if value is None:
            raise ValueError(f"Argument `{name}` must not be None.")


def _float_pair(predictions, labels):
    predictions = array_ops.cast(predictions, dtype=dtypes.float32)
    labels = array_ops.cast(labels, dtype=dtypes.float32)
    predictions.shape.assert_is_compatible_with(labels.shape)
    return predictions, labels


# -- the losses ----------------------------------------------------------------


def absolute_difference(
    labels,
    predictions,
    weights=1.0,
    scope=None,
    loss_collection=ops.GraphKeys.LOSSES,
    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
):
    """Weighted ``|predictions - labels|``."""
    _check_not_none(labels=labels, predictions=predictions)
    with ops.name_scope(scope, "absolute_difference", [predictions, labels, weights]) as scope:
        predictions, labels = _float_pair(predictions, labels)
        losses = math_ops.abs(math_ops.subtract(predictions, labels))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def cosine_distance(
    labels,
    predictions,
    axis=None,
    weights=1.0,
    scope=None,
    loss_collection=ops.GraphKeys.LOSSES,
    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
    dim=None,
):
    """Weighted ``1 - sum(predictions * labels, axis)``; inputs are assumed unit-normalised along ``axis``."""
    axis = math_ops._lookup("axis", axis, "dim", dim)
    if axis is None:
        raise ValueError("You must specify argument `axis`.")
    _check_not_none(labels=labels, predictions=predictions)
    with ops.name_scope(scope, "cosine_distance_loss", [predictions, labels, weights]) as scope:
        predictions, labels = _float_pair(predictions, labels)
        radial_diffs = math_ops.multiply(predictions, labels)
        losses = math_ops.subtract(1.0, math_ops.reduce_sum(radial_diffs, axis=(axis,), keepdims=True))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def hinge_loss(
    labels,
    logits,
    weights=1.0,
    scope=None,
    loss_collection=ops.GraphKeys.LOSSES,
    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
):
    """Weighted ``max(0, 1 - (2 * labels - 1) * logits)`` for labels in {0, 1}."""
    _check_not_none(labels=labels, logits=logits)
    with ops.name_scope(scope, "hinge_loss", [logits, labels, weights]) as scope:
        logits, labels = _float_pair(logits, labels)
        all_ones = array_ops.ones_like(labels)
        signs = math_ops.subtract(math_ops.multiply(2.0, labels), all_ones)
        losses = nn_ops.relu(math_ops.subtract(all_ones, math_ops.multiply(signs, logits)))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def huber_loss(
    labels,
    predictions,
    weights=1.0,
    delta=1.0,
    scope=None,
    loss_collection=ops.GraphKeys.LOSSES,
    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
):
    """Weighted Huber loss: ``0.5 * e**2`` for ``|e| <= delta``, ``delta * (|e| - 0.5 * delta)`` beyond."""
    _check_not_none(labels=labels, predictions=predictions)
    with ops.name_scope(scope, "huber_loss", [predictions, labels, weights]) as scope:
        predictions, labels = _float_pair(predictions, labels)
        abs_error = math_ops.abs(math_ops.subtract(predictions, labels))
        quadratic = math_ops.minimum(abs_error, delta)
        linear = math_ops.subtract(abs_error, quadratic)
        losses = math_ops.add(
            math_ops.multiply(
                ops.convert_to_tensor(0.5, dtype=quadratic.dtype), math_ops.multiply(quadratic, quadratic)
            ),
            math_ops.multiply(delta, linear),
        )
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def log_loss(
    labels,
    predictions,
    weights=1.0,
    epsilon=1e-7,
    scope=None,
    loss_collection=ops.GraphKeys.LOSSES,
    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
):
    """Weighted ``-labels * log(p + eps) - (1 - labels) * log(1 - p + eps)``."""
    _check_not_none(labels=labels, predictions=predictions)
    with ops.name_scope(scope, "log_loss", [predictions, labels, weights]) as scope:
        predictions, labels = _float_pair(predictions, labels)
        positive = math_ops.multiply(labels, math_ops.log(math_ops.add(predictions, epsilon)))
        negative = math_ops.multiply(
            math_ops.subtract(1.0, labels),
            math_ops.log(math_ops.add(math_ops.subtract(1.0, predictions), epsilon)),
        )
        losses = math_ops.subtract(math_ops.negative(positive), negative)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def mean_pairwise_squared_error(
    labels, predictions, weights=1.0, scope=None, loss_collection=ops.GraphKeys.LOSSES
):
    """Weighted mean over each batch row of ``((p_i - p_j) - (l_i - l_j))**2`` over pairs ``i, j``.

    ``weights`` is a scalar or one weight per batch row (shape ``[batch]`` broadcastable to the
    per-row losses, usually ``[batch, 1, ...]``); the result is their weighted sum.
    """
    _check_not_none(labels=labels, predictions=predictions)
    with ops.name_scope(scope, "mean_pairwise_squared_error", [predictions, labels, weights]):
        weights = array_ops.cast(weights, dtype=dtypes.float32)
        labels = array_ops.cast(labels, dtype=dtypes.float32)
        with ops.control_dependencies([_assert_broadcastable(weights, labels)]):
            predictions = array_ops.cast(predictions, dtype=dtypes.float32)
            predictions.shape.assert_is_compatible_with(labels.shape)
            diffs = math_ops.subtract(predictions, labels)
            axis = math_ops.range(1, array_ops.rank(diffs))
            sum_squares_diff_per_batch = math_ops.reduce_sum(math_ops.square(diffs), axis=axis, keepdims=True)
            num_present_per_batch = _num_present(diffs, weights, per_batch=True)
            term1 = math_ops.multiply(
                2.0,
                math_ops.div_no_nan(
                    sum_squares_diff_per_batch,
                    math_ops.maximum(math_ops.subtract(num_present_per_batch, 1.0), 0.0),
                    name="value",
                ),
            )
            sum_diff = math_ops.reduce_sum(diffs, axis=axis, keepdims=True)
            term2 = math_ops.multiply(
                2.0,
                math_ops.div_no_nan(
                    math_ops.square(sum_diff),
                    math_ops.maximum(
                        math_ops.multiply(
                            num_present_per_batch, math_ops.subtract(num_present_per_batch, 1.0)
                        ),
                        0.0,
                    ),
                    name="value",
                ),
            )
            weighted_losses = math_ops.multiply(math_ops.subtract(term1, term2), weights)
            loss = math_ops.reduce_sum(weighted_losses)
            mean_loss = array_ops.where(
                math_ops.greater(math_ops.reduce_sum(num_present_per_batch), 0.0),
                loss,
                array_ops.zeros_like(loss),
                name="value",
            )
            add_loss(mean_loss, loss_collection)
            return mean_loss


def mean_squared_error(
    labels,
    predictions,
    weights=1.0,
    scope=None,
    loss_collection=ops.GraphKeys.LOSSES,
    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
):
    """Weighted ``(predictions - labels) ** 2``."""
    _check_not_none(labels=labels, predictions=predictions)
    with ops.name_scope(scope, "mean_squared_error", [predictions, labels, weights]) as scope:
        predictions, labels = _float_pair(predictions, labels)
        losses = math_ops.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def sigmoid_cross_entropy(
    multi_class_labels,
    logits,
    weights=1.0,
    label_smoothing=0,
    scope=None,
    loss_collection=ops.GraphKeys.LOSSES,
    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
):
    """Weighted sigmoid cross-entropy; ``label_smoothing`` moves labels toward 1/2:
    ``labels * (1 - label_smoothing) + 0.5 * label_smoothing``."""
    _check_not_none(multi_class_labels=multi_class_labels, logits=logits)
    with ops.name_scope(scope, "sigmoid_cross_entropy_loss", [logits, multi_class_labels, weights]) as scope:
        logits = ops.convert_to_tensor(logits)
        labels = array_ops.cast(multi_class_labels, logits.dtype)
        logits.shape.assert_is_compatible_with(labels.shape)
        if label_smoothing > 0:
            labels = math_ops.add(math_ops.multiply(labels, 1 - label_smoothing), 0.5 * label_smoothing)
        losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def softmax_cross_entropy(
    onehot_labels,
    logits,
    weights=1.0,
    label_smoothing=0,
    scope=None,
    loss_collection=ops.GraphKeys.LOSSES,
    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
):
    """Weighted softmax cross-entropy over the last axis; ``label_smoothing`` mixes in the uniform
    distribution: ``labels * (1 - label_smoothing) + label_smoothing / num_classes``."""
    _check_not_none(onehot_labels=onehot_labels, logits=logits)
    with ops.name_scope(scope, "softmax_cross_entropy_loss", [logits, onehot_labels, weights]) as scope:
        logits = ops.convert_to_tensor(logits)
        labels = array_ops.cast(onehot_labels, logits.dtype)
        logits.shape.assert_is_compatible_with(labels.shape)
        if label_smoothing > 0:
            num_classes = array_ops.cast(array_ops.shape(labels)[-1], logits.dtype)
            smooth_negatives = math_ops.truediv(
                ops.convert_to_tensor(label_smoothing, dtype=logits.dtype), num_classes
            )
            labels = math_ops.add(math_ops.multiply(labels, 1.0 - label_smoothing), smooth_negatives)
        labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
        losses = nn_ops.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def _drop_last_dim_if(x, condition):
    """``x`` without its last (size-1) dimension where the scalar bool ``condition`` holds at run time."""
    keep = array_ops.rank(x) - array_ops.cast(condition, dtypes.int32)
    return array_ops.reshape(x, array_ops.slice(array_ops.shape(x), [0], array_ops.stack([keep])))


def _remove_squeezable_dimensions(labels, predictions, weights=None, expected_rank_diff=0):
    """Squeezes the last dimension of labels, predictions or weights when their ranks are off by one."""
    with ops.name_scope(None, "remove_squeezable_dimensions", [labels, predictions]):
        predictions = ops.convert_to_tensor(predictions)
        labels = ops.convert_to_tensor(labels)
        p_shape, l_shape = predictions.shape, labels.shape
        if p_shape.ndims is not None and l_shape.ndims is not None:
            rank_diff = p_shape.ndims - l_shape.ndims
            if rank_diff == expected_rank_diff + 1 and p_shape[-1].is_compatible_with(1):
                predictions = array_ops.squeeze(predictions, [-1])
            elif rank_diff == expected_rank_diff - 1 and l_shape[-1].is_compatible_with(1):
                labels = array_ops.squeeze(labels, [-1])
        else:
            rank_diff = array_ops.rank(predictions) - array_ops.rank(labels)
            if p_shape.ndims is None or p_shape[-1].is_compatible_with(1):
                predictions = _drop_last_dim_if(
                    predictions, math_ops.equal(expected_rank_diff + 1, rank_diff)
                )
            if l_shape.ndims is None or l_shape[-1].is_compatible_with(1):
                labels = _drop_last_dim_if(labels, math_ops.equal(expected_rank_diff - 1, rank_diff))
    if weights is None:
        return labels, predictions, weights
    weights = ops.convert_to_tensor(weights)
    labels_rank, weights_rank = labels.shape.ndims, weights.shape.ndims
    if labels_rank is not None and weights_rank is not None:
        if weights_rank - labels_rank == 1:
            weights = array_ops.squeeze(weights, [-1])
        return labels, predictions, weights
    if weights_rank is None or (weights_rank > 0 and weights.shape[-1].is_compatible_with(1)):
        weights = _drop_last_dim_if(
            weights, math_ops.equal(1, array_ops.rank(weights) - array_ops.rank(labels))
        )
    return labels, predictions, weights


def sparse_softmax_cross_entropy(
    labels,
    logits,
    weights=1.0,
    scope=None,
    loss_collection=ops.GraphKeys.LOSSES,
    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS,
):
    """Weighted cross-entropy of ``logits`` against integer class ids ``labels`` (rank of logits - 1;
    a trailing size-1 dimension of labels or weights is squeezed)."""
    _check_not_none(labels=labels, logits=logits)
    with ops.name_scope(scope, "sparse_softmax_cross_entropy_loss", [logits, labels, weights]) as scope:
        labels, logits, weights = _remove_squeezable_dimensions(labels, logits, weights, expected_rank_diff=1)
        losses = nn_ops.sparse_softmax_cross_entropy_with_logits(
            labels=labels, logits=logits, name="xentropy"
        )
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


# -- the collections -----------------------------------------------------------


def add_loss(loss, loss_collection=ops.GraphKeys.LOSSES):
    """Adds ``loss`` to ``loss_collection`` (nothing when the collection is None or empty)."""
    if loss_collection:
        ops.add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=ops.GraphKeys.LOSSES):
    """The losses in ``loss_collection`` whose names match ``scope`` (a regex) when given."""
    return ops.get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    """The tensors in ``GraphKeys.REGULARIZATION_LOSSES`` (filtered by ``scope``)."""
    return ops.get_collection(ops.GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    """The sum of the regularization losses, or a constant 0.0 when there are none."""
    losses = get_regularization_losses(scope)
    if losses:
        return math_ops.add_n(losses, name=name)
    return constant_op.constant(0.0)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """The sum of ``get_losses()`` and, by default, the regularization losses (ValueError if none)."""
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope=scope)
    return math_ops.add_n(losses, name=name)
