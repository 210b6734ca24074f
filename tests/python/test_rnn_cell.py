"""tf.nn.rnn_cell and tf.nn.static_rnn / static_bidirectional_rnn.

Three oracles: NumPy implementations of each cell's equations (below), the
finite-difference gradient checker, and real TensorFlow's outputs, states,
gradients and checkpoint for the models of ``_rnn_cell_cases.py``
(``tests/fixtures/rnn_cell``, written by ``tools/make_rnn_cell_fixtures.py``).
"""

import hashlib
import json
import pathlib

import numpy as np
import pytest

import ferroflow as tf
import ferroflow.compat.v1 as tf1
from _rnn_cell_cases import CASES, SEED, build, feed_values, flatten, variable_value

rnn_cell = tf.nn.rnn_cell
RNG = np.random.default_rng(1234)

# ferroflow's random streams are not TensorFlow's, so dropout masks differ from the fixture's.
RANDOM_CASES = {"dropout", "dropout_variational"}


# -- NumPy references -----------------------------------------------------------------------


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_basic_rnn(x, h, kernel, bias, act=np.tanh):
    out = act(np.concatenate([x, h], 1) @ kernel + bias)
    return out, out


def np_gru(x, h, gk, gb, ck, cb):
    r, u = np.split(sigmoid(np.concatenate([x, h], 1) @ gk + gb), 2, axis=1)
    c = np.tanh(np.concatenate([x, r * h], 1) @ ck + cb)
    new_h = u * h + (1 - u) * c
    return new_h, new_h


def np_lstm(x, c, h, kernel, bias, forget_bias=1.0, peep=None, cell_clip=None, proj=None, proj_clip=None):
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ kernel + bias, 4, axis=1)
    if peep is None:
        new_c = sigmoid(f + forget_bias) * c + sigmoid(i) * np.tanh(j)
    else:
        wf, wi, _ = peep
        new_c = sigmoid(f + forget_bias + wf * c) * c + sigmoid(i + wi * c) * np.tanh(j)
    if cell_clip is not None:
        new_c = np.clip(new_c, -cell_clip, cell_clip)
    new_h = sigmoid(o + (0 if peep is None else peep[2] * new_c)) * np.tanh(new_c)
    if proj is not None:
        new_h = new_h @ proj
        if proj_clip is not None:
            new_h = np.clip(new_h, -proj_clip, proj_clip)
    return new_c, new_h


# -- helpers ----------------------------------------------------------------------------------


def _inputs(steps, batch=2, depth=3, dtype=np.float32):
    return [RNG.normal(size=[batch, depth]).astype(dtype) for _ in range(steps)]


def _randomize(sess, variables, scale=0.5):
    """Gives every variable random values; returns them by name."""
    values = {}
    for v in variables:
        values[v.op.name] = (scale * RNG.normal(size=v.shape.as_list())).astype(v.dtype.base_dtype.as_numpy_dtype)
        v.load(values[v.op.name], sess)
    return values


def _run_static(cell, xs, **kwargs):
    """static_rnn of ``cell`` over constant inputs with random weights: (outputs, state, weights)."""
    outputs, state = tf.nn.static_rnn(cell, [tf.constant(x) for x in xs], **kwargs)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w = _randomize(sess, tf.global_variables())
        out, st = sess.run((outputs, state))
    return out, st, w


# -- the TensorFlow fixture ------------------------------------------------------------------


@pytest.fixture(scope="module")
def tf_expected():
    d = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "rnn_cell"
    meta = json.loads((d / "expected.json").read_text())
    blob = np.load(d / "expected.npy")
    arrays = {k: blob[o:o + int(np.prod(s, dtype=np.int64))].reshape(s) for k, o, s in meta["arrays"]}
    return meta, arrays, str(d / "model.ckpt")


def test_fixture_covers_every_case(tf_expected):
    meta, _, _ = tf_expected
    assert sorted(meta["cases"]) == sorted(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_variables_match_tensorflow(case, tf_expected):
    meta, _, _ = tf_expected
    build(tf, case)
    got = [[v.op.name, v.shape.as_list()] for v in tf.global_variables()]
    assert got == meta["cases"][case]["variables"]
    assert [v.op.name for v in tf.trainable_variables()] == meta["cases"][case]["trainable"]


@pytest.mark.parametrize("case", sorted(set(CASES) - RANDOM_CASES))
def test_tensorflow_checkpoint_restores_to_tensorflow_outputs(case, tf_expected):
    """TF's checkpoint, restored with tf.train.Saver, gives TF's outputs, states and gradients."""
    meta, arrays, ckpt = tf_expected
    tf.set_random_seed(SEED)
    xs, outputs, states, loss = build(tf, case)
    by_name = {v.op.name: v for v in tf.trainable_variables()}
    tvars = [by_name[n] for n in meta["cases"][case]["trainable"]]
    grads = tf.gradients(loss, tvars + xs)
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, ckpt)
        out, st, lv, gv = sess.run((outputs, states, loss, grads), dict(zip(xs, feed_values(case))))
    assert len(out) == meta["cases"][case]["outputs"] and len(st) == meta["cases"][case]["states"]
    for i, a in enumerate(out):
        np.testing.assert_allclose(a, arrays[f"{case}/output_{i}"], rtol=1e-5, atol=1e-6, err_msg=f"output {i}")
    for i, a in enumerate(st):
        np.testing.assert_allclose(a, arrays[f"{case}/state_{i}"], rtol=1e-5, atol=1e-6, err_msg=f"state {i}")
    np.testing.assert_allclose(lv, arrays[f"{case}/loss"], rtol=1e-5, atol=1e-5)
    for i, a in enumerate(gv):
        np.testing.assert_allclose(a, arrays[f"{case}/grad_{i}"], rtol=1e-4, atol=1e-5, err_msg=f"gradient {i}")


