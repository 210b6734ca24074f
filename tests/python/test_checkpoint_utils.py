"""tf.train.NewCheckpointReader / load_checkpoint / list_variables / load_variable
against the checkpoints real TensorFlow wrote (tests/fixtures/checkpoints)."""

import json
import shutil

import numpy as np
import pytest

import ferroflow as tf

CASES = ["adam_model", "dtypes", "partitioned", "sharded", "object_tf2"]


def _manifest(fixtures, case):
    return json.loads((fixtures / "checkpoints" / case / "list_variables.json").read_text())


def _prefix(fixtures, case):
    return str(fixtures / "checkpoints" / case / _manifest(fixtures, case)["checkpoint_prefix"])


def _expected_value(fixtures, case, var):
    if "npz_key" in var:
        value = np.load(fixtures / "checkpoints" / case / "values.npz")[var["npz_key"]]
        return value
    if "value_json" in var:
        vj = var["value_json"]
        if isinstance(vj, dict):
            return bytes.fromhex(vj["hex"])
        return np.array([bytes.fromhex(x["hex"]) for x in vj], dtype=object)
    return None


@pytest.mark.parametrize("case", CASES)
def test_reader_matches_tensorflow(fixtures, case):
    m = _manifest(fixtures, case)
    reader = tf.train.NewCheckpointReader(_prefix(fixtures, case))
    shapes = reader.get_variable_to_shape_map()
    dtype_map = reader.get_variable_to_dtype_map()
    assert sorted(shapes.items()) == sorted((n, s) for n, s in m["list_variables"])
    for var in m["variables"]:
        name = var["name"]
        assert reader.has_tensor(name)
        assert isinstance(dtype_map[name], tf.DType)
        assert dtype_map[name] == tf.as_dtype(var["dtype"])
        assert shapes[name] == var["shape"]
        expected = _expected_value(fixtures, case, var)
        if expected is None:
            continue
        got = reader.get_tensor(name)
        if var["dtype"] == "bfloat16":
            got = np.asarray(got).view(np.uint16)
        if var["dtype"] == "string":
            assert (got == expected) if isinstance(expected, bytes) else list(got) == list(expected)
        else:
            assert np.asarray(got).dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)
    assert not reader.has_tensor("no/such/tensor")


def test_debug_string_lists_every_entry(fixtures):
    m = _manifest(fixtures, "dtypes")
    text = tf.train.NewCheckpointReader(_prefix(fixtures, "dtypes")).debug_string()
    assert isinstance(text, bytes)
    lines = text.decode("utf-8").splitlines()
    assert len(lines) == len(m["list_variables"])
    for var in m["variables"]:
        dims = ",".join(str(d) for d in var["shape"])
        enum_name = "DT_" + tf.as_dtype(var["dtype"]).name.upper()
        enum_name = {"DT_FLOAT32": "DT_FLOAT", "DT_FLOAT64": "DT_DOUBLE", "DT_FLOAT16": "DT_HALF"}.get(
            enum_name, enum_name
        )
        assert f"{var['name']} ({enum_name}) [{dims}]" in lines


@pytest.mark.parametrize("case", CASES)
def test_list_variables_directory_and_prefix(fixtures, case):
    m = _manifest(fixtures, case)
    expected = [(n, s) for n, s in m["list_variables"]]
    ckpt_dir = fixtures / "checkpoints" / case / "ckpt"
    assert tf.train.list_variables(str(ckpt_dir)) == sorted(expected)
    assert tf.train.list_variables(_prefix(fixtures, case)) == sorted(expected)


def test_load_variable_and_load_checkpoint(fixtures):
    m = _manifest(fixtures, "adam_model")
    ckpt_dir = str(fixtures / "checkpoints" / "adam_model" / "ckpt")
    values = np.load(fixtures / "checkpoints" / "adam_model" / "values.npz")
    for var in m["variables"]:
        np.testing.assert_array_equal(tf.train.load_variable(ckpt_dir, var["name"]), values[var["npz_key"]])
        # A tensor-style name with ":0" works too, as in TensorFlow.
        np.testing.assert_array_equal(tf.train.load_variable(ckpt_dir, var["name"] + ":0"), values[var["npz_key"]])
    reader = tf.train.load_checkpoint(ckpt_dir)
    assert reader.prefix.endswith(m["checkpoint_prefix"].split("/")[-1])


