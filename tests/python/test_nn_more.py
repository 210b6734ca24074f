"""More of ``tf.nn`` against TensorFlow 2.21: 3-D convolutions and pools (``Conv3D``, ``MaxPool3D``,
``AvgPool3D`` and their gradient ops), ``conv3d_transpose``, ``conv1d_transpose``, ``atrous_conv2d`` and its
transpose, the N-d ``convolution``/``pool`` dispatchers, 1-D and ``_v2`` pools, ``dilation2d``/``erosion2d``,
CTC (``ctc_loss``, ``ctc_loss_v2``, ``ctc_greedy_decoder``, ``collapse_repeated``, ``ctc_unique_labels``) and
``compute_average_loss``/``scale_regularization_loss``.

The fixtures (``tests/fixtures/nn_more/*.npz``, made by ``tools/make_nn_more_fixtures.py`` with TensorFlow
2.21 in eager mode) hold each case's inputs, TensorFlow's output ``y`` and the gradients of ``sum(y * r)``
for a stored ``r``; the tests build the same computation as a ferroflow graph.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.framework import errors

FIX = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "nn_more"


def _cases(name):
    with np.load(FIX / f"{name}.npz") as d:
        n = int(d["count"])
        out = [{} for _ in range(n)]
        for k in d.files:
            if k != "count":
                i, key = k.split("/", 1)
                v = d[k]
                out[int(i)][key] = v.item() if v.shape == () and v.dtype.kind in "USb" else v
        return out


def run_grad(build, arrays, r):
    """``(y, grads)`` of ``build(*placeholders)`` and of ``sum(y * r)`` with respect to each placeholder."""
    g = tf.Graph()
    with g.as_default():
        phs = [tf.placeholder(tf.float32, a.shape) for a in arrays]
        y = build(*phs)
        grads = tf.gradients(tf.reduce_sum(y * r), phs)
        with tf.Session() as s:
            feed = dict(zip(phs, arrays))
            return s.run(y, feed), s.run(grads, feed), y


def close(a, b, what, tol=1e-4):
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=what)


# --------------------------------------------------------------------------- 3-D convolution


@pytest.mark.parametrize("i", range(4))
def test_conv3d_values_and_gradients(i):
    c = _cases("conv3d")[i]
    y, (dx, dw), t = run_grad(lambda x, w: tf.nn.conv3d(x, w, list(c["strides"]), c["padding"]),
                              [c["x"], c["w"]], c["r"])
    assert t.op.type == "Conv3D"
    assert t.shape.as_list() == list(c["y"].shape)
    close(y, c["y"], "y")
    close(dx, c["dx"], "dx")
    close(dw, c["dw"], "dw")


@pytest.mark.parametrize("i", range(2))
def test_dilated_convolution_3d(i):
    c = _cases("conv3d_dilated")[i]
    y, (dx, dw), _ = run_grad(
        lambda x, w: tf.nn.convolution(x, w, c["padding"], dilation_rate=list(c["dilations"])),
        [c["x"], c["w"]], c["r"])
    close(y, c["y"], "y")
    close(dx, c["dx"], "dx")
    close(dw, c["dw"], "dw")


@pytest.mark.parametrize("i", range(2))
def test_conv3d_transpose(i):
    c = _cases("conv3d_transpose")[i]
    y, (dv, dw), t = run_grad(
        lambda v, w: tf.nn.conv3d_transpose(v, w, list(c["output_shape"]), list(c["strides"]), c["padding"]),
        [c["v"], c["w"]], c["r"])
    assert t.op.type == "Conv3DBackpropInputV2"
    close(y, c["y"], "y")
    close(dv, c["dv"], "dv")
    close(dw, c["dw"], "dw")


def test_conv3d_ncdhw_and_backprop_filter_wrappers():
    c = _cases("conv3d")[1]
    x, w = c["x"], c["w"]
    with tf.Graph().as_default():
        y = tf.nn.conv3d(np.transpose(x, [0, 4, 1, 2, 3]), w, [1, 1] + list(c["strides"][1:4]), c["padding"],
                         data_format="NCDHW")
        dw = tf.nn.conv3d_backprop_filter(x, w.shape, c["r"], list(c["strides"]), c["padding"])
        dw2 = tf.nn.conv3d_backprop_filter_v2(x, w.shape, c["r"], list(c["strides"]), c["padding"])
        with tf.Session() as s:
            yv, dwv, dw2v = s.run([y, dw, dw2])
    close(np.transpose(yv, [0, 2, 3, 4, 1]), c["y"], "NCDHW y")
    close(dwv, c["dw"], "conv3d_backprop_filter")
    close(dw2v, c["dw"], "conv3d_backprop_filter_v2")


def test_conv3d_errors():
    with tf.Graph().as_default():
        x = tf.zeros([1, 2, 2, 2, 3])
        with pytest.raises(ValueError, match="Negative dimension size"):
            tf.nn.conv3d(x, tf.zeros([3, 1, 1, 3, 1]), [1, 1, 1, 1, 1], "VALID")
        with pytest.raises(ValueError, match="Depth of input|divisible"):
            tf.nn.conv3d(x, tf.zeros([1, 1, 1, 2, 1]), [1, 1, 1, 1, 1], "VALID")
        with pytest.raises(ValueError, match="padding"):
            tf.nn.conv3d(x, tf.zeros([1, 1, 1, 3, 1]), [1, 1, 1, 1, 1], "FULL")
        p = tf.placeholder(tf.float32, [None, None, None, None, 3])
        y = tf.nn.conv3d(p, tf.zeros([3, 1, 1, 3, 1]), [1, 1, 1, 1, 1], "VALID")
        with tf.Session() as s:
            with pytest.raises(errors.InvalidArgumentError, match="Conv3D"):
                s.run(y, {p: np.zeros([1, 1, 2, 2, 3], np.float32)})


# --------------------------------------------------------------------------- other convolutions

CONV_MISC = {
    "conv1d_transpose": lambda a, b: tf.nn.conv1d_transpose(a, b, [2, 10, 3], 2, "SAME"),
    "atrous_conv2d_same": lambda a, b: tf.nn.atrous_conv2d(a, b, 2, "SAME"),
    "atrous_conv2d_valid": lambda a, b: tf.nn.atrous_conv2d(a, b, 2, "VALID"),
    "atrous_conv2d_transpose": lambda a, b: tf.nn.atrous_conv2d_transpose(a, b, [2, 8, 8, 3], 2, "SAME"),
    "convolution_1d_dilated": lambda a, b: tf.nn.convolution(a, b, "VALID", dilation_rate=[3]),
    "convolution_2d_strided": lambda a, b: tf.nn.convolution(a, b, "SAME", strides=[2, 1]),
    "with_space_to_batch": lambda a, b: tf.nn.with_space_to_batch(
        a, [2, 3], "SAME", lambda inp, n, pad: tf.nn.conv2d(inp, b, [1, 1, 1, 1], pad), filter_shape=[3, 2]),
}


@pytest.mark.parametrize("c", _cases("conv_misc"), ids=lambda c: c["kind"])
def test_conv_misc(c):
    y, (da, db), _ = run_grad(CONV_MISC[c["kind"]], [c["a"], c["b"]], c["r"])
    close(y, c["y"], "y")
    close(da, c["da"], "da")
    close(db, c["db"], "db")


def test_conv_transpose_dispatches_on_rank():
    c = _cases("conv3d_transpose")[0]
    with tf.Graph().as_default():
        y = tf.nn.conv_transpose(c["v"], c["w"], list(c["output_shape"]), list(c["strides"]), c["padding"])
        assert y.op.type == "Conv3DBackpropInputV2"
        with tf.Session() as s:
            close(s.run(y), c["y"], "conv_transpose 3-D")
        with pytest.raises(ValueError, match="output_shape"):
            tf.nn.conv_transpose(c["v"], c["w"], [1, 2, 3, 4, 5, 6], 1)
        with pytest.raises(ValueError, match="rate"):
            tf.nn.atrous_conv2d(tf.zeros([1, 4, 4, 1]), tf.zeros([2, 2, 1, 1]), 0, "SAME")


# --------------------------------------------------------------------------- pooling


@pytest.mark.parametrize("i", range(4))
def test_pool3d_values_and_gradients(i):
    c = _cases("pool3d")[i]
    fn = tf.nn.max_pool3d if c["kind"] == "max" else tf.nn.avg_pool3d
    y, (dx,), t = run_grad(lambda x: fn(x, list(c["ksize"]), list(c["strides"]), c["padding"]), [c["x"]], c["r"])
    assert t.op.type == ("MaxPool3D" if c["kind"] == "max" else "AvgPool3D")
    close(y, c["y"], "y")
    close(dx, c["dx"], "dx")


POOL_MISC = {
    "max_pool1d": lambda x: tf.nn.max_pool1d(x, 3, 2, "SAME"),
    "avg_pool1d": lambda x: tf.nn.avg_pool1d(x, 3, 2, "SAME"),
    "pool_avg_2d": lambda x: tf.nn.pool(x, [3, 2], "AVG", "SAME", strides=[2, 2]),
    "pool_max_3d": lambda x: tf.nn.pool(x, [2, 2, 2], "MAX", "VALID", strides=[1, 2, 1]),
    "max_pool_v2_1d": lambda x: tf.nn.max_pool_v2(x, [2], [2], "VALID"),
    "avg_pool_v2_3d": lambda x: tf.nn.avg_pool_v2(x, 2, 2, "SAME"),
}


@pytest.mark.parametrize("c", _cases("pool_misc"), ids=lambda c: c["kind"])
def test_pool_misc(c):
    y, (dx,), _ = run_grad(POOL_MISC[c["kind"]], [c["x"]], c["r"])
    close(y, c["y"], "y")
    close(dx, c["dx"], "dx")


def test_max_pool3d_second_derivative_and_ties():
    # TensorFlow's MaxPool3DGrad sends the gradient to every element equal to the maximum.
    x = np.array([1, 3, 3, 2, 3, 0, 1, 3], np.float32).reshape(1, 2, 2, 2, 1)
    with tf.Graph().as_default():
        p = tf.constant(x)
        y = tf.nn.max_pool3d(p, 2, 1, "VALID")
        (dx,) = tf.gradients(y, [p])
        assert dx.op.type == "MaxPool3DGrad"
        gg = tf.constant(np.arange(1, 9, dtype=np.float32).reshape(x.shape))
        (ddy,) = tf.gradients(dx, [p], grad_ys=gg)
        with tf.Session() as s:
            np.testing.assert_array_equal(s.run(dx).ravel(), [0, 1, 1, 0, 1, 0, 0, 1])
            assert s.run(ddy).shape == x.shape
        with pytest.raises(ValueError, match="batch dimension"):
            tf.nn.max_pool3d(p, [2, 1, 1, 1, 1], 1, "VALID")
        with pytest.raises(ValueError, match="must be 'MAX' or 'AVG'"):
            tf.nn.pool(tf.zeros([1, 4, 4, 1]), [2, 2], "MIN", "VALID")


# --------------------------------------------------------------------------- morphology


@pytest.mark.parametrize("i", range(3))
def test_dilation_and_erosion(i):
    c = _cases("dilation")[i]
    s, r, p = list(c["strides"]), list(c["rates"]), c["padding"]
    if c["kind"] == "dilation":
        def build(x, k):
            return tf.nn.dilation2d(x, k, s, r, p)
    else:
        def build(x, k):
            return tf.nn.erosion2d(x, k, s, r, p)
    y, (dx, dk), _ = run_grad(build, [c["x"], c["k"]], c["r"])
    close(y, c["y"], "y")
    close(dx, c["dx"], "dx")
    close(dk, c["dk"], "dk")


# --------------------------------------------------------------------------- CTC


def _ctc_build(c):
    kind = c["kind"]

    def sparse():
        return tf.SparseTensor(c["idx"], c["vals"], [3, 4])

    if kind == "v1":
        return lambda x: tf.nn.ctc_loss(sparse(), x, c["seq"], preprocess_collapse_repeated=bool(c["pre"]),
                                        ctc_merge_repeated=bool(c["merge"]),
                                        ignore_longer_outputs_than_inputs=bool(c["ignore"]))
    if kind == "v1_batch_major":
        return lambda x: tf.nn.ctc_loss(sparse(), x, c["seq"], time_major=False)
    if kind == "v2_dense":
        return lambda x: tf.nn.ctc_loss_v2(c["labels"], x, c["label_length"], c["seq"], blank_index=int(c["blank"]))
    return lambda x: tf.nn.ctc_loss_v2(sparse(), x, None, c["seq"], blank_index=int(c["blank"]))


@pytest.mark.parametrize("i", range(7))
def test_ctc_loss_values_and_gradients(i):
    c = _cases("ctc")[i]
    y, (dx,), _ = run_grad(_ctc_build(c), [c["x"]], c["r"])
    close(y, c["y"], f"{c['kind']} loss")
    close(dx, c["dx"], f"{c['kind']} gradient")


def test_ctc_loss_errors():
    x = np.zeros([2, 1, 3], np.float32)
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="SparseTensor"):
            tf.nn.ctc_loss([[1]], x, [2])
        with pytest.raises(ValueError, match="blank_index"):
            tf.nn.ctc_loss_v2(tf.SparseTensor([[0, 0]], [1], [1, 1]), x, None, [2])
        sp = tf.SparseTensor([[0, 0], [0, 1], [0, 2]], np.array([0, 1, 0], np.int32), [1, 3])
        loss = tf.nn.ctc_loss(sp, x, [2])
        with tf.Session() as s:
            with pytest.raises(errors.InvalidArgumentError, match="Not enough time for target transition"):
                s.run(loss)


@pytest.mark.parametrize("i", range(3))
def test_ctc_greedy_decoder(i):
    c = _cases("ctc_decoder")[i]
    with tf.Graph().as_default():
        blank = None if int(c["blank"]) == -1 else int(c["blank"])
        (d,), lp = tf.nn.ctc_greedy_decoder(c["x"], c["seq"], merge_repeated=bool(c["merge"]), blank_index=blank)
        assert isinstance(d, tf.SparseTensor)
        with tf.Session() as s:
            ix, val, shape, lpv = s.run([d.indices, d.values, d.dense_shape, lp])
    np.testing.assert_array_equal(ix, c["indices"])
    np.testing.assert_array_equal(val, c["values"])
    np.testing.assert_array_equal(shape, c["shape"])
    close(lpv, c["log_prob"], "log_prob", tol=1e-5)


@pytest.mark.parametrize("i", range(3))
def test_ctc_beam_search_decoder(i):
    c = _cases("ctc_beam")[i]
    top = int(c["top"])
    with tf.Graph().as_default():
        ds, lp = tf.nn.ctc_beam_search_decoder(c["x"], c["seq"], beam_width=int(c["width"]), top_paths=top,
                                               merge_repeated=bool(c["merge"]))
        assert len(ds) == top
        with tf.Session() as s:
            got = s.run([[d.indices, d.values, d.dense_shape] for d in ds] + [lp])
    for j in range(top):
        np.testing.assert_array_equal(got[j][0], c[f"indices{j}"], err_msg=f"path {j} indices")
        np.testing.assert_array_equal(got[j][1], c[f"values{j}"], err_msg=f"path {j} values")
        np.testing.assert_array_equal(got[j][2], c[f"shape{j}"], err_msg=f"path {j} shape")
    close(got[-1], c["log_prob"], "log_prob", tol=1e-5)


def test_collapse_repeated_and_unique_labels():
    (c,) = _cases("ctc_labels")
    with tf.Graph().as_default():
        coll, new_len = tf.nn.collapse_repeated(c["labels"], c["seq"])
        uy, uidx = tf.nn.ctc_unique_labels(c["labels"])
        with tf.Session() as s:
            cv, nv, uyv, uiv = s.run([coll, new_len, uy, uidx])
    np.testing.assert_array_equal(cv, c["collapsed"])
    np.testing.assert_array_equal(nv, c["new_len"])
    np.testing.assert_array_equal(uyv, c["unique"])
    np.testing.assert_array_equal(uiv, c["unique_idx"])


# --------------------------------------------------------------------------- losses


def test_average_and_regularization_losses():
    (c,) = _cases("losses")
    with tf.Graph().as_default():
        a = tf.nn.compute_average_loss(c["per"])
        aw = tf.nn.compute_average_loss(c["per"], sample_weight=c["w"], global_batch_size=8)
        reg = tf.nn.scale_regularization_loss(c["per"])
        with tf.Session() as s:
            av, awv, rv = s.run([a, aw, reg])
        with pytest.raises(ValueError, match="at least rank 1"):
            tf.nn.compute_average_loss(3.0)
        with pytest.raises(ValueError, match="positive"):
            tf.nn.compute_average_loss(c["per"], global_batch_size=0)
    close(av, c["avg"], "compute_average_loss", tol=1e-6)
    close(awv, c["avg_w"], "weighted compute_average_loss", tol=1e-6)
    close(rv, c["reg"], "scale_regularization_loss", tol=1e-6)


# --------------------------------------------------------------------------- fractional pooling


def _regions(seq, overlapping, n):
    return [range(seq[i], min(seq[i + 1] + (1 if overlapping else 0), n)) for i in range(len(seq) - 1)]


def _fractional_reference(x, rows, cols, overlapping, kind):
    reduce = np.max if kind == "max" else np.mean
    rr, cr = _regions(rows, overlapping, x.shape[1]), _regions(cols, overlapping, x.shape[2])
    out = np.zeros([x.shape[0], len(rr), len(cr), x.shape[3]], x.dtype)
    for i, r in enumerate(rr):
        for j, c in enumerate(cr):
            out[:, i, j] = reduce(x[:, r.start:r.stop, c.start:c.stop], axis=(1, 2))
    return out


@pytest.mark.parametrize("i", range(4))
def test_fractional_pool_regions_values_and_gradients(i):
    from ferroflow.ops._op_util import make

    c = _cases("fractional")[i]
    kind, overlapping = c["kind"], bool(c["overlapping"])
    fn = tf.nn.fractional_max_pool if kind == "max" else tf.nn.fractional_avg_pool
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, c["x"].shape)
        y, rows, cols = fn(x, [1.0, 1.44, 1.73, 1.0], pseudo_random=bool(c["pseudo"]), overlapping=overlapping,
                           deterministic=True, seed=5, seed2=7)
        assert y.shape.as_list() == list(c["y"].shape)
        (dx,) = tf.gradients(y, [x], grad_ys=np.ones(c["y"].shape, np.float32))
        # TensorFlow's gradient through TensorFlow's regions.
        if kind == "max":
            tf_dx = make("FractionalMaxPoolGrad", [x, tf.constant(c["y"]), tf.constant(c["r"]),
                                                   tf.constant(c["rows"]), tf.constant(c["cols"])],
                         {"overlapping": overlapping})
        else:
            tf_dx = make("FractionalAvgPoolGrad", [tf.constant(np.array(c["x"].shape, np.int64)), tf.constant(c["r"]),
                                                   tf.constant(c["rows"]), tf.constant(c["cols"])],
                         {"overlapping": overlapping})
        with tf.Session() as s:
            yv, rv, cv, dxv = s.run([y, rows, cols, dx], {x: c["x"]})
            yv2, rv2 = s.run([y, rows], {x: c["x"]})
            close(s.run(tf_dx, {x: c["x"]}), c["dx"], "gradient through TensorFlow's regions")
    np.testing.assert_array_equal(rv, rv2)  # deterministic: one node keeps its regions
    np.testing.assert_array_equal(yv, yv2)
    for seq, n, out in [(rv, 9, c["rows"]), (cv, 11, c["cols"])]:
        assert seq[0] == 0 and seq[-1] == n and len(seq) == len(out)
        assert set(np.diff(seq)) <= {n // (len(seq) - 1), n // (len(seq) - 1) + 1}
    close(yv, _fractional_reference(c["x"], rv, cv, overlapping, kind), "output over its own regions")
    close(_fractional_reference(c["x"], c["rows"], c["cols"], overlapping, kind), c["y"], "reference check")
    assert dxv.shape == c["x"].shape


def test_fractional_pool_errors():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="batch nor channel"):
            tf.nn.fractional_max_pool(tf.zeros([1, 4, 4, 1]), [2.0, 1.5, 1.5, 1.0])
        y = tf.nn.fractional_max_pool(tf.zeros([1, 4, 4, 1]), [1.0, 1.5, 1.5, 1.0], seed=3)[0]
        with tf.Session() as s:
            with pytest.raises(errors.InvalidArgumentError, match="deterministic"):
                s.run(y)
