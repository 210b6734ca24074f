"""The fused LSTM: ``tf.raw_ops.BlockLSTM(V2)`` and their gradient ops against TensorFlow 2.21's
values (``tests/fixtures/block_lstm``, made by ``tools/make_block_lstm_fixtures.py``), and
``tf.nn.dynamic_rnn``'s fused path (one ``BlockLSTM`` op) against its ``while_loop`` path
(``FERROFLOW_FUSED_RNN=0``): outputs, final states, gradients, training steps and checkpoints."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import ferroflow as tf

OUTPUTS = ("i", "cs", "f", "o", "ci", "co", "h")
GRADS = ("x_grad", "cs_prev_grad", "h_prev_grad", "w_grad", "wci_grad", "wcf_grad", "wco_grad", "b_grad")
INPUTS = ("x", "cs_prev", "h_prev", "w", "wci", "wcf", "wco", "b")


def _cases(fixtures):
    data = np.load(fixtures / "block_lstm" / "block_lstm.npz")
    cases = {}
    for key in data.files:
        case, name = key.split("/")
        cases.setdefault(case, {})[name] = data[key]
    return cases


@pytest.fixture
def block_cases(fixtures):
    return _cases(fixtures)


def _attrs(c):
    attrs = {"cell_clip": float(c["cell_clip"]), "use_peephole": bool(c["use_peephole"])}
    if str(c["op"]) == "BlockLSTM":
        attrs["forget_bias"] = float(c["forget_bias"])
    return attrs


def _forward(c):
    op = getattr(tf.raw_ops, str(c["op"]))
    return op(seq_len_max=int(c["seq_len_max"]), **{k: c[k] for k in INPUTS}, **_attrs(c))


def test_raw_ops_match_tensorflow(block_cases):
    for name, c in block_cases.items():
        with tf.Graph().as_default():
            fwd = _forward(c)
            grad_op = getattr(tf.raw_ops, str(c["op"]).replace("LSTM", "LSTMGrad"))
            grads = grad_op(seq_len_max=int(c["seq_len_max"]), **{k: c[k] for k in INPUTS},
                            **{k: c[k] for k in OUTPUTS}, cs_grad=c["cs_grad"], h_grad=c["h_grad"],
                            use_peephole=bool(c["use_peephole"]))
            assert [t.shape.as_list() for t in fwd] == [list(c["h"].shape)] * 7
            with tf.Session() as sess:
                got_fwd, got_grads = sess.run([list(fwd), list(grads)])
        for key, got in zip(OUTPUTS, got_fwd):
            np.testing.assert_allclose(got, c[key], rtol=1e-5, atol=1e-5, err_msg=f"{name}: {key}")
        for key, got in zip(GRADS, got_grads):
            np.testing.assert_allclose(got, c[key], rtol=1e-4, atol=1e-5, err_msg=f"{name}: {key}")


def test_gradients_of_block_lstm_are_tensorflows(block_cases):
    """tf.gradients through BlockLSTM(V2) builds its gradient op: the values TF's gradient op gave."""
    for name, c in block_cases.items():
        with tf.Graph().as_default():
            inputs = {k: tf.constant(c[k]) for k in INPUTS}
            op = getattr(tf.raw_ops, str(c["op"]))
            fwd = op(seq_len_max=int(c["seq_len_max"]), **inputs, **_attrs(c))
            loss = tf.reduce_sum(fwd.cs * c["cs_grad"]) + tf.reduce_sum(fwd.h * c["h_grad"])
            grads = tf.gradients(loss, [inputs[k] for k in INPUTS])
            with tf.Session() as sess:
                got = sess.run(grads)
        for key, g in zip(GRADS, got):
            np.testing.assert_allclose(g, c[key], rtol=1e-4, atol=1e-5, err_msg=f"{name}: {key}")


