"""Random ops: determinism from graph and op seeds, fresh numbers per run, distribution sanity,
shapes, dtypes and error cases."""

from __future__ import annotations

import numpy as np
import pytest

import ferroflow as tf
from _optest import run

N = 20000  # samples for the distribution checks: mean/std within ~4 standard errors


def _build(seed_graph, seed_op, shape=(N,)):
    ops_ = [
        tf.random_normal(shape, mean=1.5, stddev=2.0, seed=seed_op),
        tf.random_uniform(shape, minval=-2.0, maxval=3.0, seed=seed_op),
        tf.truncated_normal(shape, mean=-1.0, stddev=0.5, seed=seed_op),
        tf.random_uniform(shape, minval=-5, maxval=7, dtype=tf.int32, seed=seed_op),
        tf.random_shuffle(tf.range(50), seed=seed_op),
    ]
    return ops_


def _sample(graph_seed, op_seed, runs=1, shape=(N,)):
    with tf.Graph().as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        outs = _build(graph_seed, op_seed, shape)
        with tf.Session() as s:
            return [s.run(outs) for _ in range(runs)]


def _equal(a, b):
    return all(np.array_equal(x, y) for x, y in zip(a, b))


def test_graph_and_op_seed_replay_in_a_new_graph_and_session():
    first = _sample(11, 5, runs=2, shape=(64,))
    again = _sample(11, 5, runs=2, shape=(64,))
    assert _equal(first[0], again[0]) and _equal(first[1], again[1])


def test_op_seed_alone_is_deterministic_and_seeds_matter():
    a = _sample(None, 5, shape=(64,))[0]
    b = _sample(None, 5, shape=(64,))[0]
    assert _equal(a, b)
    c = _sample(None, 6, shape=(64,))[0]
    d = _sample(12, 5, shape=(64,))[0]
    for x, y, z in zip(a, c, d):
        assert not np.array_equal(x, y)
        assert not np.array_equal(x, z)


def test_graph_seed_alone_replays_when_the_graph_is_rebuilt():
    a = _sample(3, None, shape=(64,))[0]
    b = _sample(3, None, shape=(64,))[0]
    assert _equal(a, b)
    # Different ops of one graph draw different streams.
    assert not np.array_equal(a[0], a[2])


def test_no_seed_gives_different_numbers_per_graph():
    a = _sample(None, None, shape=(64,))[0]
    b = _sample(None, None, shape=(64,))[0]
    assert not np.array_equal(a[0], b[0])
    assert not np.array_equal(a[1], b[1])


def test_fresh_numbers_on_every_run_and_replay_per_session():
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        outs = _build(1, 2, (64,))
        with tf.Session() as s:
            r1 = s.run(outs)
            r2 = s.run(outs)
        with tf.Session() as s:
            r3 = s.run(outs)
    for x, y in zip(r1[:4], r2[:4]):
        assert not np.array_equal(x, y)
    assert not np.array_equal(r1[4], r2[4])
    assert _equal(r1, r3)  # a new session restarts each op's sequence, as in TensorFlow


def test_one_fetch_of_a_random_tensor_is_consistent_within_a_run():
    with tf.Graph().as_default():
        x = tf.random_uniform([16], seed=1)
        y = x * 2
        with tf.Session() as s:
            gx, gy = s.run([x, y])
    np.testing.assert_array_equal(gy, gx * 2)


def test_distributions_are_sane():
    normal, uniform, trunc, ints, shuffled = _sample(21, 4)[0]
    se = 4 / np.sqrt(N)
    assert normal.dtype == np.float32 and normal.shape == (N,)
    assert abs(normal.mean() - 1.5) < 2.0 * se and abs(normal.std() - 2.0) < 2.0 * 3 * se
    assert abs(np.mean(np.abs(normal - 1.5) < 2.0) - 0.6827) < 0.02
    assert uniform.min() >= -2.0 and uniform.max() < 3.0
    assert abs(uniform.mean() - 0.5) < 5 * se * 1.5
    hist = np.histogram(uniform, bins=10, range=(-2, 3))[0] / N
    assert np.all(np.abs(hist - 0.1) < 0.015)
    assert np.all(np.abs(trunc + 1.0) <= 2 * 0.5 + 1e-6)
    assert abs(trunc.mean() + 1.0) < se
    # A normal truncated at 2 sigma has std 0.8796 sigma.
    assert abs(trunc.std() - 0.8796 * 0.5) < 0.02
    assert ints.dtype == np.int32 and ints.min() == -5 and ints.max() == 6
    counts = np.bincount(ints + 5, minlength=12) / N
    assert np.all(np.abs(counts - 1 / 12) < 0.015)
    np.testing.assert_array_equal(np.sort(shuffled), np.arange(50))
    assert not np.array_equal(shuffled, np.arange(50))


