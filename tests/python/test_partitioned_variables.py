"""Partitioners, get_variable(partitioner=...), PartitionedVariable and its parts' save-slice info."""

import json

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.ops.partitioned_variables import PartitionedVariable


def _manifest(fixtures):
    return json.loads((fixtures / "checkpoints" / "partitioned" / "list_variables.json").read_text())


# (shape, dtype, partitioner, expected parts per axis). The expectations follow
# from TensorFlow's rules (worked out by hand below) and agree with what
# tf.compat.v1's partitioners return for the same arguments.
PARTITIONER_CASES = [
    # fixed_size: min(num_shards, dim) along the axis.
    ([10, 4], tf.float32, tf.fixed_size_partitioner(3), [3, 1]),
    ([10, 4], tf.float32, tf.fixed_size_partitioner(20), [10, 1]),
    ([10, 4], tf.float32, tf.fixed_size_partitioner(2, axis=1), [1, 2]),
    ([5], tf.int64, tf.fixed_size_partitioner(3), [3]),
    # variable_axis_size: a [10, 4] float32 row is 16 bytes; 100 // 16 = 6 rows per shard -> ceil(10/6) = 2.
    ([10, 4], tf.float32, tf.variable_axis_size_partitioner(100), [2, 1]),
    # strings count bytes_per_string_element (16) each: a row of 3 is 48 bytes -> 2 rows per shard -> 4.
    ([7, 3], tf.string, tf.variable_axis_size_partitioner(100), [4, 1]),
    # a slice bigger than the budget still gets a shard of its own: one per row.
    ([1000, 300], tf.float32, tf.variable_axis_size_partitioner(100), [1000, 1]),
    ([1000, 300], tf.float32, tf.variable_axis_size_partitioner(4096, max_shards=3), [3, 1]),
    ([300000, 1], tf.float32, tf.variable_axis_size_partitioner(100), [12000, 1]),
    # min_max: ceil(total_bytes / min_slice_size), capped by max_partitions and the dimension.
    ([10, 4], tf.float32, tf.min_max_variable_partitioner(4), [1, 1]),  # 160 B < 256 KiB
    ([1000, 300], tf.float32, tf.min_max_variable_partitioner(4), [4, 1]),  # 1.2 MB / 256 KiB -> 5 -> 4
    ([10, 4], tf.float32, tf.min_max_variable_partitioner(8, min_slice_size=64), [3, 1]),  # ceil(160/64)
    ([7, 3], tf.string, tf.min_max_variable_partitioner(8, min_slice_size=64), [6, 1]),  # ceil(336/64)
    ([100, 50, 2], tf.float64, tf.min_max_variable_partitioner(3, axis=1, min_slice_size=16), [1, 3, 1]),
    ([300000, 1], tf.float32, tf.min_max_variable_partitioner(3, axis=1, min_slice_size=16), [1, 1]),
]


@pytest.mark.parametrize("shape,dtype,partitioner,expected", PARTITIONER_CASES)
def test_partitioners(shape, dtype, partitioner, expected):
    assert partitioner(shape=tf.TensorShape(shape), dtype=dtype) == expected


def test_partitioner_argument_errors():
    with pytest.raises(ValueError, match="max_shard_bytes"):
        tf.variable_axis_size_partitioner(0)
    with pytest.raises(ValueError, match="max_shards must be positive"):
        tf.variable_axis_size_partitioner(10, max_shards=0)
    with pytest.raises(ValueError, match="shape is not a TensorShape"):
        tf.variable_axis_size_partitioner(10)(shape=[3, 4], dtype=tf.float32)
    with pytest.raises(ValueError, match="along axis 2 when shape is only"):
        tf.min_max_variable_partitioner(2, axis=2)(shape=tf.TensorShape([3, 4]), dtype=tf.float32)


def test_parts_match_tensorflow_layout(fixtures):
    """Names, shapes and slice specs of the parts are the ones in TF's partitioned checkpoint."""
    m = _manifest(fixtures)
    parts = m["partitions"]
    full_name = parts[0]["full_name"]
    full_shape = next(v["shape"] for v in m["variables"] if v["name"] == full_name)
    pv = tf.get_variable(full_name, shape=full_shape, partitioner=tf.fixed_size_partitioner(len(parts), axis=0))
    assert isinstance(pv, PartitionedVariable)
    assert pv.name == full_name and pv.get_shape().as_list() == full_shape and pv.dtype == tf.float32
    assert len(pv) == len(parts)
    for var, expected in zip(pv, parts):
        assert var.op.name == expected["variable"]
        assert var.get_shape().as_list() == expected["shape"]
        info = var._save_slice_info
        assert info.full_name == expected["full_name"]
        assert list(info.full_shape) == full_shape
        assert list(info.var_offset) == expected["var_offset"]
        assert list(info.var_shape) == expected["var_shape"]
        assert info.spec == expected["save_slice_info_spec"]
    # The parts (not the partitioned variable) are what the collections hold.
    assert [v.op.name for v in tf.global_variables()] == [p["variable"] for p in parts]
    assert [v.op.name for v in tf.trainable_variables()] == [p["variable"] for p in parts]


def test_partition_along_axis_1_and_uneven_sizes():
    pv = tf.get_variable("w", [3, 10], partitioner=tf.fixed_size_partitioner(3, axis=1))
    assert [v.get_shape().as_list() for v in pv] == [[3, 4], [3, 3], [3, 3]]
    assert [v._save_slice_info.spec for v in pv] == ["3 10 0,3:0,4", "3 10 0,3:4,3", "3 10 0,3:7,3"]
    assert pv._get_partitions() == [1, 3]


