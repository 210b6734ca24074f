"""More control-flow graphs (issue 16's second round): variables assigned in nested branches and
loop bodies, TensorArray ``clear_after_read``, ``TensorArray.grad``, unstack size checks, and
``tf.switch_case`` as one ``Case`` op with gradients. Each case is a function ``case_<name>(tf)``
written against the TF1 API only, so the same code builds the graph with ferroflow
(``tests/python/test_control_flow_more_golden.py``) and with real TensorFlow
(``tools/make_control_flow_more_fixtures.py``, which writes what TF computes, or the error it
raises, to ``tests/fixtures/control_flow_more/<name>.npz``).

A case returns ``{"fetches": {...}, "feed": {...}, "after": {...}}``: one ``Session.run`` of
``fetches`` (after ``global_variables_initializer``), then one of ``after`` (variable values once
the first run is over); ``feed`` and ``after`` may be left out.
"""

from __future__ import annotations

import numpy as np


def _f32(a):
    return np.asarray(a, dtype=np.float32)


def _var(tf, name, value):
    value = _f32(value)
    return tf.get_variable(name, shape=value.shape, dtype=tf.float32, initializer=tf.constant_initializer(value))


# -- item 1: variables assigned in nested branches ------------------------------------------------

def _cond_in_cond_assign(tf, outer, inner):
    """tf.assign / assign_add / assign_sub in the branches of a cond inside a cond."""
    v = _var(tf, "v", 1.0)
    p = tf.placeholder(tf.bool, [], name="p")
    q = tf.placeholder(tf.bool, [], name="q")

    def outer_true():
        return tf.cond(q, lambda: tf.assign_add(v, 2.0), lambda: tf.assign_sub(v, 0.5)) * 10.0

    def outer_false():
        return tf.assign(v, -3.0) + 0.0

    out = tf.cond(p, outer_true, outer_false)
    return {"fetches": {"out": out}, "feed": {p: np.array(outer), q: np.array(inner)}, "after": {"v": v}}


def case_cond_in_cond_assign_tt(tf):
    return _cond_in_cond_assign(tf, True, True)


def case_cond_in_cond_assign_tf(tf):
    return _cond_in_cond_assign(tf, True, False)


def case_cond_in_cond_assign_ft(tf):
    return _cond_in_cond_assign(tf, False, True)


def _cond_in_cond_variable_methods(tf, outer, inner):
    """Variable.assign*, and tf.scatter_update, in branches of a cond inside a cond; each branch
    changes two variables and returns their new values."""
    v = _var(tf, "v", 1.0)
    w = _var(tf, "w", [1.0, 2.0, 3.0, 4.0])
    p = tf.placeholder(tf.bool, [], name="p")
    q = tf.placeholder(tf.bool, [], name="q")

    def inner_true():
        return v.assign_add(1.5), tf.scatter_update(w, [1, 3], _f32([10.0, 30.0]))

    def inner_false():
        return v.assign(7.0), w.assign_sub(_f32([1.0, 1.0, 1.0, 1.0]))

    def outer_true():
        a, b = tf.cond(q, inner_true, inner_false)
        return a * 2.0, b + 0.0

    def outer_false():
        return v.assign_sub(2.0) + 0.0, tf.scatter_update(w, [0], _f32([-1.0])) + 0.0

    a, b = tf.cond(p, outer_true, outer_false)
    feed = {p: np.array(outer), q: np.array(inner)}
    return {"fetches": {"a": a, "b": b}, "feed": feed, "after": {"v": v, "w": w}}


def case_cond_in_cond_variable_methods_tt(tf):
    return _cond_in_cond_variable_methods(tf, True, True)


def case_cond_in_cond_variable_methods_tf(tf):
    return _cond_in_cond_variable_methods(tf, True, False)


def case_cond_in_cond_variable_methods_f(tf):
    return _cond_in_cond_variable_methods(tf, False, True)


