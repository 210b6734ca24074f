"""Writes tests/fixtures/control_flow_v1/: graphs with TF1's dataflow control flow, made by real TensorFlow.

    /work/tfvenv/bin/python tools/make_control_flow_v1_fixtures.py

Needs TensorFlow 2.x (tensorflow-cpu, tf-keras for the TF1 RNN cells). Everything is built through
``tensorflow.compat.v1`` after ``disable_v2_behavior()``, so ``tf.cond``/``tf.while_loop`` write
Switch/Merge/Enter/Exit/NextIteration/LoopCond, ``tf.TensorArray`` writes TensorArrayV3 ops, and
variables are TF1's reference variables, as in graphs TensorFlow 1.x saved.

Four kinds of case (``cases.json`` lists them all):

- ``graph_def``: ``<case>.pb`` (a binary GraphDef; variables, if any, frozen into constants with
  ``convert_variables_to_constants``) and ``<case>.npz`` with, for each run ``k``, the feeds
  (``run<k>/feed/<placeholder>``) and what TensorFlow fetched (``run<k>/fetch/<i>``, in the order
  of the case's ``fetches``). The test imports the GraphDef with ``tf.import_graph_def``.
- ``meta_graph``: a training graph: ``<case>/model.meta`` (the train op in the ``train_op``
  collection) and the checkpoint ``<case>/model``, saved right after ``global_variables_initializer``,
  then ``<case>.npz`` with the feeds of each training step (``step<k>/feed/<name>``), the loss
  TensorFlow reported at each step (``step<k>/loss``), the loss on the first step's feeds after the
  last step (``final_loss``) and every global variable afterwards (``var/<name>``).
  The test runs ``import_meta_graph``, restores and trains the same steps.
- ``meta_graph_runs``: ``<case>/model.meta`` and its checkpoint at initialization, and
  ``<case>.npz`` with the feeds and fetched values of runs made one after another on one session
  (``run<k>/feed/...``, ``run<k>/fetch/<i>``; the fetches of each run are in ``cases.json``).
- ``saved_model``: ``<case>/`` written by ``tf.saved_model.builder.SavedModelBuilder`` with the
  ``serve`` tag and a ``serving_default`` signature, and ``<case>.npz`` with the signature's input
  (``feed/<key>``) and TensorFlow's outputs (``fetch/<key>``).
"""

from __future__ import annotations

import json
import os
import pathlib
import platform
import shutil

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")

import tensorflow as tf  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_v2_behavior()

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "control_flow_v1"

GRAPH_CASES = {}


def graph_case(fn):
    GRAPH_CASES[fn.__name__] = fn
    return fn


def _rs(seed):
    return np.random.RandomState(seed)


# -- conds ---------------------------------------------------------------------------------------------------


@graph_case
def cond():
    x = tf1.placeholder(tf.float32, [None], name="x")
    p = tf1.placeholder(tf.bool, [], name="p")
    y = tf1.cond(p, lambda: x * 2.0, lambda: tf1.constant([3.0, 4.0]) - x, name="c")
    v = _rs(0).randn(2).astype(np.float32)
    return [y], [{x: v, p: True}, {x: v, p: False}]


@graph_case
def cond_tuple():
    """Several results of different dtypes, an integer branch constant, and one branch returning an
    outside tensor unchanged."""
    x = tf1.placeholder(tf.float32, [None, 3], name="x")
    n = tf1.placeholder(tf.int32, [], name="n")
    p = tf1.placeholder(tf.bool, [], name="p")
    a, b, c = tf1.cond(p, lambda: (tf1.reduce_sum(x, 1), n + 1, x),
                       lambda: (tf1.reduce_max(x, 1), tf1.constant(7), tf1.nn.relu(x)))
    v = _rs(1).randn(4, 3).astype(np.float32)
    return [a, b, c], [{x: v, n: 5, p: True}, {x: v, n: 5, p: False}]


@graph_case
def nested_cond():
    x = tf1.placeholder(tf.float32, [None], name="x")
    p = tf1.placeholder(tf.bool, [], name="p")
    y = tf1.cond(p, lambda: tf1.cond(x[0] > 0, lambda: x * 2.0, lambda: x - 1.0), lambda: x + 3.0)
    return [y], [{p: True, x: [1.0, 2.0]}, {p: True, x: [-1.0, 2.0]}, {p: False, x: [1.0, 2.0]}]


