"""tf.losses (TF1): loss formulas, weights broadcasting, reductions and the LOSSES collection.

Every value is compared with a numpy formula written here; a few were also checked against
TensorFlow (tf.compat.v1.losses) while writing these tests.
"""

import inspect

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ferroflow as tf
from _optest import normal_floats

L = tf.losses
R = L.Reduction
FEW = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RNG = np.random.RandomState(7)
LABELS = RNG.rand(4, 3).astype(np.float32)
PREDS = RNG.rand(4, 3).astype(np.float32)
BINARY = (RNG.rand(4, 3) > 0.5).astype(np.float32)


def run(fetch, feed=None):
    with tf.Session() as sess:
        return sess.run(fetch, feed)


def reduce_np(losses, weights, reduction):
    """TF1's compute_weighted_loss in numpy."""
    losses = np.asarray(losses, np.float64)
    weights = np.broadcast_to(np.asarray(weights, np.float64), losses.shape)
    weighted = losses * weights
    if reduction == R.NONE:
        return weighted
    total = weighted.sum()
    denominator = {
        R.SUM: 1.0,
        R.MEAN: weights.sum(),
        R.SUM_OVER_BATCH_SIZE: float(losses.size),
        R.SUM_BY_NONZERO_WEIGHTS: float(np.count_nonzero(weights)),
    }[reduction]
    return 0.0 if denominator == 0 else total / denominator


WEIGHTS = {
    "scalar": 2.0,
    "zero": 0.0,
    "per_row": np.array([[1.0], [0.0], [2.0], [0.5]], np.float32),
    "per_column": np.array([[0.0, 1.0, 3.0]], np.float32),
    "full": (RNG.rand(4, 3) > 0.4).astype(np.float32) * RNG.rand(4, 3).astype(np.float32),
}


def softmax_xent_np(labels, logits):
    z = logits - logits.max(-1, keepdims=True)
    log_softmax = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return -(labels * log_softmax).sum(-1)


def sigmoid_xent_np(labels, logits):
    return np.maximum(logits, 0) - logits * labels + np.log1p(np.exp(-np.abs(logits)))


def huber_np(labels, preds, delta):
    err = np.abs(preds - labels)
    return np.where(err <= delta, 0.5 * err**2, delta * err - 0.5 * delta**2)


# (name, builder(weights, reduction), per-element numpy losses)
ELEMENTWISE = [
    (
        "absolute_difference",
        lambda w, r: L.absolute_difference(LABELS, PREDS, w, reduction=r),
        np.abs(PREDS - LABELS),
    ),
    (
        "mean_squared_error",
        lambda w, r: L.mean_squared_error(LABELS, PREDS, w, reduction=r),
        (PREDS - LABELS) ** 2,
    ),
    (
        "huber_loss",
        lambda w, r: L.huber_loss(LABELS, PREDS * 3, w, delta=0.5, reduction=r),
        huber_np(LABELS, PREDS * 3, 0.5),
    ),
    (
        "log_loss",
        lambda w, r: L.log_loss(BINARY, PREDS, w, reduction=r),
        -BINARY * np.log(PREDS + 1e-7) - (1 - BINARY) * np.log(1 - PREDS + 1e-7),
    ),
    (
        "hinge_loss",
        lambda w, r: L.hinge_loss(BINARY, PREDS * 4 - 2, w, reduction=r),
        np.maximum(0.0, 1 - (2 * BINARY - 1) * (PREDS * 4 - 2)),
    ),
    (
        "sigmoid_cross_entropy",
        lambda w, r: L.sigmoid_cross_entropy(BINARY, PREDS * 4 - 2, w, reduction=r),
        sigmoid_xent_np(BINARY, PREDS * 4 - 2),
    ),
]


@pytest.mark.parametrize("reduction", R.all())
@pytest.mark.parametrize("weights", list(WEIGHTS), ids=list(WEIGHTS))
@pytest.mark.parametrize("name, build, per_element", ELEMENTWISE, ids=[e[0] for e in ELEMENTWISE])
def test_elementwise_losses_match_numpy(name, build, per_element, weights, reduction):
    loss = build(WEIGHTS[weights], reduction)
    assert loss.dtype == tf.float32
    assert loss.shape == ((4, 3) if reduction == R.NONE else ())
    assert tf.get_collection(tf.GraphKeys.LOSSES) == [loss]
    np.testing.assert_allclose(
        run(loss), reduce_np(per_element, WEIGHTS[weights], reduction), rtol=2e-5, atol=1e-6
    )


