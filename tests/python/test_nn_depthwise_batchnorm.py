"""``tf.nn``'s depthwise/separable convolutions, fused and composed batch norm, the moments helpers,
``conv1d``, ``crelu``, ``lrn``, ``space_to_depth``/``depth_to_space`` and ``max_pool_with_argmax``: values and
gradients against TensorFlow 2.21.

The fixtures (``tests/fixtures/nn_extra/*.npz``) hold each case's inputs, TensorFlow's outputs and the
gradients of ``sum(out0 * r)`` for a stored ``r``; ``tools/make_nn_extra_fixtures.py`` made them with
``tf.compat.v1`` graphs. The cases here build the same graphs with ferroflow.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.framework import errors

FIX = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "nn_extra"


def _load(name):
    with np.load(FIX / f"{name}.npz") as d:
        return {k: d[k] for k in d.files}


DEPTHWISE = _load("depthwise")
BATCH_NORM = _load("batch_norm")
MOMENTS = _load("moments")


def check(fix, case, build, grad_wrt, atol=1e-5, rtol=1e-5):
    """Builds ``build(**placeholders)`` and compares outputs and gradients with TensorFlow's."""
    inputs = {k.split("/", 1)[1]: v for k, v in fix.items() if k.startswith(case + "/")}
    names = [k for k in inputs if not (k.startswith("out") or k.startswith("d") and k[1:] in inputs or k == "r")]
    g = tf.Graph()
    with g.as_default():
        phs = {k: tf.placeholder(tf.float32, inputs[k].shape, name=k) for k in names}
        outs = build(**phs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        loss = tf.reduce_sum(outs[0] * inputs["r"])
        grads = tf.gradients(loss, [phs[k] for k in grad_wrt])
        feed = {phs[k]: inputs[k] for k in names}
        with tf.Session() as s:
            vals = s.run(list(outs), feed)
            gvals = s.run(grads, feed)
    for i, v in enumerate(vals):
        np.testing.assert_allclose(v, inputs[f"out{i}"], atol=atol, rtol=rtol, err_msg=f"{case} output {i}")
        assert tuple(outs[i].shape.as_list()) == inputs[f"out{i}"].shape, f"{case} static shape {i}"
    for k, v in zip(grad_wrt, gvals):
        np.testing.assert_allclose(v, inputs[f"d{k}"], atol=atol * 10, rtol=rtol * 10, err_msg=f"{case} d{k}")
    return g


# --------------------------------------------------------------------------- depthwise


DEPTHWISE_CASES = {
    "same_m2": (lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME"), ["x", "w"]),
    "valid_s2": (lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "VALID"), ["x", "w"]),
    "rate2": (lambda x, w: tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME", rate=[2, 2]), ["x", "w"]),
    "native_s2_same": (lambda x, w: tf.nn.depthwise_conv2d_native(x, w, [1, 2, 2, 1], "SAME"), ["x", "w"]),
    "explicit": (lambda x, w: tf.nn.depthwise_conv2d_native(x, w, [1, 1, 1, 1], [[0, 0], [1, 2], [0, 1], [0, 0]]),
                 ["x", "w"]),
    "separable": (lambda x, dw, pw: tf.nn.separable_conv2d(x, dw, pw, [1, 1, 1, 1], "SAME"), ["x", "dw", "pw"]),
}


@pytest.mark.parametrize("case", sorted(DEPTHWISE_CASES))
def test_depthwise_matches_tensorflow(case):
    build, wrt = DEPTHWISE_CASES[case]
    check(DEPTHWISE, case, build, wrt)


def test_depthwise_graph_has_tensorflows_nodes():
    g = check(DEPTHWISE, "same_m2", DEPTHWISE_CASES["same_m2"][0], ["x", "w"])
    types = {op.type for op in g.get_operations()}
    assert {"DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
            "DepthwiseConv2dNativeBackpropFilter"} <= types
    node = g.get_operation_by_name("depthwise")
    assert node.type == "DepthwiseConv2dNative"
    assert node.get_attr("padding") in (b"SAME", "SAME")
    g = check(DEPTHWISE, "separable", DEPTHWISE_CASES["separable"][0], ["x", "dw", "pw"])
    assert g.get_operation_by_name("separable_conv2d/depthwise").type == "DepthwiseConv2dNative"
    assert g.get_operation_by_name("separable_conv2d").type == "Conv2D"


def test_depthwise_nchw_is_the_transposed_nhwc():
    d = DEPTHWISE
    x, w = d["native_s2_same/x"], d["native_s2_same/w"]
    with tf.Graph().as_default(), tf.Session() as s:
        y = tf.nn.depthwise_conv2d(np.transpose(x, [0, 3, 1, 2]), w, [1, 1, 2, 2], "SAME", data_format="NCHW")
        np.testing.assert_allclose(s.run(y), np.transpose(d["native_s2_same/out0"], [0, 3, 1, 2]), atol=1e-5)


def test_depthwise_second_derivative_runs():
    x0 = DEPTHWISE["same_m2/x"]
    w0 = DEPTHWISE["same_m2/w"]
    with tf.Graph().as_default(), tf.Session() as s:
        x = tf.constant(x0)
        w = tf.constant(w0)
        y = tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME")
        (gx,) = tf.gradients(tf.reduce_sum(y * y), [x])
        (gw,) = tf.gradients(tf.reduce_sum(gx), [w])
        assert s.run(gw).shape == w0.shape


def test_depthwise_errors_are_typed():
    with tf.Graph().as_default():
        x = tf.zeros([1, 4, 4, 3])
        with pytest.raises(ValueError, match="Dimensions must be equal"):
            tf.nn.depthwise_conv2d_native(x, tf.zeros([2, 2, 2, 1]), [1, 1, 1, 1], "VALID")
        with pytest.raises(ValueError, match="strides > 1 not supported in conjunction with dilation_rate"):
            tf.nn.depthwise_conv2d(x, tf.zeros([2, 2, 3, 1]), [1, 2, 2, 1], "SAME", rate=2)
        f = tf.placeholder(tf.float32, [None, None, None, None])
        y = tf.nn.depthwise_conv2d_native(x, f, [1, 1, 1, 1], "VALID")
        with tf.Session() as s, pytest.raises(errors.InvalidArgumentError, match="same depth: 3 vs 2"):
            s.run(y, {f: np.zeros([2, 2, 2, 1], np.float32)})


# --------------------------------------------------------------------------- batch norm


BN_CASES = {
    "train": (lambda x, scale, offset: tf.nn.fused_batch_norm(x, scale, offset, epsilon=0.001),
              ["x", "scale", "offset"]),
    "train_factor": (lambda x, scale, offset, mean, var: tf.nn.fused_batch_norm(
        x, scale, offset, mean, var, epsilon=0.01, exponential_avg_factor=0.3), ["x", "scale", "offset"]),
    "infer": (lambda x, scale, offset, mean, var: tf.nn.fused_batch_norm(
        x, scale, offset, mean, var, is_training=False), ["x", "scale", "offset"]),
    "tiny_eps": (lambda x, scale, offset: tf.nn.fused_batch_norm(x * 0.001, scale, offset, epsilon=1e-8), ["x"]),
    "nchw_train": (lambda x, scale, offset: tf.nn.fused_batch_norm(x, scale, offset, data_format="NCHW"),
                   ["x", "scale", "offset"]),
    "batch_normalization": (lambda x, mean, var, offset, scale: tf.nn.batch_normalization(
        x, mean, var, offset, scale, 0.01), ["x", "mean", "var", "offset", "scale"]),
    "global_norm": (lambda x, mean, var, offset, scale: tf.nn.batch_norm_with_global_normalization(
        x, mean, var, offset, scale, 0.01, False), ["x", "mean", "var"]),
}


@pytest.mark.parametrize("case", sorted(BN_CASES))
def test_batch_norm_matches_tensorflow(case):
    build, wrt = BN_CASES[case]
    check(BATCH_NORM, case, build, wrt, atol=2e-5, rtol=2e-5)


def test_fused_batch_norm_node_is_tensorflows():
    g = check(BATCH_NORM, "train", BN_CASES["train"][0], ["x", "scale", "offset"])
    op = g.get_operation_by_name("FusedBatchNormV3")
    assert len(op.outputs) == 6
    assert [t.dtype for t in op.outputs] == [tf.float32] * 6
    assert op.get_attr("is_training") is True
    assert {o.type for o in g.get_operations()} >= {"FusedBatchNormGradV3"}
    with tf.Session(graph=g) as s:
        feed = {g.get_tensor_by_name(f"{k}:0"): BATCH_NORM[f"train/{k}"] for k in ("x", "scale", "offset")}
        r1, r2, r3 = s.run(op.outputs[3:], feed)
    x = BATCH_NORM["train/x"].reshape(-1, 3)
    np.testing.assert_allclose(r1, x.mean(0), atol=1e-6)
    np.testing.assert_allclose(r2, x.var(0), atol=1e-5)  # the biased variance, for the gradient
    assert np.shape(r3) == ()


def test_fused_batch_norm_argument_errors():
    with tf.Graph().as_default():
        x = tf.zeros([1, 2, 2, 3])
        s = tf.ones([3])
        with pytest.raises(ValueError, match="must be a 1D tensor when `is_training` is False"):
            tf.nn.fused_batch_norm(x, s, s, is_training=False)
        with pytest.raises(ValueError, match="Shape must be rank 4"):
            tf.nn.fused_batch_norm(tf.zeros([2, 3]), s, s)
        with pytest.raises(ValueError, match="Dimensions must be equal"):
            tf.nn.fused_batch_norm(x, tf.ones([2]), s)


def test_fused_batch_norm_trains_running_statistics():
    """A few steps of a conv + fused batch norm model decrease the loss; the update ops run."""
    rng = np.random.RandomState(0)
    data = rng.randn(8, 6, 6, 2).astype(np.float32)
    with tf.Graph().as_default(), tf.Session() as s:
        w = tf.Variable(rng.randn(3, 3, 2, 1).astype(np.float32) * 0.3)
        gamma = tf.Variable(np.ones(2, np.float32))
        beta = tf.Variable(np.zeros(2, np.float32))
        y = tf.nn.depthwise_conv2d(tf.constant(data), w, [1, 1, 1, 1], "SAME")
        z, m, v = tf.nn.fused_batch_norm(y, gamma, beta)
        loss = tf.reduce_mean(tf.square(z - 0.5))
        step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        s.run(tf.global_variables_initializer())
        first = s.run(loss)
        for _ in range(20):
            s.run(step)
        assert s.run(loss) < first * 0.5


# --------------------------------------------------------------------------- moments, conv1d, crelu, lrn, space/depth, argmax


MOMENT_CASES = {
    "sufficient": (lambda x: tf.nn.sufficient_statistics(x, [0, 2], shift=None)[1:3], ["x"]),
    "sufficient_shift": (lambda x, shift: tf.nn.sufficient_statistics(x, [0, 2], shift=shift, keepdims=True)[1:3],
                         ["x"]),
    "normalize": (lambda x, shift: tf.nn.normalize_moments(
        *tf.nn.sufficient_statistics(tf.transpose(x, [0, 2, 1]), [0, 1], shift=shift)), ["x"]),
    "weighted": (lambda x, w: tf.nn.weighted_moments(x, [0, 2], w), ["x", "w"]),
    "conv1d": (lambda x, w: tf.nn.conv1d(x, w, 2, "SAME"), ["x", "w"]),
    "crelu": (lambda x: tf.nn.crelu(x), ["x"]),
    "lrn": (lambda x: tf.nn.lrn(x, depth_radius=2, bias=1.5, alpha=0.4, beta=0.75), ["x"]),
    "lrn_default": (lambda x: tf.nn.local_response_normalization(x), ["x"]),
    "space_to_depth": (lambda x: tf.nn.space_to_depth(x, 2), ["x"]),
    "depth_to_space": (lambda x: tf.nn.depth_to_space(x, 2), ["x"]),
    "argmax": (lambda x: tuple(tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")), ["x"]),
    "argmax_batch": (lambda x: tuple(tf.nn.max_pool_with_argmax(
        x, [1, 3, 3, 1], [1, 1, 2, 1], "VALID", include_batch_in_index=True)), ["x"]),
    "argmax_i32": (lambda x: tuple(tf.nn.max_pool_with_argmax(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME",
                                                               Targmax=tf.int32)), []),
}


@pytest.mark.parametrize("case", sorted(MOMENT_CASES))
def test_moments_conv1d_crelu_match_tensorflow(case):
    build, wrt = MOMENT_CASES[case]
    check(MOMENTS, case, build, wrt)


def test_sufficient_statistics_count_of_unknown_shape():
    with tf.Graph().as_default(), tf.Session() as s:
        x = tf.placeholder(tf.float32, [None, 4])
        count, m, v, shift = tf.nn.sufficient_statistics(x, [0])
        assert shift is None
        c, mv = s.run([count, m], {x: np.ones([5, 4], np.float32)})
        assert c == 5.0
        np.testing.assert_allclose(mv, [5.0] * 4)


def test_space_to_depth_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="evenly divisible by 2 but is 5"):
            tf.nn.space_to_depth(tf.zeros([1, 5, 4, 1]), 2)
        with pytest.raises(ValueError, match="evenly divisible by 4 but is 6"):
            tf.nn.depth_to_space(tf.zeros([1, 2, 2, 6]), 2)
        with pytest.raises(ValueError, match="must be at least minimum 2"):
            tf.nn.space_to_depth(tf.zeros([1, 4, 4, 1]), 1)


def test_graph_def_nodes_carry_tensorflows_attrs():
    """The exported NodeDefs are what TensorFlow writes (T, U, epsilon, ...): TensorFlow imports and runs them."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [1, 4, 4, 3], name="x")
        y = tf.nn.depthwise_conv2d(x, np.ones([3, 3, 3, 2], np.float32), [1, 1, 1, 1], "SAME")
        tf.nn.fused_batch_norm(y, tf.ones([6]), tf.zeros([6]), tf.zeros([6]), tf.ones([6]), is_training=False)
    nodes = {n.op: n for n in g.as_graph_def().node}
    dw, bn = nodes["DepthwiseConv2dNative"], nodes["FusedBatchNormV3"]
    assert dw.attr["T"].type == tf.float32.as_datatype_enum
    assert list(dw.attr["strides"].list.i) == [1, 1, 1, 1] and dw.attr["padding"].s == b"SAME"
    assert bn.attr["T"].type == bn.attr["U"].type == tf.float32.as_datatype_enum
    assert bn.attr["is_training"].b is False
    assert abs(bn.attr["epsilon"].f - 0.001) < 1e-9 and bn.attr["data_format"].s == b"NHWC"


def test_max_pool_with_argmax_result_and_dtypes():
    with tf.Graph().as_default():
        r = tf.nn.max_pool_with_argmax(tf.zeros([1, 4, 4, 2]), [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        assert r.output.dtype == tf.float32 and r.argmax.dtype == tf.int64
        assert r.argmax.shape.as_list() == [1, 2, 2, 2]
        r = tf.nn.max_pool_with_argmax(tf.zeros([1, 4, 4, 2]), 2, 2, "VALID", output_dtype=tf.int32)
        assert r.argmax.dtype == tf.int32
        with pytest.raises(ValueError, match="data_format"):
            tf.nn.max_pool_with_argmax(tf.zeros([1, 2, 4, 4]), 2, 2, "VALID", data_format="NCHW")
