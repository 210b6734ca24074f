"""Segment reductions, scatters, batch_gather/batch_scatter_update and dynamic_partition/stitch against
TensorFlow 2.21 (values and gradients in tests/fixtures/segment/cases.npz, written by
tools/make_segment_fixtures.py), plus TF's errors."""

import json
import pathlib

import numpy as np
import pytest

import ferroflow as tf

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "segment" / "cases.npz"
DATA = np.load(FIXTURES)
SPEC = json.loads(str(DATA["manifest"]))


def _resolve(path):
    obj = tf
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _tol(dtype):
    return {"rtol": 1e-5, "atol": 1e-5} if dtype in (np.float32, np.float16) else {"rtol": 1e-10, "atol": 1e-10}


@pytest.mark.parametrize("case", SPEC, ids=[c["name"] for c in SPEC])
def test_values_and_gradients_match_tensorflow(case):
    name = case["name"]
    g = tf.Graph()
    with g.as_default():
        ins = []
        for k in case["inputs"]:
            if isinstance(k, list):
                ins.append([tf.constant(DATA[x]) for x in k])
            else:
                ins.append(tf.constant(DATA[k]))
        if case["var"]:
            ins[0] = tf.Variable(DATA[case["inputs"][0]])
        out = _resolve(case["fn"])(*ins, **case["kwargs"])
        outs = out if isinstance(out, list) else [out]
        assert len(outs) == case["outputs"]
        grads = []
        if case["grad"]:
            targets = []
            for i in case["grad"]:
                targets.extend(ins[i] if isinstance(ins[i], list) else [ins[i]])
            ws = [tf.constant(DATA[f"{name}__w{j}"]) for j in range(len(outs))]
            grads = tf.gradients(outs, targets, grad_ys=ws)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run(outs)
            got_grads = sess.run([tf.convert_to_tensor(x) for x in grads])
    for j, v in enumerate(got):
        want = DATA[f"{name}__out{j}"]
        assert v.dtype == want.dtype, (j, v.dtype, want.dtype)
        assert v.shape == want.shape, (j, v.shape, want.shape)
        if want.dtype.kind == "f":
            np.testing.assert_allclose(v, want, **_tol(want.dtype))
        else:
            np.testing.assert_array_equal(v, want)
    for j, v in enumerate(got_grads):
        want = DATA[f"{name}__grad{j}"]
        assert v.shape == want.shape, (j, v.shape, want.shape)
        np.testing.assert_allclose(v, want, **_tol(want.dtype))


def _run(t):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(t)


D = np.arange(12, dtype=np.float32).reshape(6, 2)


@pytest.mark.parametrize(
    "ids, message",
    [
        ([0, 0, 2, 1, 3, 3], "segment ids are not increasing"),
        ([0, 0, 2, 2, 3, 1], "Segment id 2 out of range [0, 2), possibly because 'segment_ids' input is not sorted."),
        ([-1, 0, 2, 2, 3, 3], "Segment id -1 out of range [0, 4)"),
    ],
)
def test_segment_ids_must_be_sorted(ids, message):
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"SegmentMax") as e:
            _run(tf.math.segment_max(D, tf.constant(ids), name="SegmentMax"))
        assert message in str(e.value)


def test_segment_ids_length_must_match_data():
    with tf.Graph().as_default():
        ids = tf.placeholder_with_default(np.array([0, 0, 2, 2, 3], np.int32), [None])
        with pytest.raises(tf.errors.InvalidArgumentError, match="segment_ids should be the same size as dimension 0"):
            _run(tf.math.segment_sum(D, ids))
        with pytest.raises(ValueError, match="rank 1"):
            tf.math.segment_sum(D, [[0, 0, 2], [2, 3, 3]])


