"""The RNN models of ``test_rnn_cell.py``, written once against either framework.

``build(tf, name)`` takes ``ferroflow`` or ``tensorflow.compat.v1`` (graph
mode, ``TF_USE_LEGACY_KERAS=1`` so that ``tf.nn.rnn_cell`` is TF1's cells) and
builds case ``name`` under ``variable_scope(name)``, so
``tools/make_rnn_cell_fixtures.py`` builds the same graphs in real TensorFlow
as the tests build in ferroflow, and one checkpoint holds every case's
variables (``<case>/rnn/basic_lstm_cell/kernel``, ...).
"""

import zlib

import numpy as np

BATCH = 2
DEPTH = 3
SEED = 7  # the graph-level seed (the dropout cases draw their masks from it)


def _basic_rnn(tf, xs):
    return tf.nn.static_rnn(tf.nn.rnn_cell.BasicRNNCell(4), xs, dtype=tf.float32)


def _basic_rnn_relu(tf, xs):
    return tf.nn.static_rnn(tf.nn.rnn_cell.BasicRNNCell(4, activation=tf.nn.relu), xs, dtype=tf.float32)


def _gru(tf, xs):
    return tf.nn.static_rnn(tf.nn.rnn_cell.GRUCell(4), xs, dtype=tf.float32)


def _basic_lstm(tf, xs):
    return tf.nn.static_rnn(tf.nn.rnn_cell.BasicLSTMCell(4), xs, dtype=tf.float32)


def _basic_lstm_concat(tf, xs):
    cell = tf.nn.rnn_cell.BasicLSTMCell(4, forget_bias=0.5, state_is_tuple=False)
    return tf.nn.static_rnn(cell, xs, dtype=tf.float32)


def _lstm(tf, xs):
    return tf.nn.static_rnn(tf.nn.rnn_cell.LSTMCell(4), xs, dtype=tf.float32)


def _lstm_peephole_proj(tf, xs):
    cell = tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True, cell_clip=0.8, num_proj=3, proj_clip=0.5, forget_bias=0.7)
    return tf.nn.static_rnn(cell, xs, dtype=tf.float32)


def _lstm_sharded(tf, xs):
    cell = tf.nn.rnn_cell.LSTMCell(4, num_proj=3, num_unit_shards=2, num_proj_shards=2)
    return tf.nn.static_rnn(cell, xs, dtype=tf.float32)


def _lstm_concat_state(tf, xs):
    cell = tf.nn.rnn_cell.LSTMCell(4, num_proj=2, state_is_tuple=False)
    return tf.nn.static_rnn(cell, xs, dtype=tf.float32)


def _multi(tf, xs):
    cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(4), tf.nn.rnn_cell.GRUCell(3)])
    return tf.nn.static_rnn(cell, xs, dtype=tf.float32)


def _multi_concat(tf, xs):
    cells = [tf.nn.rnn_cell.BasicRNNCell(4), tf.nn.rnn_cell.GRUCell(2)]
    return tf.nn.static_rnn(tf.nn.rnn_cell.MultiRNNCell(cells, state_is_tuple=False), xs, dtype=tf.float32)


def _lstm_seq_len(tf, xs):
    cell = tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True)
    return tf.nn.static_rnn(cell, xs, dtype=tf.float32, sequence_length=tf.constant([4, 2], tf.int64))


def _gru_seq_len_initial_state(tf, xs):
    cell = tf.nn.rnn_cell.GRUCell(4)
    h0 = tf.constant(np.linspace(-1, 1, BATCH * 4).reshape(BATCH, 4), tf.float32)
    return tf.nn.static_rnn(cell, xs, initial_state=h0, sequence_length=[1, 3])


def _residual(tf, xs):
    cell = tf.nn.rnn_cell.ResidualWrapper(tf.nn.rnn_cell.BasicRNNCell(DEPTH))
    return tf.nn.static_rnn(cell, xs, dtype=tf.float32)


