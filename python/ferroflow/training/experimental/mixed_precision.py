"""``enable_mixed_precision_graph_rewrite`` / ``disable_mixed_precision_graph_rewrite`` (TF1).

TensorFlow's float16 rewrite (grappler's ``auto_mixed_precision``) only
touches ops placed on Volta-or-newer GPUs; on a CPU-only machine, which is
what ferroflow runs on, it changes no op's dtype. So, as in TF 2.21 on a CPU,
enabling it wraps the optimizer in a ``MixedPrecisionLossScaleOptimizer`` and
records that the rewrite is on (``mixed_precision_graph_rewrite_enabled()``),
and nothing else. The CPU's bfloat16 rewrite is a separate switch in the
session config: ``rewrite_options.auto_mixed_precision_onednn_bfloat16``.
"""

from __future__ import annotations

from ferroflow.platform import tf_logging as _logging
from ferroflow.training import optimizers
from ferroflow.training.experimental.loss_scale_optimizer import MixedPrecisionLossScaleOptimizer

__all__ = ["enable_mixed_precision_graph_rewrite", "disable_mixed_precision_graph_rewrite"]

_state = {"enabled": False}


def mixed_precision_graph_rewrite_enabled():
    """Whether ``enable_mixed_precision_graph_rewrite`` is in effect."""
    return _state["enabled"]


def _wrap_optimizer(opt, loss_scale):
    if isinstance(opt, MixedPrecisionLossScaleOptimizer):
        raise ValueError(
            '"opt" must not already be an instance of a MixedPrecisionLossScaleOptimizer. '
            "`enable_mixed_precision_graph_rewrite` will automatically wrap the optimizer with a "
            "MixedPrecisionLossScaleOptimizer.")
    if isinstance(opt, optimizers.Optimizer):
        return MixedPrecisionLossScaleOptimizer(opt, loss_scale)
    raise ValueError(
        f'"opt" must be an instance of a tf.train.Optimizer or a tf.keras.optimizers.Optimizer, but got: {opt}')


def enable_mixed_precision_graph_rewrite(opt, loss_scale="dynamic"):
    """Wraps ``opt`` in loss scaling and turns the (GPU-only) float16 graph rewrite on for new sessions."""
    opt = _wrap_optimizer(opt, loss_scale)
    if not _state["enabled"]:
        _logging.warn(
            "enable_mixed_precision_graph_rewrite: no GPU, so TensorFlow's float16 rewrite changes no op "
            "(the optimizer is wrapped with loss scaling); for bfloat16 on the CPU set "
            "ConfigProto.graph_options.rewrite_options.auto_mixed_precision_onednn_bfloat16 = ON.")
    _state["enabled"] = True
    return opt


def disable_mixed_precision_graph_rewrite():
    """Turns the rewrite off for sessions created from now on (wrapped optimizers keep loss scaling)."""
    if not _state["enabled"]:
        _logging.warn("disable_mixed_precision_graph_rewrite() called when mixed precision is already disabled.")
    _state["enabled"] = False
