"""TF 1.x debugging idioms: tf.Print(x, [x, y], message=..., summarize=...) threaded into the graph (the
printed text goes to stderr), tf.print with output_stream=sys.stdout under tf.control_dependencies, the
tf.debugging / tf.assert_* checks (assert_equal, assert_positive, assert_rank, assert_less, assert_non_negative,
assert_type) wired with control dependencies and failing with InvalidArgumentError whose message carries the
data, tf.Assert with data, tf.check_numerics on a NaN (InvalidArgumentError naming the message),
tf.add_check_numerics_ops, tf.verify_tensor_all_finite, and tf.debugging.is_nan/is_inf.
"""

import sys

import numpy as np
from _common import run_as_script

TF_STEPS = 1


def assertion_text(e):
    """The "assertion failed: ..." line of an error (TF 2.21 puts "Graph execution error:" and the node's
    traceback before it)."""
    lines = [ln for ln in str(e.message).splitlines() if "assertion failed" in ln]
    return type(e).__name__ + ": " + (lines[0][lines[0].index("assertion failed"):] if lines else "?")


def main(tf, steps=1):
    tf.reset_default_graph()
    out = {}
    x = tf.placeholder(tf.float32, [None], name="x")
    y = tf.reduce_sum(x)
    x_printed = tf.Print(x, [x, y], message="x and its sum: ", summarize=3)
    z = x_printed * 2.0
    out["print_op"] = [x_printed.op.type, x_printed.get_shape().as_list(), x_printed.dtype.name]

    print_op = tf.print("tf.print says", y, output_stream=sys.stdout)
    with tf.control_dependencies([print_op]):
        w = tf.identity(y * 3.0)

    pos = tf.debugging.assert_positive(x, message="x must be positive")
    eq = tf.assert_equal(tf.shape(x)[0], 3, message="three values")
    rank = tf.assert_rank(x, 1)
    less = tf.assert_less(x, 10.0)
    nonneg = tf.assert_non_negative(x)
    typ = tf.assert_type(x, tf.float32)
    with tf.control_dependencies([pos, eq, rank, less, nonneg]):
        checked = tf.identity(x, name="checked")
    # TF returns the Merge of an "AssertGuard" cond for float data, ferroflow the Assert op itself.
    out["assert_types"] = [rank.type if rank is not None else None, typ.type if typ is not None else None]
    a = tf.Assert(tf.reduce_all(x > 0), [x, "not all positive"], name="my_assert")
    with tf.control_dependencies([a]):
        after = tf.identity(x)

    numerics = tf.check_numerics(tf.log(x), "log of x")
    verified = tf.verify_tensor_all_finite(x / 2.0, "halves")
    nan_inf = [tf.debugging.is_nan(tf.log(x - 1.0)), tf.debugging.is_inf(tf.log(x - 1.0))]

    with tf.Session() as sess:
        out["z"] = sess.run(z, {x: [1.0, 2.0, 3.0]}).tolist()
        out["w"] = float(sess.run(w, {x: [1.0, 2.0, 3.0]}))
        out["checked"] = sess.run(checked, {x: [1.0, 2.0, 3.0]}).tolist()
        errors = []
        for feed in ([-1.0, 2.0, 3.0], [1.0, 2.0], [1.0, 20.0, 3.0]):
            try:
                sess.run(checked, {x: feed})
                errors.append("ran")
            except tf.errors.InvalidArgumentError as e:
                errors.append(assertion_text(e))
        out["assert_errors"] = errors
        try:
            sess.run(after, {x: [1.0, -2.0]})
            out["tf_assert"] = "ran"
        except tf.errors.InvalidArgumentError as e:
            out["tf_assert"] = [assertion_text(e), "not all positive" in e.message, "my_assert" in e.message]
        out["numerics_ok"] = sess.run(numerics, {x: [1.0, np.e]}).tolist()
        try:
            sess.run(numerics, {x: [-1.0]})
            out["numerics_error"] = "ran"
        except tf.errors.InvalidArgumentError as e:
            out["numerics_error"] = [type(e).__name__, "log of x" in e.message, "NaN" in e.message]
        try:
            sess.run(verified, {x: [np.inf]})
            out["verify_error"] = "ran"
        except tf.errors.InvalidArgumentError as e:
            out["verify_error"] = [type(e).__name__, "halves" in e.message, "Inf" in e.message]
        out["nan_inf"] = [v.tolist() for v in sess.run(nan_inf, {x: [0.5, 1.0, 2.0]})]

    # add_check_numerics_ops: one check per float op output, run as a group.
    tf.reset_default_graph()
    a = tf.placeholder(tf.float32, [2])
    b = tf.sqrt(a)
    c = tf.reduce_mean(b)
    check = tf.add_check_numerics_ops()
    with tf.Session() as sess:
        out["check_all_ok"] = float(sess.run([c, check], {a: [4.0, 9.0]})[0])
        try:
            sess.run([c, check], {a: [-4.0, 9.0]})
            out["check_all_error"] = "ran"
        except tf.errors.InvalidArgumentError as e:
            out["check_all_error"] = [type(e).__name__, "Sqrt" in e.message]
        out["check_op"] = check.type
    return out


if __name__ == "__main__":
    run_as_script(main, 1)
