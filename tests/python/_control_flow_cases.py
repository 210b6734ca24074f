"""Control-flow graphs (tf.cond, tf.case, tf.switch_case, tf.while_loop, tf.TensorArray, tf.map_fn,
tf.scan, tf.foldl/foldr, tf.nn.dynamic_rnn and bidirectional_dynamic_rnn) shared by the fixture
generator (``tools/make_control_flow_fixtures.py``, run under real TensorFlow) and the golden test
(``test_control_flow_golden.py``, run under ferroflow).

No TensorFlow or ferroflow import here: every ``case_<name>(tf)`` takes the TF1-style module
(``tensorflow.compat.v1`` with v2 behavior disabled, or ``ferroflow``), builds its graph in the
current default graph and returns ``(fetches, feed_dict)``: ``fetches`` maps a plain name to one
tensor, ``feed_dict`` maps placeholders to NumPy arrays drawn from a seeded ``RandomState``.
Variables use ``tf.constant_initializer`` with NumPy arrays, so both frameworks start from the same
values. Fixture files are ``tests/fixtures/control_flow/<name>.npz``, one array per fetch key.
"""

from __future__ import annotations

import numpy as np


def _rng(seed):
    return np.random.RandomState(seed)


def _f32(a):
    return np.asarray(a, dtype=np.float32)


def _var(tf, name, value):
    value = _f32(value)
    return tf.get_variable(
        name, shape=value.shape, dtype=tf.float32, initializer=tf.constant_initializer(value)
    )


def _dense(tf, g):
    """Gradients through ``tf.gather`` may come back as IndexedSlices; fetch them dense."""
    return tf.convert_to_tensor(g)


# -- tf.cond --------------------------------------------------------------------------------------


def _cond_basic(tf, pred_value):
    rng = _rng(0)
    p = tf.placeholder(tf.bool, [], name="p")
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    out = tf.cond(p, lambda: tf.tanh(x) * 2.0, lambda: tf.sigmoid(x) - 1.0)
    return {"out": out}, {p: np.array(pred_value), x: _f32(rng.randn(2, 3))}


def case_cond_true(tf):
    return _cond_basic(tf, True)


def case_cond_false(tf):
    return _cond_basic(tf, False)


def _cond_structure(tf, pred_value):
    """Branches return a nested structure: a tuple holding a dict, a tensor and an int tensor."""
    rng = _rng(1)
    p = tf.placeholder(tf.bool, [], name="p")
    x = tf.placeholder(tf.float32, [4], name="x")

    def true_fn():
        return ({"sum": tf.reduce_sum(x), "scaled": x * 3.0}, tf.concat([x, x], 0), tf.constant(1))

    def false_fn():
        return ({"sum": tf.reduce_sum(x * x), "scaled": x - 1.0}, tf.concat([x * 0.5, -x], 0), tf.constant(2))

    (d, cat, k) = tf.cond(p, true_fn, false_fn)
    fetches = {"sum": d["sum"], "scaled": d["scaled"], "cat": cat, "k": k}
    return fetches, {p: np.array(pred_value), x: _f32(rng.randn(4))}


def case_cond_structure_true(tf):
    return _cond_structure(tf, True)


def case_cond_structure_false(tf):
    return _cond_structure(tf, False)


def _cond_capture(tf, pred_value):
    """Branches read outer tensors (placeholder, derived tensor) and a variable."""
    rng = _rng(2)
    p = tf.placeholder(tf.bool, [], name="p")
    x = tf.placeholder(tf.float32, [3, 4], name="x")
    w = _var(tf, "w", rng.randn(4, 2))
    hidden = tf.matmul(x, w)  # computed outside, captured by both branches
    bias = tf.constant(_f32([0.5, -0.25]))
    out = tf.cond(
        p,
        lambda: tf.tanh(hidden + bias),
        lambda: tf.matmul(tf.sigmoid(x), w) - bias,
    )
    return {"out": out, "hidden": hidden}, {p: np.array(pred_value), x: _f32(rng.randn(3, 4))}


def case_cond_capture_true(tf):
    return _cond_capture(tf, True)


def case_cond_capture_false(tf):
    return _cond_capture(tf, False)


def _cond_grad(tf, pred_value):
    """tf.gradients of a loss through tf.cond w.r.t. a placeholder and variables, for one branch."""
    rng = _rng(3)
    p = tf.placeholder(tf.bool, [], name="p")
    x = tf.placeholder(tf.float32, [3, 4], name="x")
    w = _var(tf, "w", rng.randn(4, 2) * 0.5)
    v = _var(tf, "v", rng.randn(3, 4) * 0.5)  # used only in the false branch
    y = tf.cond(
        p,
        lambda: tf.tanh(tf.matmul(x, w)),
        lambda: tf.sigmoid(tf.matmul(x * v, w)) * 2.0,
    )
    loss = tf.reduce_sum(y * y)
    gx, gw, gv = tf.gradients(loss, [x, w, v])
    fetches = {"loss": loss, "grad_x": gx, "grad_w": gw, "grad_v": gv}
    return fetches, {p: np.array(pred_value), x: _f32(rng.randn(3, 4))}


def case_cond_grad_true(tf):
    return _cond_grad(tf, True)


def case_cond_grad_false(tf):
    return _cond_grad(tf, False)


def case_cond_fn1_fn2(tf):
    """The deprecated ``fn1``/``fn2`` keyword names of TF1's tf.cond."""
    rng = _rng(4)
    x = tf.placeholder(tf.float32, [5], name="x")
    s = tf.reduce_sum(x)
    out_pos = tf.cond(tf.less(s, 100.0), fn1=lambda: x + 1.0, fn2=lambda: x - 1.0)
    out_neg = tf.cond(tf.less(100.0, s), fn1=lambda: x + 1.0, fn2=lambda: x - 1.0)
    return {"taken_true": out_pos, "taken_false": out_neg}, {x: _f32(rng.randn(5))}


def _cond_nested(tf, outer, inner):
    rng = _rng(5)
    p = tf.placeholder(tf.bool, [], name="p")
    q = tf.placeholder(tf.bool, [], name="q")
    x = tf.placeholder(tf.float32, [3], name="x")

    def true_fn():
        return tf.cond(q, lambda: x * 2.0, lambda: x * 3.0) + 1.0

    def false_fn():
        return tf.cond(q, lambda: tf.tanh(x), lambda: tf.reduce_sum(x) + x)

    out = tf.cond(p, true_fn, false_fn)
    loss = tf.reduce_sum(out * out)
    (gx,) = tf.gradients(loss, [x])
    feed = {p: np.array(outer), q: np.array(inner), x: _f32(rng.randn(3))}
    return {"out": out, "grad_x": gx}, feed


def case_cond_nested_tt(tf):
    return _cond_nested(tf, True, True)


def case_cond_nested_tf(tf):
    return _cond_nested(tf, True, False)


def case_cond_nested_ft(tf):
    return _cond_nested(tf, False, True)


def case_cond_nested_ff(tf):
    return _cond_nested(tf, False, False)


def _cond_assign(tf, pred_value):
    """The taken branch updates a variable under control_dependencies and returns the new value;
    the other branch only reads it. One Session.run: the assign runs only when its branch does."""
    p = tf.placeholder(tf.bool, [], name="p")
    counter = _var(tf, "counter", 3.0)

    def true_fn():
        upd = tf.assign_add(counter, 2.0)
        with tf.control_dependencies([upd]):
            return tf.identity(counter.read_value() * 1.0)

    def false_fn():
        return counter.read_value() * 10.0

    out = tf.cond(p, true_fn, false_fn)
    return {"out": out}, {p: np.array(pred_value)}


def case_cond_assign_true(tf):
    return _cond_assign(tf, True)


def case_cond_assign_false(tf):
    return _cond_assign(tf, False)


