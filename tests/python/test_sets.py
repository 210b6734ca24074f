"""tf.sets (intersection, union, difference, size and the TF1 set_* names) over dense and sparse operands against
TensorFlow 2.21: indices, values, dense_shape and dtypes of every call in _sets_cases.py, and the run-time
errors of sparse indices (fixture from tools/make_sets_fixtures.py); checked against numpy's set functions too;
build-time errors as TensorFlow's (checked by hand with TF 2.21)."""

import json
import pathlib

import numpy as np
import pytest

import ferroflow as tf
from _sets_cases import A, B, cases, run_errors

FIXTURE = json.loads((pathlib.Path(__file__).parent.parent / "fixtures" / "sets.json").read_text())


def _plain(a):
    a = np.asarray(a)
    return {"dtype": "string" if a.dtype.kind in "OS" else str(a.dtype), "shape": list(a.shape),
            "values": [v.decode() if isinstance(v, bytes) else v.item() for v in a.ravel()]}


@pytest.fixture(scope="module")
def results():
    with tf.Graph().as_default():
        made = cases(tf)
        with tf.Session() as sess:
            return sess.run(made)


@pytest.mark.parametrize("name", sorted(FIXTURE["results"]))
def test_results_as_tensorflow(results, name):
    got = results[name]
    if isinstance(got, tf.SparseTensorValue):
        got = {"indices": _plain(got.indices), "values": _plain(got.values), "dense_shape": _plain(got.dense_shape)}
    else:
        got = {"dense": _plain(got)}
    assert got == FIXTURE["results"][name]


def test_against_numpy(results):
    for name, fn in (("dd_intersection", np.intersect1d), ("dd_union", np.union1d), ("dd_a_minus_b", np.setdiff1d)):
        st = results[name]
        for row in range(2):
            picked = st.values[st.indices[:, 0] == row]
            np.testing.assert_array_equal(picked, fn(A[row], B[row]))


@pytest.mark.parametrize("name", sorted(FIXTURE["errors"]))
def test_run_errors_as_tensorflow(name):
    kind, message = FIXTURE["errors"][name]
    with pytest.raises(getattr(tf.errors, kind, ValueError)) as info:
        with tf.Graph().as_default():
            t = run_errors(tf)[name]()
            with tf.Session() as sess:
                sess.run(t)
    assert message.split(" for '")[0] in str(info.value)


def test_build_errors_as_tensorflow():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="Expected `SparseTensor`"):
            tf.sets.size(A)
        with pytest.raises(TypeError, match="Invalid dtype `<dtype: 'float32'>` not in supported dtypes"):
            tf.sets.size(tf.SparseTensor([[0, 0]], np.array([1.0], np.float32), [1, 1]))
        with pytest.raises(TypeError, match="'a' has invalid dtype `<dtype: 'float32'>`"):
            tf.sets.union(A.astype(np.float32), B.astype(np.float32))
        with pytest.raises(TypeError, match="Types don't match, <dtype: 'int32'> vs <dtype: 'int64'>."):
            tf.sets.intersection(A, B.astype(np.int64))


def test_validate_indices_false_skips_the_order_check():
    with tf.Graph().as_default():
        sp = tf.SparseTensor(np.array([[1, 0], [0, 0]], np.int64), np.array([5, 6], np.int64), np.array([2, 2]))
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(tf.sets.size(sp, validate_indices=False)), [1, 1])
