"""``tf.nn.dynamic_rnn``'s fused path (``BlockLSTM`` ops) with ``sequence_length`` and with
``DropoutWrapper`` cells, against its ``while_loop`` path (``FERROFLOW_FUSED_RNN=0``).

With lengths, both must give the same outputs (zero past each row's end), final states (the state
after each row's last step, the initial state for rows of length 0) and gradients. Dropout draws
different masks on the two paths, so with keep probabilities below 1 the fused path is checked
against its own undropped values: each output is 0 or the cell's output over the keep probability,
about ``1 - p`` of them 0, and the state passed on is never dropped."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import ferroflow as tf

BATCH, TIME, DEPTH, UNITS = 4, 5, 3, 6
LENGTHS = (
    [0, 1, 5, 3],  # empty, one step, full, mixed
    [2, 2, 2, 2],  # every row ends before the input does (BlockLSTM runs 2 steps)
    [5, 5, 5, 5],
    [0, 0, 0, 0],
    [7, -1, 4, 1],  # longer than the input and negative act as 5 and 0
)


def _getter(getter, name, *args, **kwargs):
    """Fixed initial values per variable name, so both paths' graphs start from the same weights."""
    shape = [int(d) for d in kwargs["shape"]]
    rng = np.random.RandomState(zlib.crc32(name.encode()) % (2**31))
    kwargs["initializer"] = tf.constant_initializer((0.5 * rng.randn(*shape)).astype(np.float32))
    return getter(name, *args, **kwargs)


def _lstm(kind):
    if kind == "peephole":
        return tf.nn.rnn_cell.LSTMCell(UNITS, use_peepholes=True, forget_bias=0.5)
    if kind == "basic_concat":
        return tf.nn.rnn_cell.BasicLSTMCell(UNITS, state_is_tuple=False)
    return tf.nn.rnn_cell.BasicLSTMCell(UNITS, forget_bias=0.8)


def _make_cell(kind, keep=None):
    """``kind``'s cell; with ``keep`` (a keep-probability tensor) its LSTMs wrapped in DropoutWrappers
    dropping inputs and outputs."""
    def wrap(cell):
        if keep is None:
            return cell
        return tf.nn.rnn_cell.DropoutWrapper(cell, input_keep_prob=keep, output_keep_prob=keep)

    if kind == "multi":
        return tf.nn.rnn_cell.MultiRNNCell([wrap(_lstm("basic")), wrap(_lstm("peephole"))])
    if kind == "wrapped_multi":  # one wrapper around the whole stack
        return wrap(tf.nn.rnn_cell.MultiRNNCell([_lstm("peephole"), _lstm("basic")]))
    return wrap(_lstm(kind))


def _state_placeholders(cell, feeds):
    if isinstance(cell, tf.nn.rnn_cell.DropoutWrapper):
        return _state_placeholders(cell.wrapped_cell, feeds)
    if isinstance(cell, tf.nn.rnn_cell.MultiRNNCell):
        return tuple(_state_placeholders(c, feeds) for c in cell._cells)
    c0 = tf.placeholder(tf.float32, [BATCH, UNITS])
    h0 = tf.placeholder(tf.float32, [BATCH, UNITS])
    feeds += [c0, h0]
    if getattr(cell, "_state_is_tuple", True):
        return tf.nn.rnn_cell.LSTMStateTuple(c0, h0)
    return tf.concat([c0, h0], 1)


def _run(kind, time_major, with_state, fused, monkeypatch, dropout=False):
    """Outputs, final state and gradients (inputs, initial state, variables) of one dynamic_rnn
    over every length vector of ``LENGTHS``; with ``dropout``, keep probabilities fed 1.0."""
    monkeypatch.setenv("FERROFLOW_FUSED_RNN", "1" if fused else "0")
    rng = np.random.RandomState(3)
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [TIME, BATCH, DEPTH] if time_major else [BATCH, TIME, DEPTH], name="x")
        lengths = tf.placeholder(tf.int32, [BATCH], name="lengths")
        keep = tf.placeholder(tf.float32, [], name="keep") if dropout else None
        cell = _make_cell(kind, keep)
        feeds = [x]
        initial_state = _state_placeholders(cell, feeds) if with_state else None
        with tf.variable_scope("model", custom_getter=_getter):
            outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, initial_state=initial_state,
                                               dtype=tf.float32, time_major=time_major)
        flat_state = tf.nest.flatten(state)
        weights = np.random.RandomState(7).randn(*outputs.shape.as_list()).astype(np.float32)
        loss = tf.reduce_sum(outputs * weights) + sum(tf.reduce_sum(s * (k + 2.0)) for k, s in enumerate(flat_state))
        variables = tf.trainable_variables()
        fetches = [outputs] + flat_state + tf.gradients(loss, feeds + variables)
        op_types = {op.type for op in g.get_operations()}
        values = {f: rng.randn(*f.shape.as_list()).astype(np.float32) for f in feeds}
        if dropout:
            values[keep] = 1.0
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            runs = [sess.run(fetches, {**values, lengths: np.array(lens, np.int32)}) for lens in LENGTHS]
    return op_types, [v.name for v in variables], runs


