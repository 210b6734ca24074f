"""Small top-level names: timestamp, guarantee_const, convert_to_tensor_or_indexed_slices, is_symbolic_tensor,
op_scope, vectorized_map, load_op_library, the v1/v2 switches and get_logger."""

import logging
import time

import numpy as np
import pytest

import ferroflow as tf
import ferroflow.compat.v1 as tf1


def test_timestamp_reads_the_clock_each_run():
    t = tf.timestamp()
    assert t.dtype == tf.float64 and t.shape.ndims == 0 and t.op.type == "Timestamp"
    with tf.Session() as sess:
        before = time.time()
        a = sess.run(t)
        b = sess.run(t)
        after = time.time()
    assert before - 1e-3 <= a <= b <= after + 1e-3


def test_guarantee_const_passes_values_and_blocks_gradients():
    x = tf.constant([1.0, 2.0])
    y = tf.guarantee_const(x)
    assert y.op.type == "GuaranteeConst" and y.shape.as_list() == [2]
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y), [1.0, 2.0])
    with pytest.raises(LookupError):
        tf.gradients(y * 2.0, x)


def test_convert_to_tensor_or_indexed_slices():
    s = tf.IndexedSlices(tf.constant([[1.0]]), tf.constant([0]), tf.constant([2, 1]))
    assert tf.convert_to_tensor_or_indexed_slices(s) is s
    with pytest.raises(ValueError):
        tf.convert_to_tensor_or_indexed_slices(s, dtype=tf.int32)
    t = tf.convert_to_tensor_or_indexed_slices([1, 2])
    assert isinstance(t, tf.Tensor) and t.dtype == tf.int32


def test_is_symbolic_tensor_and_op_scope():
    assert tf.is_symbolic_tensor(tf.constant(1)) and not tf.is_symbolic_tensor(np.ones(2))
    a = tf.constant(1.0)
    with tf.op_scope([a], "outer", "default") as scope:
        assert scope == "outer/"
        assert tf.identity(a).op.name == "outer/Identity"
    with tf.op_scope([a], None, "fallback") as scope:
        assert scope == "fallback/"


def test_vectorized_map_matches_numpy():
    x = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
    y = tf.vectorized_map(lambda row: tf.reduce_sum(row * row), x)
    pair = tf.vectorized_map(lambda row: (row[0], tf.cast(row[1], tf.int32)), x)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(y), (np.arange(12).reshape(4, 3) ** 2).sum(1))
        first, second = sess.run(pair)
    np.testing.assert_array_equal(first, [0, 3, 6, 9])
    assert second.dtype == np.int32 and list(second) == [1, 4, 7, 10]


def test_load_op_library_refuses_clearly(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="no_such.so"):
        tf.load_op_library(str(tmp_path / "no_such.so"))
    lib = tmp_path / "custom_ops.so"
    lib.write_bytes(b"\x7fELF")
    with pytest.raises(tf.errors.UnimplementedError, match="custom-op libraries"):
        tf.load_op_library(str(lib))


def test_behaviour_switches():
    assert not tf.executing_eagerly() and not tf.executing_eagerly_outside_functions()
    tf1.disable_v2_behavior()
    tf1.disable_eager_execution()
    assert not tf.resource_variables_enabled()
    tf.enable_resource_variables()
    assert tf.resource_variables_enabled()
    tf.disable_resource_variables()
    assert not tf.resource_variables_enabled()
    tf.enable_control_flow_v2()
    assert tf.control_flow_v2_enabled()
    tf.disable_control_flow_v2()
    assert not tf.control_flow_v2_enabled()
    tf.disable_v2_tensorshape()
    tf.disable_tensor_equality()
    for unsupported in (tf.enable_v2_behavior, tf.enable_tensor_equality, tf.enable_v2_tensorshape,
                        tf.enable_eager_execution):
        with pytest.raises(NotImplementedError):
            unsupported()


def test_get_logger_is_tensorflows_logger():
    assert tf.get_logger() is logging.getLogger("tensorflow")


def test_dimensions_and_tensor_shapes_convert_as_in_tensorflow():
    # TF1 code builds shapes from static dims: tf.zeros([x.get_shape()[-1]]), tf.reshape(x, [-1, d]) (the
    # batch-norm-from-scratch recipe). TF 2.21 accepts Dimensions where integers are expected, converts a
    # Dimension or a fully known TensorShape to an int32 "shape_as_tensor", and refuses the rest.
    x = tf.placeholder(tf.float32, [None, 4])
    d = x.get_shape()[-1]
    assert tf.zeros([d, 2]).shape.as_list() == [4, 2]
    assert tf.ones([d]).shape.as_list() == [4]
    assert tf.reshape(x, [-1, d]).shape.as_list() == [None, 4]
    assert tf.random_normal([d]).shape.as_list() == [4]
    c = tf.constant([d, 3], tf.int32)
    dim = tf.convert_to_tensor(d)
    shape = tf.convert_to_tensor(tf.TensorShape([4, 3]))
    assert (dim.dtype, dim.op.name, shape.dtype, shape.op.name) == (tf.int32, "shape_as_tensor", tf.int32,
                                                                    "shape_as_tensor_1")
    assert tf.convert_to_tensor(d, tf.int64).dtype == tf.int64
    with tf.Session() as sess:
        assert sess.run(c).tolist() == [4, 3] and sess.run(dim) == 4 and sess.run(shape).tolist() == [4, 3]
    with pytest.raises(ValueError, match=r"Cannot convert a partially known TensorShape \(\?, 4\) to a Tensor"):
        tf.convert_to_tensor(x.get_shape())
    with pytest.raises(ValueError, match=r"Cannot convert unknown Dimension \? to a Tensor"):
        tf.convert_to_tensor(tf.Dimension(None))
    with pytest.raises(TypeError, match="Allowed dtypes are tf.int32 and tf.int64"):
        tf.convert_to_tensor(d, tf.float32)
    # Without a dtype a list holding a Dimension is not inferred, and floats never take one (as TF).
    with pytest.raises(TypeError):
        tf.constant([d])
    with pytest.raises(TypeError, match="Expected float32, but got 4 of type 'Dimension'"):
        tf.constant([d], tf.float32)


def test_shape_arguments_beyond_int32_become_int64():
    # Integer conversions wrap out-of-range Python ints (TF's graph-mode constants), so a shape such as
    # [2**40] must be converted as int64 up front, as TF infers the index type; it had become [0] (int32 wrap).
    assert tf.zeros([2**40, 0]).shape.as_list() == [2**40, 0]
    big = tf.fill(np.array([2**31, 0]), 1.0)
    assert big.shape.as_list() == [2**31, 0] and big.op.inputs[0].dtype == tf.int64
    assert tf.reshape(tf.zeros([4]), [2, 2]).op.inputs[1].dtype == tf.int32
    with tf.Session() as sess:
        assert sess.run(big).shape == (2**31, 0)
