"""tf.math.sobol_sample against TensorFlow 2.21, bit for bit.

Fixtures: tests/fixtures/sobol/sobol.npz, made by tools/make_sobol_fixtures.py.
"""

import json
import os

import numpy as np
import pytest

import ferroflow as tf

FIXTURE = np.load(os.path.join(os.path.dirname(__file__), "..", "fixtures", "sobol", "sobol.npz"))
CASES = json.loads(bytes(FIXTURE["meta"]).decode())


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['dim']}x{c['num_results']}+{c['skip']}-{c['dtype']}")
def test_points_match_tensorflow(case):
    dtype = tf.as_dtype(case["dtype"])
    with tf.Graph().as_default(), tf.Session() as s:
        y = tf.math.sobol_sample(case["dim"], case["num_results"], skip=case["skip"], dtype=dtype)
        assert y.dtype == dtype and y.shape.as_list() == [case["num_results"], case["dim"]]
        got = s.run(y)[:, ::case["cols"]]
    want = FIXTURE[f"{case['key']}/y"]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_fed_arguments_and_errors():
    with tf.Graph().as_default(), tf.Session() as s:
        d = tf.placeholder(tf.int32, [])
        y = tf.math.sobol_sample(d, 3)
        assert y.shape.as_list() == [3, None]
        assert s.run(y, {d: 2}).shape == (3, 2)
        for feed, msg in [(0, "dim must be at least one"), (21201, "dim must be at most 21200")]:
            with pytest.raises(tf.errors.InvalidArgumentError, match=msg):
                s.run(y, {d: feed})
        with pytest.raises(tf.errors.InvalidArgumentError, match="num_results must be at least one"):
            s.run(tf.math.sobol_sample(2, 0))
        with pytest.raises(tf.errors.InvalidArgumentError, match="skip must be non-negative"):
            s.run(tf.math.sobol_sample(2, 1, skip=-1))
        with pytest.raises(tf.errors.InvalidArgumentError, match="num_results\\+skip must be less than 2147483647"):
            s.run(tf.math.sobol_sample(2, 10, skip=2**31 - 10))
    with pytest.raises(TypeError, match="parameter 'dtype' has DataType int32"):
        tf.math.sobol_sample(2, 3, dtype=tf.int32)