def case_cond_tensor_pred(tf):
    """Predicate computed in the graph (tf.less of a reduction), not fed; gradient through it."""
    rng = _rng(6)
    x = tf.placeholder(tf.float32, [2, 2], name="x")
    big = tf.cond(tf.less(tf.reduce_sum(x), -100.0), lambda: x * 0.0, lambda: tf.matmul(x, x))
    small = tf.cond(tf.less(tf.reduce_sum(x), 100.0), lambda: x * x * x, lambda: x)
    (g,) = tf.gradients(tf.reduce_sum(big) + tf.reduce_sum(small), [x])
    return {"big": big, "small": small, "grad_x": g}, {x: _f32(rng.randn(2, 2))}


# -- tf.case --------------------------------------------------------------------------------------


def _case_list(tf, exclusive, value):
    x = tf.placeholder(tf.float32, [], name="x")
    base = tf.constant(_f32([1.0, 2.0, 3.0]))
    pairs = [
        (tf.less(x, 0.0), lambda: base * -1.0),
        (tf.less(x, 1.0), lambda: base + x),
        (tf.less(x, 2.0), lambda: base * x),
    ]
    out = tf.case(pairs, default=lambda: tf.tanh(base) * x, exclusive=exclusive)
    return {"out": out}, {x: np.array(value, np.float32)}


def case_case_first_of_several(tf):
    # x = -0.5: all three predicates hold; exclusive=False takes the first.
    return _case_list(tf, False, -0.5)


def case_case_middle(tf):
    # x = 0.5: the second and third hold; the second wins.
    return _case_list(tf, False, 0.5)


def case_case_default(tf):
    return _case_list(tf, False, 3.0)


def case_case_exclusive(tf):
    """exclusive=True with exactly one predicate true."""
    x = tf.placeholder(tf.float32, [], name="x")
    v = tf.placeholder(tf.float32, [4], name="v")
    pairs = [
        (tf.less(x, 0.0), lambda: v * 2.0),
        (tf.logical_and(tf.less(0.0, x), tf.less(x, 1.0)), lambda: v + 10.0),
        (tf.less(5.0, x), lambda: -v),
    ]
    out = tf.case(pairs, default=lambda: v * 0.0, exclusive=True)
    out_default = tf.case(pairs, default=lambda: tf.reduce_sum(v) + v, exclusive=True)
    return {"out": out, "out_default_unused": out_default}, {
        x: np.array(0.25, np.float32),
        v: _f32(_rng(7).randn(4)),
    }


def case_case_exclusive_default(tf):
    """exclusive=True with no predicate true: the default runs."""
    x = tf.placeholder(tf.float32, [], name="x")
    pairs = [(tf.less(x, 0.0), lambda: x * 2.0), (tf.less(10.0, x), lambda: x * 3.0)]
    out = tf.case(pairs, default=lambda: x + 0.5, exclusive=True)
    return {"out": out}, {x: np.array(4.0, np.float32)}


def case_case_dict(tf):
    """The dict form ``{pred: fn}`` with a default, returning a tuple."""
    rng = _rng(8)
    i = tf.placeholder(tf.int32, [], name="i")
    x = tf.placeholder(tf.float32, [3], name="x")
    branches = {
        tf.equal(i, 0): lambda: (x + 1.0, tf.reduce_sum(x)),
        tf.equal(i, 1): lambda: (x * x, tf.reduce_sum(x * 2.0)),
    }
    a, b = tf.case(branches, default=lambda: (x - 1.0, tf.constant(0.0)), exclusive=True)
    return {"a": a, "b": b}, {i: np.array(1, np.int32), x: _f32(rng.randn(3))}


def case_case_grad(tf):
    """tf.gradients through tf.case w.r.t. a variable."""
    rng = _rng(9)
    x = tf.placeholder(tf.float32, [], name="x")
    w = _var(tf, "w", rng.randn(3))
    pairs = [
        (tf.less(x, 0.0), lambda: tf.reduce_sum(w * w)),
        (tf.less(x, 1.0), lambda: tf.reduce_sum(tf.tanh(w) * x)),
    ]
    out = tf.case(pairs, default=lambda: tf.reduce_sum(w))
    (gw,) = tf.gradients(out, [w])
    return {"out": out, "grad_w": gw}, {x: np.array(0.75, np.float32)}


# -- tf.switch_case ---------------------------------------------------------------------------------


def _switch_case(tf, index):
    rng = _rng(10)
    i = tf.placeholder(tf.int32, [], name="i")
    x = tf.placeholder(tf.float32, [2, 2], name="x")
    fns = [lambda: x + 1.0, lambda: tf.matmul(x, x), lambda: tf.tanh(x)]
    out = tf.switch_case(i, fns, default=lambda: x * 0.0 - 1.0)
    # Dict form, no default: an index out of range runs the last branch.
    out_dict = tf.switch_case(i, {1: lambda: x * 3.0, 0: lambda: x * 2.0})
    return {"out": out, "out_dict": out_dict}, {i: np.array(index, np.int32), x: _f32(rng.randn(2, 2))}


def case_switch_case_0(tf):
    return _switch_case(tf, 0)


def case_switch_case_1(tf):
    return _switch_case(tf, 1)


def case_switch_case_2(tf):
    return _switch_case(tf, 2)


def case_switch_case_out_of_range(tf):
    return _switch_case(tf, 7)


# -- tf.while_loop ----------------------------------------------------------------------------------


def case_while_counter(tf):
    i0 = tf.constant(0)
    acc0 = tf.constant(0.0)

    def body(i, acc):
        f = tf.cast(i, tf.float32)
        return i + 1, acc + f * f

    i, acc = tf.while_loop(lambda i, acc: tf.less(i, 10), body, [i0, acc0])
    return {"i": i, "acc": acc}, {}


def case_while_fed_limit(tf):
    """Trip count from a placeholder; state is a vector."""
    n = tf.placeholder(tf.int32, [], name="n")
    x = tf.placeholder(tf.float32, [3], name="x")
    _, y = tf.while_loop(lambda k, v: tf.less(k, n), lambda k, v: (k + 1, v * 0.5 + 1.0), [tf.constant(0), x])
    return {"y": y}, {n: np.array(6, np.int32), x: _f32([4.0, -2.0, 10.0])}


def case_while_nested_structure(tf):
    """Loop vars as a nested structure: a tuple (counter, pair) and a dict."""
    rng = _rng(11)
    x = tf.placeholder(tf.float32, [3], name="x")
    loop_vars = (
        (tf.constant(0), (x, tf.constant(1.0))),
        {"sum": tf.zeros([3]), "prod": tf.ones([3])},
    )

    def cond(state, acc):
        return tf.less(state[0], 4)

    def body(state, acc):
        i, (v, scale) = state
        v2 = v * 0.5 + scale
        return (i + 1, (v2, scale * 2.0)), {"sum": acc["sum"] + v2, "prod": acc["prod"] * v2}

    (i, (v, scale)), acc = tf.while_loop(cond, body, loop_vars)
    fetches = {"i": i, "v": v, "scale": scale, "sum": acc["sum"], "prod": acc["prod"]}
    return fetches, {x: _f32(rng.randn(3))}


def case_while_shape_invariant_concat(tf):
    """A loop var that grows along axis 0 (tf.concat), declared with shape_invariants."""
    rng = _rng(12)
    row = tf.placeholder(tf.float32, [1, 3], name="row")
    i0 = tf.constant(0)
    rows0 = tf.zeros([0, 3])

    def body(i, rows):
        new = row * tf.cast(i + 1, tf.float32)
        return i + 1, tf.concat([rows, new], 0)

    i, rows = tf.while_loop(
        lambda i, rows: tf.less(i, 4),
        body,
        [i0, rows0],
        shape_invariants=[i0.get_shape(), tf.TensorShape([None, 3])],
    )
    return {"i": i, "rows": rows, "total": tf.reduce_sum(rows)}, {row: _f32(rng.randn(1, 3))}


