"""Issue 23's last top-level and tf.debugging names built in Python: traceback filtering, OptionalSpec, conv,
ragged_fill_empty_rows(_grad), and the signatures of Operation, Tensor, VariableAggregation and
VariableSynchronization (CriticalSection, check_pinned and the batch function: test_critical_section.py).

Values are checked against tests/fixtures/names23/values.npz (written by tools/make_names23_fixtures.py with
TensorFlow 2.21); behaviours TensorFlow shows (errors, spec relations) are asserted as TensorFlow gives them.
"""

from __future__ import annotations

import inspect
import pathlib
import threading
import traceback

import numpy as np
import pytest

import ferroflow as tf

FIX = np.load(pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "names23" / "values.npz")


@pytest.fixture(autouse=True)
def _fresh_graph():
    with tf.Graph().as_default():
        yield


# ---------------------------------------------------------------- 1. traceback filtering


def _frames(exc):
    return [f.filename for f in traceback.extract_tb(exc.__traceback__)]


def test_traceback_filtering_switch_is_per_thread_and_on_by_default():
    assert tf.debugging.is_traceback_filtering_enabled() is True
    seen = []
    try:
        tf.debugging.disable_traceback_filtering()
        assert tf.debugging.is_traceback_filtering_enabled() is False
        t = threading.Thread(target=lambda: seen.append(tf.debugging.is_traceback_filtering_enabled()))
        t.start()
        t.join()
    finally:
        tf.debugging.enable_traceback_filtering()
    assert seen == [True]
    assert tf.debugging.is_traceback_filtering_enabled() is True


def test_session_run_errors_lose_ferroflow_frames_unless_disabled():
    package = str(pathlib.Path(tf.__file__).parent)
    x = tf.placeholder(tf.float32, [2])
    y = tf.debugging.check_numerics(x * 2.0, "boom")
    with tf.Session() as sess:
        # The general path (a list fetch goes through the fetch plan and its helpers).
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run([y], {x: [1.0, np.inf]})
        internal = [f for f in _frames(info.value) if f.startswith(package)]
        assert [pathlib.Path(f).name for f in internal] == ["traceback_utils.py"]
        assert _frames(info.value)[0] == __file__
        tf.debugging.disable_traceback_filtering()
        try:
            with pytest.raises(tf.errors.InvalidArgumentError) as info:
                sess.run([y], {x: [1.0, np.inf]})
        finally:
            tf.debugging.enable_traceback_filtering()
        names = [pathlib.Path(f).name for f in _frames(info.value) if f.startswith(package)]
        assert "session.py" in names and len(names) > 1


# ---------------------------------------------------------------- 2. OptionalSpec (and Optional)


def test_optional_spec_relations_match_tensorflow():
    from ferroflow.ops.optional_ops import Optional

    sp = tf.OptionalSpec(tf.TensorSpec([None], tf.float32))
    assert inspect.signature(tf.OptionalSpec).parameters.keys() == {"element_spec"}
    assert sp.element_spec == tf.TensorSpec([None], tf.float32)
    assert sp == tf.OptionalSpec(tf.TensorSpec([None], tf.float32))
    assert hash(sp) == hash(tf.OptionalSpec(tf.TensorSpec([None], tf.float32)))
    assert sp.is_compatible_with(tf.OptionalSpec(tf.TensorSpec([3], tf.float32)))
    assert not sp.is_compatible_with(tf.OptionalSpec(tf.TensorSpec([3], tf.int32)))
    assert not sp.is_compatible_with(tf.TensorSpec([3], tf.float32))
    assert sp.is_subtype_of(tf.OptionalSpec(tf.TensorSpec(None, tf.float32)))
    assert tf.OptionalSpec(tf.TensorSpec([3], tf.float32)).is_subtype_of(sp)
    assert not sp.is_subtype_of(tf.OptionalSpec(tf.TensorSpec([3], tf.float32)))
    # TensorFlow: rank 1 and rank 2 meet at an unknown shape.
    assert sp.most_specific_common_supertype([tf.OptionalSpec(tf.TensorSpec([3, 1], tf.float32))]) == \
        tf.OptionalSpec(tf.TensorSpec(None, tf.float32))
    assert sp.most_specific_common_supertype([tf.OptionalSpec(tf.TensorSpec([3], tf.int32))]) is None
    nested = tf.OptionalSpec((tf.TensorSpec([2], tf.float32), {"a": tf.TensorSpec([], tf.int32)}))
    assert not nested.is_compatible_with(sp)
    o = Optional.from_value((tf.constant([1.0, 2.0]), {"a": tf.constant(3)}))
    assert nested.is_compatible_with(o)
    assert tf.OptionalSpec.from_value(o) == nested
    assert sp.value_type is type(o)


