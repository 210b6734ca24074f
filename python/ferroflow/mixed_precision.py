"""``tf.compat.v1.mixed_precision``: TF1's loss scales, the loss-scaling optimizer and the graph-rewrite switch."""

import types as _types

from ferroflow.training.experimental.loss_scale import DynamicLossScale, FixedLossScale, LossScale
from ferroflow.training.experimental.loss_scale_optimizer import MixedPrecisionLossScaleOptimizer
from ferroflow.training.experimental.mixed_precision import (
    disable_mixed_precision_graph_rewrite,
    enable_mixed_precision_graph_rewrite,
)

#: ``tf.compat.v1.mixed_precision.experimental``: the loss scales under their older names.
experimental = _types.ModuleType("ferroflow.mixed_precision.experimental")
experimental.LossScale = LossScale
experimental.FixedLossScale = FixedLossScale
experimental.DynamicLossScale = DynamicLossScale

__all__ = [
    "DynamicLossScale", "FixedLossScale", "LossScale", "MixedPrecisionLossScaleOptimizer",
    "disable_mixed_precision_graph_rewrite", "enable_mixed_precision_graph_rewrite", "experimental",
]