@pytest.mark.parametrize("kind,time_major,with_state,dropout", [
    ("basic", False, True, False),
    ("basic", True, False, False),
    ("basic_concat", False, True, False),
    ("peephole", True, True, False),
    ("multi", False, True, False),
    ("multi", True, False, True),
    ("basic", False, True, True),
    ("wrapped_multi", True, True, True),
])
def test_fused_with_lengths_matches_the_loop(kind, time_major, with_state, dropout, monkeypatch):
    fused_ops, fused_names, fused = _run(kind, time_major, with_state, True, monkeypatch, dropout)
    loop_ops, loop_names, loop = _run(kind, time_major, with_state, False, monkeypatch, dropout)
    assert {"BlockLSTM", "BlockLSTMGrad"} <= fused_ops and "BlockLSTM" not in loop_ops
    if dropout:
        assert "RandomUniform" in fused_ops
    assert fused_names == loop_names
    for lens, got, want in zip(LENGTHS, fused, loop):
        assert len(got) == len(want)
        for j, (a, b) in enumerate(zip(got, want)):
            assert a.shape == b.shape, (lens, j)
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, err_msg=f"lengths {lens}, fetch {j}")
        outputs = got[0] if time_major else got[0].transpose(1, 0, 2)
        steps = np.arange(TIME)[:, None] >= np.array(lens)[None, :]
        assert not outputs[steps].any(), lens  # zeros past each row's end


def _op(graph, op_type, index):
    return [op for op in graph.get_operations() if op.type == op_type][index]


def test_dropout_draws_on_the_fused_outputs_and_inputs(monkeypatch):
    """Two DropoutWrapper layers, keep 0.6 on inputs and outputs: the BlockLSTM ops see the inputs
    dropped (layer 2: layer 1's outputs, dropped twice), the result is layer 2's op output dropped, and the final
    states are the ops' own undropped states at each row's last step."""
    monkeypatch.setenv("FERROFLOW_FUSED_RNN", "1")
    p, batch, time, depth = 0.6, 16, 20, 32
    rng = np.random.RandomState(9)
    x_value = rng.rand(batch, time, depth).astype(np.float32) + 0.5  # no zeros of its own
    lens = rng.randint(0, time + 1, size=batch).astype(np.int32)
    lens[:2] = (0, time)
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [batch, time, depth])
        keep = tf.placeholder(tf.float32, [])
        cell = tf.nn.rnn_cell.MultiRNNCell([
            tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicLSTMCell(depth), input_keep_prob=keep,
                                          output_keep_prob=keep)
            for _ in range(2)])
        outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=lens, dtype=tf.float32)
        first, second = _op(g, "BlockLSTM", 0), _op(g, "BlockLSTM", 1)
        fetches = [outputs, state, first.inputs[1], first.outputs[6], second.inputs[1], second.outputs[1],
                   second.outputs[6]]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out, st, x1, h1, x2, c2, h2 = sess.run(fetches, {x: x_value, keep: p})
            again = sess.run(outputs, {x: x_value, keep: p})

    def check_dropped(dropped, full, what, keep=p):
        kept = dropped != 0
        assert abs(kept.mean() - keep) < 0.03, (what, kept.mean())
        np.testing.assert_allclose(dropped[kept], full[kept] / keep, rtol=1e-5, atol=1e-6, err_msg=what)

    check_dropped(x1, x_value.transpose(1, 0, 2), "layer 1 input")
    # layer 1's output dropout, then layer 2's input dropout, as the loop's MultiRNNCell step does
    check_dropped(x2, h1, "layer 2 input (layer 1 output)", keep=p * p)
    running = np.arange(time)[:, None] < lens[None, :]
    out_tm = out.transpose(1, 0, 2)
    assert not out_tm[~running].any()
    check_dropped(out_tm[running], h2[running], "output")
    assert not np.array_equal(out, again)  # fresh masks per run
    last = np.clip(lens - 1, 0, None)
    rows = np.arange(batch)
    np.testing.assert_array_equal(st[1].c[lens > 0], c2[last, rows][lens > 0])
    np.testing.assert_array_equal(st[1].h[lens > 0], h2[last, rows][lens > 0])
    assert not st[1].h[lens == 0].any()  # the zero initial state


