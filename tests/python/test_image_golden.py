"""tf.image against real TensorFlow: every case of ``_image_cases.py`` (resizing, cropping, colour,
analysis, non-max suppression, their gradients) is built with ferroflow in a fresh graph, run once
in a Session and compared fetch by fetch with the values TensorFlow computed for the same graph
(``tests/fixtures/image/<case>.npz``, made by ``tools/make_image_fixtures.py``), and so is the
static shape of every fetch.

Integer and bool fetches must be equal; float fetches within the case's stated tolerance
(``_image_cases.tolerance``), NaNs in the same places.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import ferroflow as tf
from _image_cases import CASES, STATIC_SHAPE_SUFFIX, UNKNOWN_RANK, static_shape, tolerance

FIXTURE_DIR = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "image"


def _load(name):
    path = FIXTURE_DIR / f"{name}.npz"
    assert path.exists(), f"no fixture {path}: run tools/make_image_fixtures.py under TensorFlow"
    with np.load(path) as data:
        values = {k: data[k] for k in data.files if not k.endswith(STATIC_SHAPE_SUFFIX)}
        shapes = {
            k[: -len(STATIC_SHAPE_SUFFIX)]: data[k] for k in data.files if k.endswith(STATIC_SHAPE_SUFFIX)
        }
    assert sorted(values) == sorted(shapes), f"{path}: every fetch needs its static shape"
    return values, shapes


def _check_static_shape(where, want, got, runtime_shape):
    """TF's static shape is the floor: every dimension (and the rank) TF knows, ferroflow must know
    and agree on; where TF does not know, ferroflow may, but only the value the run produced."""
    if want.ndim == 0:
        assert int(want) == UNKNOWN_RANK
        if got.ndim == 0:
            return
        assert len(got) == len(runtime_shape), f"{where}: static rank {len(got)}, value shape {runtime_shape}"
        for d, g in zip(runtime_shape, got):
            assert g < 0 or g == d, (
                f"{where}: static shape {got.tolist()} but the value has shape {runtime_shape}"
            )
        return
    assert got.ndim == 1, f"{where}: static rank unknown, TensorFlow knows shape {want.tolist()}"
    assert len(got) == len(want), f"{where}: static shape {got.tolist()}, TensorFlow infers {want.tolist()}"
    for i, (w, g, d) in enumerate(zip(want, got, runtime_shape)):
        if w >= 0:
            assert g == w, (
                f"{where}: static shape {got.tolist()}, TensorFlow infers {want.tolist()} (dim {i})"
            )
        else:
            assert g < 0 or g == d, (
                f"{where}: static shape {got.tolist()} but the value has shape {runtime_shape} (dim {i})"
            )


@pytest.mark.parametrize("name", sorted(CASES))
def test_image_matches_tensorflow(name):
    expected, expected_shapes = _load(name)
    g = tf.Graph()
    with g.as_default():
        fetches, feed = CASES[name](tf)
        assert sorted(fetches) == sorted(expected), "fetch keys differ from the fixture's arrays"
        shapes = {key: static_shape(t) for key, t in fetches.items()}
        with tf.Session(graph=g) as sess:
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
            rtol, atol = tolerance(name, key, want.dtype)
            np.testing.assert_allclose(value, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=where)
        _check_static_shape(where, expected_shapes[key], shapes[key], want.shape)


def test_every_fixture_has_a_case():
    fixtures = {p.stem for p in FIXTURE_DIR.glob("*.npz")}
    orphans = sorted(fixtures - set(CASES))
    assert not orphans, f"fixtures without a case in _image_cases.py: {orphans}"


def test_every_case_has_a_fixture():
    missing = sorted(set(CASES) - {p.stem for p in FIXTURE_DIR.glob("*.npz")})
    assert not missing, f"cases without a fixture (run tools/make_image_fixtures.py): {missing}"


def test_static_shape_check_is_strict_where_tensorflow_knows():
    """The comparison itself: a dim TF knows cannot be dropped or changed; an unknown one may be
    filled in only with the runtime value."""
    want = np.array([2, -1, 7, 3])
    _check_static_shape("ok", want, np.array([2, -1, 7, 3]), (2, 5, 7, 3))
    _check_static_shape("more precise", want, np.array([2, 5, 7, 3]), (2, 5, 7, 3))
    for bad in (
        np.array([2, -1, -1, 3]),
        np.array([2, 4, 7, 3]),
        np.array([2, -1, 7]),
        np.array(UNKNOWN_RANK),
    ):
        with pytest.raises(AssertionError):
            _check_static_shape("bad", want, bad, (2, 5, 7, 3))
    _check_static_shape("unknown rank", np.array(UNKNOWN_RANK), np.array(UNKNOWN_RANK), (2, 5))
    _check_static_shape("unknown rank, known here", np.array(UNKNOWN_RANK), np.array([2, -1]), (2, 5))
    with pytest.raises(AssertionError):
        _check_static_shape("wrong", np.array(UNKNOWN_RANK), np.array([2, 4]), (2, 5))
