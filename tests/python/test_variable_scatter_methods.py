"""TF1 reference variables' scatter and counting methods (``Variable.scatter_mul``, ``scatter_nd_update``,
``batch_scatter_update``, ``count_up_to``, ...), checked against NumPy."""

import numpy as np
import pytest

import ferroflow.compat.v1 as tf

START = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


def _run(build):
    v = tf.Variable(START)
    update = build(v)
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(update)
        return sess.run(v)


@pytest.mark.parametrize("method, combine", [
    ("scatter_mul", np.multiply), ("scatter_div", np.divide), ("scatter_max", np.maximum),
    ("scatter_min", np.minimum),
])
def test_row_scatters_combine_like_numpy(method, combine):
    expected = START.copy()
    values = np.array([[2.0, 2.0], [4.0, 0.5]], np.float32)
    for row, value in zip([0, 2], values):
        expected[row] = combine(expected[row], value)
    got = _run(lambda v: getattr(v, method)(
        tf.IndexedSlices(tf.constant(values), tf.constant([0, 2]))))
    np.testing.assert_allclose(got, expected)


@pytest.mark.parametrize("method, combine", [
    ("scatter_nd_update", lambda old, new: new), ("scatter_nd_add", np.add), ("scatter_nd_sub", np.subtract),
])
def test_nd_scatters_address_single_elements(method, combine):
    indices = np.array([[0, 1], [2, 0]], np.int32)
    updates = np.array([10.0, 20.0], np.float32)
    expected = START.copy()
    for (i, j), u in zip(indices, updates):
        expected[i, j] = combine(expected[i, j], u)
    got = _run(lambda v: getattr(v, method)(tf.constant(indices), tf.constant(updates)))
    np.testing.assert_allclose(got, expected)


def test_batch_scatter_update_replaces_rows_per_batch():
    values = np.array([[7.0, 8.0]], np.float32)
    got = _run(lambda v: v.batch_scatter_update(tf.IndexedSlices(tf.constant(values), tf.constant([1]))))
    expected = START.copy()
    expected[1] = values[0]
    np.testing.assert_allclose(got, expected)


def test_count_up_to_stops_at_the_limit():
    v = tf.Variable(0, dtype=tf.int32)
    step = v.count_up_to(3)
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert [sess.run(step) for _ in range(3)] == [0, 1, 2]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(step)
        assert sess.run(v) == 3
