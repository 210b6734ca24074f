"""Lookup tables against TensorFlow 2.21: every case of ``_lookup_cases.py`` gives the values (or the error
class and message) recorded in ``tests/fixtures/lookup/cases.npz`` by ``tools/make_lookup_fixtures.py``."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import ferroflow as tf
from _lookup_cases import CASES, error_text, normalize, steps_of
from ferroflow.ops import lookup_ops

FIXTURE_DIR = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "lookup"


class _Api:
    """``ferroflow`` plus ``contrib_lookup`` (where the index_table_from_* helpers live)."""

    contrib_lookup = lookup_ops

    def __getattr__(self, name):
        return getattr(tf, name)


@pytest.fixture(scope="module")
def golden():
    return dict(np.load(FIXTURE_DIR / "cases.npz"))


def _run(case):
    d = str(FIXTURE_DIR)
    got = {}
    with tf.Graph().as_default():
        init, steps = steps_of(CASES[case](_Api(), d))
        try:
            with tf.Session() as sess:
                if init:
                    sess.run(tf.tables_initializer())
                for i, step in enumerate(steps):
                    for k, v in sess.run(step).items():
                        for key, arr in normalize(k, v).items():
                            if arr.dtype == object and arr.size and isinstance(arr.flat[0], bytes):
                                arr = np.vectorize(lambda b: b.decode().replace(d, "{dir}"))(arr).astype(str)
                            got[f"{case}/{i}/{key}"] = arr
        except tf.errors.OpError as e:
            got[f"{case}/error"] = np.array(error_text(e, d))
    return got


@pytest.mark.parametrize("case", sorted(CASES))
def test_lookup_case_matches_tensorflow(case, golden):
    want = {k: v for k, v in golden.items() if k.startswith(case + "/")}
    assert want, f"no fixture for {case}: rerun tools/make_lookup_fixtures.py"
    got = _run(case)
    if f"{case}/error" in want:
        w = str(want[f"{case}/error"])
        g = str(got.get(f"{case}/error", "no error"))
        w_class, w_msg = w.split(": ", 1)
        assert g.startswith(w_class + ":"), (g, w)
        assert w_msg in g, (g, w)
        return
    assert sorted(got) == sorted(want)
    for k, w in want.items():
        g = got[k]
        if w.dtype.kind == "U":
            assert g.astype(str).tolist() == w.tolist(), k
        else:
            assert g.dtype == w.dtype, (k, g.dtype, w.dtype)
            np.testing.assert_array_equal(g, w, err_msg=k)