def test_output_dropout_leaves_the_state_as_the_loop_computes_it(monkeypatch):
    """A one-layer cell with only output dropout: the final state does not depend on the masks, so
    the fused and loop paths give the same state while their outputs are each 0 or h / p."""
    p = 0.5
    rng = np.random.RandomState(4)
    x_value = rng.randn(BATCH, TIME, DEPTH).astype(np.float32)
    lens = np.array([0, 1, 5, 3], np.int32)
    results = {}
    for fused in (True, False):
        monkeypatch.setenv("FERROFLOW_FUSED_RNN", "1" if fused else "0")
        with tf.Graph().as_default() as g:
            x = tf.placeholder(tf.float32, [BATCH, TIME, DEPTH])
            keep = tf.placeholder(tf.float32, [])
            cell = tf.nn.rnn_cell.DropoutWrapper(_lstm("basic"), output_keep_prob=keep)
            with tf.variable_scope("model", custom_getter=_getter):
                outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=lens, dtype=tf.float32)
            assert ("BlockLSTM" in {op.type for op in g.get_operations()}) == fused
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                results[fused] = [sess.run([outputs, state], {x: x_value, keep: k}) for k in (p, 1.0)]
    (fused_dropped, fused_state), (fused_full, fused_state_1) = results[True]
    (loop_dropped, loop_state), (loop_full, _) = results[False]
    np.testing.assert_allclose(fused_full, loop_full, rtol=1e-5, atol=1e-6)
    for got in (fused_state, fused_state_1, loop_state):
        np.testing.assert_allclose(got, results[False][1][1], rtol=1e-5, atol=1e-6)
    for dropped in (fused_dropped, loop_dropped):
        kept = dropped != 0
        assert 0 < kept.sum() < (fused_full != 0).sum()
        np.testing.assert_allclose(dropped[kept], fused_full[kept] / p, rtol=1e-5, atol=1e-6)


def test_checkpoint_of_the_fused_dropout_stack_restores_into_the_loop(tmp_path, monkeypatch):
    rng = np.random.RandomState(5)
    x_value = rng.randn(BATCH, TIME, DEPTH).astype(np.float32)
    lens = np.array([3, 0, 5, 1], np.int32)

    def build():
        x = tf.placeholder(tf.float32, [BATCH, TIME, DEPTH])
        keep = tf.placeholder_with_default(1.0, [])
        cell = tf.nn.rnn_cell.MultiRNNCell([
            tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicLSTMCell(UNITS), output_keep_prob=keep),
            tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicLSTMCell(UNITS), input_keep_prob=keep,
                                          output_keep_prob=keep),
        ])
        outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=lens, dtype=tf.float32)
        return x, [outputs] + tf.nest.flatten(state)

    monkeypatch.setenv("FERROFLOW_FUSED_RNN", "1")
    with tf.Graph().as_default() as g:
        x, fetches = build()
        assert "BlockLSTM" in {op.type for op in g.get_operations()}
        names = sorted(v.name for v in tf.global_variables())
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            want = sess.run(fetches, {x: x_value})
            path = tf.train.Saver().save(sess, str(tmp_path / "model.ckpt"))
    assert names == [f"rnn/multi_rnn_cell/cell_{i}/basic_lstm_cell/{v}:0" for i in (0, 1) for v in ("bias", "kernel")]
    monkeypatch.setenv("FERROFLOW_FUSED_RNN", "0")
    with tf.Graph().as_default() as g:
        x, fetches = build()
        assert "BlockLSTM" not in {op.type for op in g.get_operations()}
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, path)
            got = sess.run(fetches, {x: x_value})
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_dropout_wrappers_the_fused_op_cannot_compute_keep_the_loop(monkeypatch):
    monkeypatch.delenv("FERROFLOW_FUSED_RNN", raising=False)
    wrap = tf.nn.rnn_cell.DropoutWrapper
    lstm = tf.nn.rnn_cell.BasicLSTMCell
    cases = [
        lambda: wrap(lstm(4), state_keep_prob=0.5),
        lambda: wrap(lstm(4), state_keep_prob=tf.placeholder(tf.float32, [])),
        lambda: wrap(lstm(4), output_keep_prob=0.5, variational_recurrent=True, dtype=tf.float32),
        lambda: tf.nn.rnn_cell.MultiRNNCell([lstm(4), wrap(lstm(4), state_keep_prob=0.9)]),
        lambda: wrap(tf.nn.rnn_cell.GRUCell(4), output_keep_prob=0.5),
    ]
    for make in cases:
        with tf.Graph().as_default() as g:
            tf.nn.dynamic_rnn(make(), tf.placeholder(tf.float32, [2, 5, 3]), sequence_length=[5, 2],
                              dtype=tf.float32)
            assert "BlockLSTM" not in {op.type for op in g.get_operations()}
    with tf.Graph().as_default() as g:  # and one that can
        tf.nn.dynamic_rnn(wrap(wrap(lstm(4), output_keep_prob=0.5), input_keep_prob=0.7),
                          tf.placeholder(tf.float32, [2, 5, 3]), sequence_length=[5, 2], dtype=tf.float32)
        assert "BlockLSTM" in {op.type for op in g.get_operations()}


