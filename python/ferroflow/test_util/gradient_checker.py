"""Numerical gradient checking, as TF1's ``tf.compat.v1.test.compute_gradient``.

The *theoretical* Jacobian comes from ``tf.gradients``: ``y`` is differentiated
with a fed ``grad_ys`` that is one-hot in turn at every element of ``y``, which
gives one column per run. The *numerical* Jacobian comes from central
differences, ``(y(x + delta e_i) - y(x - delta e_i)) / (2 delta)``, one row per
element of ``x``. Both have ``x.size`` rows and ``y.size`` columns:
``J[i, j] = d y_j / d x_i``.

Differences from TensorFlow's version, all on paths where TensorFlow fails:

* Without a default session, a temporary ``Session`` on ``x``'s graph is used
  for the whole call (TensorFlow needs a default session).
* When ``y`` does not depend on ``x``, the theoretical Jacobian is zeros
  (TensorFlow fails an ``assert``).
* Non-float ``x``/``y`` raise ``TypeError`` naming the tensor (TensorFlow
  fails an ``assert``). Complex tensors are not supported.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ferroflow.framework import constant_op, dtypes, ops
from ferroflow.framework.indexed_slices import IndexedSlices

__all__ = ["compute_gradient", "compute_gradient_error"]


def _product(shape):
    if isinstance(shape, int):
        return shape
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _extra_feeds(extra_feed_dict, new_feeds):
    if not extra_feed_dict:
        return new_feeds
    r = dict(extra_feed_dict)
    r.update(new_feeds)
    return r


def _np_dtype(dtype):
    """The numpy dtype values of ``dtype`` are fed and fetched as (bfloat16 as float32)."""
    return np.dtype(np.float32) if dtype == dtypes.bfloat16 else np.dtype(dtype.as_numpy_dtype)


def _check_float(t, what):
    d = dtypes.as_dtype(t.dtype).base_dtype
    if not d.is_floating:
        raise TypeError(f"compute_gradient: {what} {t.name} has type {d.name}; only float16, bfloat16, float32 "
                        "and float64 tensors can be checked")


@contextlib.contextmanager
def _session_for(graph):
    """The default session, or a temporary one on ``graph`` for the whole check."""
    from ferroflow.client import session as session_lib

    sess = session_lib.get_default_session()
    if sess is not None:
        if sess.graph is not graph:
            raise ValueError("compute_gradient: the default session runs another graph than the one of x and y")
        yield sess
        return
    with session_lib.Session(graph=graph) as sess:
        yield sess


def _compute_dx_and_dy(x, y, y_shape):
    """``(d y / d x with grad_ys = dy, dy)``; ``dy`` is a constant that is always fed."""
    from ferroflow.ops import array_ops, gradients_impl

    with x.graph.as_default():
        # (A full array rather than shape=: constant() refuses a scalar for an empty shape.)
        dy_orig = constant_op.constant(np.ones(list(y_shape), _np_dtype(y.dtype)), dtype=y.dtype)
        # The identity keeps dy feedable even when dx *is* the grad_ys tensor (y = x + c).
        dy = array_ops.identity(dy_orig)
    (dx,) = gradients_impl.gradients(y, x, dy)
    return dx, dy_orig


def _compute_theoretical_jacobian(sess, x, x_shape, x_data, dy, dy_shape, dx, extra_feed_dict):
    x_size = _product(x_shape)
    row_size = _product(list(x_shape)[1:])  # elements per row of an IndexedSlices gradient
    dy_size = _product(dy_shape)
    jacobian = np.zeros((x_size, dy_size), dtype=_np_dtype(x.dtype))
    dy_data = np.zeros(dy_shape, dtype=_np_dtype(dy.dtype))
    dy_flat = dy_data.reshape(-1)
    if dx is None:
        return jacobian
    for col in range(dy_size):
        dy_flat[col] = 1
        feed = _extra_feeds(extra_feed_dict, {x: x_data, dy: dy_data})
        if isinstance(dx, IndexedSlices):
            indices, values = sess.run([dx.indices, dx.values], feed_dict=feed)
            for i, v in zip(np.asarray(indices).reshape(-1), values):
                jacobian[i * row_size:(i + 1) * row_size, col] += np.asarray(v).reshape(-1)
        else:
            jacobian[:, col] = np.asarray(sess.run(dx, feed_dict=feed)).reshape(-1)
        dy_flat[col] = 0
    if not dy_size:
        # An empty y: the gradient must still have x's shape and be all zeros.
        dense = ops.convert_to_tensor(dx)
        backprop = np.asarray(sess.run(dense, feed_dict=_extra_feeds(extra_feed_dict, {x: x_data, dy: dy_data})))
        if backprop.shape != np.shape(x_data):
            raise ValueError(f"Empty gradient has wrong shape: expected {np.shape(x_data)}, got {backprop.shape}")
        if np.any(backprop):
            raise ValueError("Empty tensor with nonzero gradients")
    return jacobian


def _compute_numeric_jacobian(sess, x, x_shape, x_data, y, y_shape, delta, extra_feed_dict):
    x_size = _product(x_shape)
    y_size = _product(y_shape)
    x_np = _np_dtype(x.dtype)
    x_data = np.asarray(x_data, dtype=x_np)
    scale = np.asarray(2 * delta, dtype=_np_dtype(y.dtype))[()]
    jacobian = np.zeros((x_size, y_size), dtype=x_np)
    for row in range(x_size):
        x_pos = x_data.copy()
        x_neg = x_data.copy()
        x_pos.reshape(-1)[row] += delta
        x_neg.reshape(-1)[row] -= delta
        y_pos = np.asarray(sess.run(y, feed_dict=_extra_feeds(extra_feed_dict, {x: x_pos})))
        y_neg = np.asarray(sess.run(y, feed_dict=_extra_feeds(extra_feed_dict, {x: x_neg})))
        jacobian[row, :] = ((y_pos - y_neg) / scale).reshape(-1)
    return jacobian


def _compute_gradient(sess, x, x_shape, dx, y, y_shape, dy, x_init_value, delta, extra_feed_dict):
    _check_float(x, "x")
    _check_float(y, "y")
    if x_init_value is not None:
        x_data = np.asarray(x_init_value)
        if list(x_shape) != list(x_data.shape):
            raise ValueError(f"x_shape = {list(x_shape)}, init data shape = {list(x_data.shape)}")
    else:
        x_data = np.random.random_sample(list(x_shape)).astype(_np_dtype(x.dtype))
    jacob_t = _compute_theoretical_jacobian(sess, x, x_shape, x_data, dy, y_shape, dx, extra_feed_dict)
    jacob_n = _compute_numeric_jacobian(sess, x, x_shape, x_data, y, y_shape, delta, extra_feed_dict)
    return jacob_t, jacob_n


def _run_init(sess, init_targets):
    if init_targets is None:
        return
    if not isinstance(init_targets, (list, tuple)):
        raise TypeError(f"init_targets must be a list or tuple, got {type(init_targets).__name__}")
    for init in init_targets:
        sess.run(init)


def compute_gradient(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3, init_targets=None,
                     extra_feed_dict=None):
    """The theoretical and numerical Jacobians of ``y`` with respect to ``x``.

    Args:
      x: a tensor, or a list of tensors.
      x_shape: the shape of ``x`` (a list of shapes when ``x`` is a list).
      y: a tensor.
      y_shape: the shape of ``y``.
      x_init_value: the value of ``x`` to differentiate at (a list of arrays when ``x`` is a
        list); random values in [0, 1) when None.
      delta: the central-difference step.
      init_targets: ops to run first (e.g. variable initializers).
      extra_feed_dict: further feeds (other placeholders) for every run.

    Returns:
      ``(theoretical, numerical)``: two arrays of shape ``[x size, y size]`` (a list of such
      pairs when ``x`` is a list).
    """
    extra_feed_dict = extra_feed_dict or {}
    if isinstance(x, list):
        with _session_for(x[0].graph) as sess:
            pairs = [_compute_dx_and_dy(xi, y, y_shape) for xi in x]
            _run_init(sess, init_targets)
            inits = [None] * len(x) if x_init_value is None else x_init_value
            return [
                _compute_gradient(sess, xi, si, dxi, y, y_shape, dyi, vi, delta, extra_feed_dict)
                for xi, si, (dxi, dyi), vi in zip(x, x_shape, pairs, inits)
            ]
    with _session_for(x.graph) as sess:
        _run_init(sess, init_targets)
        dx, dy = _compute_dx_and_dy(x, y, y_shape)
        return _compute_gradient(sess, x, x_shape, dx, y, y_shape, dy, x_init_value, delta, extra_feed_dict)


def _compute_error(grad):
    if isinstance(grad, tuple):
        grad = [grad]
    error = 0
    for j_t, j_n in grad:
        if j_t.size or j_n.size:
            error = np.maximum(error, np.fabs(j_t - j_n).max())
    return error


def compute_gradient_error(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3, init_targets=None,
                           extra_feed_dict=None):
    """The largest absolute difference between the theoretical and numerical Jacobians."""
    grad = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, init_targets,
                            extra_feed_dict=extra_feed_dict)
    return _compute_error(grad)