def test_as_tensor_concatenates_the_parts():
    values = np.arange(33, dtype=np.float32).reshape(11, 3)
    pv = tf.get_variable("v", [11, 3], initializer=tf.zeros_initializer(), partitioner=tf.fixed_size_partitioner(4))
    full = tf.convert_to_tensor(pv)
    assert full.get_shape().as_list() == [11, 3]
    assert full.op.inputs[0].name == "v/ConcatPartitions/concat:0"
    assigns = pv.assign(values)
    doubled = tf.multiply(pv, 2.0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(full), np.zeros((11, 3), np.float32))
        sess.run(assigns)
        np.testing.assert_array_equal(sess.run(full), values)
        np.testing.assert_array_equal(sess.run(doubled), values * 2)
        np.testing.assert_array_equal(sess.run(list(pv)[3]), values[9:])


def test_embedding_lookup_on_partitioned_variable():
    vocab, dim, shards = 10, 3, 3
    table = np.arange(vocab * dim, dtype=np.float32).reshape(vocab, dim)
    pv = tf.get_variable("emb", [vocab, dim], partitioner=tf.fixed_size_partitioner(shards))
    assign = tf.group(*pv.assign(table))
    ids = np.array([0, 4, 9, 5, 3])
    by_div = tf.nn.embedding_lookup(pv, ids, partition_strategy="div")
    by_mod = tf.nn.embedding_lookup(pv, ids, partition_strategy="mod")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(assign)
        # 'div' with TF's layout (first parts one row larger) gives the plain table rows.
        np.testing.assert_array_equal(sess.run(by_div), table[ids])
        # 'mod' reads id i from part i % n, row i // n of that part.
        sizes = [v.get_shape().as_list()[0] for v in pv]
        starts = np.cumsum([0] + sizes[:-1])
        rows = [starts[i % shards] + i // shards for i in ids]
        np.testing.assert_array_equal(sess.run(by_mod), table[rows])


def test_initializers_see_the_full_shape():
    """Variance-scaling initializers use the full variable's fan (TF passes partition_info)."""
    pv = tf.get_variable("big", [400, 100], partitioner=tf.fixed_size_partitioner(4),
                         initializer=tf.glorot_uniform_initializer(seed=1))
    limit = np.sqrt(6.0 / (400 + 100))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        full = sess.run(tf.convert_to_tensor(pv))
    assert np.abs(full).max() <= limit
    assert np.abs(full).max() > 0.9 * limit  # not the (wider) part-shaped limit, nor a tiny one


def test_variable_scope_partitioner_and_reuse():
    with tf.variable_scope("s", partitioner=tf.fixed_size_partitioner(2)):
        a = tf.get_variable("a", [4, 2])
        scalar = tf.get_variable("scalar", [])  # scalars are never partitioned
    assert isinstance(a, PartitionedVariable) and [v.op.name for v in a] == ["s/a/part_0", "s/a/part_1"]
    assert isinstance(scalar, tf.Variable)
    with tf.variable_scope("s", reuse=True, partitioner=tf.fixed_size_partitioner(2)):
        assert tf.get_variable("a", [4, 2]) is a
    with tf.variable_scope("s", reuse=True, partitioner=tf.fixed_size_partitioner(4)):
        with pytest.raises(ValueError, match=r"specified partitions \[4, 1\] and found partitions \[2, 1\]"):
            tf.get_variable("a", [4, 2])
    with tf.variable_scope("s", partitioner=tf.fixed_size_partitioner(2)):
        with pytest.raises(ValueError, match="Partitioned variable with name s/a already exists"):
            tf.get_variable("a", [4, 2])
    with tf.variable_scope("s", reuse=True, partitioner=tf.fixed_size_partitioner(2)):
        with pytest.raises(ValueError, match="PartitionedVariable s/b does not exist"):
            tf.get_variable("b", [4, 2])


def test_partitioned_variable_errors():
    tf.get_variable("plain", [4, 2])
    with pytest.raises(ValueError, match="unpartitioned version of the variable was found: plain"):
        tf.get_variable("plain", [4, 2], partitioner=tf.fixed_size_partitioner(2))
    with pytest.raises(ValueError, match=r"Can only slice a variable along one dimension"):
        tf.get_variable("x", [2, 3], partitioner=lambda shape, dtype: [2, 2])
    with pytest.raises(ValueError, match=r"does not match the Variable's rank: \[2\]"):
        tf.get_variable("y", [2, 3], partitioner=lambda shape, dtype: [2])
    with pytest.raises(ValueError, match="zero partitions"):
        tf.get_variable("z", [2, 3], partitioner=lambda shape, dtype: [0, 1])
    with pytest.raises(ValueError, match="must be fully defined"):
        tf.get_variable("u", [None, 3], partitioner=tf.fixed_size_partitioner(2))


def test_create_partitioned_variables():
    parts = tf.create_partitioned_variables([6, 2], [3, 1], tf.ones_initializer(), name="cpv")
    assert [v.op.name for v in parts] == ["cpv/part_0", "cpv/part_1", "cpv/part_2"]
    assert [v._save_slice_info.spec for v in parts] == ["6 2 0,2:0,2", "6 2 2,2:0,2", "6 2 4,2:0,2"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(parts[1]), np.ones((2, 2), np.float32))
