"""tf.TensorSpec and the other TypeSpecs; expected values observed with TensorFlow 2.21."""

import pickle

import numpy as np
import pytest

import ferroflow.compat.v1 as tf


def test_tensor_spec_equality_includes_the_name_but_compatibility_does_not():
    s = tf.TensorSpec([None, 3])
    assert s == tf.TensorSpec([None, 3], tf.float32) and hash(s) == hash(tf.TensorSpec([None, 3]))
    assert tf.TensorSpec([1], name="a") != tf.TensorSpec([1])
    assert tf.TensorSpec([1], name="a").is_compatible_with(tf.TensorSpec([1]))
    assert s.shape.as_list() == [None, 3] and s.dtype == tf.float32 and s.name is None
    assert pickle.loads(pickle.dumps(s)) == s


def test_compatibility_with_values():
    with tf.Graph().as_default():
        s = tf.TensorSpec([None, 3])
        assert s.is_compatible_with(tf.zeros([2, 3]))
        assert not s.is_compatible_with(tf.zeros([2, 4]))
        assert not tf.TensorSpec([None]).is_compatible_with(tf.constant([1, 2]))  # int32 is not float32
        assert tf.SparseTensorSpec([None, 3]).is_compatible_with(tf.SparseTensor([[0, 0]], [1.0], [2, 3]))


def test_supertypes_and_subtypes():
    s = tf.TensorSpec([None, 3])
    assert s.most_specific_common_supertype([tf.TensorSpec([4, 3])]) == s
    assert s.most_specific_common_supertype([tf.TensorSpec([4, 3], tf.int32)]) is None
    assert tf.TensorSpec([2, 3]).is_subtype_of(s) and not s.is_subtype_of(tf.TensorSpec([2, 3]))
    assert tf.TensorSpec([1, 2]).most_specific_compatible_type(tf.TensorSpec([3, 2])) == tf.TensorSpec([None, 2])
    with pytest.raises(ValueError, match="No TypeSpec is compatible"):
        tf.TensorSpec([1, 2]).most_specific_compatible_type(tf.TensorSpec([1, 2], tf.int32))


def test_type_spec_from_value():
    with tf.Graph().as_default() as g:
        assert tf.type_spec_from_value([[1, 2]]) == tf.TensorSpec([1, 2], tf.int32)
        assert tf.type_spec_from_value(1.5) == tf.TensorSpec([], tf.float32)
        assert not g.get_operations()  # describing a Python value adds nothing to the graph
        t = tf.constant([1.0, 2.0], name="c")
        assert tf.TensorSpec.from_tensor(t) == tf.TensorSpec([2], tf.float32, "c")
        sp = tf.type_spec_from_value(tf.SparseTensor([[0, 0]], [1.0], [2, 2]))
        assert sp == tf.SparseTensorSpec([2, 2], tf.float32) and sp.value_type is tf.SparseTensor
        assert tf.type_spec_from_value(None) == tf.NoneTensorSpec()
        with pytest.raises(TypeError):
            tf.type_spec_from_value(object())


def test_ragged_and_other_specs():
    assert tf.RaggedTensorSpec([2, None]).ragged_rank == 1
    assert tf.RaggedTensorSpec([2, None, None]).ragged_rank == 2
    with pytest.raises(ValueError, match="ragged_rank or a shape"):
        tf.RaggedTensorSpec(None)
    assert tf.IndexedSlicesSpec([10, 4]).value_type is tf.IndexedSlices
    assert tf.TensorArraySpec([3], tf.int32) == tf.TensorArraySpec([3], tf.int32)
    assert issubclass(tf.TensorSpec, tf.TypeSpec)


def test_dataset_element_spec_is_a_tensor_spec():
    ds = tf.data.Dataset.from_tensor_slices(np.zeros((4, 3), np.float32)).batch(2)
    assert ds.element_spec == tf.TensorSpec([None, 3], tf.float32)


def test_tensor_shape_repr_is_tf1s():
    # TF 2.21 with v2 behavior disabled writes the dims as Dimension objects (importing_data's program prints
    # dataset.output_shapes, a tuple of TensorShapes, through its repr).
    assert repr(tf.TensorShape([10, None])) == "TensorShape([Dimension(10), Dimension(None)])"
    assert repr(tf.TensorShape([])) == "TensorShape([])"
    assert repr(tf.TensorShape(None)) == "TensorShape(None)"
    assert str((tf.TensorShape([]), tf.TensorShape([3]))) == "(TensorShape([]), TensorShape([Dimension(3)]))"
