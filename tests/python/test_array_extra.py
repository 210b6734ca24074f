"""The remaining array ops (issue 23): unique_with_counts, setdiff1d, searchsorted, sort/argsort, roll, repeat,
reverse_sequence, meshgrid, histogram_fixed_width(_bins), unravel_index, the space/batch ops,
required_space_to_batch_paddings, top-level space_to_depth/depth_to_space, extract_volume_patches,
edit_distance, identity_n, ensure_shape, broadcast_dynamic_shape/broadcast_static_shape.

Values, gradients, static shapes and errors are compared with TensorFlow 2.21's, recorded in
``tests/fixtures/array_extra`` by ``tools/make_array_extra_fixtures.py`` from the cases in
``_array_extra_cases.py`` (the same graph-building code runs under both).
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import _array_extra_cases as cases
import ferroflow as tf

FIX = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "array_extra"
META = json.loads((FIX / "meta.json").read_text())
with np.load(FIX / "values.npz") as _d:
    VALUES = {k: _d[k] for k in _d.files}


@pytest.mark.parametrize("case", cases.VALUE_CASES, ids=lambda c: c.__name__)
def test_values_gradients_and_static_shapes(case):
    vals, shapes = cases.run_value_case(tf, case)
    want = {k.split("/", 1)[1]: v for k, v in VALUES.items() if k.split("/", 1)[0] == case.__name__}
    assert sorted(vals) == sorted(want)
    for k, v in vals.items():
        w = want[k]
        assert v.shape == w.shape, f"{k}: shape {v.shape} != {w.shape}"
        if w.dtype.kind in "SUO":
            assert [bytes(x) for x in v.ravel()] == [x if isinstance(x, bytes) else x.encode() for x in w.ravel()], k
        else:
            assert v.dtype == w.dtype, f"{k}: dtype {v.dtype} != {w.dtype}"
            np.testing.assert_allclose(v, w, rtol=1e-6, atol=1e-6, err_msg=k)
        assert shapes[k] == META["static_shapes"][f"{case.__name__}/{k}"], f"{k}: static shape"


# Messages that name Python objects differently: only the text up to here must match.
_PREFIX_ONLY = {
    "sort_axis_not_constant": "Argument `axis` must be a constant scalar.",
    # Neg's dtype list (ferroflow has no complex tensors).
    "argsort_strings": "Value passed to parameter 'x' has DataType string not in list of allowed values",
}


@pytest.mark.parametrize("name", sorted(cases.ERROR_CASES))
def test_errors_match_tensorflow(name):
    got = cases.run_error_case(tf, cases.ERROR_CASES[name])
    want = META["errors"][name]
    assert (got["phase"], got["class"]) == (want["phase"], want["class"]), (got, want)
    expected = _PREFIX_ONLY.get(name, want["message"])
    assert expected in got["message"], (got["message"], want["message"])


def test_broadcast_static_shape():
    for (a, b), want in zip(cases.STATIC_SHAPE_PAIRS, META["broadcast_static_shape"]):
        sa = tf.TensorShape(None if a == "?" else a)
        sb = tf.TensorShape(None if b == "?" else b)
        got = tf.broadcast_static_shape(sa, sb)
        assert (None if got.ndims is None else got.as_list()) == want, (a, b)
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        tf.broadcast_static_shape(tf.TensorShape([2, 3]), tf.TensorShape([4, 1]))


def test_op_types_and_no_gradient_ops():
    """The ops are TensorFlow's types; the integer-valued ones have no gradient, as in TensorFlow."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [4])
        h = tf.histogram_fixed_width(x, [0.0, 1.0], nbins=3)
        tf.searchsorted(tf.constant([0.0, 1.0]), x)
        assert h.op.type == "HistogramFixedWidth"
        assert any(op.type == "LowerBound" for op in g.get_operations())
        y = tf.roll(x, 1, 0)
        assert y.op.type == "Roll"
        # Integer outputs stop gradients (TensorFlow also gives [None] here).
        assert tf.gradients(tf.cast(h, tf.float32), x) == [None]
        d = tf.edit_distance(tf.SparseTensor([[0, 0]], [1.0], [1, 1]), tf.SparseTensor([[0, 0]], [2.0], [1, 1]))
        assert d.op.type == "EditDistance"
        assert d.dtype == tf.float32
        # GraphDefs carry TensorFlow's type attrs, so TensorFlow can import them.
        roll_node = next(n for n in g.as_graph_def().node if n.op == "Roll")
        assert {"T", "Tshift", "Taxis"} <= set(roll_node.attr)


def test_space_to_batch_round_trip_with_required_paddings():
    """space_to_batch_nd with required_space_to_batch_paddings, then batch_to_space_nd with the crops, is the
    identity (the recipe TensorFlow's atrous convolution uses)."""
    x = cases.X_SB3.reshape(1, 3, 5, 2)
    g = tf.Graph()
    with g.as_default():
        xt = tf.constant(x)
        pads, crops = tf.required_space_to_batch_paddings([3, 5], [2, 2])
        s = tf.space_to_batch_nd(xt, [2, 2], pads)
        back = tf.batch_to_space_nd(s, [2, 2], crops)
        with tf.Session() as sess:
            out = sess.run(back)
    np.testing.assert_array_equal(out, x)