@graph_case
def conds_same_pred():
    """Two conds on one predicate, the second reading the first's result."""
    x = tf1.placeholder(tf.float32, [], name="x")
    p = tf1.placeholder(tf.bool, [], name="p")
    a = tf1.cond(p, lambda: x + 1.0, lambda: x - 1.0)
    b = tf1.cond(p, lambda: a * 10.0, lambda: a * 100.0)
    return [a, b], [{x: 2.0, p: True}, {x: 2.0, p: False}]


@graph_case
def cond_grad():
    """tf.gradients through a cond (TF1 builds the gradient as conds too)."""
    x = tf1.placeholder(tf.float32, [3], name="x")
    p = tf1.placeholder(tf.bool, [], name="p")
    y = tf1.cond(p, lambda: tf1.reduce_sum(x * x), lambda: tf1.reduce_sum(tf1.exp(x)))
    (g,) = tf1.gradients(y, x)
    v = _rs(2).randn(3).astype(np.float32)
    return [y, g], [{x: v, p: True}, {x: v, p: False}]


# -- loops ---------------------------------------------------------------------------------------------------


@graph_case
def while_counter():
    n = tf1.placeholder(tf.int32, [], name="n")
    i, k = tf1.while_loop(lambda i, k: i < n, lambda i, k: (i + 1, k * 2), [tf1.constant(0), tf1.constant(1)])
    return [i, k], [{n: 0}, {n: 5}]


@graph_case
def while_sum():
    """An accumulating sum over a vector's elements, read with a gather."""
    x = tf1.placeholder(tf.float32, [None], name="x")
    size = tf1.shape(x)[0]
    _, total = tf1.while_loop(lambda i, s: i < size, lambda i, s: (i + 1, s + tf1.gather(x, i)),
                              [tf1.constant(0), tf1.constant(0.0)])
    return [total], [{x: _rs(3).randn(6).astype(np.float32)}]


@graph_case
def while_invariants():
    """Loop invariants (is_constant Enters): a matrix and a bias used every iteration, a shape invariant."""
    x = tf1.placeholder(tf.float32, [None, 3], name="x")
    w = tf1.placeholder(tf.float32, [3, 3], name="w")
    b = tf1.placeholder(tf.float32, [3], name="b")

    def body(i, h, acc):
        h = tf1.tanh(tf1.matmul(h, w) + b)
        return i + 1, h, tf1.concat([acc, h[:, :1]], 1)

    _, h, acc = tf1.while_loop(lambda i, h, acc: i < 4, body,
                               [tf1.constant(0), x, tf1.zeros([tf1.shape(x)[0], 0])],
                               shape_invariants=[tf1.TensorShape([]), tf1.TensorShape([None, 3]),
                                                 tf1.TensorShape([None, None])])
    r = _rs(4)
    return [h, acc], [{x: r.randn(2, 3).astype(np.float32), w: r.randn(3, 3).astype(np.float32) * 0.5,
                       b: r.randn(3).astype(np.float32)}]


@graph_case
def while_maximum_iterations():
    x = tf1.placeholder(tf.float32, [], name="x")
    r = tf1.while_loop(lambda v: v < 1000.0, lambda v: v * 2.0, [x], maximum_iterations=6)
    return [r], [{x: 1.5}, {x: 600.0}]


@graph_case
def nested_while():
    x = tf1.placeholder(tf.float32, [], name="x")

    def body(i, a):
        _, b = tf1.while_loop(lambda j, b: j < i, lambda j, b: (j + 1, b + x), [0, a])
        return i + 1, b

    _, r = tf1.while_loop(lambda i, a: i < 4, body, [tf1.constant(0), x])
    return [r], [{x: 0.5}]


@graph_case
def while_cond_inside():
    x = tf1.placeholder(tf.float32, [None], name="x")
    _, r = tf1.while_loop(
        lambda i, a: i < 5,
        lambda i, a: (i + 1, tf1.cond(i > 2, lambda: a + x, lambda: a * 2.0)),
        [tf1.constant(0), x])
    return [r], [{x: [1.0, -2.0]}]


