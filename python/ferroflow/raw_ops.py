"""``tf.raw_ops``: ops built directly by their TensorFlow op name, every argument by keyword.

Only the ops listed here so far: the fused LSTM (``BlockLSTM``, ``BlockLSTMV2``
and their gradient ops) and the bitwise ops (``BitwiseAnd`` ... ``PopulationCount``).
"""

from ferroflow.ops.bitwise_ops import (
    BitwiseAnd,
    BitwiseOr,
    BitwiseXor,
    Invert,
    LeftShift,
    PopulationCount,
    RightShift,
)
from ferroflow.ops.lstm_ops import BlockLSTM, BlockLSTMGrad, BlockLSTMGradV2, BlockLSTMV2

__all__ = ["BitwiseAnd", "BitwiseOr", "BitwiseXor", "BlockLSTM", "BlockLSTMGrad", "BlockLSTMGradV2", "BlockLSTMV2",
           "Invert", "LeftShift", "PopulationCount", "RightShift"]