def test_reduction_keys():
    assert R.NONE == "none" and R.SUM == "weighted_sum" and R.MEAN == "weighted_mean"
    assert R.SUM_OVER_BATCH_SIZE == "weighted_sum_over_batch_size"
    assert R.SUM_BY_NONZERO_WEIGHTS == R.SUM_OVER_NONZERO_WEIGHTS == "weighted_sum_by_nonzero_weights"
    assert set(R.all()) == {R.NONE, R.SUM, R.MEAN, R.SUM_OVER_BATCH_SIZE, R.SUM_BY_NONZERO_WEIGHTS}
    for key in R.all():
        R.validate(key)
    with pytest.raises(ValueError, match="Invalid Reduction Key mean."):
        R.validate("mean")
    with pytest.raises(ValueError, match="Invalid Reduction Key"):
        L.compute_weighted_loss(LABELS, reduction="sum")


def test_default_reduction_is_sum_by_nonzero_weights():
    w = np.array([[1.0], [0.0], [0.0], [3.0]], np.float32)
    loss = L.mean_squared_error(LABELS, PREDS, w)
    sq = (PREDS - LABELS) ** 2
    expected = (sq * w).sum() / 6.0  # two rows of three elements have a non-zero weight
    np.testing.assert_allclose(run(loss), expected, rtol=1e-5)


# -- compute_weighted_loss and broadcasting ----------------------------------------------