@graph_case
def cond_while_inside():
    x = tf1.placeholder(tf.float32, [], name="x")
    p = tf1.placeholder(tf.bool, [], name="p")

    def loop():
        return tf1.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * x), [0, tf1.constant(1.0)])[1]

    y = tf1.cond(p, loop, lambda: x - 1.0)
    return [y], [{x: 1.5, p: True}, {x: 1.5, p: False}]


@graph_case
def while_grad():
    """A loop with its gradient: the gradient loop (stacks) is dropped on import, the forward stays."""
    x = tf1.placeholder(tf.float32, [2], name="x")
    _, y = tf1.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf1.sin(a) * a), [tf1.constant(0), x])
    tf1.gradients(tf1.reduce_sum(y), x)
    return [y], [{x: [0.3, -1.2]}]


# -- TensorArrays ---------------------------------------------------------------------------------------------


@graph_case
def map_fn():
    x = tf1.placeholder(tf.float32, [None, 2], name="x")
    r = tf1.map_fn(lambda v: v * v + 1.0, x)
    return [r], [{x: _rs(5).randn(3, 2).astype(np.float32)}]


@graph_case
def scan():
    x = tf1.placeholder(tf.float32, [None], name="x")
    r = tf1.scan(lambda a, v: a * 0.5 + v, x)
    return [r], [{x: _rs(6).randn(5).astype(np.float32)}]


@graph_case
def foldl():
    x = tf1.placeholder(tf.float32, [None, 2], name="x")
    r = tf1.foldl(lambda a, v: a * v + 1.0, x)
    return [r], [{x: _rs(7).randn(4, 2).astype(np.float32)}]


@graph_case
def tensor_array_ops():
    """A growing TensorArray written in a loop, then read, gathered, concatenated, sized; and one
    split into pieces."""
    x = tf1.placeholder(tf.float32, [None, 2], name="x")
    n = tf1.shape(x)[0]
    ta = tf1.TensorArray(tf.float32, size=0, dynamic_size=True, infer_shape=False, clear_after_read=False,
                         element_shape=[None, 2])
    tb = tf1.TensorArray(tf.float32, size=n, element_shape=[2])

    def body(i, ta, tb):
        return i + 1, ta.write(i, x[: i + 1] * tf1.cast(i + 1, tf.float32)), tb.write(i, x[i] * 2.0)

    _, ta, tb = tf1.while_loop(lambda i, ta, tb: i < n, body, [0, ta, tb])
    split = tf1.TensorArray(tf.float32, size=2, infer_shape=False).split(x, [1, n - 1])
    return [ta.read(1), ta.concat(), ta.size(), tb.gather([0, 2]), split.read(1)], [
        {x: _rs(8).randn(3, 2).astype(np.float32)}]


@graph_case
def case_exclusive():
    """tf.case (TF1 builds it from nested conds) with exclusive=True and a default."""
    x = tf1.placeholder(tf.int32, [], name="x")
    y = tf1.case([(tf1.equal(x, 1), lambda: tf1.constant(10)), (tf1.equal(x, 2), lambda: tf1.constant(20))],
                 default=lambda: tf1.constant(-1), exclusive=True)
    return [y], [{x: 1}, {x: 2}, {x: 3}]


@graph_case
def while_with_assert():
    """A loop body with a side effect (an Assert) its result waits for."""
    x = tf1.placeholder(tf.float32, [], name="x")

    def body(i, a):
        check = tf1.Assert(a < 100.0, [a])
        with tf1.control_dependencies([check]):
            return i + 1, a * 3.0

    _, r = tf1.while_loop(lambda i, a: i < 3, body, [0, x])
    return [r], [{x: 2.0}]


@graph_case
def cond_returns_tensor_array():
    """A cond whose branches write different values into a TensorArray, stacked afterwards."""
    x = tf1.placeholder(tf.float32, [2], name="x")
    p = tf1.placeholder(tf.bool, [], name="p")
    ta = tf1.TensorArray(tf.float32, size=2)
    ta = tf1.cond(p, lambda: ta.write(0, x).write(1, x * 2.0), lambda: ta.write(0, -x).write(1, x + 1.0))
    return [ta.stack()], [{x: [1.0, 2.0], p: True}, {x: [1.0, 2.0], p: False}]