def test_checkpoint_values_are_the_fixture_values(tf_expected):
    """The checkpoint holds _rnn_cell_cases.variable_value for every variable (what TF computed with)."""
    _, _, ckpt = tf_expected
    reader = tf.train.load_checkpoint(ckpt)
    shapes = reader.get_variable_to_shape_map()
    assert "basic_lstm/rnn/basic_lstm_cell/kernel" in shapes
    for name in ("basic_lstm/rnn/basic_lstm_cell/kernel", "lstm_peephole_proj/rnn/lstm_cell/projection/kernel"):
        np.testing.assert_array_equal(reader.get_tensor(name), variable_value(name, shapes[name]))


def test_lstm_checkpoint_from_tensorflow_into_a_fresh_model(tf_expected):
    """The usual TF1 workflow: build the model, restore TF's LSTM weights, run one sequence."""
    meta, arrays, ckpt = tf_expected
    xs = feed_values("lstm_peephole_proj")
    with tf.variable_scope("lstm_peephole_proj"):
        cell = rnn_cell.LSTMCell(4, use_peepholes=True, cell_clip=0.8, num_proj=3, proj_clip=0.5, forget_bias=0.7)
        outputs, state = tf.nn.static_rnn(cell, [tf.constant(x) for x in xs], dtype=tf.float32)
    assert isinstance(state, rnn_cell.LSTMStateTuple)
    saver = tf.train.Saver(cell.weights)
    with tf.Session() as sess:
        saver.restore(sess, ckpt)
        out, st = sess.run((outputs, state))
        w = {v.op.name.split("/rnn/")[1]: sess.run(v) for v in cell.weights}
    for i, a in enumerate(out):
        np.testing.assert_allclose(a, arrays[f"lstm_peephole_proj/output_{i}"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(st.c, arrays["lstm_peephole_proj/state_0"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(st.h, arrays["lstm_peephole_proj/state_1"], rtol=1e-5, atol=1e-6)
    # ... and the NumPy reference agrees with TensorFlow on the restored weights.
    c, h = np.zeros([2, 4], np.float32), np.zeros([2, 3], np.float32)
    peep = (w["lstm_cell/w_f_diag"], w["lstm_cell/w_i_diag"], w["lstm_cell/w_o_diag"])
    for x in xs:
        c, h = np_lstm(x, c, h, w["lstm_cell/kernel"], w["lstm_cell/bias"], 0.7, peep, 0.8,
                       w["lstm_cell/projection/kernel"], 0.5)
    np.testing.assert_allclose(h, arrays["lstm_peephole_proj/state_1"], rtol=1e-5, atol=1e-6)


def test_argument_lists_match_tensorflow(tf_expected):
    import inspect

    meta, _, _ = tf_expected
    for path, want in meta["signatures"].items():
        obj = tf1
        for part in path.split("."):
            obj = getattr(obj, part)
        target = obj.__init__ if inspect.isclass(obj) else obj
        got = [p.name for p in inspect.signature(target).parameters.values() if p.name != "self"]
        assert got == want, path


# -- the cells against NumPy ------------------------------------------------------------------


def test_basic_rnn_cell_matches_numpy():
    xs = _inputs(3)
    out, st, w = _run_static(rnn_cell.BasicRNNCell(5), xs, dtype=tf.float32)
    h = np.zeros([2, 5], np.float32)
    for t, x in enumerate(xs):
        o, h = np_basic_rnn(x, h, w["rnn/basic_rnn_cell/kernel"], w["rnn/basic_rnn_cell/bias"])
        np.testing.assert_allclose(out[t], o, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(st, h, rtol=1e-5, atol=1e-6)


def test_basic_rnn_cell_activation_and_names():
    xs = _inputs(2)
    out, _, w = _run_static(rnn_cell.BasicRNNCell(3, activation=tf.nn.relu), xs, dtype=tf.float32)
    h = np.zeros([2, 3], np.float32)
    for t, x in enumerate(xs):
        o, h = np_basic_rnn(x, h, w["rnn/basic_rnn_cell/kernel"], w["rnn/basic_rnn_cell/bias"],
                            lambda v: np.maximum(v, 0))
        np.testing.assert_allclose(out[t], o, rtol=1e-5, atol=1e-6)
    tf.reset_default_graph()
    out, _, w = _run_static(rnn_cell.BasicRNNCell(3, activation="relu"), xs, dtype=tf.float32)
    assert (np.asarray(out) >= 0).all()


def test_gru_cell_matches_numpy():
    xs = _inputs(3)
    out, st, w = _run_static(rnn_cell.GRUCell(4), xs, dtype=tf.float32)
    p = "rnn/gru_cell/"
    h = np.zeros([2, 4], np.float32)
    for t, x in enumerate(xs):
        o, h = np_gru(x, h, w[p + "gates/kernel"], w[p + "gates/bias"], w[p + "candidate/kernel"],
                      w[p + "candidate/bias"])
        np.testing.assert_allclose(out[t], o, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(st, h, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("state_is_tuple", [True, False])
def test_basic_lstm_cell_matches_numpy(state_is_tuple):
    xs = _inputs(3)
    cell = rnn_cell.BasicLSTMCell(4, forget_bias=0.25, state_is_tuple=state_is_tuple)
    out, st, w = _run_static(cell, xs, dtype=tf.float32)
    c = h = np.zeros([2, 4], np.float32)
    for t, x in enumerate(xs):
        c, h = np_lstm(x, c, h, w["rnn/basic_lstm_cell/kernel"], w["rnn/basic_lstm_cell/bias"], 0.25)
        np.testing.assert_allclose(out[t], h, rtol=1e-5, atol=1e-6)
    if state_is_tuple:
        assert isinstance(st, rnn_cell.LSTMStateTuple)
        st = np.concatenate([st.c, st.h], 1)
    np.testing.assert_allclose(st, np.concatenate([c, h], 1), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("peepholes,cell_clip,num_proj,proj_clip,state_is_tuple", [
    (False, None, None, None, True),
    (True, None, None, None, True),
    (True, 0.3, None, None, True),
    (False, None, 2, None, True),
    (True, 0.5, 3, 0.2, True),
    (True, 0.5, 3, 0.2, False),
])
def test_lstm_cell_matches_numpy(peepholes, cell_clip, num_proj, proj_clip, state_is_tuple):
    xs = _inputs(3)
    cell = rnn_cell.LSTMCell(5, use_peepholes=peepholes, cell_clip=cell_clip, num_proj=num_proj, proj_clip=proj_clip,
                             forget_bias=0.5, state_is_tuple=state_is_tuple)
    assert cell.output_size == (num_proj or 5)
    out, st, w = _run_static(cell, xs, dtype=tf.float32)
    p = "rnn/lstm_cell/"
    peep = (w[p + "w_f_diag"], w[p + "w_i_diag"], w[p + "w_o_diag"]) if peepholes else None
    c, h = np.zeros([2, 5], np.float32), np.zeros([2, num_proj or 5], np.float32)
    for t, x in enumerate(xs):
        c, h = np_lstm(x, c, h, w[p + "kernel"], w[p + "bias"], 0.5, peep, cell_clip, w.get(p + "projection/kernel"),
                       proj_clip)
        np.testing.assert_allclose(out[t], h, rtol=1e-5, atol=1e-6)
    if state_is_tuple:
        st = np.concatenate([st.c, st.h], 1)
    np.testing.assert_allclose(st, np.concatenate([c, h], 1), rtol=1e-5, atol=1e-6)


def test_lstm_cell_shards_partition_the_kernels():
    cell = rnn_cell.LSTMCell(4, num_proj=3, num_unit_shards=2, num_proj_shards=2)
    out, st, w = _run_static(cell, _inputs(2), dtype=tf.float32)
    assert sorted(w) == ["rnn/lstm_cell/bias", "rnn/lstm_cell/kernel/part_0", "rnn/lstm_cell/kernel/part_1",
                         "rnn/lstm_cell/projection/kernel/part_0", "rnn/lstm_cell/projection/kernel/part_1"]
    assert len(cell.trainable_weights) == 5


def test_multi_rnn_cell_matches_numpy():
    xs = _inputs(3)
    cell = rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(4), rnn_cell.GRUCell(3), rnn_cell.BasicRNNCell(2)])
    assert cell.state_size == (rnn_cell.LSTMStateTuple(4, 4), 3, 2)
    assert cell.output_size == 2
    out, st, w = _run_static(cell, xs, dtype=tf.float32)
    assert len(cell.weights) == 8
    p = "rnn/multi_rnn_cell/cell_"
    c = h = np.zeros([2, 4], np.float32)
    g = np.zeros([2, 3], np.float32)
    r = np.zeros([2, 2], np.float32)
    for t, x in enumerate(xs):
        c, h = np_lstm(x, c, h, w[p + "0/basic_lstm_cell/kernel"], w[p + "0/basic_lstm_cell/bias"])
        g, _ = np_gru(h, g, w[p + "1/gru_cell/gates/kernel"], w[p + "1/gru_cell/gates/bias"],
                      w[p + "1/gru_cell/candidate/kernel"], w[p + "1/gru_cell/candidate/bias"])
        r, _ = np_basic_rnn(g, r, w[p + "2/basic_rnn_cell/kernel"], w[p + "2/basic_rnn_cell/bias"])
        np.testing.assert_allclose(out[t], r, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(st[0].h, h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(st[1], g, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(st[2], r, rtol=1e-5, atol=1e-6)


def test_multi_rnn_cell_concatenated_state():
    cells = [rnn_cell.BasicRNNCell(3), rnn_cell.BasicRNNCell(2)]
    cell = rnn_cell.MultiRNNCell(cells, state_is_tuple=False)
    assert cell.state_size == 5
    out, st, w = _run_static(cell, _inputs(2), dtype=tf.float32)
    assert st.shape == (2, 5)
    np.testing.assert_allclose(st[:, 3:], out[-1], rtol=1e-6)
    with pytest.raises(ValueError, match="state_is_tuple"):
        rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(2)], state_is_tuple=False)
    with pytest.raises(ValueError, match="at least one cell"):
        rnn_cell.MultiRNNCell([])


# -- static_rnn -----------------------------------------------------------------------------


def test_static_rnn_sequence_length_zeroes_outputs_and_keeps_state():
    xs = _inputs(4, batch=3)
    lengths = np.array([4, 2, 0], np.int32)
    seq = tf.placeholder(tf.int32, [None])
    cell = rnn_cell.BasicLSTMCell(3)
    outputs, state = tf.nn.static_rnn(cell, [tf.constant(x) for x in xs], dtype=tf.float32, sequence_length=seq)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w = _randomize(sess, tf.global_variables())
        out, st = sess.run((outputs, state), {seq: lengths})
    k, b = w["rnn/basic_lstm_cell/kernel"], w["rnn/basic_lstm_cell/bias"]
    for i, n in enumerate(lengths):
        c = h = np.zeros([1, 3], np.float32)
        for t, x in enumerate(xs):
            if t < n:
                c, h = np_lstm(x[i:i + 1], c, h, k, b)
                np.testing.assert_allclose(out[t][i], h[0], rtol=1e-5, atol=1e-6)
            else:
                np.testing.assert_array_equal(out[t][i], 0)
        np.testing.assert_allclose(st.c[i], c[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(st.h[i], h[0], rtol=1e-5, atol=1e-6)


def test_static_rnn_dynamic_batch_and_initial_state():
    x = tf.placeholder(tf.float32, [None, 3])
    cell = rnn_cell.GRUCell(2)
    h0 = tf.placeholder(tf.float32, [None, 2])
    outputs, state = tf.nn.static_rnn(cell, [x, x], initial_state=h0)
    assert outputs[0].shape.as_list() == [None, 2]
    zero = cell.zero_state(tf.shape(x)[0], tf.float32)
    assert zero.shape.as_list() == [None, 2]
    xv = _inputs(1, batch=5)[0]
    h0v = RNG.normal(size=[5, 2]).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w = _randomize(sess, tf.global_variables())
        out, st, z = sess.run((outputs, state, zero), {x: xv, h0: h0v})
    p = "rnn/gru_cell/"
    h = h0v
    for _ in range(2):
        h, _ = np_gru(xv, h, w[p + "gates/kernel"], w[p + "gates/bias"], w[p + "candidate/kernel"],
                      w[p + "candidate/bias"])
    np.testing.assert_allclose(st, h, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(z, np.zeros([5, 2]))


def test_static_rnn_errors():
    x = tf.placeholder(tf.float32, [2, 3])
    cell = rnn_cell.BasicRNNCell(2)
    with pytest.raises(ValueError, match="dtype must be specified"):
        tf.nn.static_rnn(cell, [x])
    with pytest.raises(TypeError, match="inputs must be a sequence"):
        tf.nn.static_rnn(cell, x, dtype=tf.float32)
    with pytest.raises(ValueError, match="must not be empty"):
        tf.nn.static_rnn(cell, [], dtype=tf.float32)
    with pytest.raises(TypeError, match="is not an RNNCell"):
        tf.nn.static_rnn(object(), [x], dtype=tf.float32)
    with pytest.raises(ValueError, match="must be accessible via shape inference"):
        tf.nn.static_rnn(cell, [tf.placeholder(tf.float32, [2, None])], dtype=tf.float32)
    with pytest.raises(ValueError, match="sequence_length must be a vector"):
        tf.nn.static_rnn(cell, [x], dtype=tf.float32, sequence_length=[[1, 1]])


def test_static_rnn_scope_and_variable_sharing():
    x = tf.constant(_inputs(1)[0])
    cell = rnn_cell.BasicLSTMCell(2)
    tf.nn.static_rnn(cell, [x, x], dtype=tf.float32, scope="encoder")
    assert [v.op.name for v in tf.global_variables()] == ["encoder/basic_lstm_cell/kernel",
                                                          "encoder/basic_lstm_cell/bias"]
    # The same cell object keeps its scope (and variables) when called again.
    tf.nn.static_rnn(cell, [x], dtype=tf.float32, scope="decoder")
    assert len(tf.global_variables()) == 2
    # A new cell in a used scope needs reuse, as in TensorFlow.
    with pytest.raises(ValueError, match="already exists"):
        tf.nn.static_rnn(rnn_cell.BasicLSTMCell(2), [x], dtype=tf.float32, scope="encoder")
    with tf.variable_scope(tf.get_variable_scope(), reuse=True):
        _, st = tf.nn.static_rnn(rnn_cell.BasicLSTMCell(2), [x], dtype=tf.float32, scope="encoder")
    assert len(tf.global_variables()) == 2
    shared = rnn_cell.BasicLSTMCell(2, reuse=True)
    with tf.variable_scope("encoder"):
        shared(x, shared.zero_state(2, tf.float32))
    assert shared.weights == cell.weights
    # Two fresh cells in one scope get uniquified names.
    with tf.variable_scope("two"):
        a, b = rnn_cell.GRUCell(2), rnn_cell.GRUCell(2)
        a(x, a.zero_state(2, tf.float32))
        b(x, b.zero_state(2, tf.float32))
    names = [v.op.name for v in tf.global_variables() if v.op.name.startswith("two/")]
    assert "two/gru_cell/gates/kernel" in names and "two/gru_cell_1/gates/kernel" in names


def test_cell_call_with_scope_argument_and_name():
    x = tf.constant(_inputs(1)[0])
    cell = rnn_cell.BasicRNNCell(2)
    cell(x, cell.zero_state(2, tf.float32), scope="my_scope")
    named = rnn_cell.GRUCell(2, name="my_gru")
    named(x, named.zero_state(2, tf.float32))
    assert [v.op.name for v in tf.global_variables()] == [
        "my_scope/kernel", "my_scope/bias", "my_gru/gates/kernel", "my_gru/gates/bias", "my_gru/candidate/kernel",
        "my_gru/candidate/bias"]


def test_op_names_nest_like_tensorflow():
    """Layer cells put their ops in their own scope; a plain RNNCell (MultiRNNCell) nests the caller's
    name scope once more, as TF does (``rnn/rnn/multi_rnn_cell/...``)."""
    xs = [tf.placeholder(tf.float32, [2, 3]) for _ in range(2)]
    tf.nn.static_rnn(rnn_cell.BasicLSTMCell(2), xs, dtype=tf.float32)
    multi = rnn_cell.MultiRNNCell([rnn_cell.GRUCell(2)])
    tf.nn.static_rnn(multi, xs, dtype=tf.float32, scope="stack")
    names = {op.name for op in tf.get_default_graph().get_operations()}
    assert {"rnn/basic_lstm_cell/MatMul", "rnn/basic_lstm_cell/MatMul_1"} <= names
    assert {"stack/stack/multi_rnn_cell/cell_0/gru_cell/MatMul",
            "stack/stack/multi_rnn_cell/cell_0/gru_cell/MatMul_3"} <= names


class _ScaledCell(rnn_cell.RNNCell):
    """A user cell written against the abstract RNNCell: variables from tf.get_variable in call."""

    def __init__(self, units):
        super().__init__()
        self._units = units

    @property
    def state_size(self):
        return self._units

    @property
    def output_size(self):
        return self._units

    def call(self, inputs, state):
        w = tf.get_variable("w", [inputs.shape[-1].value + self._units, self._units])
        out = tf.tanh(tf.matmul(tf.concat([inputs, state], 1), w))
        return out, out


class _OldStyleCell(rnn_cell.RNNCell):
    """Pre-1.2 TF1 style: no RNNCell.__init__ call."""

    def __init__(self, units):
        self._units = units

    state_size = property(lambda self: self._units)
    output_size = property(lambda self: self._units)

    def call(self, inputs, state):
        return state + tf.reduce_sum(inputs), state + 1.0


def test_user_defined_cells():
    values = _inputs(3)
    xs = [tf.constant(x) for x in values]
    outputs, state = tf.nn.static_rnn(_ScaledCell(2), xs, dtype=tf.float32)
    assert [v.op.name for v in tf.global_variables()] == ["rnn/private__scaled_cell/w"]  # TF's name for a private class
    _, old_state = tf.nn.static_rnn(_OldStyleCell(2), xs, dtype=tf.float32, scope="old")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w = sess.run(tf.global_variables()[0])
        out, st, old = sess.run((outputs, state, old_state))
    h = np.zeros([2, 2], np.float32)
    for t, x in enumerate(values):
        h = np.tanh(np.concatenate([x, h], 1) @ w)
        np.testing.assert_allclose(out[t], h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(st, h, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(old, np.full([2, 2], 3.0))


def test_default_initializers():
    """Kernels take the scope's initializer (glorot-uniform by default), biases zeros; GRU gates 1."""
    x = tf.constant(_inputs(1)[0])
    with tf.variable_scope("s", initializer=tf.constant_initializer(0.25)):
        lstm = rnn_cell.LSTMCell(2, use_peepholes=True, num_proj=2)
        lstm(x, lstm.zero_state(2, tf.float32))
        gru = rnn_cell.GRUCell(2)
        gru(x, gru.zero_state(2, tf.float32))
    plain = rnn_cell.BasicLSTMCell(20)
    plain(x, plain.zero_state(2, tf.float32))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        vals = {v.op.name: sess.run(v) for v in tf.global_variables()}
    for name in ("s/lstm_cell/kernel", "s/lstm_cell/w_f_diag", "s/lstm_cell/projection/kernel",
                 "s/gru_cell/gates/kernel", "s/gru_cell/candidate/kernel"):
        np.testing.assert_array_equal(vals[name], 0.25)
    np.testing.assert_array_equal(vals["s/lstm_cell/bias"], 0)
    np.testing.assert_array_equal(vals["s/gru_cell/gates/bias"], 1)
    np.testing.assert_array_equal(vals["s/gru_cell/candidate/bias"], 0)
    k = vals["basic_lstm_cell/kernel"]
    limit = np.sqrt(6 / (23 + 80))
    assert k.shape == (23, 80) and np.abs(k).max() <= limit and k.std() > limit / 3


def test_zero_state_structure_names_and_dtype():
    cell = rnn_cell.MultiRNNCell([rnn_cell.BasicLSTMCell(3), rnn_cell.LSTMCell(4, num_proj=2)])
    z = cell.zero_state(5, tf.float64)
    assert isinstance(z, tuple) and isinstance(z[1], rnn_cell.LSTMStateTuple)
    assert [t.shape.as_list() for t in (z[0].c, z[0].h, z[1].c, z[1].h)] == [[5, 3], [5, 3], [5, 4], [5, 2]]
    assert z[1].dtype == tf.float64
    assert z[0].c.name.startswith("MultiRNNCellZeroState/BasicLSTMCellZeroState/zeros")
    init = rnn_cell.GRUCell(3).get_initial_state(inputs=tf.placeholder(tf.float32, [None, 7]))
    assert init.shape.as_list() == [None, 3]
    with tf.Session() as sess:
        assert sess.run(z[1].h).shape == (5, 2)
    with pytest.raises(TypeError, match="Inconsistent"):
        _ = rnn_cell.LSTMStateTuple(tf.zeros([1]), tf.zeros([1], tf.float64)).dtype


def test_variables_created_outside_control_dependencies():
    """Variable creation goes through init_scope: a cell called under control dependencies still
    initialises without them."""
    x = tf.constant(_inputs(1)[0])
    gate = tf.no_op(name="gate")
    with tf.control_dependencies([gate]):
        cell = rnn_cell.BasicLSTMCell(2)
        out, _ = cell(x, cell.zero_state(2, tf.float32))
    assert len(cell.weights) == 2
    for v in cell.weights:
        assert gate not in v.initializer.control_inputs
        assert gate not in v.initial_value.op.control_inputs
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(out).shape == (2, 2)


# -- static_bidirectional_rnn -----------------------------------------------------------------


@pytest.mark.parametrize("with_lengths", [False, True])
def test_static_bidirectional_rnn_matches_numpy(with_lengths):
    xs = _inputs(4, batch=3)
    lengths = np.array([4, 1, 3], np.int32) if with_lengths else None
    fw, bw = rnn_cell.BasicRNNCell(2), rnn_cell.GRUCell(3)
    outputs, sfw, sbw = tf.nn.static_bidirectional_rnn(fw, bw, [tf.constant(x) for x in xs], dtype=tf.float32,
                                                       sequence_length=lengths)
    names = [v.op.name for v in tf.global_variables()]
    assert names[0] == "bidirectional_rnn/fw/basic_rnn_cell/kernel"
    assert names[2] == "bidirectional_rnn/bw/gru_cell/gates/kernel"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w = _randomize(sess, tf.global_variables())
        out, st_fw, st_bw = sess.run((outputs, sfw, sbw))
    assert out[0].shape == (3, 5)
    pf, pb = "bidirectional_rnn/fw/basic_rnn_cell/", "bidirectional_rnn/bw/gru_cell/"
    for i in range(3):
        n = 4 if lengths is None else lengths[i]
        h = np.zeros([1, 2], np.float32)
        for t in range(n):
            _, h = np_basic_rnn(xs[t][i:i + 1], h, w[pf + "kernel"], w[pf + "bias"])
            np.testing.assert_allclose(out[t][i, :2], h[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(st_fw[i], h[0], rtol=1e-5, atol=1e-6)
        g = np.zeros([1, 3], np.float32)
        for t in reversed(range(n)):
            g, _ = np_gru(xs[t][i:i + 1], g, w[pb + "gates/kernel"], w[pb + "gates/bias"], w[pb + "candidate/kernel"],
                          w[pb + "candidate/bias"])
            np.testing.assert_allclose(out[t][i, 2:], g[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(st_bw[i], g[0], rtol=1e-5, atol=1e-6)
        for t in range(n, 4):
            np.testing.assert_array_equal(out[t][i], 0)


# -- gradients against finite differences -----------------------------------------------------


@pytest.mark.parametrize("make_cell", [
    lambda: rnn_cell.BasicRNNCell(3),
    lambda: rnn_cell.GRUCell(3),
    lambda: rnn_cell.BasicLSTMCell(3),
    lambda: rnn_cell.LSTMCell(3, use_peepholes=True, num_proj=2),
    lambda: rnn_cell.MultiRNNCell([rnn_cell.GRUCell(2), rnn_cell.BasicLSTMCell(2)]),
], ids=["basic_rnn", "gru", "basic_lstm", "lstm_peephole_proj", "multi"])
def test_gradients_match_finite_differences(make_cell):
    cell = make_cell()
    xs = [tf.placeholder(tf.float64, [2, 3], name=f"x{t}") for t in range(3)]
    outputs, state = tf.nn.static_rnn(cell, xs, dtype=tf.float64, sequence_length=[3, 2])
    loss_terms = [tf.reduce_sum(o * o) for o in outputs]
    loss_terms += [tf.reduce_sum(s) for s in flatten(state)]
    y = tf.add_n(loss_terms)
    x_values = [RNG.normal(size=[2, 3]) for _ in xs]
    feed = dict(zip(xs, x_values))
    init = tf.global_variables_initializer()
    err = tf.test.compute_gradient_error(xs, [[2, 3]] * 3, y, [], x_init_value=x_values, init_targets=[init], delta=1e-4,
                                         extra_feed_dict=feed)
    assert err < 1e-6, err
    weights = cell.trainable_weights
    w_values = [RNG.normal(size=v.shape.as_list()) * 0.5 for v in weights]
    err = tf.test.compute_gradient_error(weights, [v.shape.as_list() for v in weights], y, [], x_init_value=w_values, delta=1e-4,
                                         init_targets=[init], extra_feed_dict=feed)
    assert err < 1e-6, err


# -- wrappers --------------------------------------------------------------------------------


def test_residual_wrapper_adds_inputs():
    x = tf.constant(_inputs(1, depth=4)[0])
    base = rnn_cell.BasicRNNCell(4)
    cell = rnn_cell.ResidualWrapper(base)
    out, st = cell(x, cell.zero_state(2, tf.float32))
    plain_out, _ = base(x, base.zero_state(2, tf.float32))
    custom = rnn_cell.ResidualWrapper(base, residual_fn=lambda i, o: i * o)
    cout, _ = custom(x, custom.zero_state(2, tf.float32))
    assert [v.op.name for v in tf.global_variables()] == ["basic_rnn_cell/kernel", "basic_rnn_cell/bias"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        o, p, c, xv = sess.run((out, plain_out, cout, x))
    np.testing.assert_allclose(o, p + xv, rtol=1e-6)
    np.testing.assert_allclose(c, p * xv, rtol=1e-6)


def test_device_wrapper_places_ops():
    x = tf.constant(_inputs(1)[0])
    cell = rnn_cell.DeviceWrapper(rnn_cell.GRUCell(2), "/cpu:0")
    z = cell.zero_state(2, tf.float32)
    out, _ = cell(x, z)
    assert "CPU:0" in out.op.device.upper()
    assert "CPU:0" in z.op.device.upper()
    assert cell.output_size == 2 and cell.state_size == 2


def test_dropout_wrapper_keep_one_is_identity():
    xs = _inputs(3)
    wrapped = rnn_cell.DropoutWrapper(rnn_cell.BasicLSTMCell(3))
    out_w, st_w, w = _run_static(wrapped, xs, dtype=tf.float32)
    assert list(w) == ["rnn/basic_lstm_cell/kernel", "rnn/basic_lstm_cell/bias"]
    c = h = np.zeros([2, 3], np.float32)
    for t, x in enumerate(xs):
        c, h = np_lstm(x, c, h, w["rnn/basic_lstm_cell/kernel"], w["rnn/basic_lstm_cell/bias"])
        np.testing.assert_allclose(out_w[t], h, rtol=1e-5, atol=1e-6)


def test_dropout_wrapper_output_and_state_masks():
    x = tf.constant(_inputs(1, batch=64)[0])
    base = rnn_cell.BasicLSTMCell(50)
    cell = rnn_cell.DropoutWrapper(base, output_keep_prob=0.5, state_keep_prob=0.25, seed=3)
    state = base.zero_state(64, tf.float32)
    out, new_state = cell(x, state)
    plain_out, plain_state = base(x, state)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        o, s, po, ps = sess.run((out, new_state, plain_out, plain_state))
    kept = o != 0
    assert 0.4 < kept.mean() < 0.6
    np.testing.assert_allclose(o[kept], po[kept] / 0.5, rtol=1e-5)
    np.testing.assert_allclose(s.c, ps.c, rtol=1e-6)  # the memory state c is never dropped
    kept_h = s.h != 0
    assert 0.15 < kept_h.mean() < 0.35
    np.testing.assert_allclose(s.h[kept_h], ps.h[kept_h] / 0.25, rtol=1e-5)


def test_dropout_wrapper_variational_uses_one_mask_per_run():
    xs = [tf.constant(x) for x in _inputs(4, batch=8)]
    cell = rnn_cell.DropoutWrapper(rnn_cell.GRUCell(40), input_keep_prob=0.6, output_keep_prob=0.5,
                                   state_keep_prob=0.7, variational_recurrent=True, input_size=3, dtype=tf.float32,
                                   seed=9)
    outputs, _ = tf.nn.static_rnn(cell, xs, dtype=tf.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out = np.stack(sess.run(outputs))
    masks = out != 0
    # One mask of shape [1, units]: the same units are dropped for every batch entry and time step.
    assert (masks == masks[0, 0]).all()
    assert 0.3 < masks[0, 0].mean() < 0.7
    with pytest.raises(ValueError, match="dtype must be provided"):
        rnn_cell.DropoutWrapper(rnn_cell.GRUCell(2), variational_recurrent=True)
    with pytest.raises(ValueError, match="input_size must be provided"):
        rnn_cell.DropoutWrapper(rnn_cell.GRUCell(2), input_keep_prob=0.5, variational_recurrent=True,
                                dtype=tf.float32)
    with pytest.raises(ValueError, match="between 0 and 1"):
        rnn_cell.DropoutWrapper(rnn_cell.GRUCell(2), output_keep_prob=1.5)


def test_dropout_wrapper_seeds_follow_tensorflow():
    """Each component's op seed is TF's: the first 8 hex digits of md5(str(seed) + salt), 31 bits."""
    x = tf.constant(_inputs(1)[0])
    cell = rnn_cell.DropoutWrapper(rnn_cell.GRUCell(2), input_keep_prob=0.5, seed=11)
    cell(x, cell.zero_state(2, tf.float32))
    seeds = [op.get_attr("seed2") for op in tf.get_default_graph().get_operations()
             if op.type == "RandomUniform" and "dropout" in op.name]
    assert seeds == [int(hashlib.md5(b"11input_0").hexdigest()[:8], 16) & 0x7FFFFFFF]


def test_dropout_wrapper_tensor_keep_prob():
    keep = tf.placeholder_with_default(1.0, [])
    x = tf.constant(_inputs(1)[0])
    base = rnn_cell.GRUCell(3)
    cell = rnn_cell.DropoutWrapper(base, output_keep_prob=keep)
    out, _ = cell(x, base.zero_state(2, tf.float32))
    plain, _ = base(x, base.zero_state(2, tf.float32))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        o, p = sess.run((out, plain))
        dropped = sess.run(out, {keep: 0.5})
    np.testing.assert_allclose(o, p, rtol=1e-6)
    assert {float(v) for v in np.unique(np.round(dropped / np.where(p == 0, 1, p), 4))} <= {0.0, 2.0}


# -- the public names -----------------------------------------------------------------------------


def test_public_names():
    for name in ("BasicLSTMCell", "BasicRNNCell", "DeviceWrapper", "DropoutWrapper", "GRUCell", "LSTMCell",
                 "LSTMStateTuple", "MultiRNNCell", "RNNCell", "ResidualWrapper"):
        assert getattr(tf.nn.rnn_cell, name) is getattr(tf1.nn.rnn_cell, name)
    assert tf.nn.static_rnn is tf1.nn.static_rnn
    assert tf.nn.static_bidirectional_rnn is tf1.nn.static_bidirectional_rnn
    assert issubclass(tf.nn.rnn_cell.BasicLSTMCell, tf.nn.rnn_cell.RNNCell)
    assert tf.nn.rnn_cell.LSTMStateTuple(1, 2)._fields == ("c", "h")
