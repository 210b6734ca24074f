"""``tf.nn.rnn_cell``: the RNN cells and their state tuple (defined in ``rnn_cell_impl``)."""

from ferroflow.ops.rnn_cell_impl import (  # noqa: F401
    BasicLSTMCell,
    BasicRNNCell,
    DeviceWrapper,
    DropoutWrapper,
    GRUCell,
    LSTMCell,
    LSTMStateTuple,
    MultiRNNCell,
    ResidualWrapper,
    RNNCell,
)
