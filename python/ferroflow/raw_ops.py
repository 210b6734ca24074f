"""``tf.raw_ops``: ops built directly by their TensorFlow op name, every argument by keyword.

Only the ops listed here so far: the fused LSTM (``BlockLSTM``, ``BlockLSTMV2``
and their gradient ops).
"""

from ferroflow.ops.lstm_ops import BlockLSTM, BlockLSTMGrad, BlockLSTMGradV2, BlockLSTMV2

__all__ = ["BlockLSTM", "BlockLSTMGrad", "BlockLSTMGradV2", "BlockLSTMV2"]