def case_while_maximum_iterations(tf):
    """maximum_iterations stops a loop whose condition alone would run 1000 times.

    Loop vars are tuples here because the bodies return tuples: with maximum_iterations, TF1 checks
    the sequence type of the loop vars below the top level (list vs tuple is a TypeError), which it
    does not without it."""
    x = tf.placeholder(tf.float32, [], name="x")
    i, y = tf.while_loop(
        lambda i, y: tf.less(i, 1000),
        lambda i, y: (i + 1, y * 1.5 + 1.0),
        (tf.constant(0), x),
        maximum_iterations=7,
    )
    # And a loop the condition stops before maximum_iterations does.
    j, z = tf.while_loop(
        lambda j, z: tf.less(j, 3), lambda j, z: (j + 1, z + 2.0), (tf.constant(0), x), maximum_iterations=50
    )
    return {"i": i, "y": y, "j": j, "z": z}, {x: np.array(0.5, np.float32)}


def case_while_maximum_iterations_grad(tf):
    """Gradient through a loop cut short by maximum_iterations."""
    x = tf.placeholder(tf.float32, [2], name="x")
    _, y = tf.while_loop(
        lambda i, y: tf.less(i, 100),
        lambda i, y: (i + 1, tf.tanh(y) * 1.5 + 0.1),
        (tf.constant(0), x),
        maximum_iterations=4,
    )
    (gx,) = tf.gradients(tf.reduce_sum(y), [x])
    return {"y": y, "grad_x": gx}, {x: _f32([0.3, -1.2])}


def case_while_cond_in_body(tf):
    """A tf.cond inside the loop body, its predicate depending on the loop state."""
    x = tf.placeholder(tf.float32, [], name="x")

    def body(i, v, hist):
        v2 = tf.cond(tf.less(v, 10.0), lambda: v * 2.0 + 1.0, lambda: v - 7.0)
        return i + 1, v2, hist + v2

    i, v, hist = tf.while_loop(lambda i, v, h: tf.less(i, 9), body, [tf.constant(0), x, tf.constant(0.0)])
    (gx,) = tf.gradients(hist, [x])
    return {"i": i, "v": v, "hist": hist, "grad_x": gx}, {x: np.array(1.25, np.float32)}


def case_while_nested(tf):
    """A while_loop inside a while_loop; the inner trip count depends on the outer counter."""
    x = tf.placeholder(tf.float32, [2], name="x")

    def outer_body(i, acc):
        def inner_body(j, a):
            return j + 1, a * 0.9 + tf.cast(i * j, tf.float32)

        _, acc2 = tf.while_loop(lambda j, a: tf.less(j, i + 1), inner_body, [tf.constant(0), acc])
        return i + 1, acc2 + 1.0

    i, acc = tf.while_loop(lambda i, a: tf.less(i, 4), outer_body, [tf.constant(0), x])
    (gx,) = tf.gradients(tf.reduce_sum(acc * acc), [x])
    return {"i": i, "acc": acc, "grad_x": gx}, {x: _f32([0.5, -1.5])}


def case_while_rnn(tf):
    """A hand-written RNN: h = tanh(x_t W + h U + b) over T=5 steps, x_t = tf.gather(X, i);
    gradients of a loss on the final state and the stacked states w.r.t. W, U, b and X."""
    rng = _rng(13)
    T, B, D, H = 5, 4, 3, 6
    X = tf.placeholder(tf.float32, [T, B, D], name="X")
    W = _var(tf, "W", rng.randn(D, H) * 0.4)
    U = _var(tf, "U", rng.randn(H, H) * 0.4)
    b = _var(tf, "b", rng.randn(H) * 0.1)
    h0 = tf.zeros([B, H])
    states0 = tf.zeros([0, B, H])

    def body(i, h, states):
        x_t = tf.gather(X, i)
        h_new = tf.tanh(tf.matmul(x_t, W) + tf.matmul(h, U) + b)
        return i + 1, h_new, tf.concat([states, tf.expand_dims(h_new, 0)], 0)

    _, h, states = tf.while_loop(
        lambda i, h, s: tf.less(i, T),
        body,
        [tf.constant(0), h0, states0],
        shape_invariants=[tf.TensorShape([]), tf.TensorShape([B, H]), tf.TensorShape([None, B, H])],
    )
    target = tf.constant(_f32(rng.randn(B, H)))
    loss = tf.reduce_sum((h - target) * (h - target)) + 0.1 * tf.reduce_sum(states * states)
    gW, gU, gb, gX = tf.gradients(loss, [W, U, b, X])
    fetches = {
        "h": h,
        "states": states,
        "loss": loss,
        "grad_W": gW,
        "grad_U": gU,
        "grad_b": gb,
        "grad_X": _dense(tf, gX),
    }
    return fetches, {X: _f32(rng.randn(T, B, D))}


def case_while_pow_grad(tf):
    """x**n by repeated multiplication in a while loop; d/dx = n * x**(n-1)."""
    x = tf.placeholder(tf.float32, [4], name="x")
    n = 5
    _, r = tf.while_loop(
        lambda k, r: tf.less(k, n), lambda k, r: (k + 1, r * x), [tf.constant(0), tf.ones([4])]
    )
    (gx,) = tf.gradients(r, [x])
    # No second order here: TF1 control flow raises TypeError("Second-order gradient for while
    # loops not supported.") from the gradient of Exit.
    return {"pow": r, "grad_x": gx}, {x: _f32([0.5, -1.5, 2.0, 1.1])}


def case_while_grad_variables(tf):
    """Gradient w.r.t. variables captured by the loop body (not loop vars)."""
    rng = _rng(14)
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    w = _var(tf, "w", rng.randn(3, 3) * 0.5)
    c = _var(tf, "c", rng.randn(3) * 0.1)
    _, y = tf.while_loop(
        lambda i, y: tf.less(i, 3), lambda i, y: (i + 1, tf.sigmoid(tf.matmul(y, w) + c)), [tf.constant(0), x]
    )
    loss = tf.reduce_sum(y * tf.constant(_f32(rng.randn(2, 3))))
    gw, gc, gx = tf.gradients(loss, [w, c, x])
    return {"y": y, "loss": loss, "grad_w": gw, "grad_c": gc, "grad_x": gx}, {x: _f32(rng.randn(2, 3))}


def case_while_return_same_structure(tf):
    """One loop var: return_same_structure=True keeps the list, the TF1 default unpacks it."""
    x = tf.placeholder(tf.float32, [2], name="x")
    kept = tf.while_loop(
        lambda v: tf.less(tf.reduce_sum(v), 50.0), lambda v: [v * 2.0], [x], return_same_structure=True
    )
    unpacked = tf.while_loop(lambda v: tf.less(tf.reduce_sum(v), 50.0), lambda v: v * 2.0, [x])
    single = tf.while_loop(lambda v: tf.less(v, 100), lambda v: v + 7, [tf.constant(1)])
    return {"kept0": kept[0], "unpacked": unpacked, "single": single}, {x: _f32([1.0, 2.0])}


def case_while_python_numbers(tf):
    """Loop vars given as Python int and float become int32 and float32 tensors."""
    i, s, p = tf.while_loop(lambda i, s, p: i < 6, lambda i, s, p: (i + 1, s + 1.5, p * 2), [0, 0.0, 1])
    return {"i": i, "s": s, "p": p}, {}


def case_while_parallel_iterations_swap(tf):
    """parallel_iterations=1, swap_memory=True, back_prop=False: options that change only how TF runs it."""
    x = tf.placeholder(tf.float32, [3], name="x")
    _, y = tf.while_loop(
        lambda i, y: tf.less(i, 5),
        lambda i, y: (i + 1, y + tf.reduce_sum(y) * 0.1),
        [tf.constant(0), x],
        parallel_iterations=1,
        swap_memory=True,
        back_prop=False,
    )
    return {"y": y}, {x: _f32([1.0, 2.0, 3.0])}


def case_while_zero_iterations(tf):
    """The condition is false at once: outputs equal the inputs, gradient is the identity."""
    x = tf.placeholder(tf.float32, [3], name="x")
    _, y = tf.while_loop(lambda i, y: tf.less(i, 0), lambda i, y: (i + 1, y * 3.0), [tf.constant(0), x])
    (gx,) = tf.gradients(tf.reduce_sum(y * y), [x])
    return {"y": y, "grad_x": gx}, {x: _f32([1.0, -2.0, 0.5])}


