"""SaveV2 / RestoreV2 / MergeV2Checkpoints in a graph, and the native CheckpointReader."""

import json

import numpy as np
import pytest

import ferroflow as tf
from ferroflow import _native
from ferroflow.ops._op_util import make_op

# TensorFlow's DataType enum values.
DT = {
    "float32": 1,
    "float64": 2,
    "int32": 3,
    "uint8": 4,
    "int16": 5,
    "int8": 6,
    "string": 7,
    "complex64": 8,
    "int64": 9,
    "bool": 10,
    "bfloat16": 14,
    "uint16": 17,
    "float16": 19,
}


def _save(prefix, names, tensors, specs=None):
    specs = specs or [""] * len(names)
    return make_op(
        "SaveV2", [tf.constant(str(prefix)), tf.constant(names), tf.constant(specs)] + list(tensors)
    )


def _restore(prefix, names, dtypes, specs=None):
    specs = specs or [""] * len(names)
    op = make_op(
        "RestoreV2",
        [tf.constant(str(prefix)), tf.constant(names), tf.constant(specs)],
        {"dtypes": ("list_type", [tf.as_dtype(d).as_datatype_enum for d in dtypes])},
    )
    return op.outputs


def test_save_variables_and_restore_into_new_ones(tmp_path):
    prefix = tmp_path / "train" / "model.ckpt"
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="w")
    b = tf.Variable([0.5, -0.5], dtype=tf.float64, name="b")
    step = tf.Variable(7, dtype=tf.int64, name="global_step")
    label = tf.Variable("hello", name="label")
    names = ["w", "b", "global_step", "label"]
    save = _save(prefix, names, [v.value() for v in (w, b, step, label)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(save)
    assert sorted(p.name for p in prefix.parent.iterdir()) == [
        "model.ckpt.data-00000-of-00001",
        "model.ckpt.index",
    ]

    tf.reset_default_graph()
    w2 = tf.Variable(tf.zeros([2, 3]), name="w")
    b2 = tf.Variable(tf.zeros([2], tf.float64), name="b")
    step2 = tf.Variable(0, dtype=tf.int64, name="global_step")
    label2 = tf.Variable("", name="label")
    restored = _restore(prefix, names, [tf.float32, tf.float64, tf.int64, tf.string])
    assign = tf.group(*[tf.assign(v, t) for v, t in zip([w2, b2, step2, label2], restored)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(assign)
        got = sess.run([w2, b2, step2, label2])
    np.testing.assert_array_equal(got[0], np.arange(6, dtype=np.float32).reshape(2, 3))
    np.testing.assert_array_equal(got[1], [0.5, -0.5])
    assert got[2] == 7 and got[3] == b"hello"


def test_partitioned_save_and_sliced_restore(tmp_path):
    prefix = tmp_path / "p"
    full = np.arange(40, dtype=np.float32).reshape(10, 4)
    parts = [tf.constant(full[:4]), tf.constant(full[4:7]), tf.constant(full[7:])]
    specs = ["10 4 0,4:0,4", "10 4 4,3:0,4", "10 4 7,3:-"]
    save = _save(prefix, ["part_var"] * 3, parts, specs)
    whole, piece = _restore(prefix, ["part_var", "part_var"], [tf.float32] * 2, ["", "10 4 2,6:1,2"])
    assert piece.shape.as_list() == [6, 2]
    with tf.Session() as sess:
        sess.run(save)
        a, b = sess.run([whole, piece])
    np.testing.assert_array_equal(a, full)
    np.testing.assert_array_equal(b, full[2:8, 1:3])
    r = _native.CheckpointReader(str(prefix))
    assert r.variable_to_shape_map() == {"part_var": [10, 4]}
    np.testing.assert_array_equal(r.get_tensor("part_var"), full)
    # The stored slices show up raw in the debug string, as in TensorFlow.
    assert r.debug_string().count(b"(DT_FLOAT) [") == 3


def test_restore_errors(tmp_path):
    prefix = tmp_path / "m"
    save = _save(prefix, ["x"], [tf.constant([1.0, 2.0], tf.float64)])
    missing = _restore(prefix, ["x", "nope"], [tf.float64, tf.float32])
    wrong = _restore(prefix, ["x"], [tf.float32])
    bad_shape = _restore(prefix, ["x"], [tf.float64], ["3 0,1"])
    absent = _restore(tmp_path / "absent", ["x"], [tf.float64])
    with tf.Session() as sess:
        sess.run(save)
        with pytest.raises(tf.errors.NotFoundError, match=r"Key nope not found in checkpoint .*m"):
            sess.run(missing)
        with pytest.raises(
            tf.errors.InvalidArgumentError, match="expected dtype float does not equal original dtype double"
        ):
            sess.run(wrong)
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not match the shape stored"):
            sess.run(bad_shape)
        with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files for .*absent"):
            sess.run(absent)


def test_sharded_save_and_merge(tmp_path):
    final = tmp_path / "model.ckpt"
    parts = [tmp_path / "model.ckpt_temp" / f"part-{i:05d}-of-00002" for i in range(2)]
    saves = [
        _save(parts[0], ["a"], [tf.constant([1, 2], tf.int32)]),
        _save(parts[1], ["b"], [tf.constant(3.0)]),
    ]
    with tf.control_dependencies(saves):
        merge = make_op(
            "MergeV2Checkpoints",
            [tf.constant([str(p) for p in parts]), tf.constant(str(final))],
            {"delete_old_dirs": True},
        )
    with tf.Session() as sess:
        sess.run(merge)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "model.ckpt.data-00000-of-00002",
        "model.ckpt.data-00001-of-00002",
        "model.ckpt.index",
    ]
    r = _native.CheckpointReader(str(final))
    np.testing.assert_array_equal(r.get_tensor("a"), [1, 2])
    assert r.get_tensor("b") == 3.0


def test_reader_on_every_golden_checkpoint(fixtures):
    root = fixtures / "checkpoints"
    checked = 0
    for case in sorted(p for p in root.iterdir() if (p / "list_variables.json").exists()):
        manifest = json.loads((case / "list_variables.json").read_text())
        if "variables" not in manifest:
            continue
        r = _native.CheckpointReader(str(case / manifest["checkpoint_prefix"]))
        assert sorted(r.variable_to_shape_map().items()) == [(n, s) for n, s in manifest["list_variables"]]
        dtypes = r.variable_to_dtype_map()
        npz = np.load(case / "values.npz") if (case / "values.npz").exists() else {}
        for v in manifest["variables"]:
            assert r.has_tensor(v["name"])
            assert dtypes[v["name"]] == DT[v["dtype"]]
            got = r.get_tensor(v["name"])
            if "npz_key" in v:
                want = npz[v["npz_key"]]
                assert np.asarray(got).dtype == want.dtype, v["name"]
                np.testing.assert_array_equal(got, want)
                checked += 1
            elif "value_json" in v:
                items = v["value_json"]
                want = (
                    [bytes.fromhex(x["hex"]) for x in items]
                    if isinstance(items, list)
                    else bytes.fromhex(items["hex"])
                )
                assert (list(got) if isinstance(items, list) else got) == want
                checked += 1
    assert checked > 20
    assert not r.has_tensor("no such tensor")


def test_reader_errors(tmp_path):
    with pytest.raises(
        tf.errors.NotFoundError,
        match="Unsuccessful TensorSliceReader constructor: Failed to find any matching files for",
    ):
        _native.CheckpointReader(str(tmp_path / "nothing"))
    prefix = tmp_path / "c"
    _native.checkpoint_write(str(prefix), ["x", "y"], [np.arange(100, dtype=np.float32), np.int64(5)])
    r = _native.CheckpointReader(str(prefix))
    with pytest.raises(tf.errors.NotFoundError, match="Key z not found in checkpoint"):
        r.get_tensor("z")
    data = tmp_path / "c.data-00000-of-00001"
    raw = bytearray(data.read_bytes())
    raw[10] ^= 0xFF
    data.write_bytes(bytes(raw))
    r = _native.CheckpointReader(str(prefix))
    assert r.get_tensor("y") == 5
    with pytest.raises(
        tf.errors.DataLossError, match=r"tensor 'x' in .*c\.data-00000-of-00001: checksum mismatch"
    ):
        r.get_tensor("x")
    index = tmp_path / "c.index"
    index.write_bytes(index.read_bytes()[:-1])
    with pytest.raises(tf.errors.DataLossError, match=r"c\.index: not an sstable"):
        _native.CheckpointReader(str(prefix))


def test_checkpoint_write_round_trips_every_dtype(tmp_path):
    values = {
        "f32": np.array([[1.5, -2.0]], np.float32),
        "f64": np.array([np.pi]),
        "f16": np.array([0.5], np.float16),
        "i8": np.array([-128, 127], np.int8),
        "i16": np.array([7], np.int16),
        "i32": np.int32(-3),
        "i64": np.array([2**40], np.int64),
        "u8": np.array([255], np.uint8),
        "u16": np.array([65535], np.uint16),
        "bool": np.array([True, False]),
        "empty": np.zeros([0, 2], np.float32),
    }
    bf16_bits = np.array([0x3F80, 0xC060], np.uint16)
    names = list(values) + ["bf16", "s"]
    tensors = list(values.values()) + [bf16_bits, ("strings", [2], [b"a", b"\x00\xff"])]
    dtypes = [None] * len(values) + [DT["bfloat16"], None]
    _native.checkpoint_write(str(tmp_path / "all"), names, tensors, dtypes)
    r = _native.CheckpointReader(str(tmp_path / "all"))
    for k, v in values.items():
        got = r.get_tensor(k)
        assert np.asarray(got).dtype == v.dtype and np.array_equal(got, v), k
    assert r.variable_to_dtype_map()["bf16"] == DT["bfloat16"]
    np.testing.assert_array_equal(r.get_tensor("bf16"), bf16_bits)
    assert list(r.get_tensor("s")) == [b"a", b"\x00\xff"]
    r.verify()