@graph_case
def greedy_decode():
    """A decoding loop: embedding lookup of the previous token, an RNN step, argmax, a growing
    TensorArray of tokens, and a cond that stops early at an end token."""
    start = tf1.placeholder(tf.int32, [], name="start")
    emb = tf1.constant(_rs(16).randn(6, 3).astype(np.float32))
    w = tf1.constant(_rs(17).randn(3 + 4, 4).astype(np.float32))
    out_w = tf1.constant(_rs(18).randn(4, 6).astype(np.float32))

    def body(t, tok, h, ta, done):
        inp = tf1.nn.embedding_lookup(emb, tf1.reshape(tok, [1]))
        h = tf1.tanh(tf1.matmul(tf1.concat([inp, h], 1), w))
        nxt = tf1.cast(tf1.argmax(tf1.matmul(h, out_w), 1)[0], tf.int32)
        done = tf1.cond(tf1.equal(nxt, 0), lambda: tf1.constant(True), lambda: done)
        return t + 1, nxt, h, ta.write(t, nxt), done

    _, _, h, ta, _ = tf1.while_loop(
        lambda t, tok, h, ta, done: tf1.logical_and(t < 8, tf1.logical_not(done)), body,
        [0, start, tf1.zeros([1, 4]), tf1.TensorArray(tf.int32, size=0, dynamic_size=True), False])
    return [ta.stack(), h], [{start: 1}, {start: 4}]


@graph_case
def raw_rnn():
    """tf.nn.raw_rnn (a while loop with TensorArrays and conds in its loop function)."""
    x = tf1.placeholder(tf.float32, [5, 2, 3], name="x")
    cell = tf1.nn.rnn_cell.BasicRNNCell(4, name="raw_cell")
    inputs_ta = tf1.TensorArray(tf.float32, size=5).unstack(x)
    lengths = tf1.constant([5, 3])

    def loop_fn(time, cell_output, cell_state, loop_state):
        emit = cell_output
        state = cell.zero_state(2, tf.float32) if cell_output is None else cell_state
        finished = time >= lengths
        nxt = tf1.cond(tf1.reduce_all(finished), lambda: tf1.zeros([2, 3]), lambda: inputs_ta.read(time))
        return finished, nxt, state, emit, None

    outputs_ta, state, _ = tf1.nn.raw_rnn(cell, loop_fn)
    return [outputs_ta.stack(), state], [{x: _rs(19).randn(5, 2, 3).astype(np.float32)}]


# -- recurrent networks --------------------------------------------------------------------------------------


def _lstm_inputs(seed, batch=2, time=4, depth=3):
    return _rs(seed).randn(batch, time, depth).astype(np.float32)


@graph_case
def dynamic_rnn_lstm():
    """tf.nn.dynamic_rnn over a BasicLSTMCell, variables frozen (a frozen inference graph)."""
    x = tf1.placeholder(tf.float32, [None, 4, 3], name="x")
    cell = tf1.nn.rnn_cell.BasicLSTMCell(5)
    out, state = tf1.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    return [out, state.c, state.h], [{x: _lstm_inputs(9)}]


@graph_case
def dynamic_rnn_gru_sequence_length():
    """A GRU with per-sequence lengths (outputs zeroed and the state carried past each end)."""
    x = tf1.placeholder(tf.float32, [None, 5, 3], name="x")
    lengths = tf1.placeholder(tf.int32, [None], name="lengths")
    cell = tf1.nn.rnn_cell.GRUCell(4)
    out, state = tf1.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)
    return [out, state], [{x: _lstm_inputs(10, 3, 5, 3), lengths: np.array([5, 2, 3], np.int32)}]


# -- writing -------------------------------------------------------------------------------------------------


