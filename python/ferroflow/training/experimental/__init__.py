"""``tf.train.experimental``: loss scaling for mixed precision and the mixed-precision graph rewrite switch."""

from ferroflow.training.experimental.loss_scale import DynamicLossScale, FixedLossScale, LossScale
from ferroflow.training.experimental.loss_scale_optimizer import MixedPrecisionLossScaleOptimizer
from ferroflow.training.experimental.mixed_precision import (
    disable_mixed_precision_graph_rewrite,
    enable_mixed_precision_graph_rewrite,
)
from ferroflow.training.experimental.python_state import PythonState

__all__ = [
    "DynamicLossScale", "FixedLossScale", "LossScale", "MixedPrecisionLossScaleOptimizer", "PythonState",
    "disable_mixed_precision_graph_rewrite", "enable_mixed_precision_graph_rewrite",
]
