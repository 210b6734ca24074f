"""Control flow against real TensorFlow: every case of ``_control_flow_cases.py`` (tf.cond, tf.case,
tf.switch_case, tf.while_loop, their gradients) is built with ferroflow in a fresh graph, run once in
a Session and compared fetch by fetch with the values TensorFlow computed for the same graph
(``tests/fixtures/control_flow/<case>.npz``, made by ``tools/make_control_flow_fixtures.py``).
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import ferroflow as tf
from _control_flow_cases import CASES

FIXTURE_DIR = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "control_flow"


def _load(name):
    path = FIXTURE_DIR / f"{name}.npz"
    assert path.exists(), f"no fixture {path}: run tools/make_control_flow_fixtures.py under TensorFlow"
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


@pytest.mark.parametrize("name", sorted(CASES))
def test_control_flow_matches_tensorflow(name):
    expected = _load(name)
    g = tf.Graph()
    with g.as_default():
        fetches, feed = CASES[name](tf)
        assert sorted(fetches) == sorted(expected), "fetch keys differ from the fixture's arrays"
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run(fetches, feed_dict=feed)
    assert sorted(got) == sorted(expected)
    for key in sorted(expected):
        want = expected[key]
        value = np.asarray(got[key])
        where = f"{name}: fetch {key!r}"
        assert value.dtype == want.dtype, f"{where}: dtype {value.dtype}, TensorFlow gives {want.dtype}"
        assert value.shape == want.shape, f"{where}: shape {value.shape}, TensorFlow gives {want.shape}"
        if want.dtype.kind in "biu":
            np.testing.assert_array_equal(value, want, err_msg=where)
        else:
            np.testing.assert_allclose(value, want, rtol=1e-5, atol=1e-6, err_msg=where)


def test_every_fixture_has_a_case():
    fixtures = {p.stem for p in FIXTURE_DIR.glob("*.npz")}
    orphans = sorted(fixtures - set(CASES))
    assert not orphans, f"fixtures without a case in _control_flow_cases.py: {orphans}"


def test_every_case_has_a_fixture():
    missing = sorted(set(CASES) - {p.stem for p in FIXTURE_DIR.glob("*.npz")})
    assert not missing, f"cases without a fixture (run tools/make_control_flow_fixtures.py): {missing}"
