"""Stateful random ops give TensorFlow 2.21's exact bits (CPU) for the same seeds, run after run.

The programs and their TF outputs come from tools/make_random_tf_bits_fixtures.py
(tests/fixtures/random/tf_bits.npz); each is rebuilt here with ferroflow, run three times in one
session, and compared bit for bit.
"""

import importlib.util
import json
import pathlib

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.framework import random_seed

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "random" / "tf_bits.npz"


def _tool():
    spec = importlib.util.spec_from_file_location(
        "make_random_tf_bits_fixtures", ROOT / "tools" / "make_random_tf_bits_fixtures.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


TOOL = _tool()
DATA = np.load(FIXTURE)
SPECS = json.loads(DATA["specs"].tobytes().decode())


@pytest.mark.parametrize("name", sorted(SPECS))
def test_matches_tensorflow_bits(name):
    case = SPECS[name]
    got = TOOL.run_case(tf, case)
    assert len(got) == TOOL.RUNS
    for r, outs in enumerate(got):
        for k, (fn, kw) in enumerate(case["ops"]):
            want = DATA[f"{name}/{k}/{r}"]
            have = TOOL.encode(outs[k])
            assert have.dtype == want.dtype, (fn, kw, r)
            assert have.shape == want.shape, (fn, kw, r)
            np.testing.assert_array_equal(have, want, err_msg=f"{name}: op {k} {fn} {kw}, run {r}")


def test_get_seed_rules():
    with tf.Graph().as_default():
        assert random_seed.get_seed(None) == (None, None)
        assert random_seed.get_seed(7) == (random_seed.DEFAULT_GRAPH_SEED, 7)
        # TF reduces seeds modulo 2**31 - 1.
        assert random_seed.get_seed(2**40 + 5) == (random_seed.DEFAULT_GRAPH_SEED, (2**40 + 5) % (2**31 - 1))
        tf.set_random_seed(0)
        # (0, 0) would mean "nondeterministic" to the kernels.
        assert random_seed.get_seed(0) == (0, 2**31 - 1)
        tf.set_random_seed(9)
        # Without an op seed: a per-graph counter, independent of how many ops exist.
        tf.constant(1.0)
        assert [random_seed.get_seed(None) for _ in range(3)] == [(9, 0), (9, 1), (9, 2)]
        assert random_seed.get_seed(4) == (9, 4)
    with tf.Graph().as_default():
        tf.set_random_seed(9)
        assert random_seed.get_seed(None) == (9, 0)


def test_unseeded_ops_differ_between_sessions_and_thread_count_does_not_matter():
    with tf.Graph().as_default():
        x = tf.random_uniform([64])
        with tf.Session() as s:
            a = s.run(x)
        with tf.Session() as s:
            b = s.run(x)
        assert not np.array_equal(a, b)
    cfg = tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    with tf.Graph().as_default():
        # Above the kernels' parallel threshold (2**16 elements), so the work is split by thread.
        y = tf.truncated_normal([70001], seed=3)
        with tf.Session(config=cfg) as s:
            one = s.run(y)
        with tf.Session() as s:
            many = s.run(y)
    np.testing.assert_array_equal(one, many)


def test_bad_arguments_raise_typed_errors():
    with tf.Graph().as_default():
        bad = tf.random_uniform([3], minval=5, maxval=5, dtype=tf.int32, seed=1)
        empty = tf.random_uniform([0], minval=5, maxval=5, dtype=tf.int32, seed=1)
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError, match="Need minval < maxval"):
                s.run(bad)
            assert s.run(empty).shape == (0,)


def test_parallel_fill_keeps_tensorflow_bits():
    # Values depend on the element index only, so a draw above the parallel threshold starts with the
    # same values as TF's 1025-element draw under the same seeds (first run).
    case = SPECS["s0_n1025"]
    for k, (fn, kw) in enumerate(case["ops"]):
        if fn not in ("truncated_normal", "random_uniform") or kw["dtype"] not in ("float32", "float64"):
            continue
        with tf.Graph().as_default():
            big = getattr(tf, fn)([70001], dtype=getattr(tf, kw["dtype"]), seed=kw["seed"])
            with tf.Session() as s:
                have = s.run(big)[:1025]
        np.testing.assert_array_equal(have, DATA[f"s0_n1025/{k}/0"], err_msg=f"{fn} {kw}")


def test_random_crop_larger_than_value_is_an_invalid_argument():
    with tf.Graph().as_default():
        crop = tf.random_crop(np.zeros((3, 4), np.float32), [4, 2], seed=1)
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError, match="Need value.shape >= size"):
                s.run(crop)
