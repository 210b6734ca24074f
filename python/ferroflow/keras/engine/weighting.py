"""Sample weights, class weights and output masks in Keras's losses and metrics (TF 1.x graph mode).

What ``fit(sample_weight=..., class_weight=...)`` does, as TensorFlow's Keras (tf_keras 2.21's ``training_v1``,
the TF1 training loop) does it:

- ``standardize_weights`` turns the user's ``sample_weight`` (``[batch]``, or ``[batch, time]`` with
  ``sample_weight_mode="temporal"``) and ``class_weight`` (``{class: weight}``, the class being the argmax of
  one-hot targets or the integer target) into one weight per sample (or per time step), their product when
  both are given;
- ``weighted_loss``: an output's loss is ``sum(loss * weight) / size(loss)`` (Keras's
  ``SUM_OVER_BATCH_SIZE``: weights scale, they do not renormalize); with an output mask the weights are
  multiplied by the mask scaled by ``size / kept``, so the loss is the weighted sum over the kept steps
  divided by their number (tf_keras 2.21; TF 1.15 divided by every step);
- ``mean_parts``: a metric is a weighted mean, ``sum(value * weight) / sum(weight)`` over the epoch; plain
  metrics are weighted by the output mask only, ``weighted_metrics`` by the sample weights times the mask.

Weights of a rank one off from what they weigh are squeezed or expanded on the last axis first (Keras's
``squeeze_or_expand_dimensions``), then broadcast.
"""

from __future__ import annotations

import numpy as np

from ferroflow.framework import dtypes, ops
from ferroflow.ops import array_ops, math_ops

__all__ = ["mean_parts", "reduce_loss", "standardize_weights", "weighted_loss", "with_mask"]


def standardize_weights(y, sample_weight=None, class_weight=None, sample_weight_mode=None):
    """One numpy weight per sample (per time step when ``temporal``) of targets ``y``, or None."""
    if isinstance(sample_weight, tuple):
        sample_weight = sample_weight[0]
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight)
    if sample_weight_mode is not None and sample_weight_mode != "samplewise":
        if sample_weight_mode != "temporal":
            raise ValueError(f'"sample_weight_mode should be None or "temporal". Found: {sample_weight_mode}')
        if y.ndim < 3:
            raise ValueError(f"Found a sample_weight array for an input with shape {y.shape}. Timestep-wise sample "
                             'weighting (use of sample_weight_mode="temporal") is restricted to outputs that are at '
                             "least 3D, i.e. that have a time dimension.")
        if sample_weight is not None and sample_weight.ndim != 2:
            raise ValueError(f"Found a sample_weight array with shape {sample_weight.shape}. In order to use "
                             "timestep-wise sample weighting, you should pass a 2D sample_weight array.")
    elif sample_weight is not None and sample_weight.ndim != 1:
        raise ValueError(f"Found a sample_weight array with shape {sample_weight.shape}. In order to use timestep-wise "
                         'sample weights, you should specify sample_weight_mode="temporal" in compile(). If you just '
                         "mean to use sample-wise weights, make sure your sample_weight array is 1D.")
    if sample_weight is not None and y.shape[:sample_weight.ndim] != sample_weight.shape:
        raise ValueError(f"Found a sample_weight array with shape {sample_weight.shape} for an input with shape "
                         f"{y.shape}. sample_weight cannot be broadcast.")
    class_sample_weight = None
    if class_weight is not None:
        if not isinstance(class_weight, dict):
            raise TypeError(f"class_weight must be a dict of class index to weight, got {class_weight!r}")
        if y.ndim > 2:
            raise ValueError("`class_weight` not supported for 3+ dimensional targets.")
        classes = y
        if y.ndim == 2:
            classes = np.argmax(y, axis=1) if y.shape[1] > 1 else y.reshape(y.shape[0])
        missing = {c.item() for c in np.unique(classes) if c not in class_weight}
        if missing:
            raise ValueError(f"`class_weight` must contain all classes in the data. The classes {missing} exist in "
                             "the data but not in `class_weight`.")
        class_sample_weight = np.asarray([class_weight[c] for c in classes.tolist()], np.float64)
    if class_sample_weight is not None and sample_weight is not None:
        return class_sample_weight * sample_weight
    if sample_weight is not None:
        return sample_weight
    return class_sample_weight


def _matched(target, weights):
    """``weights`` with its last axis squeezed or added so that its rank is ``target``'s (static ranks)."""
    rank, wrank = target.shape.rank, weights.shape.rank
    if rank is None or wrank is None or wrank == 0:
        return weights
    if wrank - rank == 1 and weights.shape.as_list()[-1] == 1:
        return array_ops.squeeze(weights, [-1])
    if rank - wrank == 1:
        return array_ops.expand_dims(weights, -1)
    return weights


def with_mask(like, weights, mask):
    """``weights * mask`` (the mask cast to ``like``'s type); either may be None."""
    if mask is None:
        return weights
    mask = math_ops.cast(mask, like.dtype.base_dtype)
    if weights is None:
        return mask
    return _matched(mask, math_ops.cast(weights, like.dtype.base_dtype)) * mask


def weighted_loss(per_sample, weights=None, mask=None):
    """``sum(per_sample * weights) / size(per_sample)``; a mask (True where kept) also weighs the steps by
    ``size / kept``."""
    if weights is not None:
        weights = ops.convert_to_tensor(weights)
    dtype = per_sample.dtype.base_dtype
    if mask is not None:
        mask = math_ops.cast(mask, dtype)
        if weights is None:
            weights = mask
        else:
            weights = _matched(mask, math_ops.cast(weights, dtype))
        total = math_ops.cast(array_ops.size(mask), dtype)
        scaled = mask * (total / math_ops.reduce_sum(mask))
        weights = with_mask(per_sample, weights, scaled)
    products = per_sample
    if weights is not None:
        products = math_ops.multiply(per_sample, _matched(per_sample, math_ops.cast(weights, dtype)))
    return math_ops.div_no_nan(math_ops.reduce_sum(products), math_ops.cast(array_ops.size(products), dtype),
                               name="value")


def mean_parts(values, weights=None, mask=None):
    """The (sum, count) a weighted mean of ``values`` adds for one batch."""
    values = math_ops.cast(values, dtypes.float32)
    weights = with_mask(values, weights, mask)
    if weights is None:
        return math_ops.reduce_sum(values), math_ops.cast(array_ops.size(values), dtypes.float32)
    weights = math_ops.cast(weights, dtypes.float32)
    weights = _matched(values, weights) * array_ops.ones_like(values)
    return math_ops.reduce_sum(values * weights), math_ops.reduce_sum(weights)


def reduce_loss(per_sample, weights=None, reduction="auto", mask=None):
    """A loss object's reduction of its weighted losses: ``'none'`` keeps them, ``'sum'`` sums them, ``'auto'``
    and ``'sum_over_batch_size'`` are ``weighted_loss``."""
    per_sample = ops.convert_to_tensor(per_sample)
    if per_sample.dtype.base_dtype != dtypes.float32 and not per_sample.dtype.is_floating:
        per_sample = math_ops.cast(per_sample, dtypes.float32)
    if reduction in ("auto", "sum_over_batch_size"):
        return weighted_loss(per_sample, weights, mask)
    dtype = per_sample.dtype.base_dtype
    weights = with_mask(per_sample, None if weights is None else ops.convert_to_tensor(weights), mask)
    products = per_sample if weights is None else \
        math_ops.multiply(per_sample, _matched(per_sample, math_ops.cast(weights, dtype)))
    if reduction == "none":
        return products
    return math_ops.reduce_sum(products, name="value")
