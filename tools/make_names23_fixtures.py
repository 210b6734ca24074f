"""Writes tests/fixtures/names23/values.npz: what real TensorFlow 2.21 computes for the cases of
tests/python/test_names23.py (``tf.conv``, ``tf.ragged_fill_empty_rows`` and its gradient op).

    /work/tfvenv/bin/python tools/make_names23_fixtures.py

Inputs are drawn from a fixed seed and saved with the outputs (``<case>__in<i>``, ``<case>__out<j>``).
TensorFlow's CPU ``Conv`` kernel refuses ``groups > 1`` and ``CHANNELS_FIRST`` (UnimplementedError), so those
cases' expected values come from TensorFlow computing the same thing another way: per-group ``tf.conv``
calls concatenated, and ``tf.conv`` on the transposed input, transposed back.
"""

from __future__ import annotations

import os
import pathlib

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "names23"

rng = np.random.RandomState(23)


def f32(*shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


# name -> (inputs, kwargs of tf.conv)
CONV = {
    "conv2d_same": ([f32(2, 5, 6, 4), f32(3, 3, 4, 6)], dict(strides=[1, 1, 1, 1], padding="SAME")),
    "conv2d_valid_strided_dilated": ([f32(2, 7, 8, 3), f32(3, 2, 3, 5)],
                                     dict(strides=[1, 2, 1, 1], padding="VALID", dilations=[1, 1, 2, 1])),
    "conv2d_explicit": ([f32(2, 5, 6, 4), f32(3, 3, 4, 6)],
                        dict(strides=[1, 1, 2, 1], padding="EXPLICIT", explicit_paddings=[0, 0, 1, 2, 0, 1, 0, 0])),
    "conv2d_batch_dims2": ([f32(2, 3, 5, 6, 4), f32(3, 3, 4, 2)],
                           dict(strides=[1, 1, 1, 1], padding="SAME", batch_dims=2)),
    "conv2d_f64": ([f32(1, 4, 4, 2).astype(np.float64), f32(2, 2, 2, 3).astype(np.float64)],
                   dict(strides=[1, 1, 1, 1], padding="VALID")),
    "conv3d_valid": ([f32(2, 4, 5, 6, 3), f32(2, 2, 2, 3, 4)], dict(strides=[1, 1, 1, 1, 1], padding="VALID")),
    "conv3d_same_strided": ([f32(1, 5, 4, 6, 2), f32(3, 2, 3, 2, 3)],
                            dict(strides=[1, 2, 1, 2, 1], padding="SAME")),
}
# Computed by TensorFlow another way (its CPU kernel refuses them).
CONV_OTHER = {
    "conv2d_groups2": ([f32(2, 5, 6, 4), f32(3, 3, 2, 6)], dict(strides=[1, 1, 1, 1], padding="SAME", groups=2)),
    "conv2d_channels_first": ([f32(2, 4, 5, 6), f32(3, 3, 4, 6)],
                              dict(strides=[1, 1, 2, 1], padding="SAME", data_format="CHANNELS_FIRST")),
}

RAGGED = {
    "fill_basic": ([1, 1, 3], [1.0, 2.0, 3.0], 5, -1.0),
    "fill_unsorted": ([2, 0, 2, 0, 4], [1.0, 2.0, 3.0, 4.0, 5.0], 6, 9.0),
    "fill_no_values": ([], [], 3, 7.0),
    "fill_int": ([0, 0, 0], [4, 5, 6], 2, 0),
}
RAGGED_GRAD = {
    "fill_grad": ([2, 3, 5], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
    "fill_grad_none": ([], [0.5, 1.5]),
}


def main():
    out = {}
    with tf.Graph().as_default(), tf.Session() as sess:
        for name, (inputs, kw) in CONV.items():
            out[f"{name}__out0"] = sess.run(tf.conv(inputs[0], inputs[1], **kw))
            for i, v in enumerate(inputs):
                out[f"{name}__in{i}"] = v
        x, w = CONV_OTHER["conv2d_groups2"][0]
        y = tf.concat([tf.conv(x[..., 2 * g:2 * g + 2], w[..., 3 * g:3 * g + 3], [1, 1, 1, 1], "SAME")
                       for g in range(2)], -1)
        out["conv2d_groups2__out0"] = sess.run(y)
        x, w = CONV_OTHER["conv2d_channels_first"][0]
        y = tf.transpose(tf.conv(tf.transpose(x, [0, 2, 3, 1]), w, [1, 2, 1, 1], "SAME"), [0, 3, 1, 2])
        out["conv2d_channels_first__out0"] = sess.run(y)
        for name, (inputs, _) in CONV_OTHER.items():
            for i, v in enumerate(inputs):
                out[f"{name}__in{i}"] = v
        for name, (rowids, values, nrows, default) in RAGGED.items():
            dtype = tf.int32 if isinstance(default, int) else tf.float32
            r = tf.ragged_fill_empty_rows(tf.constant(rowids, tf.int64), tf.constant(values, dtype),
                                          tf.constant(nrows, tf.int64), tf.constant(default, dtype))
            for j, v in enumerate(sess.run(list(r))):
                out[f"{name}__out{j}"] = v
        for name, (index, grad) in RAGGED_GRAD.items():
            r = tf.ragged_fill_empty_rows_grad(tf.constant(index, tf.int64), tf.constant(grad, tf.float32))
            for j, v in enumerate(sess.run(list(r))):
                out[f"{name}__out{j}"] = v
        # The gradient TensorFlow registers for RaggedFillEmptyRows, through tf.gradients.
        xv = tf.constant([1.0, 2.0, 3.0])
        dv = tf.constant(5.0)
        r = tf.ragged_fill_empty_rows(tf.constant([3, 1, 1], tf.int64), xv, tf.constant(5, tf.int64), dv)
        loss = tf.reduce_sum(r.output_values * tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
        gx, gd = sess.run(tf.gradients(loss, [xv, dv]))
        out["fill_gradients__out0"] = gx
        out["fill_gradients__out1"] = gd
    OUT.mkdir(parents=True, exist_ok=True)
    np.savez(OUT / "values.npz", **out)
    (OUT / "README.md").write_text(
        "# names23 fixtures\n\n`values.npz`: inputs and TensorFlow 2.21's outputs for `tests/python/test_names23.py`"
        " (`tf.conv`, `tf.ragged_fill_empty_rows`, `tf.ragged_fill_empty_rows_grad`), written by"
        " `tools/make_names23_fixtures.py`, whose docstring says how each case was computed.\n")
    print(f"wrote {len(out)} arrays to {OUT / 'values.npz'}")


if __name__ == "__main__":
    main()
