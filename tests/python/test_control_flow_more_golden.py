"""Control flow against real TensorFlow, second round: every case of ``_control_flow_more_cases.py``
(variables assigned in nested conds and loops, TensorArray ``clear_after_read`` and ``grad``,
unstack size checks, ``tf.switch_case`` with gradients) is built with ferroflow and run as
TensorFlow ran it (``tests/fixtures/control_flow_more/<case>.npz``, made by
``tools/make_control_flow_more_fixtures.py``): the same values, or the same exception class with
TensorFlow's message.
"""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import ferroflow as tf
from _control_flow_more_cases import CASES

FIXTURE_DIR = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "control_flow_more"

# TF1 names a TensorArray in its messages by its resource ("TensorArray_7", numbered per
# process); ferroflow by the op that made it.
_ARRAY_NAME = re.compile(r"^TensorArray \S+: ")


def _load(name):
    path = FIXTURE_DIR / f"{name}.npz"
    assert path.exists(), f"no fixture {path}: run tools/make_control_flow_more_fixtures.py under TensorFlow"
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


def _run(name):
    g = tf.Graph()
    with g.as_default():
        spec = CASES[name](tf)
        with tf.Session(graph=g) as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run(spec["fetches"], feed_dict=spec.get("feed"))
            after = sess.run(spec["after"]) if spec.get("after") else {}
    got.update({"after/" + k: v for k, v in after.items()})
    return got


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(name):
    expected = _load(name)
    if "error_type" in expected:
        want_type = str(expected["error_type"])
        want = _ARRAY_NAME.sub("", str(expected["error_message"]))
        with pytest.raises(Exception) as info:
            _run(name)
        assert type(info.value).__name__ == want_type, f"{name}: raised {info.value!r}, TensorFlow {want_type}"
        message = getattr(info.value, "message", None) or str(info.value)
        assert want in _ARRAY_NAME.sub("", message), f"{name}: {message!r} lacks TensorFlow's {want!r}"
        return
    got = _run(name)
    assert sorted(got) == sorted(expected)
    for key in sorted(expected):
        want = expected[key]
        value = np.asarray(got[key])
        where = f"{name}: fetch {key!r}"
        assert value.dtype == want.dtype, f"{where}: dtype {value.dtype}, TensorFlow gives {want.dtype}"
        assert value.shape == want.shape, f"{where}: shape {value.shape}, TensorFlow gives {want.shape}"
        np.testing.assert_allclose(value, want, rtol=1e-5, atol=1e-6, err_msg=where)


def test_cases_and_fixtures_match():
    fixtures = {p.stem for p in FIXTURE_DIR.glob("*.npz")}
    assert fixtures == set(CASES), (
        f"fixtures without a case: {sorted(fixtures - set(CASES))}; "
        f"cases without a fixture (run tools/make_control_flow_more_fixtures.py): {sorted(set(CASES) - fixtures)}"
    )
