"""RunOptions/RunMetadata tracing (step stats from the Rust executor), the Chrome trace writer, and
ConfigProto thread settings."""

import json
import time

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.client.timeline import Timeline

CPU = "/job:localhost/replica:0/task:0/device:CPU:0"
FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


def _model():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w")
    y = tf.matmul(x, w, name="y")
    loss = tf.reduce_sum(tf.square(y), name="loss")
    return x, w, y, loss


def test_full_trace_fills_step_stats():
    x, w, y, loss = _model()
    with tf.Session() as sess:
        sess.run(w.initializer)
        md = tf.RunMetadata()
        before = time.time()
        out = sess.run(loss, {x: [[1, 2, 3]]}, options=FULL, run_metadata=md)
        after = time.time()
    assert out == pytest.approx((16.0**2) + (22.0**2))
    assert len(md.step_stats.dev_stats) == 1
    dev = md.step_stats.dev_stats[0]
    assert dev.device == CPU
    by_name = {n.node_name: n for n in dev.node_stats}
    # Only what the fetch needs runs; the fed placeholder is not executed.
    assert "x" not in by_name and "w/Assign" not in by_name
    for name in ("w", "w/read", "y", "loss/Square" if "loss/Square" in by_name else "Square", "loss"):
        assert name in by_name, sorted(by_name)
    assert by_name["y"].timeline_label == "y = MatMul(x, w/read)"
    assert by_name["w/read"].timeline_label == "w/read = Identity(w)"
    assert by_name["loss"].timeline_label.startswith("loss = Sum(")
    order = [n.node_name for n in dev.node_stats]
    assert order.index("w/read") < order.index("y") < order.index("loss")
    for n in dev.node_stats:
        assert before * 1e6 - 1e3 <= n.all_start_micros <= after * 1e6 + 1e3
        assert n.all_start_micros == n.all_start_nanos // 1000
        assert 0 <= n.op_start_rel_nanos <= n.op_end_rel_nanos <= n.all_end_rel_nanos
        assert n.op_end_rel_micros == n.op_end_rel_nanos // 1000
        assert n.thread_id in dev.thread_names
    starts = [n.all_start_nanos for n in dev.node_stats]
    assert starts == sorted(starts)


def test_no_trace_without_options_or_at_no_trace():
    x, w, y, loss = _model()
    with tf.Session() as sess:
        sess.run(w.initializer)
        md = tf.RunMetadata()
        md.step_stats.dev_stats.add(device="stale")
        sess.run(loss, {x: [[1, 2, 3]]}, run_metadata=md)
        assert not md.HasField("step_stats")
        sess.run(loss, {x: [[1, 2, 3]]}, options=tf.RunOptions(), run_metadata=md)
        assert len(md.step_stats.dev_stats) == 0
        # Any trace level above NO_TRACE traces.
        sess.run(loss, {x: [[1, 2, 3]]}, options=tf.RunOptions(trace_level=tf.RunOptions.SOFTWARE_TRACE),
                 run_metadata=md)
        assert len(md.step_stats.dev_stats[0].node_stats) >= 4
        # Tracing without somewhere to put it is allowed.
        assert sess.run(y, {x: [[1, 0, 0]]}, options=FULL).tolist() == [[0.0, 1.0]]


def test_traced_single_tensor_fetch_and_targets():
    v = tf.Variable(1.0, name="v")
    inc = tf.assign_add(v, 2.0, name="inc")
    with tf.Session() as sess:
        sess.run(v.initializer)
        md = tf.RunMetadata()
        assert sess.run(v.value(), options=FULL, run_metadata=md) == 1.0
        assert [n.node_name for n in md.step_stats.dev_stats[0].node_stats] == ["v", "v/read"]
        assert sess.run(inc.op, options=FULL, run_metadata=md) is None
        names = [n.node_name for n in md.step_stats.dev_stats[0].node_stats]
        assert "inc" in names


def test_make_callable_accepts_options():
    x, w, y, loss = _model()
    with tf.Session() as sess:
        sess.run(w.initializer)
        fn = sess.make_callable(loss, [x], accept_options=True)
        md = tf.RunMetadata()
        assert fn([[1, 0, 0]], options=FULL, run_metadata=md) == pytest.approx(1.0)
        assert "y" in {n.node_name for n in md.step_stats.dev_stats[0].node_stats}
        plain = sess.make_callable(loss, [x])
        with pytest.raises(TypeError, match="unexpected keyword"):
            plain([[1, 0, 0]], options=FULL)