# -- tf.TensorArray ---------------------------------------------------------------------------------
#
# TF1's TensorArray clears an element when it is read (clear_after_read=True): a second read of the
# same index, or a stack after a read, is an InvalidArgumentError there. Cases that read an element
# more than once, or read and then stack, use clear_after_read=False.


def case_ta_while_write_read(tf):
    """Writes in one while_loop, reads back in another; stack and size of the written array."""
    rng = _rng(100)
    x = tf.placeholder(tf.float32, [5, 3], name="x")
    ta0 = tf.TensorArray(tf.float32, size=5, clear_after_read=False)

    def write_body(i, ta):
        row = tf.gather(x, i) * tf.cast(i + 1, tf.float32)
        return i + 1, ta.write(i, tf.tanh(row))

    _, ta = tf.while_loop(lambda i, ta: tf.less(i, 5), write_body, [tf.constant(0), ta0])

    def read_body(i, acc):
        return i + 1, acc * 0.5 + ta.read(4 - i)

    _, acc = tf.while_loop(lambda i, acc: tf.less(i, 5), read_body, [tf.constant(0), tf.zeros([3])])
    fetches = {"stacked": ta.stack(), "acc": acc, "size": ta.size(), "read_2": ta.read(2)}
    return fetches, {x: _f32(rng.randn(5, 3))}


def case_ta_unstack_stack(tf):
    """unstack a [T, B, D] tensor, read each step in a loop, write and stack the results."""
    rng = _rng(101)
    x = tf.placeholder(tf.float32, [4, 2, 3], name="x")
    ta_in = tf.TensorArray(tf.float32, size=4).unstack(x)
    out0 = tf.TensorArray(tf.float32, size=4)

    def body(i, h, out):
        h2 = tf.tanh(ta_in.read(i) + h * 0.5)
        return i + 1, h2, out.write(i, h2 * 2.0)

    _, h, out = tf.while_loop(lambda i, h, o: tf.less(i, 4), body, [tf.constant(0), tf.zeros([2, 3]), out0])
    # Size taken from the unstacked tensor's dynamic shape, read outside any loop.
    y = tf.placeholder(tf.float32, [None, 3], name="y")
    ta_y = tf.TensorArray(tf.float32, size=tf.shape(y)[0], clear_after_read=False).unstack(y)
    fetches = {
        "h": h,
        "stacked": out.stack(),
        "y_read_1": ta_y.read(1),
        "y_restacked": ta_y.stack(),
        "y_size": ta_y.size(),
    }
    return fetches, {x: _f32(rng.randn(4, 2, 3)), y: _f32(rng.randn(3, 3))}


def case_ta_gather_scatter(tf):
    """scatter rows to a permutation of indices, gather a subset back, stack all."""
    rng = _rng(102)
    x = tf.placeholder(tf.float32, [5, 2], name="x")
    ta = tf.TensorArray(tf.float32, size=5, clear_after_read=False).scatter([3, 0, 4, 1, 2], x)
    fetches = {
        "gathered": ta.gather([4, 0, 2]),
        "gathered_repeat": ta.gather(tf.constant([1, 1, 3])),
        "stacked": ta.stack(),
        "size": ta.size(),
    }
    return fetches, {x: _f32(rng.randn(5, 2))}


def case_ta_concat_split(tf):
    """split along axis 0 with lengths, read a piece, concat back; concat of written pieces of
    different lengths. Pieces of different lengths need infer_shape=False: with the default TF
    raises InvalidArgumentError at run time ("Could not write to TensorArray index 1 because the
    value shape is [3,2] which is incompatible with the TensorArray's inferred element shape:
    [1,2] (consider setting infer_shape=False).")."""
    rng = _rng(103)
    x = tf.placeholder(tf.float32, [6, 2], name="x")
    ta = tf.TensorArray(tf.float32, size=3, clear_after_read=False, infer_shape=False).split(x, [1, 3, 2])
    halves = tf.TensorArray(tf.float32, size=2, clear_after_read=False).split(x, tf.constant([3, 3], tf.int64))
    pieces = tf.TensorArray(tf.float32, size=3, infer_shape=False)
    pieces = pieces.write(0, tf.ones([2, 2])).write(1, x[:1] * 3.0).write(2, -x[3:])
    fetches = {
        "concat": ta.concat(),
        "piece_1": ta.read(1),
        "size": ta.size(),
        "pieces_concat": pieces.concat(),
        "halves_stack": halves.stack(),
        "halves_concat": halves.concat(),
    }
    return fetches, {x: _f32(rng.randn(6, 2))}


def case_ta_dynamic_size(tf):
    """dynamic_size=True starting at size 0, grown by writes in a loop with a fed trip count."""
    n = tf.placeholder(tf.int32, [], name="n")
    x = tf.placeholder(tf.float32, [2], name="x")
    ta0 = tf.TensorArray(tf.float32, size=0, dynamic_size=True)

    def body(i, v, ta):
        v2 = v * 1.5 - 0.25
        return i + 1, v2, ta.write(i, v2)

    _, v, ta = tf.while_loop(lambda i, v, ta: tf.less(i, n), body, [tf.constant(0), x, ta0])
    # A dynamic array that starts non-empty and is grown past its initial size outside a loop.
    grown = tf.TensorArray(tf.float32, size=1, dynamic_size=True).write(0, 1.0).write(1, 2.0).write(2, 3.0)
    fetches = {"v": v, "stacked": ta.stack(), "size": ta.size(), "grown": grown.stack(), "grown_size": grown.size()}
    return fetches, {n: np.array(6, np.int32), x: _f32([0.5, -1.0])}


def case_ta_unwritten_zeros(tf):
    """Elements never written read as zeros once the element shape is known (given, or taken from
    another write); a dynamic array grown past unwritten indices stacks zeros there."""
    part = tf.TensorArray(tf.float32, size=3).write(1, [1.0, 2.0])
    known = tf.TensorArray(tf.float32, size=3, element_shape=[2])
    grown = tf.TensorArray(tf.float32, size=0, dynamic_size=True).write(3, [5.0])
    fetches = {
        "partial_stack": part.stack(),
        "known_read": known.read(2),
        "grown_stack": grown.stack(),
        "grown_size": grown.size(),
    }
    return fetches, {}


def case_ta_element_shape(tf):
    """element_shape given: empty arrays stack and concat to the right shapes; an array with a
    partly known element shape ([None, 3]) concatenates rows of different counts."""
    rng = _rng(104)
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    empty = tf.TensorArray(tf.float32, size=0, element_shape=[2, 3])
    empty_rows = tf.TensorArray(tf.float32, size=0, element_shape=tf.TensorShape([None, 3]))
    rows = tf.TensorArray(tf.float32, size=2, element_shape=tf.TensorShape([None, 3]), infer_shape=False)
    rows = rows.write(0, x).write(1, x[:2] * 2.0)
    full = tf.TensorArray(tf.float32, size=2, element_shape=[3]).write(0, x[0]).write(1, x[1] + 1.0)
    fetches = {
        "empty_stack": empty.stack(),
        "empty_rows_concat": empty_rows.concat(),
        "rows_concat": rows.concat(),
        "full_stack": full.stack(),
    }
    return fetches, {x: _f32(rng.randn(4, 3))}


def case_ta_int32(tf):
    """An int32 TensorArray written in a loop (a counter sequence) and stacked."""
    ta0 = tf.TensorArray(tf.int32, size=6)
    _, ta = tf.while_loop(
        lambda i, ta: tf.less(i, 6), lambda i, ta: (i + 1, ta.write(i, i * i - 3)), [tf.constant(0), ta0]
    )
    return {"stacked": ta.stack(), "size": ta.size()}, {}