def test_bad_inputs_raise_typed_errors(block_cases):
    c = block_cases["v1_short"]
    args = {k: c[k] for k in INPUTS}
    with tf.Graph().as_default():
        slm = tf.placeholder(tf.int64, [])
        out = tf.raw_ops.BlockLSTM(seq_len_max=slm, **args)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"BlockLSTM.*seq_len_max must be in \[0, 6\]"):
                sess.run(out.h, {slm: 7})
    with tf.Graph().as_default():
        b = tf.placeholder(tf.float32, [None])
        out = tf.raw_ops.BlockLSTM(seq_len_max=2, **dict(args, b=b))
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"b.dim_size\(0\) != cell_size \* 4: 19 vs. 20"):
                sess.run(out.h, {b: np.zeros(19, np.float32)})
    with tf.Graph().as_default():
        half = {k: v.astype(np.float16) for k, v in args.items()}
        out = tf.raw_ops.BlockLSTM(seq_len_max=2, **half)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.UnimplementedError, match="float16"):
                sess.run(out.h)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="rank 3"):
            tf.raw_ops.BlockLSTM(seq_len_max=2, **dict(args, x=args["x"][0]))


# -- dynamic_rnn: the fused path against the loop -------------------------------------------------

BATCH, TIME, DEPTH, UNITS = 3, 5, 4, 6


def _value(name, shape):
    rng = np.random.RandomState(zlib.crc32(name.encode()) % (2**31))
    return (0.5 * rng.randn(*shape)).astype(np.float32)


def _getter(getter, name, *args, **kwargs):
    kwargs["initializer"] = tf.constant_initializer(_value(name, [int(d) for d in kwargs["shape"]]))
    return getter(name, *args, **kwargs)


def _make_cell(kind):
    if kind == "basic":
        return tf.nn.rnn_cell.BasicLSTMCell(UNITS, forget_bias=0.8)
    if kind == "basic_concat":
        return tf.nn.rnn_cell.BasicLSTMCell(UNITS, state_is_tuple=False)
    if kind == "peephole":
        return tf.nn.rnn_cell.LSTMCell(UNITS, use_peepholes=True, forget_bias=0.5)
    if kind == "multi":
        return tf.nn.rnn_cell.MultiRNNCell([
            tf.nn.rnn_cell.BasicLSTMCell(UNITS), tf.nn.rnn_cell.LSTMCell(UNITS, use_peepholes=True),
        ])
    raise AssertionError(kind)


def _state_placeholders(cell, feeds):
    """An initial state of placeholders for ``cell`` (appended to ``feeds``)."""
    if isinstance(cell, tf.nn.rnn_cell.MultiRNNCell):
        return tuple(_state_placeholders(c, feeds) for c in cell._cells)
    c0 = tf.placeholder(tf.float32, [BATCH, UNITS])
    h0 = tf.placeholder(tf.float32, [BATCH, UNITS])
    feeds += [c0, h0]
    return tf.nn.rnn_cell.LSTMStateTuple(c0, h0) if cell._state_is_tuple else tf.concat([c0, h0], 1)


def _build(kind, time_major, with_state):
    """A dynamic_rnn over placeholders; returns (feeds, fetches, gradient names)."""
    x = tf.placeholder(tf.float32, [TIME, BATCH, DEPTH] if time_major else [BATCH, TIME, DEPTH], name="x")
    cell = _make_cell(kind)
    feeds = [x]
    initial_state = _state_placeholders(cell, feeds) if with_state else None
    with tf.variable_scope("model", custom_getter=_getter):
        outputs, state = tf.nn.dynamic_rnn(cell, x, initial_state=initial_state, dtype=tf.float32,
                                           time_major=time_major)
    flat_state = tf.nest.flatten(state)
    weights = np.random.RandomState(7).randn(*outputs.shape.as_list()).astype(np.float32)
    loss = tf.reduce_sum(outputs * weights) + sum(tf.reduce_sum(s * (k + 2.0)) for k, s in enumerate(flat_state))
    variables = tf.trainable_variables()
    grads = tf.gradients(loss, feeds + variables)
    return feeds, [outputs] + flat_state + grads, [v.name for v in variables]


def _run(kind, time_major, with_state, fused, monkeypatch):
    monkeypatch.setenv("FERROFLOW_FUSED_RNN", "1" if fused else "0")
    rng = np.random.RandomState(3)
    with tf.Graph().as_default() as g:
        feeds, fetches, names = _build(kind, time_major, with_state)
        op_types = {op.type for op in g.get_operations()}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            values = {f: rng.randn(*f.shape.as_list()).astype(np.float32) for f in feeds}
            return op_types, names, sess.run(fetches, values)