@pytest.mark.parametrize("dtype", [tf.float16, tf.bfloat16, tf.float32, tf.float64])
def test_float_dtypes(dtype):
    with tf.Graph().as_default():
        outs = [tf.random_normal([1000], dtype=dtype, seed=1), tf.random_uniform([1000], dtype=dtype, seed=1),
                tf.truncated_normal([1000], dtype=dtype, seed=1)]
        assert all(o.dtype == dtype for o in outs)
        with tf.Session() as s:
            n, u, t = s.run(outs)
    assert abs(float(n.astype(np.float64).mean())) < 0.2
    assert u.min() >= 0 and u.max() < 1
    assert np.all(np.abs(t.astype(np.float64)) <= 2.01)


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_integer_uniform(dtype):
    with tf.Graph().as_default():
        x = tf.random_uniform([2000], minval=3, maxval=6, dtype=dtype, seed=1)
        assert x.dtype == dtype
        with tf.Session() as s:
            v = s.run(x)
    assert set(np.unique(v)) == {3, 4, 5}
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            tf.random_uniform([2], dtype=dtype)
        out = tf.random_uniform([2], minval=5, maxval=5, dtype=dtype)
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(out)


def test_shapes_static_and_dynamic():
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [])
        a = tf.random_normal([n, 3], seed=1)
        b = tf.random_uniform(tf.stack([n, 2]), seed=1)
        c = tf.truncated_normal([2, 3, 4], seed=1)
        p = tf.placeholder(tf.float32, [None, 4])
        d = tf.random_shuffle(p, seed=1)
        assert a.shape.as_list() == [None, 3]
        assert b.shape.as_list() == [None, 2]
        assert c.shape.as_list() == [2, 3, 4]
        assert d.shape.as_list() == [None, 4]
        x = np.arange(20, dtype=np.float32).reshape(5, 4)
        with tf.Session() as s:
            ga, gb, gd = s.run([a, b, d], {n: 4, p: x})
    assert ga.shape == (4, 3) and gb.shape == (4, 2)
    # Rows move together.
    np.testing.assert_array_equal(gd[np.argsort(gd[:, 0])], x)


def test_random_shuffle_of_scalar_and_empty():
    got = run(lambda: [tf.random_shuffle(tf.constant(3.0), seed=1), tf.random_shuffle(tf.zeros([0, 2]), seed=1)])
    assert got[0] == 3.0
    assert got[1].shape == (0, 2)


def test_random_aliases():
    with tf.Graph().as_default():
        tf.set_random_seed(9)
        a = tf.random.normal([8], seed=2)
        b = tf.random.uniform([8], seed=2)
        c = tf.random.truncated_normal([8], seed=2)
        d = tf.random.shuffle(tf.range(8), seed=2)
        with tf.Session() as s:
            got = s.run([a, b, c, d])
    with tf.Graph().as_default():
        tf.set_random_seed(9)
        a2 = tf.random_normal([8], seed=2)
        b2 = tf.random_uniform([8], seed=2)
        c2 = tf.truncated_normal([8], seed=2)
        d2 = tf.random_shuffle(tf.range(8), seed=2)
        with tf.Session() as s:
            ref = s.run([a2, b2, c2, d2])
    assert _equal(got, ref)


def test_random_errors():
    with tf.Graph().as_default():
        with pytest.raises(TypeError):
            tf.random_normal([2], dtype=tf.int32)
        bad = tf.random_normal([2, -1])  # TensorFlow accepts this when building and fails when run
        d = tf.placeholder(tf.int32, [2])
        out = tf.random_uniform(d)
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(out, {d: [2, -3]})
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(bad)


def test_random_graphs_are_named_as_tensorflow_builds_them():
    # TF 2.21's graphs (names observed with tf.compat.v1): the shape first, operator-made "mul"/"sub", no
    # min/max constants for the default [0, 1), only "Mul" when minval is 0.
    def names(scope):
        return [o.name for o in tf.get_default_graph().get_operations() if o.name.startswith(scope + "/")]

    tf.random_uniform([2], 1.0, 3.0)
    assert names("random_uniform") == ["random_uniform/shape", "random_uniform/min", "random_uniform/max",
                                       "random_uniform/RandomUniform", "random_uniform/sub", "random_uniform/mul"]
    c = tf.random_uniform([2])
    assert c.op.name == "random_uniform_1/RandomUniform" and names("random_uniform_1") == [
        "random_uniform_1/shape", "random_uniform_1/RandomUniform"]
    d = tf.random_uniform([2], 0, 4.0)
    assert d.op.name == "random_uniform_2/Mul"
    tf.random_normal([2])
    assert names("random_normal") == ["random_normal/shape", "random_normal/mean", "random_normal/stddev",
                                      "random_normal/RandomStandardNormal", "random_normal/mul"]
    tf.truncated_normal([2], stddev=0.1)
    assert names("truncated_normal")[-1] == "truncated_normal/mul"
