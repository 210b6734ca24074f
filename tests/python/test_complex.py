"""complex64 / complex128 tensors: dtypes, numpy round trips, the complex ops and their gradients,
complex arithmetic, and checkpoints with complex and bfloat16 tensors, against TensorFlow 2.21.

Fixtures: tests/fixtures/complex/ (values.npz and a checkpoint TensorFlow's Saver wrote), made by
tools/make_complex_fixtures.py with TensorFlow 2.21.
"""

import os

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.ops._op_util import make

HERE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "complex")
FIX = np.load(os.path.join(HERE, "values.npz"))


def _build():
    a, b, m = tf.constant(FIX["a"]), tf.constant(FIX["b"]), tf.constant(FIX["m"])
    t128 = tf.cast(a, tf.complex128)
    tre, tim = tf.constant(FIX["re"]), tf.constant(FIX["im"])
    z = tf.complex(tre, tim)
    out = {
        "complex": z,
        "real": tf.math.real(a),
        "imag": tf.math.imag(a),
        "conj": tf.math.conj(a),
        "angle": tf.math.angle(a),
        "abs": tf.abs(a),
        "add": a + b,
        "sub": a - b,
        "mul": a * b,
        "div": a / b,
        "neg": -a,
        "square": tf.square(a),
        "exp": tf.exp(a),
        "sqrt": tf.sqrt(a),
        "reciprocal": tf.reciprocal(a),
        "log": tf.log(a),
        "tanh": tf.tanh(a),
        "sum0": tf.reduce_sum(a, 0),
        "mean1": tf.reduce_mean(a, 1),
        "prod": tf.reduce_prod(a),
        "matmul": tf.matmul(t128, m),
        "matmul_adj": tf.matmul(m, t128, adjoint_a=True, adjoint_b=True),
        "cast_c64_f32": tf.cast(a, tf.float32),
        "cast_f64_c64": tf.cast(tre, tf.complex64),
        "cast_c64_c128": t128,
        "equal": tf.equal(a, a * tf.constant([1, 1, 2, 1], tf.complex64)),
    }
    loss_complex = tf.reduce_sum(tf.abs(z) * tf.constant([1.0, 2.0, 3.0], tf.float64))
    loss_parts = tf.reduce_sum(tf.math.real(a) * 2.0 + tf.math.imag(a) * 3.0 + tf.math.angle(a))
    loss_conj = tf.reduce_sum(tf.math.real(tf.math.conj(a) * b))
    out["grad_complex_re"], out["grad_complex_im"] = tf.gradients(loss_complex, [tre, tim])
    (out["grad_parts"],) = tf.gradients(loss_parts, [a])
    out["grad_conj_a"], out["grad_conj_b"] = tf.gradients(loss_conj, [a, b])
    return out


@pytest.fixture(scope="module")
def results():
    with tf.Graph().as_default():
        out = _build()
        with tf.Session() as s:
            return out, s.run(out)


NAMES = sorted(k[4:] for k in FIX.files if k.startswith("out_"))


@pytest.mark.parametrize("name", NAMES)
def test_values_match_tensorflow(results, name):
    tensors, got = results
    want = FIX["out_" + name]
    assert tensors[name].dtype.as_numpy_dtype == want.dtype, name
    assert got[name].dtype == want.dtype
    assert got[name].shape == want.shape
    tol = 1e-12 if want.dtype in (np.complex128, np.float64) else 2e-6
    np.testing.assert_allclose(got[name], want, rtol=tol, atol=tol)


def test_dtypes():
    assert tf.complex64.as_datatype_enum == 8 and tf.complex128.as_datatype_enum == 18
    assert tf.complex64.is_complex and tf.complex128.real_dtype == tf.float64
    assert tf.as_dtype(np.complex64) == tf.complex64
    assert tf.dtypes.complex(1.0, 2.0).dtype == tf.complex64
    for name, enum in [("qint8", 11), ("quint8", 12), ("qint32", 13), ("qint16", 15), ("quint16", 16)]:
        d = getattr(tf.dtypes, name)
        assert d.as_datatype_enum == enum and d.is_quantized and not d.is_integer
        assert d in tf.dtypes.QUANTIZED_DTYPES
    assert tf.dtypes.resource.as_datatype_enum == 20 and tf.dtypes.variant.as_datatype_enum == 21
    # Python complex numbers are complex128, as in TensorFlow.
    assert tf.constant(1 + 2j).dtype == tf.complex128
    assert tf.constant(np.complex64(1j)).dtype == tf.complex64


def test_feed_fetch_and_python_wrappers():
    with tf.Graph().as_default(), tf.Session() as s:
        p = tf.placeholder(tf.complex128, [None])
        x = np.array([1 + 1j, -2.5j], np.complex128)
        np.testing.assert_array_equal(s.run(p * 2, {p: x}), x * 2)
        r = tf.constant([1.0, -2.0])
        # Real tensors: real is the tensor, imag zeros, conj the tensor, angle pi where negative.
        assert tf.math.real(r) is r and tf.math.conj(r) is r
        np.testing.assert_array_equal(s.run(tf.math.imag(r)), [0.0, 0.0])
        np.testing.assert_allclose(s.run(tf.math.angle(r)), [0.0, np.pi])
        np.testing.assert_array_equal(s.run(tf.to_complex64(r)), [1 + 0j, -2 + 0j])
        assert tf.to_complex128(r).dtype == tf.complex128
        assert s.run(tf.constant(3 + 4j)) == 3 + 4j


def test_errors_name_the_op():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="should both be either"):
            tf.complex(tf.constant(1.0), tf.constant(1.0, tf.float64))
        with pytest.raises(TypeError, match="parameter 'input' has DataType float32 not in list"):
            make("Real", [tf.constant(1.0)])
        with pytest.raises(TypeError):
            tf.maximum(tf.constant(1j), tf.constant(2j))
        with pytest.raises(TypeError):
            tf.math.real(tf.constant("s"))


def test_checkpoint_round_trip_and_tensorflow_checkpoint(tmp_path):
    prefix = os.path.join(HERE, "tf_ckpt", "model.ckpt")
    with tf.Graph().as_default():
        c64 = tf.Variable(np.zeros(3, np.complex64), name="c64")
        c128 = tf.Variable(np.zeros((2, 2), np.complex128), name="c128")
        bf16 = tf.Variable(tf.zeros([4], tf.bfloat16), name="bf16")
        saver = tf.train.Saver()
        with tf.Session() as s:
            # TensorFlow's checkpoint restores.
            saver.restore(s, prefix)
            got = s.run([c64, c128, bf16])
            np.testing.assert_array_equal(got[0], FIX["ckpt_c64"])
            np.testing.assert_array_equal(got[1], FIX["ckpt_c128"])
            np.testing.assert_array_equal(np.asarray(got[2], np.float32), FIX["ckpt_bf16"])
            # Ours round-trips, with the values TensorFlow wrote.
            s.run(c64.assign(c64 * 2))
            mine = saver.save(s, str(tmp_path / "mine" / "model.ckpt"))
    reader = tf.train.load_checkpoint(mine)
    np.testing.assert_array_equal(reader.get_tensor("c64"), FIX["ckpt_c64"] * 2)
    assert reader.get_tensor("c128").dtype == np.complex128
    assert reader.get_variable_to_dtype_map()["c64"] == tf.complex64
    assert reader.get_variable_to_dtype_map()["bf16"] == tf.bfloat16
