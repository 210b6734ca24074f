"""Memory of long while loops (issue 16): a loop run without its gradient keeps nothing per iteration (bound:
the process's peak resident memory over the run, VmHWM reset through /proc/self/clear_refs, against what
keeping every iteration would take), and a loop whose gradient is taken keeps, of a forward value whose
shape is all its gradient reads, only the shape."""

from pathlib import Path

import numpy as np
import pytest

import ferroflow as tf

CLEAR_REFS = Path("/proc/self/clear_refs")
MIB = 1 << 20


def _status_bytes(key):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(key)


def _peak_growth(sess, fetches, feeds):
    """Bytes the peak resident memory rose above the resident memory before ``sess.run``, and the result."""
    CLEAR_REFS.write_text("5")  # resets VmHWM to the current resident size
    before = _status_bytes("VmRSS")
    out = sess.run(fetches, feeds)
    return _status_bytes("VmHWM") - before, out


def _loop(n, size, scale):
    x0 = tf.placeholder(tf.float32, [size])
    _, xn = tf.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, x * scale + 1.0), [tf.constant(0), x0])
    return x0, tf.reduce_sum(xn)


@pytest.mark.skipif(not CLEAR_REFS.exists(), reason="peak resident memory is reset through Linux's /proc")
def test_a_loop_without_gradients_keeps_nothing_per_iteration():
    n, size = 100_000, 512  # keeping every iteration's 2 KiB would take 200 MiB
    with tf.Graph().as_default():
        x0, loss = _loop(n, size, 1.0)
        feeds = {x0: np.zeros(size, np.float32)}
        with tf.Session() as s:
            growth, got = _peak_growth(s, loss, feeds)
    assert got == pytest.approx(n * size)
    assert growth < 40 * MIB, f"peak rose {growth / MIB:.0f} MiB over {n} iterations"


def test_a_loop_with_gradients_keeps_shapes_where_its_gradient_reads_only_shapes():
    # x_{k+1} = x_k * c + y with shapes known only at run time: the add's gradient reads only the product's
    # shape, so the forward loop keeps that shape per iteration, not the product (which doubled the memory
    # of a long loop). (With static shapes that decide the broadcast, TF's gradient reads no shape at all.)
    n, size = 50, 8
    with tf.Graph().as_default() as g:
        x0 = tf.placeholder(tf.float32, [None])
        y = tf.placeholder(tf.float32, [None])
        c = tf.constant(1.0)
        _, xn = tf.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, x * c + y), [tf.constant(0), x0])
        loss = tf.reduce_sum(xn)
        grad = tf.gradients(loss, x0)[0]
        library = {f.signature.name: f for f in g.as_graph_def().library.function}
        saving = [f for name, f in library.items() if name.endswith("_saving")]
        assert len(saving) == 1
        body = library[saving[0].signature.name[:-len("_saving")]]
        extra = saving[0].signature.output_arg[len(body.signature.output_arg):]
        assert [tf.as_dtype(a.type) for a in extra] == [tf.int32]
        assert saving[0].ret[extra[0].name].endswith("saved_shape:output:0")
        with tf.Session() as s:
            got_loss, got_grad = s.run([loss, grad], {x0: np.zeros(size, np.float32), y: np.ones(size, np.float32)})
    assert got_loss == pytest.approx(n * size)
    np.testing.assert_array_equal(got_grad, np.ones(size, np.float32))