def _ta_cond(tf, pred_value):
    """A TensorArray returned from both branches of tf.cond (written differently), then stacked."""
    rng = _rng(105)
    p = tf.placeholder(tf.bool, [], name="p")
    x = tf.placeholder(tf.float32, [3, 2], name="x")
    ta = tf.TensorArray(tf.float32, size=3)

    def true_fn():
        return ta.write(0, x[2]).write(1, x[1] * 2.0).write(2, x[0] + 1.0)

    def false_fn():
        return ta.unstack(tf.tanh(x))

    out = tf.cond(p, true_fn, false_fn)
    stacked = out.stack()
    (gx,) = tf.gradients(tf.reduce_sum(stacked * stacked), [x])
    return {"stacked": stacked, "grad_x": gx}, {p: np.array(pred_value), x: _f32(rng.randn(3, 2))}


def case_ta_cond_true(tf):
    return _ta_cond(tf, True)


def case_ta_cond_false(tf):
    return _ta_cond(tf, False)


def case_ta_grad_write_read(tf):
    """Gradients through write and read: in a while_loop (write x_i W, read back in reverse order)
    and outside one, w.r.t. the fed tensor and a captured variable."""
    rng = _rng(106)
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    w = _var(tf, "w", rng.randn(3, 3) * 0.5)
    ta0 = tf.TensorArray(tf.float32, size=4)

    def write_body(i, ta):
        row = tf.expand_dims(tf.gather(x, i), 0)
        return i + 1, ta.write(i, tf.tanh(tf.matmul(row, w))[0])

    _, ta = tf.while_loop(lambda i, ta: tf.less(i, 4), write_body, [tf.constant(0), ta0])

    def read_body(i, acc):
        return i + 1, acc * 0.7 + ta.read(3 - i) * tf.cast(i + 1, tf.float32)

    _, acc = tf.while_loop(lambda i, acc: tf.less(i, 4), read_body, [tf.constant(0), tf.zeros([3])])
    # Straight-line writes and reads.
    a = tf.reduce_sum(x, 0)
    small = tf.TensorArray(tf.float32, size=2).write(0, a * w[0]).write(1, tf.sigmoid(a))
    direct = small.read(0) * small.read(1)
    loss = tf.reduce_sum(acc * acc) + tf.reduce_sum(direct)
    gx, gw = tf.gradients(loss, [x, w])
    return {"acc": acc, "direct": direct, "loss": loss, "grad_x": gx, "grad_w": gw}, {x: _f32(rng.randn(4, 3))}


def case_ta_grad_stack_unstack(tf):
    """Gradients through unstack (of the fed tensor), loop reads/writes and stack."""
    rng = _rng(107)
    x = tf.placeholder(tf.float32, [5, 2, 3], name="x")
    w = _var(tf, "w", rng.randn(3, 3) * 0.5)
    ta_in = tf.TensorArray(tf.float32, size=5).unstack(x)
    out0 = tf.TensorArray(tf.float32, size=5)

    def body(i, h, out):
        h2 = tf.tanh(tf.matmul(ta_in.read(i) + h, w))
        return i + 1, h2, out.write(i, h2)

    _, h, out = tf.while_loop(lambda i, h, o: tf.less(i, 5), body, [tf.constant(0), tf.zeros([2, 3]), out0])
    stacked = out.stack()
    target = tf.constant(_f32(rng.randn(5, 2, 3)))
    loss = tf.reduce_sum(stacked * target) + tf.reduce_sum(h * h)
    gx, gw = tf.gradients(loss, [x, w])
    return {"stacked": stacked, "loss": loss, "grad_x": gx, "grad_w": gw}, {x: _f32(rng.randn(5, 2, 3))}


def case_ta_grad_gather_scatter(tf):
    """Gradients through scatter and gather; rows scattered but never gathered get zero gradient."""
    rng = _rng(108)
    x = tf.placeholder(tf.float32, [5, 3], name="x")
    w = _var(tf, "w", rng.randn(3) * 0.5 + 1.0)
    ta = tf.TensorArray(tf.float32, size=5).scatter([4, 0, 2, 1, 3], tf.tanh(x * w))
    g = ta.gather([0, 2, 4])
    loss = tf.reduce_sum(g * tf.constant(_f32(rng.randn(3, 3))))
    gx, gw = tf.gradients(loss, [x, w])
    return {"gathered": g, "loss": loss, "grad_x": gx, "grad_w": gw}, {x: _f32(rng.randn(5, 3))}


def case_ta_grad_concat_split(tf):
    """Gradients through split, per-piece loop writes of different lengths, and concat."""
    rng = _rng(109)
    x = tf.placeholder(tf.float32, [6, 2], name="x")
    w = _var(tf, "w", rng.randn(2, 2) * 0.5)
    ta_in = tf.TensorArray(tf.float32, size=3, infer_shape=False).split(tf.matmul(x, w), [2, 1, 3])
    out0 = tf.TensorArray(tf.float32, size=3, infer_shape=False)

    def body(i, out):
        piece = ta_in.read(i)
        return i + 1, out.write(i, tf.sigmoid(piece) * tf.cast(i + 1, tf.float32))

    _, out = tf.while_loop(lambda i, o: tf.less(i, 3), body, [tf.constant(0), out0])
    cat = out.concat()
    loss = tf.reduce_sum(cat * tf.constant(_f32(rng.randn(6, 2))))
    gx, gw = tf.gradients(loss, [x, w])
    return {"concat": cat, "loss": loss, "grad_x": gx, "grad_w": gw}, {x: _f32(rng.randn(6, 2))}


# -- tf.map_fn --------------------------------------------------------------------------------------


def case_map_fn_single(tf):
    rng = _rng(110)
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    out = tf.map_fn(lambda r: r * 2.0 + tf.reduce_sum(r * r), x)
    # Unknown leading dimension.
    y = tf.placeholder(tf.float32, [None, 2], name="y")
    out_y = tf.map_fn(lambda r: tf.reverse(r, [0]) - 1.0, y)
    return {"out": out, "out_y": out_y}, {x: _f32(rng.randn(4, 3)), y: _f32(rng.randn(5, 2))}


def case_map_fn_nested(tf):
    """Nested elems (a tuple holding a pair) mapped to a tuple of results of different shapes."""
    rng = _rng(111)
    a = tf.placeholder(tf.float32, [4, 3], name="a")
    b = tf.placeholder(tf.float32, [4], name="b")
    c = tf.placeholder(tf.float32, [4, 2], name="c")

    def fn(elem):
        ra, (rb, rc) = elem
        return ra * rb, tf.reduce_sum(ra) + tf.reduce_sum(rc)

    prod, total = tf.map_fn(fn, (a, (b, c)), dtype=(tf.float32, tf.float32))
    feed = {a: _f32(rng.randn(4, 3)), b: _f32(rng.randn(4)), c: _f32(rng.randn(4, 2))}
    return {"prod": prod, "total": total}, feed


def case_map_fn_dtype(tf):
    """Output dtypes different from the elems': float elems to int32, int elems to float, and a
    tuple of (int32, float32) results from a single tensor."""
    rng = _rng(112)
    x = tf.placeholder(tf.float32, [5, 3], name="x")
    k = tf.placeholder(tf.int32, [4], name="k")
    argmax = tf.map_fn(lambda r: tf.cast(tf.argmax(r), tf.int32), x, dtype=tf.int32)
    halves = tf.map_fn(lambda v: tf.cast(v, tf.float32) * 0.5, k, dtype=tf.float32)
    count, norm = tf.map_fn(
        lambda r: (tf.reduce_sum(tf.cast(tf.greater(r, 0.0), tf.int32)), tf.sqrt(tf.reduce_sum(r * r))),
        x,
        dtype=(tf.int32, tf.float32),
    )
    fetches = {"argmax": argmax, "halves": halves, "count": count, "norm": norm}
    return fetches, {x: _f32(rng.randn(5, 3)), k: np.array([3, -2, 7, 0], np.int32)}