def test_lengths_not_matching_the_batch_raise(monkeypatch):
    monkeypatch.setenv("FERROFLOW_FUSED_RNN", "1")
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r"sequence_length must be a vector of length batch_size \(4\)"):
            tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(3), tf.placeholder(tf.float32, [4, 5, 3]),
                              sequence_length=[1, 2], dtype=tf.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [4, 5, 3])
        lengths = tf.placeholder(tf.int32, [None])
        outputs, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(3), x, sequence_length=lengths,
                                       dtype=tf.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"(?i)shape|broadcast"):
                sess.run(outputs, {x: np.ones([4, 5, 3], np.float32), lengths: [1, 2]})


def test_nan_padding_stays_out_of_outputs_and_states(monkeypatch):
    """Padding past each length never shows in the outputs or the final state (a select, not a
    product with 0), on the fused path as in the loop."""
    x_value = np.random.RandomState(2).randn(BATCH, TIME, DEPTH).astype(np.float32)
    lens = np.array([2, 0, 5, 4], np.int32)
    for b, n in enumerate(lens):
        x_value[b, n:] = np.nan
    results = []
    for fused in (True, False):
        monkeypatch.setenv("FERROFLOW_FUSED_RNN", "1" if fused else "0")
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [BATCH, TIME, DEPTH])
            with tf.variable_scope("model", custom_getter=_getter):
                outputs, state = tf.nn.dynamic_rnn(_lstm("basic"), x, sequence_length=lens, dtype=tf.float32)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                results.append(sess.run([outputs, state.c, state.h], {x: x_value}))
    for got, want in zip(*results):
        assert np.isfinite(got).all()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_bidirectional_dynamic_rnn_with_lengths_and_an_unknown_time_axis():
    # [batch, None, depth] inputs (the CTC tutorials' features): the backward direction reverses each row up to
    # its length although the number of steps is only known at run time; it gives what a static time axis gives.
    rng = np.random.RandomState(0)
    data = rng.randn(BATCH, TIME, DEPTH).astype(np.float32)
    lengths = np.array([5, 3, 0, 1], np.int32)
    outs = []
    for time in (None, TIME):
        x = tf.placeholder(tf.float32, [None, time, DEPTH])
        seq = tf.placeholder(tf.int32, [None])
        with tf.variable_scope("birnn", reuse=tf.AUTO_REUSE,
                               initializer=tf.constant_initializer(np.linspace(-0.5, 0.5, 7))):
            (fw, bw), _ = tf.nn.bidirectional_dynamic_rnn(
                tf.nn.rnn_cell.LSTMCell(UNITS), tf.nn.rnn_cell.LSTMCell(UNITS), x, seq, dtype=tf.float32)
        outs.append((x, seq, fw, bw))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = [sess.run([fw, bw], {x: data, seq: lengths}) for x, seq, fw, bw in outs]
    for a, b in zip(got[0], got[1]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    assert np.abs(got[0][1][1, :3]).sum() > 0 and np.all(got[0][1][1, 3:] == 0)
