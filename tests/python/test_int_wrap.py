"""Integer constants and feeds from out-of-range Python numbers, as TensorFlow 2.21 builds them in graph mode:
``tf.constant(-1, tf.uint32)`` wraps around to 4294967295, floats are refused by ``constant`` (TypeError) and
truncated by feeds, ints beyond uint64's range raise OverflowError. Fixture: tools/make_int_wrap_fixtures.py."""

from __future__ import annotations

import builtins
import json
import pathlib
import warnings

import numpy as np
import pytest

import ferroflow as tf

FIXTURE = json.loads((pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "int_wrap.json").read_text())


def _decode(value):
    if isinstance(value, dict):
        arr = np.asarray(value["v"], dtype=value["np"])
        return arr if value.get("array") or arr.ndim else arr[()]
    return value


def _check(result, compute):
    if "error" in result:
        with pytest.raises(getattr(builtins, result["error"])) as info:
            compute()
        assert type(info.value).__name__ == result["error"]
        if result["error"] == "TypeError":
            assert str(info.value) == result["message"]
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = np.asarray(compute())
    assert out.dtype.name == result["dtype"]
    np.testing.assert_array_equal(out, np.asarray(result["value"], dtype=result["dtype"]))


def _rounded_by_tf(value):
    """Whether TF 2.21 builds ``value`` through float64 (a list mixing ints above int64's range with negative
    ones), where ferroflow keeps the exact ints instead (see ``tensor_util.wrap_integers``)."""
    return isinstance(value, list) and np.asarray(value).dtype.kind == "f" and all(
        isinstance(v, int) for v in np.asarray(value, dtype=object).reshape(-1))


def _exact_wrap(value, dtype):
    info = np.iinfo(dtype)
    span = 2 ** (8 * np.dtype(dtype).itemsize)
    flat = [(int(v) - info.min) % span + info.min for v in np.asarray(value, dtype=object).reshape(-1)]
    return np.array(flat, dtype=dtype).reshape(np.asarray(value).shape)


@pytest.mark.parametrize("dtype", sorted({c["dtype"] for c in FIXTURE["constants"]}))
def test_constant_matches_tf(dtype):
    cases = [c for c in FIXTURE["constants"] if c["dtype"] == dtype]
    dt = tf.as_dtype(dtype)
    with tf.Graph().as_default(), tf.Session() as sess:
        for case in cases:
            if _rounded_by_tf(case["value"]):
                want = _exact_wrap(case["value"], dtype)
                np.testing.assert_array_equal(sess.run(tf.constant(case["value"], dt)), want)
                continue
            _check(case["result"], lambda case=case: sess.run(tf.constant(_decode(case["value"]), dt)))


def test_ints_mixed_beyond_int64_keep_every_bit():
    # TF 2.21 gives [0, 3] here (NumPy infers float64, 2**64 - 1 rounds to 2**64); ferroflow keeps the ints.
    with tf.Graph().as_default(), tf.Session() as sess:
        got = sess.run(tf.constant([2**64 - 1, -1, 3], tf.uint64))
        np.testing.assert_array_equal(got, np.array([2**64 - 1, 2**64 - 1, 3], np.uint64))
        np.testing.assert_array_equal(sess.run(tf.constant([2**63 + 1, -2], tf.int8)), np.array([1, -2], np.int8))


@pytest.mark.parametrize("dtype", sorted({c["dtype"] for c in FIXTURE["feeds"]}))
def test_feed_matches_tf(dtype):
    cases = [c for c in FIXTURE["feeds"] if c["dtype"] == dtype]
    with tf.Graph().as_default():
        p = tf.placeholder(tf.as_dtype(dtype), [None])
        with tf.Session() as sess:
            for case in cases:
                _check(case["result"], lambda case=case: sess.run(p, {p: case["value"]}))


def test_wrapped_operands_of_ops():
    # A Python int operand becomes a constant of the other operand's dtype, wrapping as TF does.
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.constant(5, tf.uint8)
        assert sess.run(x + (-1)) == np.uint8(4)
        assert sess.run(x + 300) == np.uint8(49)
        assert sess.run(tf.constant(1) + 2**40) == np.int32(1)
        np.testing.assert_array_equal(sess.run(tf.fill([2], tf.constant(-1, tf.uint16))), [65535, 65535])
        np.testing.assert_array_equal(sess.run(tf.constant(-1, tf.uint32, shape=[3])), [2**32 - 1] * 3)


def test_range_refuses_uint32_and_uint64():
    # TensorFlow 2.21 registers no CPU Range kernel for them (its run fails with "No OpKernel was registered");
    # ferroflow refuses when the op is built.
    with tf.Graph().as_default():
        for dt in (tf.uint32, tf.uint64):
            with pytest.raises(TypeError, match=f"Range has no kernel for {dt.name} values"):
                tf.range(5, dtype=dt)
