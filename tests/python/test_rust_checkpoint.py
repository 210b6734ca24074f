"""A training run written by the Rust facade crate, read by Python ferroflow.

``tests/fixtures/rust_checkpoint`` holds what ``crates/ferroflow/examples/train_rust.rs`` wrote
(its checkpoints, ``checkpoint`` state file and TensorBoard event file) and ``expected.json``,
the run's data, final variables, loss and logged losses as the Rust session computed them
(the command is in the example's docs). Here the same model is built with ``import ferroflow as
tf`` the TF1 way (``get_variable``, ``AdamOptimizer``, ``exponential_decay``, ``Saver()`` over
every global variable), so the Rust checkpoint must hold every key Python's optimizer creates.
"""

import json

import numpy as np
import pytest

import ferroflow as tf

CASE = "rust_checkpoint"


@pytest.fixture
def run(fixtures):
    d = fixtures / CASE
    return d, json.loads((d / "expected.json").read_text())


def _model(expected):
    x = tf.constant(np.asarray(expected["points"], np.float32).reshape(-1, 2))
    y = tf.constant(np.asarray(expected["labels"], np.int32))
    h = x
    for i, scope in enumerate(["dense", "dense_1"]):
        kernel = expected["variables"][f"{scope}/kernel"]["shape"]
        with tf.variable_scope(scope):
            k = tf.get_variable("kernel", kernel)
            b = tf.get_variable("bias", [kernel[1]])
        h = tf.matmul(h, k) + b
        if i == 0:
            h = tf.nn.relu(h)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
    step = tf.train.get_or_create_global_step()
    lr = tf.train.exponential_decay(0.05, step, 100, 0.5)
    train = tf.train.AdamOptimizer(lr).minimize(loss, global_step=step)
    return loss, step, train


def test_python_saver_restores_the_rust_checkpoint(run):
    d, expected = run
    latest = tf.train.latest_checkpoint(str(d))
    assert latest == str(d / f"model.ckpt-{expected['global_step']}")
    state = tf.train.get_checkpoint_state(str(d))
    assert [p.rsplit("/", 1)[1] for p in state.all_model_checkpoint_paths] == [
        "model.ckpt-100", "model.ckpt-200", "model.ckpt-300"]
    loss, step, train = _model(expected)
    saver = tf.train.Saver()
    with tf.Session() as sess:
        saver.restore(sess, latest)
        assert sess.run(step) == expected["global_step"]
        for name, v in expected["variables"].items():
            got = sess.run(tf.get_default_graph().get_tensor_by_name(name + ":0"))
            np.testing.assert_array_equal(got, np.asarray(v["values"], np.float32).reshape(v["shape"]))
        np.testing.assert_allclose(sess.run(loss), expected["loss"], rtol=1e-6)
        # Training goes on from the restored optimizer state.
        sess.run(train)
        assert sess.run(step) == expected["global_step"] + 1
        assert sess.run(loss) < expected["loss"]


def test_python_imports_the_rust_meta_graph_and_trains_on(run):
    d, expected = run
    latest = tf.train.latest_checkpoint(str(d))
    saver = tf.train.import_meta_graph(latest + ".meta")
    graph = tf.get_default_graph()
    (train,) = tf.get_collection(tf.GraphKeys.TRAIN_OP)
    step = tf.train.get_global_step()
    assert sorted(v.op.name for v in tf.trainable_variables()) == sorted(expected["variables"])
    assert len(tf.get_collection(tf.GraphKeys.SUMMARIES)) == 3
    loss = graph.get_tensor_by_name("Mean:0")
    x, y = graph.get_tensor_by_name("x:0"), graph.get_tensor_by_name("y:0")
    feed = {x: np.asarray(expected["points"], np.float32).reshape(-1, 2), y: expected["labels"]}
    with tf.Session() as sess:
        saver.restore(sess, latest)
        np.testing.assert_allclose(sess.run(loss, feed), expected["loss"], rtol=1e-6)
        sess.run(train, feed)
        assert sess.run(step) == expected["global_step"] + 1
        assert sess.run(loss, feed) < expected["loss"]


def test_the_rust_event_file_reads_back(run):
    d, expected = run
    (events,) = sorted(d.glob("events.out.tfevents.*"))
    losses, graphs, histograms = [], 0, set()
    for event in tf.train.summary_iterator(str(events)):
        if event.HasField("graph_def"):
            graph = tf.GraphDef.FromString(event.graph_def)
            assert "loss" in {n.name for n in graph.node}
            graphs += 1
        for value in event.summary.value:
            if value.tag == "loss":
                losses.append((event.step, value.simple_value))
            if value.HasField("histo"):
                histograms.add(value.tag)
    assert graphs == 1
    assert histograms == {"hidden_kernel"}
    assert [s for s, _ in losses] == [s for s, _ in expected["logged_loss"]]
    np.testing.assert_allclose([v for _, v in losses], [v for _, v in expected["logged_loss"]], rtol=1e-7)