def test_optional_values_run():
    from ferroflow.ops.optional_ops import Optional

    o = Optional.from_value((tf.constant([1.0, 2.0]), {"a": tf.constant(3)}))
    e = Optional.empty(tf.TensorSpec([2], tf.float32))
    assert e.element_spec == tf.TensorSpec([2], tf.float32)
    with tf.Session() as sess:
        has, (v, d), has_e = sess.run([o.has_value(), o.get_value(), e.has_value()])
        assert has and not has_e
        np.testing.assert_array_equal(v, [1.0, 2.0])
        assert d == {"a": 3}
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not have a value"):
            sess.run(e.get_value())


# ---------------------------------------------------------------- 4. conv

CONV_CASES = {
    "conv2d_same": dict(strides=[1, 1, 1, 1], padding="SAME"),
    "conv2d_valid_strided_dilated": dict(strides=[1, 2, 1, 1], padding="VALID", dilations=[1, 1, 2, 1]),
    "conv2d_explicit": dict(strides=[1, 1, 2, 1], padding="EXPLICIT", explicit_paddings=[0, 0, 1, 2, 0, 1, 0, 0]),
    "conv2d_batch_dims2": dict(strides=[1, 1, 1, 1], padding="SAME", batch_dims=2),
    "conv2d_f64": dict(strides=[1, 1, 1, 1], padding="VALID"),
    "conv3d_valid": dict(strides=[1, 1, 1, 1, 1], padding="VALID"),
    "conv3d_same_strided": dict(strides=[1, 2, 1, 2, 1], padding="SAME"),
    "conv2d_groups2": dict(strides=[1, 1, 1, 1], padding="SAME", groups=2),
    "conv2d_channels_first": dict(strides=[1, 1, 2, 1], padding="SAME", data_format="CHANNELS_FIRST"),
}


@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_conv_matches_tensorflow(case):
    x, w = FIX[f"{case}__in0"], FIX[f"{case}__in1"]
    want = FIX[f"{case}__out0"]
    y = tf.conv(x, w, **CONV_CASES[case])
    assert y.dtype == tf.as_dtype(want.dtype)
    assert y.shape.is_compatible_with(want.shape)
    with tf.Session() as sess:
        got = sess.run(y)
    tol = 1e-12 if want.dtype == np.float64 else 1e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_conv_gradient_flows_to_input_and_filter():
    x = tf.constant(FIX["conv2d_groups2__in0"])
    w = tf.constant(FIX["conv2d_groups2__in1"])
    gx, gw = tf.gradients(tf.reduce_sum(tf.conv(x, w, [1, 1, 1, 1], "SAME", groups=2)), [x, w])
    assert gx is not None and gw is not None
    assert gx.shape.as_list() == list(FIX["conv2d_groups2__in0"].shape)


@pytest.mark.parametrize("kwargs, message", [
    (dict(input=np.zeros([2, 7, 3], np.float32), filter=np.zeros([3, 3, 4], np.float32), strides=[1, 1, 1],
          padding="SAME"), "rank 4 or 5"),
    (dict(strides=[1, 1, 1, 1, 1], padding="SAME"), "strides should contain 4"),
    (dict(strides=[2, 1, 1, 1], padding="SAME"), "batch and channel"),
    (dict(strides=[1, 1, 1, 1], padding="FULL"), "padding"),
    (dict(strides=[1, 1, 1, 1], padding="SAME", explicit_paddings=[1, 1]), "must be empty"),
    (dict(strides=[1, 1, 1, 1], padding="EXPLICIT", explicit_paddings=[0, 0]), "8 values"),
    (dict(strides=[1, 1, 1, 1], padding="SAME", groups=3), "divisible"),
])
def test_conv_rejects_bad_arguments(kwargs, message):
    args = dict(input=np.zeros([1, 4, 4, 4], np.float32), filter=np.zeros([2, 2, 4, 6], np.float32))
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        tf.conv(**args)


# ---------------------------------------------------------------- 5. ragged_fill_empty_rows

RAGGED = {
    "fill_basic": ([1, 1, 3], [1.0, 2.0, 3.0], 5, -1.0),
    "fill_unsorted": ([2, 0, 2, 0, 4], [1.0, 2.0, 3.0, 4.0, 5.0], 6, 9.0),
    "fill_no_values": ([], [], 3, 7.0),
    "fill_int": ([0, 0, 0], [4, 5, 6], 2, 0),
}


