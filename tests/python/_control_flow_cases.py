"""Control-flow graphs (tf.cond, tf.case, tf.switch_case, tf.while_loop) shared by the fixture
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


CASES = {name[len("case_") :]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}
