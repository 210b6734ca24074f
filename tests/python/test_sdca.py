"""tf.train.sdca_optimizer / sdca_fprint / sdca_shrink_l1 against TensorFlow 2.21
(fixtures: tools/make_sdca_fixtures.py)."""

import os

import numpy as np
import pytest

import ferroflow.compat.v1 as tf

FIX = np.load(os.path.join(os.path.dirname(__file__), "..", "fixtures", "sdca", "sdca.npz"), allow_pickle=True)
LOSSES = ["logistic_loss", "squared_loss", "hinge_loss", "smooth_hinge_loss", "poisson_loss"]


def test_fprint_matches_tensorflow_for_every_length_class():
    with tf.Graph().as_default(), tf.Session() as s:
        got = s.run(tf.train.sdca_fprint(tf.constant(list(FIX["fprint_in"]))))
    np.testing.assert_array_equal(got, FIX["fprint_out"])
    assert got.dtype == np.int64 and got.shape == (len(FIX["fprint_in"]), 2)


def test_fprint_needs_a_vector():
    with tf.Graph().as_default(), tf.Session() as s:
        x = tf.placeholder(tf.string)
        with pytest.raises(tf.errors.InvalidArgumentError, match="vector"):
            s.run(tf.train.sdca_fprint(x), {x: [["a"]]})


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("l1", [0.0, 0.3])
def test_one_pass_matches_tensorflow(loss, l1):
    f = {k: FIX[f"single_{loss}_{l1}_{k}"] for k in ("ex", "feat", "vals", "w", "ew", "lab", "state", "delta")}
    n = len(f["ew"])
    with tf.Graph().as_default(), tf.Session() as s:
        state, d_sparse, d_dense = tf.train.sdca_optimizer(
            [f["ex"]], [f["feat"]], [f["vals"]], [], f["ew"], f["lab"], [f["feat"]], [f["w"]], [],
            np.zeros((n, 4), np.float32), loss_type=loss, l1=l1, l2=1.5, num_loss_partitions=1,
            num_inner_iterations=1, adaptative=False)
        assert d_dense == [] and len(d_sparse) == 1
        st, ds = s.run([state, d_sparse[0]])
    # Dual losses of a zero dual are exact; f64::MAX for a dual outside a hinge's box matches too.
    np.testing.assert_allclose(st, f["state"], rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(ds, f["delta"], rtol=2e-6, atol=1e-6)


def _converge(loss, l1, adaptive, passes=200):
    key = f"conv_{loss}_{l1}"
    dense, ex, feat, lab = FIX["conv_dense"], FIX["conv_ex"], FIX["conv_feat"], FIX[f"{key}_lab"]
    n = len(lab)
    with tf.Graph().as_default(), tf.Session() as s:
        ws = tf.Variable(np.zeros(10, np.float32))
        wd = tf.Variable(np.zeros(3, np.float32))
        st = tf.Variable(np.zeros((n, 4), np.float32))
        out_state, d_sparse, d_dense = tf.train.sdca_optimizer(
            [ex], [feat], [], [dense], np.ones(n, np.float32), lab, [np.arange(10, dtype=np.int64)], [ws], [wd],
            st, loss_type=loss, l1=l1, l2=1.0, num_loss_partitions=1, num_inner_iterations=1, adaptative=adaptive)
        with tf.control_dependencies([out_state, d_sparse[0], d_dense[0]]):
            step = tf.group(st.assign(out_state), ws.assign_add(d_sparse[0]), wd.assign_add(d_dense[0]))
        s.run(tf.global_variables_initializer())
        for _ in range(passes):
            s.run(step)
        unshrunk = s.run([ws, wd])
        s.run(tf.train.sdca_shrink_l1([ws, wd], l1=l1, l2=1.0))
        return key, unshrunk, s.run([ws, wd])


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("l1,adaptive", [(0.0, False), (0.2, True)])
def test_converged_weights_match_tensorflow(loss, l1, adaptive):
    key, (ws, wd), (ws_shrunk, wd_shrunk) = _converge(loss, l1, adaptive)
    tol = 2e-4
    np.testing.assert_allclose(ws, FIX[f"{key}_ws"], atol=tol)
    np.testing.assert_allclose(wd, FIX[f"{key}_wd"], atol=tol)
    np.testing.assert_allclose(ws_shrunk, FIX[f"{key}_ws_shrunk"], atol=tol)
    np.testing.assert_allclose(wd_shrunk, FIX[f"{key}_wd_shrunk"], atol=tol)


def test_shrink_l1_is_soft_thresholding():
    w0 = np.array([2.0, -2.0, 0.25, -0.1, 0.0], np.float32)
    with tf.Graph().as_default(), tf.Session() as s:
        w = tf.Variable(w0)
        s.run(tf.global_variables_initializer())
        s.run(tf.train.sdca_shrink_l1([w], l1=1.0, l2=2.0))
        np.testing.assert_allclose(s.run(w), np.sign(w0) * np.maximum(np.abs(w0) - 0.5, 0))


def _one_pass(loss="logistic_loss", labels=(0.0, 1.0), sparse_idx=(0, 1), feat=(0, 1), weights_idx=(0, 1)):
    with tf.Graph().as_default(), tf.Session() as s:
        out = tf.train.sdca_optimizer(
            [np.array(sparse_idx, np.int64)], [np.array(feat, np.int64)], [], [], np.ones(2, np.float32),
            np.array(labels, np.float32), [np.array(weights_idx, np.int64)], [np.zeros(len(weights_idx), np.float32)],
            [], np.zeros((2, 4), np.float32), loss_type=loss, l1=0.0, l2=1.0, num_loss_partitions=1,
            num_inner_iterations=1)
        return s.run(out[0])


def test_errors_are_tensorflows():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Only labels of 0.0 or 1.0"):
        _one_pass(labels=(0.0, 0.5))
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of valid range: 7"):
        _one_pass(feat=(0, 7))
    with pytest.raises(tf.errors.InvalidArgumentError, match="Duplicate index"):
        _one_pass(sparse_idx=(0, 0), feat=(1, 1))
    with pytest.raises(ValueError, match="loss_type"):
        _one_pass(loss="cubic_loss")