@pytest.mark.parametrize("case", sorted(RAGGED))
def test_ragged_fill_empty_rows_matches_tensorflow(case):
    rowids, values, nrows, default = RAGGED[case]
    dtype = tf.int32 if isinstance(default, int) else tf.float32
    r = tf.ragged_fill_empty_rows(tf.constant(rowids, tf.int64), tf.constant(values, dtype),
                                  tf.constant(nrows, tf.int64), tf.constant(default, dtype))
    assert r._fields == ("output_value_rowids", "output_values", "empty_row_indicator", "reverse_index_map")
    with tf.Session() as sess:
        got = sess.run(list(r))
    for j, g in enumerate(got):
        want = FIX[f"{case}__out{j}"]
        assert g.dtype == want.dtype, (j, g.dtype, want.dtype)
        np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("case, index, grad", [
    ("fill_grad", [2, 3, 5], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
    ("fill_grad_none", [], [0.5, 1.5]),
])
def test_ragged_fill_empty_rows_grad_matches_tensorflow(case, index, grad):
    r = tf.ragged_fill_empty_rows_grad(tf.constant(index, tf.int64), tf.constant(grad, tf.float32))
    assert r._fields == ("d_values", "d_default_value")
    with tf.Session() as sess:
        got = sess.run(list(r))
    for j, g in enumerate(got):
        np.testing.assert_array_equal(g, FIX[f"{case}__out{j}"])


def test_ragged_fill_empty_rows_gradient_matches_tensorflows_registered_one():
    x = tf.constant([1.0, 2.0, 3.0])
    d = tf.constant(5.0)
    r = tf.ragged_fill_empty_rows(tf.constant([3, 1, 1], tf.int64), x, tf.constant(5, tf.int64), d)
    loss = tf.reduce_sum(r.output_values * tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
    with tf.Session() as sess:
        gx, gd = sess.run(tf.gradients(loss, [x, d]))
    np.testing.assert_array_equal(gx, FIX["fill_gradients__out0"])
    np.testing.assert_array_equal(gd, FIX["fill_gradients__out1"])


def test_ragged_fill_empty_rows_rejects_rows_out_of_range():
    for rowids in ([0, 5], [-1, 0]):
        r = tf.ragged_fill_empty_rows(tf.constant(rowids, tf.int64), tf.constant([1.0, 2.0]),
                                      tf.constant(3, tf.int64), tf.constant(0.0))
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError, match="value_rowids"):
            sess.run(r.output_values)
    with pytest.raises(ValueError, match="same length"):
        tf.ragged_fill_empty_rows(tf.constant([0, 1], tf.int64), tf.constant([1.0]), tf.constant(3, tf.int64),
                                  tf.constant(0.0))
    with pytest.raises(ValueError, match="rank 1"):
        tf.ragged_fill_empty_rows(tf.constant([0, 1], tf.int64), tf.constant([[1.0], [2.0]]),
                                  tf.constant(3, tf.int64), tf.constant(0.0))


# ---------------------------------------------------------------- 8. signatures


def _arg_names(cls):
    return [p.name for p in inspect.signature(cls.__init__).parameters.values() if p.name != "self"]


def test_class_signatures_match_tensorflow():
    assert _arg_names(tf.Operation) == ["args", "kwargs"]
    assert _arg_names(tf.Tensor) == ["args", "kwargs"]
    assert _arg_names(tf.VariableAggregation) == ["args", "kwds"]
    assert _arg_names(tf.VariableSynchronization) == ["args", "kwds"]
    assert [m.name for m in tf.VariableAggregation] == ["NONE", "SUM", "MEAN", "ONLY_FIRST_REPLICA"]
    assert tf.VariableAggregation.ONLY_FIRST_TOWER is tf.VariableAggregation.ONLY_FIRST_REPLICA
    assert [m.value for m in tf.VariableSynchronization] == [0, 1, 2, 3]
    v = tf.get_variable("v", [2], synchronization=tf.VariableSynchronization.AUTO,
                        aggregation=tf.VariableAggregation.SUM)
    assert v.synchronization is tf.VariableSynchronization.AUTO
    t = tf.constant(1.0)
    assert isinstance(t, tf.Tensor) and isinstance(t.op, tf.Operation)


def test_optional_is_reachable_as_tf_data_experimental_optional():
    import ferroflow.compat.v1 as tf1

    with tf1.Graph().as_default():
        full = tf1.data.experimental.Optional.from_value(tf1.constant([1.0, 2.0]))
        empty = tf1.data.experimental.Optional.empty(full.element_spec)
        with tf1.Session() as sess:
            has, value, none = sess.run([full.has_value(), full.get_value(), empty.has_value()])
    assert has and not none
    np.testing.assert_array_equal(value, [1.0, 2.0])
