"""Makes tests/fixtures/complex/ with TensorFlow 2.21 (graph mode, tf.compat.v1).

* ``tf_ckpt/model.ckpt*``: a V2 checkpoint that TensorFlow's ``Saver`` wrote, holding complex64,
  complex128 and bfloat16 variables (test_complex.py restores it with ferroflow and checks the values);
* ``values.npz``: inputs and TensorFlow's results of the complex ops and of the arithmetic,
  reductions and products on complex tensors, and the gradients of the complex ops.

Run: /work/tfvenv/bin/python tools/make_complex_fixtures.py
"""

import os
import shutil

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "complex")

# Checkpoint values (also written into test_complex.py's expectations through values.npz).
CKPT = {
    "c64": (np.array([1 + 2j, -3.5 - 0.25j, 0j], np.complex64)),
    "c128": (np.array([[1e-300 + 1j, 2 - 2j], [np.pi + 0j, -1j]], np.complex128)),
    "bf16": np.array([1.0, -2.5, 3.0e10, 0.0078125], np.float32),
}


def checkpoint():
    d = os.path.join(OUT, "tf_ckpt")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    g = tf.Graph()
    with g.as_default():
        tf.Variable(CKPT["c64"], name="c64")
        tf.Variable(CKPT["c128"], name="c128")
        tf.Variable(tf.cast(CKPT["bf16"], tf.bfloat16), name="bf16")
        saver = tf.train.Saver()
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            saver.save(s, os.path.join(d, "model.ckpt"), write_meta_graph=False, write_state=False)


def main():
    checkpoint()
    rng = np.random.default_rng(23)
    out = {}
    a = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(np.complex64)
    b = (rng.standard_normal((4,)) + 1j * rng.standard_normal((4,))).astype(np.complex64)
    m = (rng.standard_normal((4, 2)) + 1j * rng.standard_normal((4, 2))).astype(np.complex128)
    re = rng.standard_normal((2, 3))
    im = rng.standard_normal((3,))
    out.update(a=a, b=b, m=m, re=re, im=im)
    g = tf.Graph()
    with g.as_default():
        ta, tb, tm = tf.constant(a), tf.constant(b), tf.constant(m)
        t128 = tf.cast(ta, tf.complex128)
        tre, tim = tf.constant(re), tf.constant(im)
        z = tf.complex(tre, tim)
        results = {
            "complex": z,
            "real": tf.math.real(ta),
            "imag": tf.math.imag(ta),
            "conj": tf.math.conj(ta),
            "angle": tf.math.angle(ta),
            "abs": tf.abs(ta),
            "add": ta + tb,
            "sub": ta - tb,
            "mul": ta * tb,
            "div": ta / tb,
            "neg": -ta,
            "square": tf.square(ta),
            "exp": tf.exp(ta),
            "sqrt": tf.sqrt(ta),
            "reciprocal": tf.reciprocal(ta),
            "log": tf.log(ta),
            "tanh": tf.tanh(ta),
            "sum0": tf.reduce_sum(ta, 0),
            "mean1": tf.reduce_mean(ta, 1),
            "prod": tf.reduce_prod(ta),
            "matmul": tf.matmul(t128, tm),
            "matmul_adj": tf.matmul(tm, t128, adjoint_a=True, adjoint_b=True),
            "cast_c64_f32": tf.cast(ta, tf.float32),
            "cast_f64_c64": tf.cast(tre, tf.complex64),
            "cast_c64_c128": t128,
            "equal": tf.equal(ta, ta * tf.constant([1, 1, 2, 1], tf.complex64)),
        }
        # Gradients of real losses through the complex ops, w.r.t. real and complex inputs.
        loss_complex = tf.reduce_sum(tf.abs(z) * tf.constant([1.0, 2.0, 3.0], tf.float64))
        loss_parts = tf.reduce_sum(tf.math.real(ta) * 2.0 + tf.math.imag(ta) * 3.0 + tf.math.angle(ta))
        loss_conj = tf.reduce_sum(tf.math.real(tf.math.conj(ta) * tb))
        results["grad_complex_re"], results["grad_complex_im"] = tf.gradients(loss_complex, [tre, tim])
        (results["grad_parts"],) = tf.gradients(loss_parts, [ta])
        results["grad_conj_a"], results["grad_conj_b"] = tf.gradients(loss_conj, [ta, tb])
        with tf.Session() as s:
            vals = s.run(results)
    for k, v in vals.items():
        out["out_" + k] = v
    # What TensorFlow stored (bfloat16 rounded), read back through its own reader.
    reader = tf.train.load_checkpoint(os.path.join(OUT, "tf_ckpt", "model.ckpt"))
    for k in CKPT:
        v = reader.get_tensor(k)
        out["ckpt_" + k] = v.astype(np.float32) if k == "bf16" else v
    np.savez_compressed(os.path.join(OUT, "values.npz"), **out)
    print("wrote", sorted(out))


if __name__ == "__main__":
    main()
