"""tf.ConditionalAccumulator and tf.SparseConditionalAccumulator against TensorFlow 2.21
(tests/fixtures/queues/queues.json, made by make_queues.py): means, sums, stale gradients dropped, the global
step, sparse rows averaged per index; take_grad waits (deadline, Session.close)."""

import json
import threading
import time
from pathlib import Path

import pytest

import ferroflow as tf

WANT = json.loads((Path(__file__).parent.parent / "fixtures" / "queues" / "queues.json").read_text())["accumulators"]


def test_accumulators_match_tensorflow():
    with tf.Graph().as_default():
        dense = tf.ConditionalAccumulator(tf.float32, shape=[2])
        total = tf.ConditionalAccumulator(tf.float32, shape=[2], reduction_type="SUM")
        sparse = tf.SparseConditionalAccumulator(tf.float32, shape=[4, 2])
        g = tf.placeholder(tf.float32, [2])
        step = tf.placeholder(tf.int64, [])
        si = tf.placeholder(tf.int64, [None])
        sv = tf.placeholder(tf.float32, [None, 2])
        dense_apply, total_apply = dense.apply_grad(g, local_step=step), total.apply_grad(g, local_step=step)
        dense_take, total_take = dense.take_grad(2), total.take_grad(1)
        assert dense_take.shape.as_list() == [2]
        dense_n, set_step = dense.num_accumulated(), dense.set_global_step(step)
        sparse_apply = sparse.apply_grad(si, sv, grad_shape=[4, 2], local_step=step)
        sparse_take, sparse_n = sparse.take_grad(2), sparse.num_accumulated()
        got = {}
        with tf.Session() as s:
            def feed(grad, st):
                return {g: grad, step: st}

            s.run(dense_apply, feed([1.0, 2.0], 0))
            s.run(dense_apply, feed([3.0, 6.0], 0))
            s.run(dense_apply, feed([5.0, 1.0], 0))
            got["dense_n_before"] = int(s.run(dense_n))
            got["dense_mean"] = s.run(dense_take).tolist()
            s.run(dense_apply, feed([100.0, 100.0], 0))
            got["dense_n_after_stale"] = int(s.run(dense_n))
            s.run(dense_apply, feed([1.0, 1.0], 1))
            s.run(dense_apply, feed([2.0, 4.0], 5))
            got["dense_mean_2"] = s.run(dense_take).tolist()
            s.run(set_step, {step: 10})
            s.run(dense_apply, feed([7.0, 7.0], 9))
            got["dense_n_after_set_step"] = int(s.run(dense_n))
            s.run(total_apply, feed([1.0, 2.0], 0))
            s.run(total_apply, feed([3.0, 4.0], 0))
            got["sum"] = s.run(total_take).tolist()
            s.run(sparse_apply, {si: [3, 0], sv: [[1, 1], [2, 2]], step: 0})
            s.run(sparse_apply, {si: [3, 1], sv: [[3, 5], [4, 4]], step: 0})
            got["sparse_n"] = int(s.run(sparse_n))
            i, v, sh = s.run(sparse_take)
            got["sparse"] = {"indices": i.tolist(), "values": v.tolist(), "shape": sh.tolist()}
    assert got == WANT


def test_indexed_slices_round_trip():
    with tf.Graph().as_default():
        acc = tf.SparseConditionalAccumulator(tf.float32, shape=[5, 1])
        grad = tf.IndexedSlices(values=tf.constant([[1.0], [3.0]]), indices=tf.constant([4, 2], tf.int64),
                                dense_shape=tf.constant([5, 1], tf.int64))
        apply = acc.apply_indexed_slices_grad(grad)
        out = acc.take_indexed_slices_grad(1)
        with tf.Session() as s:
            s.run(apply)
            values, indices, shape = s.run([out.values, out.indices, out.dense_shape])
    assert indices.tolist() == [4, 2] and values.tolist() == [[1.0], [3.0]] and shape.tolist() == [5, 1]


def test_bad_inputs():
    with tf.Graph().as_default():
        acc = tf.ConditionalAccumulator(tf.float32, shape=[2])
        with pytest.raises(ValueError):
            acc.apply_grad([1.0, 2.0, 3.0])
        x = tf.placeholder(tf.float32, None)
        apply = acc.apply_grad(x)
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError, match="ConditionalAccumulator"):
                s.run(apply, {x: [1.0, 2.0, 3.0]})
            with pytest.raises(tf.errors.InvalidArgumentError, match="num_required must be positive"):
                s.run(acc.take_grad(0))


def test_take_grad_waits_until_deadline_or_close():
    with tf.Graph().as_default():
        acc = tf.ConditionalAccumulator(tf.float32, shape=[])
        take = acc.take_grad(1)
        s = tf.Session()
        with pytest.raises(tf.errors.DeadlineExceededError):
            s.run(take, options=tf.RunOptions(timeout_in_ms=50))
        errors = []
        t = threading.Thread(target=lambda: errors.append(pytest.raises(tf.errors.CancelledError, s.run, take)))
        t.start()
        time.sleep(0.1)
        s.close()
        t.join(1.0)
        assert not t.is_alive() and len(errors) == 1