def case_cond_in_while_assign(tf):
    """A cond in a while loop's body assigns the variable on every iteration (one at a time)."""
    v = _var(tf, "v", 0.0)
    n = tf.placeholder(tf.int32, [], name="n")

    def body(i, acc):
        fi = tf.cast(i, tf.float32)
        r = tf.cond(tf.equal(i % 2, 0), lambda: tf.assign_add(v, fi), lambda: tf.assign_sub(v, 1.0))
        return i + 1, acc + r

    _, acc = tf.while_loop(lambda i, a: i < n, body, [tf.constant(0), tf.constant(0.0)], parallel_iterations=1)
    return {"fetches": {"acc": acc}, "feed": {n: np.array(7, np.int32)}, "after": {"v": v}}


def case_while_in_while_assign(tf):
    """assign_add in the body of a while loop inside a while loop's body."""
    v = _var(tf, "v", 1.0)

    def inner(j, acc):
        return j + 1, acc + tf.assign_add(v, 0.5)

    def outer(i, total):
        _, acc = tf.while_loop(lambda j, a: j < i, inner, [tf.constant(0), tf.constant(0.0)], parallel_iterations=1)
        return i + 1, total + acc

    _, total = tf.while_loop(lambda i, t: i < 4, outer, [tf.constant(0), tf.constant(0.0)], parallel_iterations=1)
    return {"fetches": {"total": total}, "after": {"v": v}}


def _cond_while_cond_assign(tf, pred):
    """A cond inside a while loop inside a cond's true branch assigns the variable."""
    v = _var(tf, "v", 0.0)
    p = tf.placeholder(tf.bool, [], name="p")

    def true_fn():
        def body(i, acc):
            r = tf.cond(i < 2, lambda: v.assign_add(1.0), lambda: v.assign_sub(0.25))
            return i + 1, acc + r

        return tf.while_loop(lambda i, a: i < 5, body, [tf.constant(0), tf.constant(0.0)], parallel_iterations=1)[1]

    def false_fn():
        return tf.assign(v, 5.0) * 2.0

    out = tf.cond(p, true_fn, false_fn)
    return {"fetches": {"out": out}, "feed": {p: np.array(pred)}, "after": {"v": v}}


def case_cond_while_cond_assign_true(tf):
    return _cond_while_cond_assign(tf, True)


def case_cond_while_cond_assign_false(tf):
    return _cond_while_cond_assign(tf, False)


# -- item 2: clear_after_read ---------------------------------------------------------------------

def _two_reads(tf, first, second):
    """``second()`` runs after ``first()`` (a control dependency); both are fetched."""
    a = first()
    with tf.control_dependencies([a]):
        b = second()
    return {"fetches": {"a": a, "b": b}}