def _bidirectional(tf, xs):
    fw = tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True)
    bw = tf.nn.rnn_cell.GRUCell(3)
    outputs, state_fw, state_bw = tf.nn.static_bidirectional_rnn(fw, bw, xs, dtype=tf.float32,
                                                                 sequence_length=[4, 2])
    return outputs, (state_fw, state_bw)


def _bidirectional_no_length(tf, xs):
    fw = tf.nn.rnn_cell.BasicRNNCell(2)
    bw = tf.nn.rnn_cell.BasicLSTMCell(3)
    outputs, state_fw, state_bw = tf.nn.static_bidirectional_rnn(fw, bw, xs, dtype=tf.float32)
    return outputs, (state_fw, state_bw)


def _dropout(tf, xs):
    cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicLSTMCell(4), input_keep_prob=0.7,
                                         output_keep_prob=0.8, state_keep_prob=0.6, seed=11)
    return tf.nn.static_rnn(cell, xs, dtype=tf.float32)


def _dropout_variational(tf, xs):
    cells = [tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.GRUCell(4), input_keep_prob=0.7, output_keep_prob=0.8,
                                           state_keep_prob=0.6, variational_recurrent=True, input_size=DEPTH,
                                           dtype=tf.float32, seed=5),
             tf.nn.rnn_cell.BasicLSTMCell(2)]
    return tf.nn.static_rnn(tf.nn.rnn_cell.MultiRNNCell(cells), xs, dtype=tf.float32)


# name: (time steps, static batch size?, builder)
CASES = {
    "basic_rnn": (3, True, _basic_rnn),
    "basic_rnn_relu": (3, True, _basic_rnn_relu),
    "gru": (3, True, _gru),
    "basic_lstm": (3, True, _basic_lstm),
    "basic_lstm_concat": (3, False, _basic_lstm_concat),
    "lstm": (3, True, _lstm),
    "lstm_peephole_proj": (3, True, _lstm_peephole_proj),
    "lstm_sharded": (2, True, _lstm_sharded),
    "lstm_concat_state": (2, False, _lstm_concat_state),
    "multi": (3, True, _multi),
    "multi_concat": (2, True, _multi_concat),
    "lstm_seq_len": (4, False, _lstm_seq_len),
    "gru_seq_len_initial_state": (4, True, _gru_seq_len_initial_state),
    "residual": (3, True, _residual),
    "bidirectional": (4, False, _bidirectional),
    "bidirectional_no_length": (3, True, _bidirectional_no_length),
    "dropout": (3, True, _dropout),
    "dropout_variational": (3, True, _dropout_variational),
}


def flatten(x):
    """The tensors of a nested list/tuple (namedtuples included), depth first."""
    if isinstance(x, (list, tuple)):
        return [t for e in x for t in flatten(e)]
    return [x]


def build(tf, name):
    """Case ``name``: ``(inputs, outputs, states, loss)``: the input placeholders, the flat lists of
    per-step outputs and final-state tensors, and a scalar weighting all of them."""
    steps, static_batch, fn = CASES[name]
    with tf.variable_scope(name):
        xs = [tf.placeholder(tf.float32, [BATCH if static_batch else None, DEPTH], name=f"x{t}") for t in range(steps)]
        outputs, state = fn(tf, xs)
        outputs, states = flatten(outputs), flatten(state)
        rng = np.random.default_rng(len(name))
        terms = [tf.reduce_sum(t * rng.normal(size=t.shape.as_list()[1:]).astype(np.float32))
                 for t in outputs + states]
        loss = tf.add_n(terms, name="loss")
    return xs, outputs, states, loss


def feed_values(name):
    """The input values of case ``name``: one ``[BATCH, DEPTH]`` array per step."""
    steps = CASES[name][0]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    return [rng.normal(size=[BATCH, DEPTH]).astype(np.float32) for _ in range(steps)]


def variable_value(var_name, shape):
    """The value the fixture gives variable ``var_name`` (a TF variable name without ``:0``)."""
    rng = np.random.default_rng(zlib.crc32(var_name.encode()))
    return (0.5 * rng.normal(size=shape)).astype(np.float32)
