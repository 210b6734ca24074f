"""``tf.lite.experimental.nn``: the LSTM cell and ``dynamic_rnn`` TF1 offered
for models meant for TFLite.

In TensorFlow these wrap the cell in OpHint annotations so TOCO could fuse
the loop into one TFLite LSTM op. ferroflow trains them exactly like
``tf.nn.rnn_cell.LSTMCell`` and ``tf.nn.dynamic_rnn`` (same variables and
results); its converter does not convert graph loops yet, so converting a
model built with them raises an error naming the loop's ops.
"""

from ferroflow.ops.rnn import dynamic_rnn as _dynamic_rnn
from ferroflow.ops.rnn_cell_impl import LSTMCell


class TFLiteLSTMCell(LSTMCell):
    """An ``LSTMCell`` (TF1's TFLite-friendly variant, same arguments)."""


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                parallel_iterations=None, swap_memory=False, time_major=True, scope=None):
    """``tf.nn.dynamic_rnn`` with TFLite's default ``time_major=True``."""
    return _dynamic_rnn(cell, inputs, sequence_length=sequence_length, initial_state=initial_state,
                        dtype=dtype, parallel_iterations=parallel_iterations, swap_memory=swap_memory,
                        time_major=time_major, scope=scope)


__all__ = ["TFLiteLSTMCell", "dynamic_rnn"]