@pytest.mark.parametrize("kind,time_major,with_state", [
    ("basic", False, False),
    ("basic", True, True),
    ("basic_concat", False, True),
    ("peephole", True, True),
    ("multi", False, False),
    ("multi", True, True),
])
def test_dynamic_rnn_fused_matches_the_loop(kind, time_major, with_state, monkeypatch):
    fused_ops, fused_names, fused = _run(kind, time_major, with_state, True, monkeypatch)
    loop_ops, loop_names, loop = _run(kind, time_major, with_state, False, monkeypatch)
    assert "BlockLSTM" in fused_ops and "BlockLSTMGrad" in fused_ops
    assert "BlockLSTM" not in loop_ops
    assert fused_names == loop_names
    assert len(fused) == len(loop)
    for j, (a, b) in enumerate(zip(fused, loop)):
        assert a.shape == b.shape, j
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=f"fetch {j}")


def test_dynamic_rnn_falls_back_to_the_loop(monkeypatch):
    """Cells and inputs BlockLSTM does not compute keep the while loop."""
    monkeypatch.delenv("FERROFLOW_FUSED_RNN", raising=False)
    cases = [
        lambda x: tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(4, cell_clip=1.0), x, dtype=tf.float32),
        lambda x: tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(4, num_proj=2), x, dtype=tf.float32),
        lambda x: tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(4, activation=tf.nn.relu), x, dtype=tf.float32),
        lambda x: tf.nn.dynamic_rnn(tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicLSTMCell(4), state_keep_prob=0.5),
                                    x, dtype=tf.float32),
        lambda x: tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(4), x, dtype=tf.float32),
    ]
    for build in cases:
        with tf.Graph().as_default() as g:
            build(tf.placeholder(tf.float32, [2, 5, 3]))
            assert "BlockLSTM" not in {op.type for op in g.get_operations()}
    with tf.Graph().as_default() as g:
        tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(4), tf.placeholder(tf.float32, [2, None, 3]),
                          dtype=tf.float32)
        assert "BlockLSTM" not in {op.type for op in g.get_operations()}


def _train(fused, monkeypatch, steps=3):
    monkeypatch.setenv("FERROFLOW_FUSED_RNN", "1" if fused else "0")
    rng = np.random.RandomState(11)
    x_value = rng.randn(BATCH, TIME, DEPTH).astype(np.float32)
    y_value = rng.randn(BATCH, UNITS).astype(np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [BATCH, TIME, DEPTH])
        with tf.variable_scope("model", custom_getter=_getter):
            outputs, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(UNITS), x, dtype=tf.float32)
        loss = tf.reduce_mean(tf.square(state.h - y_value)) + 0.1 * tf.reduce_mean(tf.square(outputs))
        train = tf.train.AdamOptimizer(0.05).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train], {x: x_value})[0] for _ in range(steps)]
            losses.append(sess.run(loss, {x: x_value}))
            return np.array(losses), sess.run(tf.trainable_variables())


def test_training_steps_match_the_loop(monkeypatch):
    fused_losses, fused_vars = _train(True, monkeypatch)
    loop_losses, loop_vars = _train(False, monkeypatch)
    assert fused_losses[-1] < fused_losses[0]
    np.testing.assert_allclose(fused_losses, loop_losses, rtol=1e-5, atol=1e-6)
    for a, b in zip(fused_vars, loop_vars):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_checkpoint_of_the_fused_path_restores_into_the_loop(tmp_path, monkeypatch):
    rng = np.random.RandomState(5)
    x_value = rng.randn(BATCH, TIME, DEPTH).astype(np.float32)

    def build():
        x = tf.placeholder(tf.float32, [BATCH, TIME, DEPTH])
        outputs, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(UNITS), x, dtype=tf.float32)
        return x, [outputs, state.c, state.h]

    monkeypatch.setenv("FERROFLOW_FUSED_RNN", "1")
    with tf.Graph().as_default() as g:
        x, fetches = build()
        assert "BlockLSTM" in {op.type for op in g.get_operations()}
        names = sorted(v.name for v in tf.global_variables())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            want = sess.run(fetches, {x: x_value})
            path = tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"))
    assert names == ["rnn/basic_lstm_cell/bias:0", "rnn/basic_lstm_cell/kernel:0"]
    monkeypatch.setenv("FERROFLOW_FUSED_RNN", "0")
    with tf.Graph().as_default() as g:
        x, fetches = build()
        assert "BlockLSTM" not in {op.type for op in g.get_operations()}
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, path)
            got = sess.run(fetches, {x: x_value})
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
