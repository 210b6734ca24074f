"""Static shapes of broadcasting ops match TensorFlow's shape functions (issue 23).

The expected shapes in the tables were printed by TensorFlow 2.21 (``tf.compat.v1``, graph mode)
for the same expressions. The regression: ``tf.nn.dropout(x, keep_prob)`` with a fed
``keep_prob = tf.placeholder(tf.float32)`` lost x's static shape, and the Deep MNIST tutorial then
failed in ``softmax_cross_entropy_with_logits``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ferroflow as tf

U = "unknown rank"


def _ph(shape, dtype=None):
    dtype = dtype or tf.float32
    return tf.placeholder(dtype) if shape == U else tf.placeholder(dtype, shape)


def _dims(t):
    return None if t.shape.dims is None else [d.value if hasattr(d, "value") else d for d in t.shape.dims]


# (left shape, right shape, TF 2.21's static shape of left * right; None = unknown rank)
BINARY = [
    (U, [None, 3], None),
    ([None, 3], U, None),
    ([], [None, 3], [None, 3]),
    (U, [], None),
    (U, U, None),
    (U, [2, 3], None),
    ([None, 3], [None, None], [None, 3]),
    ([None, 3], [None], [None, 3]),
    ([None, 3], [1, None], [None, 3]),
    ([None], [], [None]),
    ([0], [None], [None]),
    ([None], [0], [None]),
    ([0], [1], [0]),
    ([4, 1, 3], [None, 1], [4, None, 3]),
]


@pytest.mark.parametrize("left,right,expected", BINARY)
@pytest.mark.parametrize("op", [tf.multiply, tf.add, tf.maximum, tf.pow, tf.squared_difference, tf.greater])
def test_binary_static_shape_matches_tf(op, left, right, expected):
    assert _dims(op(_ph(left), _ph(right))) == expected


def test_dropout_with_fed_keep_prob_keeps_shape():
    x = tf.placeholder(tf.float32, [None, 1024])
    keep_prob = tf.placeholder(tf.float32)
    h = tf.nn.dropout(x, keep_prob)
    assert _dims(h) == [None, 1024]
    assert _dims(tf.nn.dropout(x, rate=tf.placeholder(tf.float32))) == [None, 1024]
    # The Deep MNIST tutorial's next steps build on that shape.
    w = tf.Variable(tf.zeros([1024, 10]))
    logits = tf.matmul(h, w)
    y_ = tf.placeholder(tf.float32, [None, 10])
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y_, logits=logits))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        xs = np.ones([2, 1024], np.float32)
        ys = np.eye(10, dtype=np.float32)[:2]
        out, value = sess.run([h, loss], {x: xs, keep_prob: 1.0, y_: ys})
    np.testing.assert_array_equal(out, xs)
    np.testing.assert_allclose(value, np.log(10.0), rtol=1e-6)


def test_dropout_rate_must_be_scalar():
    x = tf.placeholder(tf.float32, [None, 3])
    with pytest.raises(ValueError):
        tf.nn.dropout(x, tf.placeholder(tf.float32, [3]))


def test_select_and_add_n_merge_unknown_rank():
    u = _ph(U)
    x = _ph([None, 3])
    assert _dims(tf.where(_ph([None, 3], tf.bool), x, u)) == [None, 3]
    assert _dims(tf.where(_ph(U, tf.bool), x, u)) == [None, 3]
    assert _dims(tf.add_n([x, u])) == [None, 3]
    assert _dims(tf.where_v2(_ph([None, 3], tf.bool), x, u)) is None


# (input shape, shape tensor, TF 2.21's static shape of broadcast_to)
def _broadcast_to_cases():
    n = tf.placeholder(tf.int32, [])
    return [
        ([None, 1, 3], tf.placeholder(tf.int32, [3]), [None, None, 3]),
        ([None, 1, 3], tf.placeholder(tf.int32, [4]), [None, None, None, 3]),
        (U, tf.placeholder(tf.int32, [4]), [None, None, None, None]),
        ([None, 3], tf.placeholder(tf.int32), None),
        ([None, 3], tf.stack([n, 3]), [None, 3]),
        ([None, 3], tf.stack([n, n]), [None, 3]),
        ([5, 1], tf.stack([n, n]), [5, None]),
        ([5, 1], tf.stack([n, 1]), [5, 1]),
    ]


def test_broadcast_to_static_shape_matches_tf():
    for shape, target, expected in _broadcast_to_cases():
        assert _dims(tf.broadcast_to(_ph(shape), target)) == expected, (shape, target)


def test_broadcast_to_rejects_higher_rank_input():
    with pytest.raises(ValueError):
        tf.broadcast_to(_ph([2, 3]), tf.placeholder(tf.int32, [1]))


_dim = st.sampled_from([0, 1, 2, 3])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(_dim, min_size=0, max_size=3),
    st.lists(_dim, min_size=0, max_size=3),
    st.lists(st.booleans(), min_size=3, max_size=3),
    st.lists(st.booleans(), min_size=3, max_size=3),
)
def test_static_shape_is_sound_and_scalar_keeps_shape(a, b, hide_a, hide_b):
    """Whatever is hidden, the static shape never contradicts the computed value, and a scalar
    operand (even of unknown value) keeps the other operand's static shape."""
    tf.reset_default_graph()
    try:
        expected = np.broadcast_shapes(tuple(a), tuple(b))
    except ValueError:
        return
    pa = [None if h else d for d, h in zip(a, hide_a)]
    pb = [None if h else d for d, h in zip(b, hide_b)]
    x, y = tf.placeholder(tf.float32, pa), tf.placeholder(tf.float32, pb)
    z = x * y
    assert z.shape.is_compatible_with(expected)
    with tf.Session() as sess:
        out = sess.run(z, {x: np.ones(a, np.float32), y: np.ones(b, np.float32)})
    assert out.shape == expected
    assert _dims(x * tf.placeholder(tf.float32, [])) == pa