def case_map_fn_grad(tf):
    """Gradient through map_fn w.r.t. the elems and a variable captured by fn."""
    rng = _rng(113)
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    w = _var(tf, "w", rng.randn(3, 2) * 0.5)
    out = tf.map_fn(lambda r: tf.tanh(tf.matmul(tf.expand_dims(r, 0), w))[0] * tf.reduce_sum(r), x)
    loss = tf.reduce_sum(out * tf.constant(_f32(rng.randn(4, 2))))
    gx, gw = tf.gradients(loss, [x, w])
    return {"out": out, "loss": loss, "grad_x": gx, "grad_w": gw}, {x: _f32(rng.randn(4, 3))}


# -- tf.scan ----------------------------------------------------------------------------------------


def case_scan_no_initializer(tf):
    """Without an initializer the first element is the first accumulator (and the first output)."""
    rng = _rng(114)
    x = tf.placeholder(tf.float32, [5, 3], name="x")
    out = tf.scan(lambda acc, e: acc * 0.5 + e, x)
    cumsum = tf.scan(lambda acc, e: acc + e, tf.constant([1, 2, 3, 4]))
    return {"out": out, "cumsum": cumsum}, {x: _f32(rng.randn(5, 3))}


def case_scan_initializer(tf):
    """An initializer of a different shape than the elements: acc [2] from elems [5, 3]."""
    rng = _rng(115)
    x = tf.placeholder(tf.float32, [5, 3], name="x")
    init = tf.constant(_f32([1.0, -1.0]))
    out = tf.scan(lambda acc, e: tf.tanh(acc + tf.reduce_sum(e)) * tf.stack([e[0], e[1]]), x, initializer=init)
    return {"out": out}, {x: _f32(rng.randn(5, 3))}


def case_scan_reverse(tf):
    rng = _rng(116)
    x = tf.placeholder(tf.float32, [5, 2], name="x")
    rev = tf.scan(lambda acc, e: acc * 0.9 + e, x, reverse=True)
    rev_init = tf.scan(lambda acc, e: acc * e + 1.0, x, initializer=tf.ones([2]), reverse=True)
    return {"rev": rev, "rev_init": rev_init}, {x: _f32(rng.randn(5, 2))}


def case_scan_nested(tf):
    """Nested elems and a nested accumulator (a pair of tensors of different shapes)."""
    rng = _rng(117)
    a = tf.placeholder(tf.float32, [4, 3], name="a")
    b = tf.placeholder(tf.float32, [4], name="b")

    def fn(acc, elem):
        s, m = acc
        ea, eb = elem
        return s + ea * eb, tf.maximum(m, tf.reduce_max(ea) * eb)

    s, m = tf.scan(fn, (a, b), initializer=(tf.zeros([3]), tf.constant(-10.0)))
    return {"s": s, "m": m}, {a: _f32(rng.randn(4, 3)), b: _f32(rng.randn(4))}


def case_scan_grad(tf):
    """Gradient through scan w.r.t. elems, initializer and a captured variable; reverse too."""
    rng = _rng(118)
    x = tf.placeholder(tf.float32, [5, 3], name="x")
    h0 = tf.placeholder(tf.float32, [3], name="h0")
    w = _var(tf, "w", rng.randn(3, 3) * 0.5)

    def step(h, e):
        return tf.tanh(tf.matmul(tf.expand_dims(h, 0), w)[0] + e)

    fwd = tf.scan(step, x, initializer=h0)
    bwd = tf.scan(lambda acc, e: acc * tf.sigmoid(e) + e, x, reverse=True)
    loss = tf.reduce_sum(fwd * tf.constant(_f32(rng.randn(5, 3)))) + tf.reduce_sum(bwd * bwd)
    gx, gh, gw = tf.gradients(loss, [x, h0, w])
    fetches = {"fwd": fwd, "bwd": bwd, "loss": loss, "grad_x": gx, "grad_h0": gh, "grad_w": gw}
    return fetches, {x: _f32(rng.randn(5, 3)), h0: _f32(rng.randn(3))}


# -- tf.foldl / tf.foldr ----------------------------------------------------------------------------


def case_fold_no_initializer(tf):
    """Order matters: acc * 2 + e differs folded left and right."""
    x = tf.placeholder(tf.float32, [4], name="x")
    m = tf.placeholder(tf.float32, [3, 2], name="m")
    fetches = {
        "foldl": tf.foldl(lambda acc, e: acc * 2.0 + e, x),
        "foldr": tf.foldr(lambda acc, e: acc * 2.0 + e, x),
        "foldl_rows": tf.foldl(lambda acc, e: acc * e - 1.0, m),
        "foldr_rows": tf.foldr(lambda acc, e: acc * e - 1.0, m),
        "foldl_int": tf.foldl(lambda acc, e: acc * 10 + e, tf.constant([1, 2, 3])),
        "foldr_int": tf.foldr(lambda acc, e: acc * 10 + e, tf.constant([1, 2, 3])),
    }
    return fetches, {x: _f32([1.0, -2.0, 0.5, 3.0]), m: _f32(_rng(119).randn(3, 2))}


def case_fold_initializer(tf):
    """Initializers of another shape and dtype than the elements; a nested initializer."""
    rng = _rng(120)
    x = tf.placeholder(tf.float32, [5, 3], name="x")
    fetches = {
        "foldl": tf.foldl(lambda acc, e: acc + tf.reduce_sum(e * e), x, initializer=tf.constant(0.5)),
        "foldr": tf.foldr(lambda acc, e: acc * 0.5 + e[:2], x, initializer=tf.ones([2])),
        "foldl_count": tf.foldl(lambda acc, e: acc + tf.cast(tf.reduce_sum(e) > 0.0, tf.int32), x,
                                initializer=tf.constant(0)),
    }
    s, p = tf.foldr(lambda acc, e: (acc[0] + e, acc[1] * (e + 2.0)), x, initializer=(tf.zeros([3]), tf.ones([3])))
    fetches["foldr_nested_sum"] = s
    fetches["foldr_nested_prod"] = p
    return fetches, {x: _f32(rng.randn(5, 3))}


def case_fold_grad(tf):
    """Gradient through foldl and foldr w.r.t. the elems, the initializer and a captured variable."""
    rng = _rng(121)
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    init = tf.placeholder(tf.float32, [3], name="init")
    w = _var(tf, "w", rng.randn(3, 3) * 0.5)

    def step(acc, e):
        return tf.tanh(tf.matmul(tf.expand_dims(acc, 0), w)[0]) + e * e

    left = tf.foldl(step, x, initializer=init)
    right = tf.foldr(step, x, initializer=init)
    plain = tf.foldl(lambda acc, e: acc * e, x)
    loss = tf.reduce_sum(left * left) + tf.reduce_sum(right * tf.constant(_f32(rng.randn(3)))) + tf.reduce_sum(plain)
    gx, gi, gw = tf.gradients(loss, [x, init, w])
    fetches = {"left": left, "right": right, "plain": plain, "loss": loss, "grad_x": gx, "grad_init": gi, "grad_w": gw}
    return fetches, {x: _f32(rng.randn(4, 3)), init: _f32(rng.randn(3))}


# -- tf.nn.dynamic_rnn / bidirectional_dynamic_rnn -----------------------------------------------
#
# Cells come from tf.nn.rnn_cell (under TensorFlow, TF1's cells: TF_USE_LEGACY_KERAS=1). Every
# variable is created through a custom getter that gives it a constant initializer with values
# drawn from its full name (``_rnn_value``), so both frameworks start from the same weights
# whatever initializer the cell asks for. Fetches: outputs, the flattened final state(s), a loss
# weighting all of them, and its gradients w.r.t. the inputs, any fed initial state and every
# trainable variable (key ``grad_<variable name>`` with "/" as "."), so variable names must match
# TensorFlow's for the fetch keys to match.

_RNN_B, _RNN_T, _RNN_D = 3, 4, 3


def _rnn_value(name, shape):
    import zlib

    rng = np.random.RandomState(zlib.crc32(name.encode()) % (2**31))
    return _f32(0.5 * rng.randn(*shape))


def _rnn_scope(tf):
    """``variable_scope("model")`` whose variables all start from ``_rnn_value(name, shape)``."""

    def custom_getter(getter, name, *args, **kwargs):  # TF passes getter= and name= by keyword
        shape = [int(d) for d in kwargs["shape"]]
        kwargs["initializer"] = tf.constant_initializer(_rnn_value(name, shape))
        return getter(name, *args, **kwargs)

    return tf.variable_scope("model", custom_getter=custom_getter)