def test_option_types_are_checked():
    c = tf.constant(1.0)
    with tf.Session() as sess:
        with pytest.raises(TypeError, match="options must be a tf.RunOptions"):
            sess.run(c, options=tf.RunMetadata())
        with pytest.raises(TypeError, match="run_metadata must be a tf.RunMetadata"):
            sess.run(c, options=FULL, run_metadata=tf.RunOptions())
    with pytest.raises(TypeError, match="config must be a tf.ConfigProto"):
        tf.Session(config={"intra_op_parallelism_threads": 1})


def test_chrome_trace_from_step_stats():
    x, w, y, loss = _model()
    with tf.Session() as sess:
        sess.run(w.initializer)
        md = tf.RunMetadata()
        sess.run(loss, {x: np.ones((4, 3), np.float32)}, options=FULL, run_metadata=md)
    trace = json.loads(Timeline(md.step_stats).generate_chrome_trace_format())
    events = trace["traceEvents"]
    procs = [e for e in events if e["ph"] == "M" and e["name"] == "process_name"]
    assert procs[0]["args"]["name"] == CPU + " Compute"
    ops = {e["args"]["name"]: e for e in events if e["ph"] == "X"}
    assert set(ops) == {n.node_name for n in md.step_stats.dev_stats[0].node_stats}
    mm = ops["y"]
    assert mm["cat"] == "Op" and mm["name"] == "MatMul"
    assert mm["args"] == {"name": "y", "op": "MatMul", "input0": "x", "input1": "w/read"}
    node = next(n for n in md.step_stats.dev_stats[0].node_stats if n.node_name == "y")
    assert mm["ts"] == pytest.approx(node.all_start_nanos / 1000)
    assert mm["dur"] == pytest.approx(node.all_end_rel_nanos / 1000)
    flows = [e for e in events if e.get("cat") == "DataFlow"]
    # w/read -> y: a start at w/read's end and an end at y's start with the same id.
    starts = {e["id"]: e for e in flows if e["ph"] == "s"}
    ends = {e["id"]: e for e in flows if e["ph"] == "t"}
    assert set(starts) == set(ends) and starts
    pair = next(i for i, e in ends.items() if e["name"] == "w/read" and e["ts"] == mm["ts"])
    assert starts[pair]["ts"] == pytest.approx(ops["w/read"]["ts"] + ops["w/read"]["dur"])
    no_flow = json.loads(Timeline(md.step_stats).generate_chrome_trace_format(show_dataflow=False))
    assert not [e for e in no_flow["traceEvents"] if e.get("cat") == "DataFlow"]


def _threaded_results(threads):
    tf.reset_default_graph()
    tf.set_random_seed(7)
    x = tf.random_normal([300, 700], seed=3)
    w = tf.Variable(tf.random_uniform([700, 64], seed=4))
    h = tf.nn.relu(tf.matmul(x, w))
    big = tf.tanh(x) * 3.0 + tf.exp(-tf.abs(x))
    stats = [tf.reduce_sum(big), tf.reduce_mean(h, axis=0), tf.reduce_max(big, axis=1), tf.nn.softmax(big)]
    config = tf.ConfigProto(intra_op_parallelism_threads=threads, inter_op_parallelism_threads=threads)
    with tf.Session(config=config) as sess:
        sess.run(w.initializer)
        assert sess._native.intra_op_threads == (threads or sess._native.intra_op_threads)
        return sess.run(stats)


def test_config_thread_counts_give_identical_results():
    ref = _threaded_results(1)
    for threads in (0, 2, 3):
        got = _threaded_results(threads)
        for a, b in zip(ref, got):
            np.testing.assert_array_equal(a, b)


def test_config_sets_the_session_pool_size():
    c = tf.constant(1.0)
    for n in (1, 2, 5):
        with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=n)) as sess:
            assert sess._native.intra_op_threads == n
            assert sess.run(c) == 1.0
    # Ignored fields are accepted.
    cfg = tf.ConfigProto(allow_soft_placement=True, log_device_placement=True, device_count={"GPU": 0},
                         operation_timeout_in_ms=5, use_per_session_threads=True)
    with tf.Session(config=cfg) as sess:
        assert sess.run(c) == 1.0