@st.composite
def losses_and_weights(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
    losses = draw(hnp.arrays(np.float32, shape, elements=normal_floats(0, 10, width=32)))
    if draw(st.booleans()):
        weight_shape = ()
    else:  # each dimension either 1 or the losses' size
        weight_shape = tuple(d if draw(st.booleans()) else 1 for d in shape)
    weights = draw(hnp.arrays(np.float32, weight_shape, elements=st.sampled_from([0.0, 0.5, 1.0, 2.0])))
    return losses, weights


@FEW
@given(lw=losses_and_weights(), reduction=st.sampled_from(R.all()), static=st.booleans())
def test_compute_weighted_loss_broadcasts_weights_like_numpy(lw, reduction, static):
    tf.reset_default_graph()
    losses, weights = lw
    if static:
        loss, feed = L.compute_weighted_loss(losses, weights, reduction=reduction), None
    else:  # shapes only known at run time: the broadcast check runs in the graph
        lp = tf.placeholder(tf.float32, None)
        wp = tf.placeholder(tf.float32, None)
        loss, feed = L.compute_weighted_loss(lp, wp, reduction=reduction), {lp: losses, wp: weights}
    np.testing.assert_allclose(run(loss, feed), reduce_np(losses, weights, reduction), rtol=1e-5, atol=1e-5)


def test_weights_that_do_not_broadcast_fail_statically():
    with pytest.raises(
        ValueError, match=r"weights can not be broadcast to values\. values\.rank=2\. weights\.rank=1\."
    ):
        L.mean_squared_error(LABELS, PREDS, np.ones([4], np.float32))
    with pytest.raises(ValueError, match=r"weights can not be broadcast to values\. Mismatch at dim 1\."):
        L.compute_weighted_loss(LABELS, np.ones([4, 2], np.float32))
    with pytest.raises(ValueError, match=r"values\.rank=2\. weights\.rank=3\."):
        L.compute_weighted_loss(LABELS, np.ones([4, 3, 1], np.float32))


@pytest.mark.parametrize("weights", [[1.0, 2.0, 3.0, 4.0], [[1.0, 2.0]], np.ones([4, 3, 1]), np.ones([2, 3])])
def test_weights_that_do_not_broadcast_fail_at_run_time(weights):
    w = tf.placeholder(tf.float32, None, name="w")
    loss = L.mean_squared_error(LABELS, PREDS, w)
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        run(loss, {w: weights})
    msg = info.value.message
    assert "weights can not be broadcast to values." in msg
    assert "w:0" in msg and "mean_squared_error/SquaredDifference:0" in msg


def test_zero_weights_give_zero_not_nan():
    for reduction in (R.MEAN, R.SUM_BY_NONZERO_WEIGHTS, R.SUM):
        assert run(L.absolute_difference(LABELS, PREDS, 0.0, reduction=reduction)) == 0.0
    w = tf.placeholder(tf.float32, [4, 1])
    assert run(L.log_loss(BINARY, PREDS, w), {w: np.zeros([4, 1])}) == 0.0


def test_dtypes():
    # Inputs are cast to float32 before the loss (TensorFlow does the same).
    loss = L.mean_squared_error(LABELS.astype(np.float64), PREDS.astype(np.float64))
    assert loss.dtype == tf.float32
    np.testing.assert_allclose(run(loss), ((PREDS - LABELS) ** 2).mean(), rtol=1e-5)
    # compute_weighted_loss reduces in float32 and casts back to the losses' dtype.
    ints = L.compute_weighted_loss(tf.constant([1, 2, 4], tf.int64), [1.0, 1.0, 0.0])
    assert ints.dtype == tf.int64 and run(ints) == 1
    doubles = L.compute_weighted_loss(tf.constant([0.5, 1.5], tf.float64), reduction=R.SUM)
    assert doubles.dtype == tf.float64 and run(doubles) == 2.0
    logits64 = L.sigmoid_cross_entropy(BINARY, (PREDS * 4 - 2).astype(np.float64))
    assert logits64.dtype == tf.float64


# -- cross-entropies ----------------------------------------------------------------------------


@pytest.mark.parametrize("smoothing", [0, 0.1, 0.5])
def test_sigmoid_cross_entropy_label_smoothing(smoothing):
    logits = PREDS * 4 - 2
    loss = L.sigmoid_cross_entropy(
        BINARY.astype(np.int32), logits, WEIGHTS["full"], label_smoothing=smoothing
    )
    smoothed = BINARY * (1 - smoothing) + 0.5 * smoothing
    expected = reduce_np(sigmoid_xent_np(smoothed, logits), WEIGHTS["full"], R.SUM_BY_NONZERO_WEIGHTS)
    np.testing.assert_allclose(run(loss), expected, rtol=1e-5)


@pytest.mark.parametrize("smoothing", [0, 0.1, 0.3])
def test_softmax_cross_entropy_label_smoothing_and_weights(smoothing):
    onehot = np.eye(3, dtype=np.float32)[[0, 2, 1, 1]]
    logits = PREDS * 3
    w = np.array([1.0, 2.0, 0.0, 1.0], np.float32)
    loss = L.softmax_cross_entropy(onehot, logits, w, label_smoothing=smoothing)
    smoothed = onehot * (1 - smoothing) + smoothing / 3
    expected = reduce_np(softmax_xent_np(smoothed, logits), w, R.SUM_BY_NONZERO_WEIGHTS)
    np.testing.assert_allclose(run(loss), expected, rtol=1e-5)
    unreduced = run(L.softmax_cross_entropy(onehot, logits, reduction=R.NONE, label_smoothing=smoothing))
    np.testing.assert_allclose(unreduced, softmax_xent_np(smoothed, logits), rtol=1e-5)


def test_softmax_cross_entropy_shape_mismatch():
    with pytest.raises(ValueError, match="incompatible"):
        L.softmax_cross_entropy(np.eye(4, dtype=np.float32), PREDS)


def test_sparse_softmax_cross_entropy_squeezes_labels_and_weights():
    ids = np.array([0, 2, 1, 1])
    logits = PREDS * 3
    per_example = softmax_xent_np(np.eye(3)[ids], logits)
    w = np.array([1.0, 2.0, 0.0, 1.0], np.float32)
    expected = reduce_np(per_example, w, R.SUM_BY_NONZERO_WEIGHTS)
    for labels, weights in ((ids, w), (ids[:, None], w[:, None]), (ids[:, None], w)):
        tf.reset_default_graph()
        loss = L.sparse_softmax_cross_entropy(labels, logits, weights)
        np.testing.assert_allclose(run(loss), expected, rtol=1e-5)
    # Ranks known only at run time.
    tf.reset_default_graph()
    lp = tf.placeholder(tf.int64, None)
    xp = tf.placeholder(tf.float32, None)
    wp = tf.placeholder(tf.float32, None)
    loss = L.sparse_softmax_cross_entropy(lp, xp, wp)
    for labels, weights in ((ids, w), (ids[:, None], w[:, None])):
        np.testing.assert_allclose(run(loss, {lp: labels, xp: logits, wp: weights}), expected, rtol=1e-5)
    with pytest.raises(ValueError, match="Rank mismatch"):
        L.sparse_softmax_cross_entropy(np.zeros([4, 3], np.int32), np.zeros([4], np.float32))


# -- cosine distance and pairwise errors -------------------------------------------------------


def test_cosine_distance():
    a = LABELS / np.linalg.norm(LABELS, axis=1, keepdims=True)
    b = PREDS / np.linalg.norm(PREDS, axis=1, keepdims=True)
    per_row = 1 - (a * b).sum(1, keepdims=True)
    w = WEIGHTS["per_row"]
    np.testing.assert_allclose(
        run(L.cosine_distance(a, b, axis=1, weights=w)),
        reduce_np(per_row, w, R.SUM_BY_NONZERO_WEIGHTS),
        rtol=1e-5,
    )
    unreduced = L.cosine_distance(a, b, dim=1, reduction=R.NONE)
    assert unreduced.shape == (4, 1)
    np.testing.assert_allclose(run(unreduced), per_row, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="You must specify argument `axis`."):
        L.cosine_distance(a, b)
    with pytest.raises(ValueError, match="Cannot specify both"):
        L.cosine_distance(a, b, axis=1, dim=1)


def pairwise_np(labels, preds, weights):
    """Brute force: per batch row, the mean over ordered pairs i != j of ((p_i - p_j) - (l_i - l_j))**2."""
    total = 0.0
    for b in range(labels.shape[0]):
        d = (preds[b] - labels[b]).reshape(-1).astype(np.float64)
        n = d.size
        pair = (d[:, None] - d[None, :]) ** 2
        total += np.broadcast_to(weights, (labels.shape[0],))[b] * (
            pair.sum() / (n * (n - 1)) if n > 1 else 0.0
        )
    return total


def test_mean_pairwise_squared_error():
    np.testing.assert_allclose(
        run(L.mean_pairwise_squared_error(LABELS, PREDS)), pairwise_np(LABELS, PREDS, 1.0), rtol=1e-5
    )
    tf.reset_default_graph()
    labels3, preds3 = RNG.rand(2, 3, 2), RNG.rand(2, 3, 2)
    w = np.array([1.0, 3.0])
    loss = L.mean_pairwise_squared_error(labels3, preds3, w.reshape(2, 1, 1))
    assert tf.get_collection(tf.GraphKeys.LOSSES) == [loss]
    np.testing.assert_allclose(run(loss), pairwise_np(labels3, preds3, w), rtol=1e-5)
    with pytest.raises(ValueError, match="weights can not be broadcast"):
        L.mean_pairwise_squared_error(LABELS, PREDS, np.ones([4]))


# -- argument checks ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, arg",
    [
        (lambda: L.absolute_difference(None, PREDS), "labels"),
        (lambda: L.mean_squared_error(LABELS, None), "predictions"),
        (lambda: L.huber_loss(None, PREDS), "labels"),
        (lambda: L.log_loss(LABELS, None), "predictions"),
        (lambda: L.hinge_loss(LABELS, None), "logits"),
        (lambda: L.sigmoid_cross_entropy(None, PREDS), "multi_class_labels"),
        (lambda: L.softmax_cross_entropy(None, PREDS), "onehot_labels"),
        (lambda: L.sparse_softmax_cross_entropy(None, PREDS), "labels"),
        (lambda: L.mean_pairwise_squared_error(None, PREDS), "labels"),
        (lambda: L.cosine_distance(LABELS, None, axis=1), "predictions"),
    ],
)
def test_none_arguments_are_rejected(call, arg):
    with pytest.raises(ValueError, match=f"Argument `{arg}` must not be None."):
        call()