def write_graph_case(name, fn, manifest):
    g = tf1.Graph()
    with g.as_default():
        tf1.set_random_seed(1)
        fetches, runs = fn()
        arrays = {}
        with tf1.Session(graph=g) as sess:
            sess.run(tf1.global_variables_initializer())
            for k, feed in enumerate(runs):
                values = sess.run(fetches, feed)
                for t, v in feed.items():
                    arrays[f"run{k}/feed/{t.op.name}"] = np.asarray(v)
                for i, v in enumerate(values):
                    arrays[f"run{k}/fetch/{i}"] = np.asarray(v)
            graph_def = g.as_graph_def()
            if tf1.global_variables():
                keep = sorted({t.op.name for t in fetches})
                graph_def = tf1.graph_util.convert_variables_to_constants(sess, graph_def, keep)
    (OUT / f"{name}.pb").write_bytes(graph_def.SerializeToString(deterministic=True))
    np.savez(OUT / f"{name}.npz", **arrays)
    manifest[name] = {"kind": "graph_def", "doc": (fn.__doc__ or "").strip(), "fetches": [t.name for t in fetches],
                      "runs": len(runs)}


TRAINING_CASES = {}


def training_case(fn):
    TRAINING_CASES[fn.__name__] = fn
    return fn


def _regression_head(state, y, opt, clip=False):
    pred = tf1.layers.dense(state, 2, name="dense")
    loss = tf1.reduce_mean(tf1.square(pred - y), name="loss")
    step = tf1.train.get_or_create_global_step()
    if clip:
        grads_and_vars = opt.compute_gradients(loss)
        grads, _ = tf1.clip_by_global_norm([gr for gr, _ in grads_and_vars], 0.5)
        train = opt.apply_gradients(list(zip(grads, [v for _, v in grads_and_vars])), global_step=step, name="train")
    else:
        train = opt.minimize(loss, global_step=step, name="train")
    return loss, train


@training_case
def lstm_adam():
    """dynamic_rnn over a BasicLSTMCell, a dense layer, mean squared error, Adam with a global step."""
    x = tf1.placeholder(tf.float32, [None, 4, 3], name="x")
    y = tf1.placeholder(tf.float32, [None, 2], name="y")
    _, state = tf1.nn.dynamic_rnn(tf1.nn.rnn_cell.BasicLSTMCell(5), x, dtype=tf.float32)
    loss, train = _regression_head(state.h, y, tf1.train.AdamOptimizer(0.05))
    r = _rs(11)
    return loss, train, [{x: r.randn(2, 4, 3).astype(np.float32), y: r.randn(2, 2).astype(np.float32)}
                         for _ in range(3)]


@training_case
def lstm_adam_clip():
    """As lstm_adam, the gradients clipped by their global norm between compute_gradients and
    apply_gradients."""
    x = tf1.placeholder(tf.float32, [None, 4, 3], name="x")
    y = tf1.placeholder(tf.float32, [None, 2], name="y")
    _, state = tf1.nn.dynamic_rnn(tf1.nn.rnn_cell.BasicLSTMCell(5), x, dtype=tf.float32)
    loss, train = _regression_head(state.h, y, tf1.train.AdamOptimizer(0.05), clip=True)
    r = _rs(11)
    return loss, train, [{x: r.randn(2, 4, 3).astype(np.float32), y: r.randn(2, 2).astype(np.float32)}
                         for _ in range(3)]


@training_case
def embedding_gru_adam():
    """An embedding lookup feeding a GRU: the embedding's gradient is sparse (IndexedSlices), so Adam
    updates it with TF1's sparse ops (Unique, UnsortedSegmentSum, ScatterAdd)."""
    ids = tf1.placeholder(tf.int32, [None, 4], name="ids")
    y = tf1.placeholder(tf.float32, [None, 2], name="y")
    emb = tf1.get_variable("embedding", [10, 3])
    _, state = tf1.nn.dynamic_rnn(tf1.nn.rnn_cell.GRUCell(4), tf1.nn.embedding_lookup(emb, ids), dtype=tf.float32)
    loss, train = _regression_head(state, y, tf1.train.AdamOptimizer(0.05))
    r = _rs(13)
    return loss, train, [{ids: r.randint(0, 10, (2, 4)).astype(np.int32), y: r.randn(2, 2).astype(np.float32)}
                         for _ in range(3)]