def _flatten(x):
    """The tensors of a nested tuple/list (LSTMStateTuple included), depth first."""
    if isinstance(x, (list, tuple)):
        return [t for e in x for t in _flatten(e)]
    return [x]


def _map_structure(fn, x):
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_map_structure(fn, e) for e in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_map_structure(fn, e) for e in x)
    return fn(x)


def _fed_state(tf, cell, rng, feed, prefix):
    """An initial state for ``cell``: placeholders shaped like its zero state, fed random values."""
    holders = []

    def make(z):
        ph = tf.placeholder(tf.float32, z.shape, name=f"{prefix}{len(holders)}")
        feed[ph] = _f32(rng.randn(*z.shape.as_list()) * 0.5)
        holders.append(ph)
        return ph

    return _map_structure(make, cell.zero_state(_RNN_B, tf.float32)), holders


def _rnn_inputs(tf, rng, feed, time_major, static_shape=True):
    shape = [_RNN_T, _RNN_B, _RNN_D] if time_major else [_RNN_B, _RNN_T, _RNN_D]
    x = tf.placeholder(tf.float32, shape if static_shape else [None, None, _RNN_D], name="inputs")
    feed[x] = _f32(rng.randn(*shape))
    return x


def _seq_len(tf, lengths, feed, fed):
    if lengths is None or not fed:
        return lengths
    ph = tf.placeholder(tf.int32, [None], name="sequence_length")
    feed[ph] = np.array(lengths, np.int32)
    return ph


def _rnn_fetches(tf, inputs, outputs, states, extra_grad_targets, feed):
    """Fetches of an RNN case: outputs, final states, a loss weighting all of them, and the loss's
    gradients w.r.t. the inputs, ``extra_grad_targets`` (name, tensor) and every trainable variable."""
    rng = _rng(130)
    outs = _flatten(outputs)
    sts = _flatten(states)
    fetches = {}
    terms = []
    for i, o in enumerate(outs):
        fetches["outputs" if len(outs) == 1 else f"outputs_{i}"] = o
        weight = tf.constant(_f32(rng.randn(o.shape.as_list()[-1])))
        terms.append(tf.reduce_sum(o * weight) + 0.1 * tf.reduce_sum(o * o))
    for i, s in enumerate(sts):
        fetches[f"state_{i}"] = s
        terms.append(tf.reduce_sum(s * tf.constant(_f32(rng.randn(s.shape.as_list()[-1])))))
    loss = tf.add_n(terms)
    fetches["loss"] = loss
    tvars = sorted(tf.trainable_variables(), key=lambda v: v.op.name)
    targets = [("inputs", inputs)] + list(extra_grad_targets) + [(v.op.name, v) for v in tvars]
    grads = tf.gradients(loss, [t for _, t in targets])
    for (key, _), g in zip(targets, grads):
        fetches["grad_" + key.replace("/", ".")] = _dense(tf, g)
    return fetches, feed


def _dynamic_rnn_case(tf, make_cell, seed, time_major=False, lengths=None, fed_lengths=False,
                      initial_state=False, static_shape=True):
    """One tf.nn.dynamic_rnn over ``make_cell(tf)``; see _rnn_fetches for what is fetched."""
    rng = _rng(seed)
    feed = {}
    x = _rnn_inputs(tf, rng, feed, time_major, static_shape)
    seq = _seq_len(tf, lengths, feed, fed_lengths)
    extra = []
    with _rnn_scope(tf):
        cell = make_cell(tf)
        kwargs = {"dtype": tf.float32}
        if initial_state:
            state, holders = _fed_state(tf, cell, rng, feed, "h0_")
            kwargs = {"initial_state": state}
            extra = [(f"initial_state_{i}", h) for i, h in enumerate(holders)]
        outputs, final = tf.nn.dynamic_rnn(cell, x, sequence_length=seq, time_major=time_major, **kwargs)
    return _rnn_fetches(tf, x, outputs, final, extra, feed)


def case_rnn_basic_rnn(tf):
    return _dynamic_rnn_case(tf, lambda tf: tf.nn.rnn_cell.BasicRNNCell(4), 131)


def case_rnn_basic_rnn_time_major_seq_len_init(tf):
    return _dynamic_rnn_case(tf, lambda tf: tf.nn.rnn_cell.BasicRNNCell(4), 132, time_major=True,
                             lengths=[4, 0, 2], initial_state=True)


def case_rnn_basic_lstm_seq_len(tf):
    """Unknown batch and time dimensions; sequence_length fed, one of them 0."""
    return _dynamic_rnn_case(tf, lambda tf: tf.nn.rnn_cell.BasicLSTMCell(4), 133, lengths=[2, 4, 0],
                             fed_lengths=True, static_shape=False)


def case_rnn_basic_lstm_time_major_init(tf):
    return _dynamic_rnn_case(tf, lambda tf: tf.nn.rnn_cell.BasicLSTMCell(4, forget_bias=0.5), 134,
                             time_major=True, initial_state=True)


def _peephole_proj(tf):
    return tf.nn.rnn_cell.LSTMCell(5, use_peepholes=True, num_proj=3)


def case_rnn_lstm_peephole_proj_seq_len(tf):
    return _dynamic_rnn_case(tf, _peephole_proj, 135, lengths=[4, 0, 3])


def case_rnn_lstm_peephole_proj_time_major_init(tf):
    def make(tf):
        return tf.nn.rnn_cell.LSTMCell(5, use_peepholes=True, num_proj=3, cell_clip=1.0, proj_clip=0.8)

    return _dynamic_rnn_case(tf, make, 136, time_major=True, lengths=[3, 4, 1], initial_state=True)


def case_rnn_lstm_time_major(tf):
    return _dynamic_rnn_case(tf, lambda tf: tf.nn.rnn_cell.LSTMCell(4), 137, time_major=True)


def case_rnn_gru(tf):
    return _dynamic_rnn_case(tf, lambda tf: tf.nn.rnn_cell.GRUCell(4), 138)


def case_rnn_gru_time_major_seq_len_init(tf):
    return _dynamic_rnn_case(tf, lambda tf: tf.nn.rnn_cell.GRUCell(4), 139, time_major=True,
                             lengths=[0, 4, 2], fed_lengths=True, initial_state=True)


def case_rnn_gru_seq_len_init(tf):
    return _dynamic_rnn_case(tf, lambda tf: tf.nn.rnn_cell.GRUCell(3), 140, lengths=[1, 3, 4],
                             initial_state=True)


def _two_lstms(tf):
    return tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.LSTMCell(4), tf.nn.rnn_cell.LSTMCell(3)])


def case_rnn_multi_lstm_seq_len(tf):
    return _dynamic_rnn_case(tf, _two_lstms, 141, lengths=[4, 1, 0])


def case_rnn_multi_lstm_time_major_init(tf):
    def make(tf):
        return tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(4), tf.nn.rnn_cell.BasicLSTMCell(4)])

    return _dynamic_rnn_case(tf, make, 142, time_major=True, initial_state=True)


def case_rnn_multi_lstm_time_major_seq_len(tf):
    return _dynamic_rnn_case(tf, _two_lstms, 143, time_major=True, lengths=[2, 0, 4], fed_lengths=True)


def _bidirectional_case(tf, make_fw, make_bw, seed, time_major=False, lengths=None, initial_state=False):
    rng = _rng(seed)
    feed = {}
    x = _rnn_inputs(tf, rng, feed, time_major)
    extra = []
    with _rnn_scope(tf):
        fw, bw = make_fw(tf), make_bw(tf)
        kwargs = {"dtype": tf.float32}
        if initial_state:
            s_fw, h_fw = _fed_state(tf, fw, rng, feed, "h0_fw_")
            s_bw, h_bw = _fed_state(tf, bw, rng, feed, "h0_bw_")
            kwargs = {"initial_state_fw": s_fw, "initial_state_bw": s_bw}
            extra = [(f"initial_state_{i}", h) for i, h in enumerate(h_fw + h_bw)]
        outputs, states = tf.nn.bidirectional_dynamic_rnn(fw, bw, x, sequence_length=lengths,
                                                          time_major=time_major, **kwargs)
    return _rnn_fetches(tf, x, outputs, states, extra, feed)