def _unstacked(tf, **kwargs):
    return tf.TensorArray(tf.float32, 3, **kwargs).unstack(_f32([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))


def case_ta_clear_read_twice(tf):
    ta = _unstacked(tf)
    return _two_reads(tf, lambda: ta.read(0), lambda: ta.read(0))


def case_ta_clear_read_then_stack(tf):
    ta = _unstacked(tf)
    return _two_reads(tf, lambda: ta.read(1), lambda: ta.stack())


def case_ta_clear_stack_twice(tf):
    ta = _unstacked(tf)
    return _two_reads(tf, lambda: ta.stack(), lambda: ta.stack())


def case_ta_clear_read_then_gather(tf):
    ta = _unstacked(tf)
    return _two_reads(tf, lambda: ta.read(2), lambda: ta.gather([0, 2]))


def case_ta_clear_read_then_concat(tf):
    ta = _unstacked(tf)
    return _two_reads(tf, lambda: ta.read(0), lambda: ta.concat())


def case_ta_clear_read_other_version(tf):
    """A read through a later version (after a write) reaches the same array."""
    ta = tf.TensorArray(tf.float32, 3, element_shape=[2]).write(0, _f32([1.0, 2.0]))
    later = ta.write(1, _f32([3.0, 4.0]))
    return _two_reads(tf, lambda: ta.read(0), lambda: later.read(0))


def case_ta_clear_distinct_reads(tf):
    ta = _unstacked(tf)
    return {"fetches": {"r0": ta.read(0), "r2": ta.read(2), "g": ta.gather([1])}}


def case_ta_clear_dynamic_read_twice(tf):
    ta = tf.TensorArray(tf.float32, 0, dynamic_size=True).write(0, 1.0)
    return _two_reads(tf, lambda: ta.read(0), lambda: ta.read(0))


def case_ta_clear_read_twice_in_while(tf):
    ta = _unstacked(tf)

    def body(i, acc):
        return i + 1, acc + ta.read(i) + ta.read(i)

    _, acc = tf.while_loop(lambda i, a: i < 3, body, [tf.constant(0), tf.zeros([2])], parallel_iterations=1)
    return {"fetches": {"acc": acc}}


def case_ta_noclear_read_twice(tf):
    ta = _unstacked(tf, clear_after_read=False)
    return _two_reads(tf, lambda: ta.read(0), lambda: ta.read(0))


def case_ta_noclear_read_then_stack(tf):
    ta = _unstacked(tf, clear_after_read=False)
    return _two_reads(tf, lambda: ta.read(1), lambda: ta.stack())


def case_ta_noclear_read_twice_in_while(tf):
    ta = _unstacked(tf, clear_after_read=False)

    def body(i, acc):
        return i + 1, acc + ta.read(i) * ta.read(i)

    _, acc = tf.while_loop(lambda i, a: i < 3, body, [tf.constant(0), tf.zeros([2])])
    return {"fetches": {"acc": acc}}


def case_ta_clear_loop_gradients_twice(tf):
    """The reads of a clear_after_read array in a loop body, differentiated twice (the second
    gradient re-runs the body's reads; TF1's keeps the values on stacks instead)."""
    x = tf.placeholder(tf.float32, [4, 3], name="x")
    w = _var(tf, "w", [[0.5, -1.0], [0.25, 2.0], [1.5, 0.75]])
    ta = tf.TensorArray(tf.float32, 4).unstack(x)

    def body(i, h):
        return i + 1, tf.tanh(tf.matmul(tf.reshape(ta.read(i), [1, 3]), w) + h)

    _, h = tf.while_loop(lambda i, h: i < 4, body, [tf.constant(0), tf.zeros([1, 2])])
    loss = tf.reduce_sum(h * h)
    g1 = tf.gradients(loss, [x, w])
    g2 = tf.gradients(loss * 2.0, [x, w])
    feed = {x: np.random.RandomState(16).uniform(-1, 1, [4, 3]).astype(np.float32)}
    return {"fetches": {"gx1": g1[0], "gw1": g1[1], "gx2": g2[0], "gw2": g2[1]}, "feed": feed}


# -- item 2: TensorArray.grad ---------------------------------------------------------------------

def case_ta_grad_aggregates(tf):
    ta = tf.TensorArray(tf.float32, 3).unstack(_f32([1.0, 2.0, 3.0]))
    g = ta.grad("src", ta.flow).write(1, 5.0).write(1, 2.0)
    return {"fetches": {"size": g.size(), "stack": g.stack()}}


def case_ta_grad_shared_through_flow(tf):
    ta = tf.TensorArray(tf.float32, 3).unstack(_f32([1.0, 2.0, 3.0]))
    g = ta.grad("src", ta.flow).write(1, 5.0)
    again = ta.grad("src", g.flow)
    return {"fetches": {"r": again.read(1)}}


def case_ta_grad_zeros(tf):
    ta = tf.TensorArray(tf.float32, 3, element_shape=[2])
    g = ta.grad("src", ta.flow)
    return {"fetches": {"size": g.size(), "r": g.read(1)}}


def case_ta_grad_zeros_after_unstack(tf):
    ta = tf.TensorArray(tf.float32, 3).unstack(tf.ones([3, 2]))
    g = ta.grad("gradients", ta.flow)
    return {"fetches": {"size": g.size(), "stack": g.stack()}}


def case_ta_grad_write_past_size(tf):
    ta = tf.TensorArray(tf.float32, 0, dynamic_size=True).write(2, 1.0)
    g = ta.grad("src", ta.flow).write(4, 3.0)
    return {"fetches": {"size": g.size(), "stack": g.stack()}}


def case_ta_grad_read_twice(tf):
    ta = tf.TensorArray(tf.float32, 3, clear_after_read=False).unstack(_f32([1.0, 2.0, 3.0]))
    g = ta.grad("src", ta.flow).write(0, 1.0)
    return _two_reads(tf, lambda: g.read(0), lambda: g.read(0))


# -- item 3: unstack into a fixed-size array ------------------------------------------------------

def _rows(tf, n):
    return tf.placeholder_with_default(np.arange(2 * n, dtype=np.float32).reshape(n, 2), [None, 2], name="rows")


def case_ta_unstack_more_rows_than_size(tf):
    ta = tf.TensorArray(tf.float32, 3).unstack(_rows(tf, 4))
    return {"fetches": {"stack": ta.stack()}}


def case_ta_unstack_more_rows_static(tf):
    ta = tf.TensorArray(tf.float32, 3).unstack(np.ones([4, 2], np.float32))
    return {"fetches": {"stack": ta.stack()}}


def case_ta_unstack_fewer_rows(tf):
    ta = tf.TensorArray(tf.float32, 3).unstack(_rows(tf, 2))
    return {"fetches": {"size": ta.size(), "stack": ta.stack()}}


def case_ta_unstack_dynamic_grows(tf):
    ta = tf.TensorArray(tf.float32, 3, dynamic_size=True).unstack(_rows(tf, 5))
    return {"fetches": {"size": ta.size(), "stack": ta.stack()}}


def case_ta_unstack_fed_size(tf):
    n = tf.placeholder(tf.int32, [], name="n")
    ta = tf.TensorArray(tf.float32, n).unstack(_rows(tf, 3))
    return {"fetches": {"size": ta.size(), "stack": ta.stack()}, "feed": {n: np.array(2, np.int32)}}


# -- item 4: tf.switch_case as a Case op ----------------------------------------------------------

def _switch_case_grad(tf, index):
    i = tf.placeholder(tf.int32, [], name="i")
    x = tf.placeholder(tf.float32, [3], name="x")
    w = _var(tf, "w", [0.5, -1.5, 2.0])
    branches = [lambda: x * x * w, lambda: tf.sin(x) * 3.0 + w, lambda: tf.exp(x * w)]
    y = tf.switch_case(i, branches)
    loss = tf.reduce_sum(y * y)
    gx, gw = tf.gradients(loss, [x, w])
    feed = {i: np.array(index, np.int32), x: _f32([0.3, -0.7, 1.1])}
    return {"fetches": {"y": y, "gx": gx, "gw": gw}, "feed": feed}


def case_switch_case_grad_0(tf):
    return _switch_case_grad(tf, 0)


def case_switch_case_grad_1(tf):
    return _switch_case_grad(tf, 1)


def case_switch_case_grad_2(tf):
    return _switch_case_grad(tf, 2)


def case_switch_case_grad_negative(tf):
    return _switch_case_grad(tf, -1)


def case_switch_case_grad_past_end(tf):
    return _switch_case_grad(tf, 9)


def _switch_case_default(tf, index):
    i = tf.placeholder(tf.int32, [], name="i")
    x = tf.constant(_f32([1.0, 2.0]))
    out = tf.switch_case(i, {1: lambda: x * 3.0, 0: lambda: x + 1.0}, default=lambda: x * 0.0 - 1.0)
    structured = tf.switch_case(i, [lambda: (x, {"s": tf.reduce_sum(x)}), lambda: (x * 2.0, {"s": x[0]})])
    return {"fetches": {"out": out, "t0": structured[0], "s": structured[1]["s"]},
            "feed": {i: np.array(index, np.int32)}}


def case_switch_case_default_0(tf):
    return _switch_case_default(tf, 0)


def case_switch_case_default_1(tf):
    return _switch_case_default(tf, 1)


def case_switch_case_default_other(tf):
    return _switch_case_default(tf, 5)


def case_switch_case_in_while_grad(tf):
    """A switch_case on the iteration number inside a loop body, with gradients."""
    x = tf.placeholder(tf.float32, [2], name="x")

    def body(k, h):
        h = tf.switch_case(k % 3, [lambda: h * x, lambda: tf.tanh(h) + x, lambda: h - x * x])
        return k + 1, h

    _, h = tf.while_loop(lambda k, h: k < 5, body, [tf.constant(0), tf.ones([2])])
    g = tf.gradients(tf.reduce_sum(h), x)[0]
    return {"fetches": {"h": h, "g": g}, "feed": {x: _f32([0.5, -1.25])}}


def _switch_case_side_effect(tf, index):
    """Only the taken branch's assignment runs."""
    i = tf.placeholder(tf.int32, [], name="i")
    v = tf.Variable(1.0, name="v", use_resource=True)
    out = tf.switch_case(i, [lambda: v.assign_add(2.0) * 1.0, lambda: v.assign_sub(0.5) * 1.0,
                             lambda: tf.constant(-1.0)])
    return {"fetches": {"out": out}, "feed": {i: np.array(index, np.int32)}, "after": {"v": v}}


def case_switch_case_side_effect_0(tf):
    return _switch_case_side_effect(tf, 0)


def case_switch_case_side_effect_1(tf):
    return _switch_case_side_effect(tf, 1)


def case_switch_case_side_effect_other(tf):
    return _switch_case_side_effect(tf, 4)


# -- item 5: IndexedSlices as loop variables ------------------------------------------------------

def _slices(tf, values, indices, dense_shape=True):
    return tf.IndexedSlices(tf.constant(_f32(values)), tf.constant(np.asarray(indices, np.int32)),
                            tf.constant(np.array([4, 2], np.int32)) if dense_shape else None)


def case_while_indexed_slices(tf):
    s = _slices(tf, [[1.0, 2.0]], [0])

    def body(i, s):
        return i + 1, tf.IndexedSlices(s.values * 2.0, s.indices + 1, s.dense_shape)

    _, out = tf.while_loop(lambda i, s: i < 2, body, [tf.constant(0), s])
    return {"fetches": {"values": out.values, "indices": out.indices, "dense_shape": out.dense_shape}}


def _growing_slices_body(tf):
    def body(i, s):
        return i + 1, tf.IndexedSlices(tf.concat([s.values, s.values + 1.0], 0),
                                       tf.concat([s.indices, s.indices + 1], 0), s.dense_shape)

    return body


def case_while_indexed_slices_shape_invariant(tf):
    s = _slices(tf, [[1.0, 2.0]], [0])
    _, out = tf.while_loop(lambda i, s: i < 2, _growing_slices_body(tf), [tf.constant(0), s],
                           shape_invariants=[tf.TensorShape([]), tf.TensorShape([None, 2])])
    return {"fetches": {"values": out.values, "indices": out.indices, "dense_shape": out.dense_shape}}


def case_while_indexed_slices_grows_without_invariant(tf):
    s = _slices(tf, [[1.0, 2.0]], [0])
    _, out = tf.while_loop(lambda i, s: i < 2, _growing_slices_body(tf), [tf.constant(0), s])
    return {"fetches": {"values": out.values}}


def case_while_indexed_slices_no_dense_shape(tf):
    s = _slices(tf, [[1.0, 2.0], [3.0, 4.0]], [3, 1], dense_shape=False)

    def body(i, s):
        return i + 1, tf.IndexedSlices(s.values + tf.cast(i, tf.float32), s.indices)

    _, out = tf.while_loop(lambda i, s: i < 3, body, [tf.constant(0), s])
    return {"fetches": {"values": out.values, "indices": out.indices}}


def case_while_indexed_slices_grad(tf):
    x = tf.placeholder(tf.float32, [2, 2], name="x")
    s = tf.IndexedSlices(x, tf.constant([2, 0]), tf.constant([4, 2]))

    def body(i, s):
        return i + 1, tf.IndexedSlices(tf.sin(s.values) * s.values, s.indices, s.dense_shape)

    _, out = tf.while_loop(lambda i, s: i < 3, body, [tf.constant(0), s])
    dense = tf.scatter_nd(tf.expand_dims(out.indices, 1), out.values, out.dense_shape)
    g = tf.gradients(tf.reduce_sum(dense * dense), x)[0]
    return {"fetches": {"dense": dense, "g": g}, "feed": {x: _f32([[0.3, -0.8], [1.2, 0.5]])}}


CASES = {name[len("case_"):]: fn for name, fn in sorted(globals().items()) if name.startswith("case_")}
