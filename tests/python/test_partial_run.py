"""``Session.partial_run_setup`` / ``partial_run``: feeds arriving over several calls of one step, each node
running once per handle, and TensorFlow 2.21's errors (messages checked against what TF 2.21 raises for the
same calls)."""

from __future__ import annotations

import numpy as np
import pytest

import ferroflow as tf


@pytest.fixture
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _abc():
    a = tf.placeholder(tf.float32, [], name="a")
    b = tf.placeholder(tf.float32, [], name="b")
    c = tf.placeholder(tf.float32, [], name="c")
    r1 = tf.add(a, b, name="r1")
    r2 = tf.multiply(r1, c, name="r2")
    return a, b, c, r1, r2


def test_feeds_and_fetches_over_several_calls(graph):
    a, b, c, r1, r2 = _abc()
    with tf.Session() as sess:
        h = sess.partial_run_setup([r1, r2], [a, b, c])
        assert isinstance(h, str)
        assert sess.partial_run(h, r1, feed_dict={a: 1, b: 2}) == np.float32(3)
        assert sess.partial_run(h, [r2], feed_dict={c: 3}) == [np.float32(9)]
        # Two handles at once, interleaved, each with its own values.
        h1 = sess.partial_run_setup([r1, r2], [a, b, c])
        h2 = sess.partial_run_setup([r1, r2], [a, b, c])
        assert sess.partial_run(h1, r1, {a: 1, b: 1}) == 2
        assert sess.partial_run(h2, r1, {a: 5, b: 5}) == 10
        assert sess.partial_run(h1, r2, {c: 10}) == 20
        assert sess.partial_run(h2, r2, {c: 10}) == 100
        # A nested fetch structure and a feed given by name.
        h = sess.partial_run_setup({"x": r1, "y": [r2]}, ["a:0", b, c])
        assert sess.partial_run(h, {"x": r1}, {"a:0": 2.0, b: 3.0}) == {"x": 5.0}
        assert sess.partial_run(h, {"y": [r2]}, {c: 2.0}) == {"y": [10.0]}


def test_errors_as_tensorflow(graph):
    a, b, c, r1, r2 = _abc()
    d = tf.placeholder(tf.float32, [], name="d")
    x = tf.identity(a, name="x")
    invalid = tf.errors.InvalidArgumentError
    with tf.Session() as sess:
        h = sess.partial_run_setup([r1, r2], [a, b, c])
        with pytest.raises(invalid, match=r"^Fetch c:0 can't be computed from the feeds that have been fed so far\.$"):
            sess.partial_run(h, r2, {a: 1, b: 2})
        with pytest.raises(invalid, match=r"^The feed d:0 was not specified in partial_run_setup\.$"):
            sess.partial_run(h, r1, {d: 1})
        with pytest.raises(invalid, match=r"^The fetch x:0 was not specified in partial_run_setup\.$"):
            sess.partial_run(h, x, {a: 1})
        with pytest.raises(RuntimeError, match="partial_run\\(\\) requires empty `target_list`"):
            sess.partial_run(h, r1.op, {a: 1, b: 2})
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(2,\) for Tensor a:0, which has shape \(\)"):
            sess.partial_run(h, r1, {a: [1, 2], b: 1})
        # None of those errors ended the handle.
        assert sess.partial_run(h, r1, {a: 1, b: 2}) == 3
        with pytest.raises(invalid, match=r"^The fetch r1:0 has already been fetched\.$"):
            sess.partial_run(h, r1)
        with pytest.raises(invalid, match=r"^The feed a:0 has already been fed\.$"):
            sess.partial_run(h, r2, {a: 5})
        assert sess.partial_run(h, r2, {c: 5}) == 15
        # Everything fed and fetched: the handle is gone.
        with pytest.raises(invalid, match="^Must run 'setup' before performing partial runs!$"):
            sess.partial_run(h, r2, {c: 5})
        with pytest.raises(invalid, match="^Must run 'setup' before performing partial runs!$"):
            sess.partial_run("nonsense", r1, {a: 1})
        with pytest.raises(invalid, match='^Endpoint "a:0" fed more than once\\.$'):
            sess.partial_run_setup([r1], [a, a, b])
        with pytest.raises(invalid, match=r"^r1:0 is both fed and fetched\.$"):
            sess.partial_run_setup([r1, r2], [a, b, r1])
        # A placeholder the setup did not declare fails the handle's first call, which ends it.
        h = sess.partial_run_setup([r1], [a])
        with pytest.raises(invalid, match="You must feed a value for placeholder tensor 'b'"):
            sess.partial_run(h, r1, {a: 1})
        with pytest.raises(invalid, match="^Must run 'setup'"):
            sess.partial_run(h, r1, {a: 1})
        # No feeds and no fetches: nothing to do.
        h = sess.partial_run_setup(r1, [a, b])
        assert sess.partial_run(h, []) == []
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.partial_run_setup([r1], [a, b])


def test_each_node_runs_once_per_handle(graph):
    a = tf.placeholder(tf.float32, [], name="a")
    c = tf.placeholder(tf.float32, [], name="c")
    v = tf.Variable(0.0, name="v")
    inc = tf.assign_add(v, 1.0)
    rnd = tf.random_uniform([], seed=1)
    x1, x2 = rnd + a, rnd * c
    with tf.control_dependencies([inc]):
        after_inc = tf.identity(a)
    with tf.Session() as sess:
        sess.run(v.initializer)
        h = sess.partial_run_setup([x1, x2, inc], [a, c])
        # The increment needs no feed: it ran when the partial run was set up, as in TensorFlow.
        assert sess.run(v) == 1.0
        got_x1, got_inc = sess.partial_run(h, [x1, inc], {a: 0.0})
        got_x2 = sess.partial_run(h, x2, {c: 1.0})
        assert got_inc == 1.0 and sess.run(v) == 1.0
        # One random draw feeds both fetches.
        assert got_x1 == got_x2 and 0.0 <= got_x2 < 1.0
        # A node waiting on a feed, with a control input on the increment, does not run the increment again.
        h = sess.partial_run_setup([after_inc, inc], [a])
        assert sess.run(v) == 2.0
        assert sess.partial_run(h, [after_inc, inc], {a: 7.0}) == [7.0, 2.0]
        assert sess.run(v) == 2.0


def test_iterators_variables_and_sparse_feeds(graph):
    it = tf.data.make_one_shot_iterator(tf.data.Dataset.range(10)).get_next()
    a = tf.placeholder(tf.int64, [], name="a")
    later = it + a
    w = tf.Variable([1.0, 2.0])
    scale = tf.placeholder(tf.float32, [])
    scaled = w * scale
    sp = tf.sparse_placeholder(tf.float32, [None, None])
    total = tf.sparse_reduce_sum(sp) * scale
    with tf.Session() as sess:
        sess.run(w.initializer)
        h = sess.partial_run_setup([it, later], [a])
        assert sess.partial_run(h, it) == 0
        # The same element: get_next ran once for this handle.
        assert sess.partial_run(h, later, {a: 100}) == 100
        assert sess.run(it) == 1
        h = sess.partial_run_setup([scaled, total], [scale, sp])
        np.testing.assert_array_equal(sess.partial_run(h, scaled, {scale: 3.0}), [3.0, 6.0])
        value = tf.SparseTensorValue([[0, 0], [1, 2]], [2.0, 5.0], [2, 3])
        assert sess.partial_run(h, total, {sp: value}) == 21.0