def test_incompatible_labels_and_predictions():
    with pytest.raises(ValueError, match="incompatible"):
        L.mean_squared_error(np.zeros([4, 3]), np.zeros([4, 2]))
    with pytest.raises(ValueError, match="incompatible"):
        L.huber_loss(np.zeros([3]), np.zeros([4]))


# -- collections -------------------------------------------------------------------------------------


def test_losses_collections_and_scopes():
    mse = L.mean_squared_error(LABELS, PREDS, scope="first")
    assert mse.name.startswith("first/")
    mae = L.absolute_difference(LABELS, PREDS, loss_collection="my_losses")
    untracked = L.hinge_loss(BINARY, PREDS, loss_collection=None)
    assert L.get_losses() == [mse]
    assert L.get_losses(loss_collection="my_losses") == [mae]
    assert untracked not in tf.get_collection(tf.GraphKeys.LOSSES)
    with tf.name_scope("second"):
        xent = L.sigmoid_cross_entropy(BINARY, PREDS)
    assert xent.name.startswith("second/")
    assert L.get_losses() == [mse, xent]
    assert L.get_losses(scope="second") == [xent]
    extra = tf.constant(1.5, name="extra")
    L.add_loss(extra)
    L.add_loss(extra, loss_collection=None)
    assert L.get_losses() == [mse, xent, extra]


