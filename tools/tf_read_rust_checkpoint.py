"""Check that TensorFlow itself reads what the Rust facade crate wrote (never needed by the tests).

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/tf_read_rust_checkpoint.py [DIR]

DIR (default ``tests/fixtures/rust_checkpoint``) is a log directory written by
``crates/ferroflow/examples/train_rust.rs`` with ``--expected DIR/expected.json``. The model is
built with ``tensorflow.compat.v1`` (graph mode, reference variables) the way
``tests/python/test_rust_checkpoint.py`` builds it with ferroflow; TensorFlow's
``tf.train.latest_checkpoint`` and ``Saver().restore`` read the Rust checkpoint (every variable,
Adam's slots and the global step), the restored values and loss are compared with the Rust run's,
one more training step runs; ``tf.train.import_meta_graph`` reads the Rust ``.meta`` and its
``train_op`` trains on; and TensorFlow's ``summary_iterator`` reads the Rust event file.
Prints one line per check and exits non-zero on a mismatch.
"""

import json
import pathlib
import sys

import numpy as np


def main():
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    tf.disable_resource_variables()
    root = pathlib.Path(__file__).resolve().parent.parent
    d = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root / "tests" / "fixtures" / "rust_checkpoint"
    expected = json.loads((d / "expected.json").read_text())
    latest = tf.train.latest_checkpoint(str(d))
    assert latest == str(d / f"model.ckpt-{expected['global_step']}"), latest
    print("latest_checkpoint:", latest)
    x = tf.constant(np.asarray(expected["points"], np.float32).reshape(-1, 2))
    y = tf.constant(np.asarray(expected["labels"], np.int32))
    h = x
    for i, scope in enumerate(["dense", "dense_1"]):
        shape = expected["variables"][f"{scope}/kernel"]["shape"]
        with tf.variable_scope(scope):
            k = tf.get_variable("kernel", shape)
            b = tf.get_variable("bias", [shape[1]])
        h = tf.matmul(h, k) + b
        if i == 0:
            h = tf.nn.relu(h)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=h))
    step = tf.train.get_or_create_global_step()
    lr = tf.train.exponential_decay(0.05, step, 100, 0.5)
    train = tf.train.AdamOptimizer(lr).minimize(loss, global_step=step)
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, latest)
        print("restored", len(tf.global_variables()), "variables; global_step", sess.run(step))
        assert sess.run(step) == expected["global_step"]
        for name, v in expected["variables"].items():
            got = sess.run(tf.get_default_graph().get_tensor_by_name(name + ":0"))
            np.testing.assert_array_equal(got, np.asarray(v["values"], np.float32).reshape(v["shape"]))
        print("variables equal the Rust run's")
        got = sess.run(loss)
        np.testing.assert_allclose(got, expected["loss"], rtol=1e-5)
        print(f"loss {got:.7f} (Rust: {expected['loss']:.7f})")
        sess.run(train)
        print(f"one more TensorFlow step: loss {sess.run(loss):.7f}")
    with tf.Graph().as_default() as graph:
        saver = tf.train.import_meta_graph(latest + ".meta")
        (train,) = tf.get_collection(tf.GraphKeys.TRAIN_OP)
        ops = sorted({n.type for n in graph.get_operations() if n.type.startswith("Apply")})
        loss = graph.get_tensor_by_name("Mean:0")
        feed = {graph.get_tensor_by_name("x:0"): np.asarray(expected["points"], np.float32).reshape(-1, 2),
                graph.get_tensor_by_name("y:0"): expected["labels"]}
        with tf.Session() as sess:
            saver.restore(sess, latest)
            got = sess.run(loss, feed)
            np.testing.assert_allclose(got, expected["loss"], rtol=1e-5)
            sess.run(train, feed)
            print(f"import_meta_graph({pathlib.Path(latest).name}.meta): update ops {ops}, loss {got:.7f}, "
                  f"after one step of its train_op {sess.run(loss, feed):.7f}, global step "
                  f"{sess.run(tf.train.get_global_step())}")
    (events,) = sorted(d.glob("events.out.tfevents.*"))
    losses = [(e.step, v.simple_value) for e in tf.train.summary_iterator(str(events))
              for v in e.summary.value if v.tag == "loss"]
    np.testing.assert_allclose([v for _, v in losses], [v for _, v in expected["logged_loss"]], rtol=1e-7)
    print(f"summary_iterator read {len(losses)} logged losses from {events.name}")
    print("OK")


if __name__ == "__main__":
    main()