def test_unsorted_out_of_range_id_is_named():
    with tf.Graph().as_default():
        for fn in (tf.math.unsorted_segment_sum, tf.math.unsorted_segment_max, tf.math.unsorted_segment_prod):
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"segment_ids\[3\] = 7 is out of range \[0, 5\)"):
                _run(fn(D, [0, 0, 2, 7, -1, 3], 5))
        n = tf.placeholder_with_default(-1, [])
        with pytest.raises(tf.errors.InvalidArgumentError, match="num_segments == -1 must not be negative"):
            _run(tf.math.unsorted_segment_max(D, [0, 0, 2, 2, 3, 3], n))
        with pytest.raises(ValueError, match="must be non-negative but is -1"):
            tf.math.unsorted_segment_max(D, [0, 0, 2, 2, 3, 3], -1)
        ids = tf.placeholder_with_default(np.array([0, 0, 2, 2, 3], np.int32), [None])
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"data.shape = \[6,2\] does not start with segment_ids.shape = \[5\]"):
            _run(tf.math.unsorted_segment_sum(D, ids, 5))


def test_empty_segments_hold_tensorflow_fill_values():
    with tf.Graph().as_default():
        ids = [0, 0, 2, 2, -1, 3]
        mx, mn = _run([tf.math.unsorted_segment_max(D, ids, 5), tf.math.unsorted_segment_min(D, ids, 5)])
        assert (mx[1] == np.finfo(np.float32).min).all() and (mn[4] == np.finfo(np.float32).max).all()
        i8 = _run(tf.math.unsorted_segment_max(D.astype(np.int8), ids, 5))
        assert (i8[1] == -128).all()
        # The sorted kernels fill gaps with 0 (1 for prod), as TF's CPU kernel.
        smax, sprod = _run([tf.math.segment_max(D, [0, 0, 2, 2, 3, 3]), tf.math.segment_prod(D, [0, 0, 2, 2, 3, 3])])
        assert (smax[1] == 0).all() and (sprod[1] == 1).all()
        e = _run(tf.math.segment_sum(np.zeros((0, 2), np.float32), np.zeros(0, np.int32)))
        assert e.shape == (0, 2)


def test_static_shapes():
    with tf.Graph().as_default():
        assert tf.math.segment_sum(D, [0, 0, 2, 2, 3, 3]).shape.as_list() == [None, 2]
        assert tf.math.unsorted_segment_sum(D, [0, 0, 2, 2, 3, 3], 7).shape.as_list() == [7, 2]
        x = tf.placeholder(tf.float32, [6, 3, 4])
        assert tf.math.unsorted_segment_max(x, tf.placeholder(tf.int32, [6, 3]), 7).shape.as_list() == [7, 4]
        parts = tf.dynamic_partition(x, tf.placeholder(tf.int32, [6]), 3)
        assert [p.shape.as_list() for p in parts] == [[None, 3, 4]] * 3
        st = tf.dynamic_stitch([[0, 1], [2]], [tf.zeros([2, 5]), tf.zeros([1, 5])])
        assert st.shape.as_list() == [None, 5]


def test_scatter_index_errors():
    with tf.Graph().as_default():
        v = tf.Variable(np.ones((4, 2), np.float32))
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 5 is not in \[0, 4\)"):
            _run(tf.scatter_min(v, [0, 5], [[2.0, 2.0], [30.0, 3.0]]))
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = \[4, 0\] does not index into shape \[4,2\]"):
            _run(tf.scatter_nd_update(v, [[0, 1], [4, 0]], [2.0, 30.0]))
        with pytest.raises(ValueError, match="must be equal"):
            tf.scatter_nd_update(v, [[0, 1], [2, 0]], [2.0, 30.0, 4.0])
        x = np.zeros((4, 2), np.float32)
        for fn in (tf.tensor_scatter_nd_update, tf.tensor_scatter_nd_min):
            with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = \[7\] does not index into shape \[4,2\]"):
                _run(fn(x, [[0], [7]], [[2.0, 30.0], [1.0, 1.0]]))
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = \[7\] does not index into shape \[4,2\]"):
            _run(tf.scatter_nd([[0], [7]], [[2.0, 30.0], [1.0, 1.0]], [4, 2]))
        ok = _run(tf.tensor_scatter_nd_add(x, [[0], [7]], [[2.0, 30.0], [1.0, 1.0]], bad_indices_policy="IGNORE"))
        np.testing.assert_array_equal(ok, [[2, 30], [0, 0], [0, 0], [0, 0]])