@training_case
def stacked_rnn_momentum():
    """A MultiRNNCell (LSTMCell with peepholes under a GRUCell) with per-sequence lengths, trained by
    Momentum."""
    x = tf1.placeholder(tf.float32, [None, 4, 3], name="x")
    lengths = tf1.placeholder(tf.int32, [None], name="lengths")
    y = tf1.placeholder(tf.float32, [None, 2], name="y")
    cell = tf1.nn.rnn_cell.MultiRNNCell([tf1.nn.rnn_cell.LSTMCell(4, use_peepholes=True),
                                         tf1.nn.rnn_cell.GRUCell(3)])
    _, state = tf1.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float32)
    loss, train = _regression_head(state[-1], y, tf1.train.MomentumOptimizer(0.1, 0.9))
    r = _rs(14)
    return loss, train, [{x: r.randn(2, 4, 3).astype(np.float32), lengths: np.array([4, 2], np.int32),
                          y: r.randn(2, 2).astype(np.float32)} for _ in range(3)]


@training_case
def conv_batch_norm_adam():
    """tf.layers.batch_normalization with a ``training`` placeholder (conds and their gradients, no loops),
    its moving averages updated through UPDATE_OPS, another cond on ``training``, Adam. The conv has no
    bias: batch norm would make its gradient zero, which Adam turns into noise-driven steps."""
    x = tf1.placeholder(tf.float32, [None, 6, 6, 2], name="x")
    y = tf1.placeholder(tf.float32, [None, 2], name="y")
    training = tf1.placeholder_with_default(False, [], name="training")
    h = tf1.layers.conv2d(x, 3, 3, use_bias=False, name="conv")
    h = tf1.nn.relu(tf1.layers.batch_normalization(h, training=training, name="bn"))
    h = tf1.layers.flatten(h)
    h = tf1.cond(training, lambda: h * 0.5, lambda: h)
    pred = tf1.layers.dense(h, 2, name="dense")
    loss = tf1.reduce_mean(tf1.square(pred - y), name="loss")
    with tf1.control_dependencies(tf1.get_collection(tf1.GraphKeys.UPDATE_OPS)):
        train = tf1.train.AdamOptimizer(0.05).minimize(loss, name="train")
    r = _rs(15)
    return loss, train, [{x: r.randn(4, 6, 6, 2).astype(np.float32), y: r.randn(4, 2).astype(np.float32),
                          training: True} for _ in range(3)]


def write_training_case(name, fn, manifest):
    d = OUT / name
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    g = tf1.Graph()
    arrays = {}
    with g.as_default():
        tf1.set_random_seed(1)
        loss, train, steps = fn()
        tf1.add_to_collection("train_op", train)
        saver = tf1.train.Saver()
        with tf1.Session(graph=g) as sess:
            sess.run(tf1.global_variables_initializer())
            saver.save(sess, str(d / "model"), write_meta_graph=False)
            saver.export_meta_graph(str(d / "model.meta"))
            for k, feed in enumerate(steps):
                loss_value, _ = sess.run([loss, train], feed)
                for t, v in feed.items():
                    arrays[f"step{k}/feed/{t.op.name}"] = np.asarray(v)
                arrays[f"step{k}/loss"] = np.asarray(loss_value)
            arrays["final_loss"] = np.asarray(sess.run(loss, steps[0]))
            for v in tf1.global_variables():
                arrays[f"var/{v.op.name}"] = sess.run(v)
    (d / "checkpoint").unlink(missing_ok=True)
    np.savez(OUT / f"{name}.npz", **arrays)
    manifest[name] = {"kind": "meta_graph", "doc": (fn.__doc__ or "").strip(), "steps": len(steps)}