def test_partitioned_tensor_is_assembled(fixtures):
    m = _manifest(fixtures, "partitioned")
    reader = tf.train.load_checkpoint(str(fixtures / "checkpoints" / "partitioned" / "ckpt"))
    values = np.load(fixtures / "checkpoints" / "partitioned" / "values.npz")
    parts = m["partitions"]
    full_name = parts[0]["full_name"]
    full = reader.get_tensor(full_name)
    np.testing.assert_array_equal(full, values[full_name])
    # Each recorded slice is where the manifest says it is.
    for p in parts:
        sl = tuple(slice(o, o + s) for o, s in zip(p["var_offset"], p["var_shape"]))
        assert full[sl].shape == tuple(p["shape"])


def test_missing_files_and_keys(tmp_path, fixtures):
    with pytest.raises(tf.errors.NotFoundError, match="nothing_here"):
        tf.train.NewCheckpointReader(str(tmp_path / "nothing_here"))
    with pytest.raises(tf.errors.NotFoundError, match="nothing_here"):
        tf.train.load_variable(str(tmp_path / "nothing_here"), "x")
    with pytest.raises(ValueError, match=r"Couldn't find 'checkpoint' file or checkpoints in given directory"):
        tf.train.load_checkpoint(str(tmp_path))
    with pytest.raises(ValueError, match=str(tmp_path)):
        tf.train.list_variables(str(tmp_path))
    reader = tf.train.load_checkpoint(_prefix(fixtures, "adam_model"))
    with pytest.raises(tf.errors.NotFoundError, match="Key no_such_key not found in checkpoint"):
        reader.get_tensor("no_such_key")
    with pytest.raises(TypeError, match="tensor name must be a string"):
        reader.get_tensor(3)


def test_corrupt_index_is_data_loss(tmp_path, fixtures):
    src = fixtures / "checkpoints" / "adam_model" / "ckpt"
    for f in src.iterdir():
        shutil.copy(f, tmp_path / f.name)
    index = next(tmp_path.glob("*.index"))
    data = bytearray(index.read_bytes())
    data[-3] ^= 0xFF  # the footer's magic number
    index.write_bytes(bytes(data))
    with pytest.raises(tf.errors.DataLossError, match=index.name):
        tf.train.load_checkpoint(str(tmp_path))


def test_corrupt_data_fails_on_read(tmp_path, fixtures):
    src = fixtures / "checkpoints" / "adam_model" / "ckpt"
    for f in src.iterdir():
        shutil.copy(f, tmp_path / f.name)
    data_file = next(tmp_path.glob("*.data-*"))
    data = bytearray(data_file.read_bytes())
    for i in range(len(data)):
        data[i] ^= 0x5A
    data_file.write_bytes(bytes(data))
    reader = tf.train.load_checkpoint(str(tmp_path))
    name = sorted(reader.get_variable_to_shape_map())[0]
    with pytest.raises(tf.errors.DataLossError):
        reader.get_tensor(name)
    with pytest.raises(tf.errors.DataLossError):
        reader.verify()


def test_directory_state_file_relative_and_stale(tmp_path, fixtures):
    """The state file's newest entry wins; a state file naming a deleted checkpoint gives no checkpoint."""
    src = fixtures / "checkpoints" / "max_to_keep" / "ckpt"
    for f in src.iterdir():
        shutil.copy(f, tmp_path / f.name)
    m = _manifest(fixtures, "max_to_keep")
    newest = m["kept_checkpoints"][-1]
    reader = tf.train.load_checkpoint(str(tmp_path))
    assert reader.prefix == str(tmp_path / newest)
    for f in tmp_path.glob(newest + ".*"):
        f.unlink()
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        tf.train.load_checkpoint(str(tmp_path))


def test_values_written_by_ferroflow_read_back(tmp_path):
    prefix = tmp_path / "model.ckpt"
    w = tf.Variable(np.arange(6, dtype=np.float64).reshape(2, 3), name="w")
    s = tf.Variable([b"a", b"bc"], name="s")
    from ferroflow.ops._op_util import make_op

    save = make_op(
        "SaveV2", [tf.constant(str(prefix)), tf.constant(["w", "s"]), tf.constant(["", ""]), w.value(), s.value()]
    )
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(save)
    reader = tf.train.NewCheckpointReader(str(prefix))
    assert reader.get_variable_to_dtype_map() == {"w": tf.float64, "s": tf.string}
    np.testing.assert_array_equal(reader.get_tensor("w"), np.arange(6).reshape(2, 3))
    assert list(reader.get_tensor("s")) == [b"a", b"bc"]
    assert tf.train.list_variables(str(prefix)) == [("s", [2]), ("w", [2, 3])]