def test_failed_variable_scatter_leaves_the_variable_unchanged():
    with tf.Graph().as_default():
        v = tf.Variable(np.ones((4, 2), np.float32))
        with tf.Session() as sess:
            sess.run(v.initializer)
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(tf.scatter_nd_add(v, [[0], [9]], [[5.0, 5.0], [5.0, 5.0]]))
            np.testing.assert_array_equal(sess.run(v), np.ones((4, 2)))


def test_partition_and_stitch_errors():
    with tf.Graph().as_default():
        x = np.arange(8, dtype=np.float32).reshape(4, 2)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"partitions\[3\] = 3 is not in \[0, 3\)"):
            _run(tf.dynamic_partition(x, [0, 1, 0, 3], 3))
        # Rows no index names are zero; later pieces win.
        got = _run(tf.dynamic_stitch([[0, 5], [1, 3]], [x[:2], x[2:]]))
        np.testing.assert_array_equal(got, [[0, 1], [4, 5], [0, 0], [6, 7], [0, 0], [2, 3]])
        got = _run(tf.dynamic_stitch([[0, 0], [1]], [x[:2], x[2:3]]))
        np.testing.assert_array_equal(got, [[2, 3], [4, 5]])


def test_large_segment_sums_match_numpy():
    """Big enough for the parallel kernels (blocks of sorted segments, partial copies of unsorted ones)."""
    rng = np.random.default_rng(0)
    n, k = 300_000, 1_000
    data = rng.standard_normal((n, 4)).astype(np.float32)
    ids = np.sort(rng.integers(0, k, n)).astype(np.int32)
    uids = rng.integers(-1, k, n).astype(np.int64)
    with tf.Graph().as_default():
        s, u, m = _run([tf.math.segment_sum(data, ids), tf.math.unsorted_segment_sum(data, uids, k),
                        tf.math.unsorted_segment_max(data, uids, k)])
    want = np.zeros((k, 4), np.float64)
    np.add.at(want, ids, data.astype(np.float64))
    np.testing.assert_allclose(s, want, rtol=1e-4, atol=1e-3)
    keep = uids >= 0
    want = np.zeros((k, 4), np.float64)
    np.add.at(want, uids[keep], data[keep].astype(np.float64))
    np.testing.assert_allclose(u, want, rtol=1e-4, atol=1e-3)
    want = np.full((k, 4), np.finfo(np.float32).min, np.float32)
    np.maximum.at(want, uids[keep], data[keep])
    np.testing.assert_array_equal(m, want)


def test_names_exist_with_tensorflow_arguments():
    import inspect

    for name, args in [
        ("segment_sum", ["data", "segment_ids", "name"]),
        ("unsorted_segment_sqrt_n", ["data", "segment_ids", "num_segments", "name"]),
        ("scatter_nd", ["indices", "updates", "shape", "bad_indices_policy", "name"]),
        ("scatter_nd_update", ["ref", "indices", "updates", "use_locking", "name"]),
        ("tensor_scatter_update", ["tensor", "indices", "updates", "name"]),
        ("tensor_scatter_nd_max", ["tensor", "indices", "updates", "bad_indices_policy", "name"]),
        ("batch_scatter_update", ["ref", "indices", "updates", "use_locking", "name"]),
        ("dynamic_stitch", ["indices", "data", "name"]),
    ]:
        assert list(inspect.signature(getattr(tf, name)).parameters) == args, name
    assert tf.math.unsorted_segment_mean is tf.unsorted_segment_mean