def case_rnn_bidirectional_seq_len(tf):
    return _bidirectional_case(tf, lambda tf: tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True),
                               lambda tf: tf.nn.rnn_cell.GRUCell(3), 144, lengths=[4, 0, 2])


def case_rnn_bidirectional_time_major_seq_len_init(tf):
    return _bidirectional_case(tf, lambda tf: tf.nn.rnn_cell.BasicLSTMCell(3),
                               lambda tf: tf.nn.rnn_cell.BasicRNNCell(2), 145, time_major=True,
                               lengths=[1, 4, 3], initial_state=True)


def case_rnn_bidirectional_no_seq_len(tf):
    return _bidirectional_case(tf, lambda tf: tf.nn.rnn_cell.GRUCell(3),
                               lambda tf: tf.nn.rnn_cell.LSTMCell(3, num_proj=2), 146)


# -- more combinations ------------------------------------------------------------------------------


def case_ta_grad_read_twice(tf):
    """clear_after_read=False: one index read twice and gathered with repeats; the gradients of the
    reads add up."""
    rng = _rng(150)
    x = tf.placeholder(tf.float32, [3, 2], name="x")
    w = _var(tf, "w", rng.randn(2) + 1.0)
    ta = tf.TensorArray(tf.float32, size=3, clear_after_read=False).unstack(x * w)
    a = ta.read(1)
    b = ta.read(1)
    g = ta.gather([2, 2, 0, 2])
    loss = tf.reduce_sum(a * b) + tf.reduce_sum(g * tf.constant(_f32(rng.randn(4, 2))))
    gx, gw = tf.gradients(loss, [x, w])
    return {"a": a, "g": g, "loss": loss, "grad_x": gx, "grad_w": gw}, {x: _f32(rng.randn(3, 2))}


def case_ta_cond_in_while(tf):
    """A tf.cond inside a while_loop body writes the TensorArray loop variable in either branch."""
    rng = _rng(151)
    x = tf.placeholder(tf.float32, [6, 2], name="x")
    w = _var(tf, "w", rng.randn(2) * 0.5)
    ta0 = tf.TensorArray(tf.float32, size=6)

    def body(i, ta):
        row = tf.gather(x, i)
        ta2 = tf.cond(
            tf.equal(tf.mod(i, 2), 0),
            lambda: ta.write(i, tf.tanh(row * w)),
            lambda: ta.write(i, row * row - w),
        )
        return i + 1, ta2

    _, ta = tf.while_loop(lambda i, ta: tf.less(i, 6), body, [tf.constant(0), ta0])
    stacked = ta.stack()
    loss = tf.reduce_sum(stacked * tf.constant(_f32(rng.randn(6, 2))))
    gx, gw = tf.gradients(loss, [x, w])
    return {"stacked": stacked, "loss": loss, "grad_x": _dense(tf, gx), "grad_w": gw}, {x: _f32(rng.randn(6, 2))}


def case_ta_grad_dynamic_size(tf):
    """Gradient through a dynamic_size TensorArray grown in a loop with a fed trip count."""
    rng = _rng(152)
    n = tf.placeholder(tf.int32, [], name="n")
    x = tf.placeholder(tf.float32, [3], name="x")
    w = _var(tf, "w", rng.randn(3, 3) * 0.5)
    ta0 = tf.TensorArray(tf.float32, size=0, dynamic_size=True)

    def body(i, v, ta):
        v2 = tf.tanh(tf.matmul(tf.expand_dims(v, 0), w)[0]) + x
        return i + 1, v2, ta.write(i, v2)

    _, v, ta = tf.while_loop(lambda i, v, ta: tf.less(i, n), body, [tf.constant(0), x, ta0])
    stacked = ta.stack()
    loss = tf.reduce_sum(stacked * stacked) + tf.reduce_sum(v)
    gx, gw = tf.gradients(loss, [x, w])
    fetches = {"stacked": stacked, "loss": loss, "grad_x": gx, "grad_w": gw}
    return fetches, {n: np.array(5, np.int32), x: _f32(rng.randn(3))}


def case_map_fn_dict(tf):
    """Elems as a dict; fn reads it by key."""
    rng = _rng(153)
    a = tf.placeholder(tf.float32, [4, 2], name="a")
    b = tf.placeholder(tf.float32, [4], name="b")
    out = tf.map_fn(lambda d: d["a"] * d["b"] + 1.0, {"a": a, "b": b}, dtype=tf.float32)
    return {"out": out}, {a: _f32(rng.randn(4, 2)), b: _f32(rng.randn(4))}


def case_map_fn_nested_map_grad(tf):
    """map_fn inside map_fn, with a captured variable; gradients w.r.t. both."""
    rng = _rng(154)
    x = tf.placeholder(tf.float32, [3, 4, 2], name="x")
    w = _var(tf, "w", rng.randn(2) * 0.5 + 0.5)

    def inner(r):
        return tf.reduce_sum(tf.sin(r * w))

    out = tf.map_fn(lambda m: tf.map_fn(inner, m), x)
    loss = tf.reduce_sum(out * out)
    gx, gw = tf.gradients(loss, [x, w])
    return {"out": out, "loss": loss, "grad_x": gx, "grad_w": gw}, {x: _f32(rng.randn(3, 4, 2))}


def case_fold_nested_elems(tf):
    """foldl and foldr over a tuple of elems without initializer: the accumulator is a tuple too."""
    rng = _rng(155)
    a = tf.placeholder(tf.float32, [4, 2], name="a")
    b = tf.placeholder(tf.float32, [4], name="b")

    def fn(acc, e):
        return acc[0] * 0.5 + e[0] * e[1], acc[1] + e[1]

    la, lb = tf.foldl(fn, (a, b))
    ra, rb = tf.foldr(fn, (a, b))
    return {"la": la, "lb": lb, "ra": ra, "rb": rb}, {a: _f32(rng.randn(4, 2)), b: _f32(rng.randn(4))}


def case_rnn_encoder_decoder(tf):
    """An LSTM encoder with sequence_length; its final state starts an LSTM decoder (own scope)
    over other inputs with other lengths."""
    rng = _rng(156)
    feed = {}
    x = _rnn_inputs(tf, rng, feed, False)
    y = tf.placeholder(tf.float32, [_RNN_B, 2, 2], name="decoder_inputs")
    feed[y] = _f32(rng.randn(_RNN_B, 2, 2))
    with _rnn_scope(tf):
        enc_cell = tf.nn.rnn_cell.LSTMCell(4)
        dec_cell = tf.nn.rnn_cell.LSTMCell(4)
        _, enc_state = tf.nn.dynamic_rnn(enc_cell, x, sequence_length=[3, 0, 4], dtype=tf.float32, scope="encoder")
        outputs, dec_state = tf.nn.dynamic_rnn(dec_cell, y, sequence_length=[2, 1, 2], initial_state=enc_state,
                                               scope="decoder")
    return _rnn_fetches(tf, x, outputs, (enc_state, dec_state), [("decoder_inputs", y)], feed)


def case_rnn_shared_cell_twice(tf):
    """One cell object run by two dynamic_rnn calls: the second reuses the first's variables."""
    rng = _rng(157)
    feed = {}
    x = _rnn_inputs(tf, rng, feed, False)
    with _rnn_scope(tf):
        cell = tf.nn.rnn_cell.GRUCell(3)
        out1, s1 = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
        out2, s2 = tf.nn.dynamic_rnn(cell, out1, initial_state=s1, sequence_length=[4, 2, 1], scope="second")
    return _rnn_fetches(tf, x, (out1, out2), (s1, s2), [], feed)


CASES = {name[len("case_") :]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}