def write_side_effects_case(name, manifest):
    """Reference variables changed inside control flow: an assign_add in a cond branch (a RefSwitch) and
    one in a loop body (a RefEnter). ``<case>/model.meta`` and its checkpoint (at initialization);
    runs ``run<k>`` one after another on one session, fetching ``fetches[k]``."""
    d = OUT / name
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    g = tf1.Graph()
    arrays = {}
    with g.as_default():
        p = tf1.placeholder(tf.bool, [], name="p")
        x = tf1.placeholder(tf.float32, [], name="x")
        v = tf1.Variable(1.0, name="v")
        counter = tf1.Variable(0, name="counter")

        def add():
            with tf1.control_dependencies([tf1.assign_add(v, x)]):
                return tf1.identity(v)

        y = tf1.cond(p, add, lambda: v * 10.0, name="c")
        _, total = tf1.while_loop(lambda i, a: i < 3,
                                  lambda i, a: (i + 1, a + tf1.cast(tf1.assign_add(counter, 1), tf.float32)), [0, x])
        runs = [([y], {p: True, x: 2.0}), ([y], {p: False, x: 2.0}), ([total], {x: 1.0}), ([total], {x: 0.5}),
                ([v, counter], {})]
        saver = tf1.train.Saver()
        with tf1.Session(graph=g) as sess:
            sess.run(tf1.global_variables_initializer())
            saver.save(sess, str(d / "model"), write_meta_graph=False)
            saver.export_meta_graph(str(d / "model.meta"))
            for k, (fetches, feed) in enumerate(runs):
                for t, value in feed.items():
                    arrays[f"run{k}/feed/{t.op.name}"] = np.asarray(value)
                for i, value in enumerate(sess.run(fetches, feed)):
                    arrays[f"run{k}/fetch/{i}"] = np.asarray(value)
    (d / "checkpoint").unlink(missing_ok=True)
    np.savez(OUT / f"{name}.npz", **arrays)
    manifest[name] = {"kind": "meta_graph_runs", "doc": write_side_effects_case.__doc__,
                      "fetches": [[t.name for t in fetches] for fetches, _ in runs]}


def write_saved_model_case(name, manifest):
    """A TF1 SavedModel (SavedModelBuilder) serving a bidirectional dynamic_rnn with LSTM cells."""
    d = OUT / name
    shutil.rmtree(d, ignore_errors=True)
    g = tf1.Graph()
    with g.as_default():
        tf1.set_random_seed(2)
        x = tf1.placeholder(tf.float32, [None, 3, 2], name="x")
        fw, bw = tf1.nn.rnn_cell.LSTMCell(3), tf1.nn.rnn_cell.LSTMCell(3)
        (out_fw, out_bw), _ = tf1.nn.bidirectional_dynamic_rnn(fw, bw, x, dtype=tf.float32)
        y = tf1.concat([out_fw, out_bw], 2, name="y")
        feed = _lstm_inputs(12, 2, 3, 2)
        with tf1.Session(graph=g) as sess:
            sess.run(tf1.global_variables_initializer())
            want = sess.run(y, {x: feed})
            builder = tf1.saved_model.builder.SavedModelBuilder(str(d))
            sig = tf1.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"y": y})
            builder.add_meta_graph_and_variables(sess, [tf1.saved_model.tag_constants.SERVING],
                                                 signature_def_map={"serving_default": sig})
            builder.save()
    np.savez(OUT / f"{name}.npz", **{"feed/x": feed, "fetch/y": want})
    manifest[name] = {"kind": "saved_model", "doc": write_saved_model_case.__doc__}


README = """# TF1 control-flow graphs (Switch/Merge/Enter/Exit/NextIteration/LoopCond)

Graphs written by real TensorFlow {tf_version} (`{tf_package}`) through `tensorflow.compat.v1` after
`disable_v2_behavior()`: TF1 dataflow control flow, TensorArrayV3 ops, reference variables, and for the
training graphs TF1's loop gradients (stacks, TensorArrayGradV3), as TensorFlow 1.x saved them. NumPy
{np_version}, Python {py_version}, CPU. `cases.json` lists the cases and their kind; the files of each kind
are described in the docstring of `tools/make_control_flow_v1_fixtures.py`, which made them:

    /work/tfvenv/bin/python tools/make_control_flow_v1_fixtures.py

`tests/python/test_control_flow_v1_import.py` imports each into ferroflow (`tf.import_graph_def`,
`tf.train.import_meta_graph` + restore, `tf.saved_model.loader.load`) and compares with TensorFlow's values.
"""


def main():
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    manifest = {}
    for name, fn in GRAPH_CASES.items():
        write_graph_case(name, fn, manifest)
    for name, fn in TRAINING_CASES.items():
        write_training_case(name, fn, manifest)
    write_side_effects_case("ref_variables_side_effects", manifest)
    write_saved_model_case("saved_model_bilstm", manifest)
    (OUT / "cases.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    (OUT / "README.md").write_text(README.format(
        tf_version=tf.__version__, tf_package="tensorflow-cpu", np_version=np.__version__,
        py_version=platform.python_version()))
    print(f"wrote {len(manifest)} cases to {OUT}")


if __name__ == "__main__":
    main()