def test_regularization_and_total_loss():
    assert L.get_regularization_losses() == []
    zero = L.get_regularization_loss()
    assert zero.dtype == tf.float32 and run(zero) == 0.0
    with pytest.raises(ValueError):
        L.get_total_loss()  # nothing to add up

    with tf.variable_scope("net"):
        v = tf.get_variable(
            "v", initializer=tf.constant([1.0, -2.0]), regularizer=lambda t: tf.reduce_sum(tf.abs(t))
        )
    with tf.variable_scope("other"):
        tf.get_variable(
            "u", initializer=tf.constant([3.0]), regularizer=lambda t: tf.reduce_sum(tf.square(t))
        )
    assert len(L.get_regularization_losses()) == 2
    assert len(L.get_regularization_losses(scope="net")) == 1
    data_loss = L.mean_squared_error(LABELS, PREDS)
    total = L.get_total_loss()
    assert total.op.name == "total_loss"
    data_only = L.get_total_loss(add_regularization_losses=False, name="data_only")
    reg = L.get_regularization_loss()
    assert reg.op.name == "total_regularization_loss"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got_total, got_data, got_reg, got_mse = sess.run([total, data_only, reg, data_loss])
        del v
    mse_np = ((PREDS - LABELS) ** 2).mean()
    np.testing.assert_allclose(got_mse, mse_np, rtol=1e-5)
    np.testing.assert_allclose(got_reg, 3.0 + 9.0, rtol=1e-6)
    np.testing.assert_allclose(got_data, mse_np, rtol=1e-5)
    np.testing.assert_allclose(got_total, mse_np + 12.0, rtol=1e-5)


# -- API ---------------------------------------------------------------------------------------------

_LOSS_KW = ["scope", "loss_collection", "reduction"]
# Argument lists of tf.compat.v1.losses (TensorFlow 2.21), which are TF 1.15's.
TF_SIGNATURES = {
    "absolute_difference": ["labels", "predictions", "weights"] + _LOSS_KW,
    "add_loss": ["loss", "loss_collection"],
    "compute_weighted_loss": ["losses", "weights"] + _LOSS_KW,
    "cosine_distance": ["labels", "predictions", "axis", "weights"] + _LOSS_KW + ["dim"],
    "get_losses": ["scope", "loss_collection"],
    "get_regularization_loss": ["scope", "name"],
    "get_regularization_losses": ["scope"],
    "get_total_loss": ["add_regularization_losses", "name", "scope"],
    "hinge_loss": ["labels", "logits", "weights"] + _LOSS_KW,
    "huber_loss": ["labels", "predictions", "weights", "delta"] + _LOSS_KW,
    "log_loss": ["labels", "predictions", "weights", "epsilon"] + _LOSS_KW,
    "mean_pairwise_squared_error": ["labels", "predictions", "weights", "scope", "loss_collection"],
    "mean_squared_error": ["labels", "predictions", "weights"] + _LOSS_KW,
    "sigmoid_cross_entropy": ["multi_class_labels", "logits", "weights", "label_smoothing"] + _LOSS_KW,
    "softmax_cross_entropy": ["onehot_labels", "logits", "weights", "label_smoothing"] + _LOSS_KW,
    "sparse_softmax_cross_entropy": ["labels", "logits", "weights"] + _LOSS_KW,
}


def test_names_and_argument_lists_match_tensorflow():
    import ferroflow.compat.v1 as v1
    from ferroflow.ops import losses_impl

    assert sorted(losses_impl.__all__) == sorted(list(TF_SIGNATURES) + ["Reduction"])
    for name, args in TF_SIGNATURES.items():
        fn = getattr(L, name)
        assert getattr(v1.losses, name) is fn
        assert list(inspect.signature(fn).parameters) == args, name
    defaults = inspect.signature(L.huber_loss).parameters
    assert defaults["weights"].default == 1.0 and defaults["delta"].default == 1.0
    assert defaults["loss_collection"].default == tf.GraphKeys.LOSSES == "losses"
    assert defaults["reduction"].default == R.SUM_BY_NONZERO_WEIGHTS
    assert inspect.signature(L.log_loss).parameters["epsilon"].default == 1e-7
    assert inspect.signature(L.get_total_loss).parameters["name"].default == "total_loss"
