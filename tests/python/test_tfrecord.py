"""TFRecord files and tf.train.Example against files written by TensorFlow (tests/fixtures/records/tfrecord)."""

import gzip
import json
import math
import struct
import zlib

import numpy as np
import pytest

import ferroflow as tf
import ferroflow.compat.v1 as tf1

COMPRESSION = {"NONE": "", "GZIP": "GZIP", "ZLIB": "ZLIB"}


@pytest.fixture
def golden(fixtures):
    root = fixtures / "records" / "tfrecord"
    return root, json.loads((root / "examples.json").read_text())


def _float(v):
    return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(v, v) if isinstance(v, str) else v


def _example_from_json(features, has_features_field=True):
    ex = tf.train.Example()
    if has_features_field:
        ex.features.SetInParent()
    for key, spec in features.items():
        feat = ex.features.feature[key]
        if spec is None or spec.get("kind") is None:
            continue
        kind, values = spec["kind"], spec["value"]
        lst = getattr(feat, kind)
        lst.SetInParent()
        if kind == "bytes_list":
            lst.value.extend(bytes.fromhex(v["hex"]) for v in values)
        elif kind == "float_list":
            lst.value.extend(_float(v) for v in values)
        else:
            lst.value.extend(int(v) for v in values)
    return ex


def test_examples_serialize_to_tensorflows_bytes(golden):
    _, manifest = golden
    for rec in manifest["records"]:
        ex = _example_from_json(rec["features"], rec.get("has_features_field", True))
        assert ex.SerializeToString(deterministic=True).hex() == rec["serialized_hex"], rec["index"]


@pytest.mark.parametrize("iterator", [tf.io.tf_record_iterator, tf1.python_io.tf_record_iterator])
def test_read_golden_files(golden, iterator):
    root, manifest = golden
    expected = [bytes.fromhex(r["serialized_hex"]) for r in manifest["records"]]
    for name, kind in manifest["files"].items():
        got = list(iterator(str(root / name), options=tf.io.TFRecordOptions(COMPRESSION[kind])))
        assert got == expected, name
    # The records parse back to the features the manifest lists.
    first = tf.train.Example.FromString(expected[0])
    feats = manifest["records"][0]["features"]
    for key, spec in feats.items():
        if spec and spec.get("kind") == "int64_list":
            assert list(first.features.feature[key].int64_list.value) == [int(v) for v in spec["value"]]


def test_frames_match_manifest(golden):
    root, manifest = golden
    data = (root / "examples.tfrecord").read_bytes()
    for rec in manifest["records"]:
        frame = rec["frame"]
        off = frame["offset"]
        (length,) = struct.unpack_from("<Q", data, off)
        assert length == frame["length"]
        assert struct.unpack_from("<I", data, off + 8)[0] == frame["masked_crc32c_of_length"]
        assert struct.unpack_from("<I", data, off + 12 + length)[0] == frame["masked_crc32c_of_data"]


def test_writer_output_is_byte_identical(golden, tmp_path):
    root, manifest = golden
    path = tmp_path / "out.tfrecord"
    with tf.io.TFRecordWriter(str(path)) as w:
        for rec in manifest["records"]:
            w.write(bytes.fromhex(rec["serialized_hex"]))
    assert path.read_bytes() == (root / "examples.tfrecord").read_bytes()


@pytest.mark.parametrize(
    "options",
    ["GZIP", "ZLIB", tf.io.TFRecordCompressionType.GZIP, tf.io.TFRecordCompressionType.ZLIB,
     tf.io.TFRecordOptions(compression_type="GZIP"), tf.io.TFRecordOptions(tf.io.TFRecordCompressionType.ZLIB)],
)
def test_compressed_round_trip(golden, tmp_path, options):
    root, manifest = golden
    payloads = [bytes.fromhex(r["serialized_hex"]) for r in manifest["records"]]
    path = tmp_path / "c.tfrecord"
    w = tf.io.TFRecordWriter(path, options)
    for p in payloads:
        w.write(p)
    w.close()
    assert list(tf.io.tf_record_iterator(str(path), options)) == payloads
    kind = tf.io.TFRecordOptions.get_compression_type_string(options)
    decompress = gzip.decompress if kind == "GZIP" else zlib.decompress
    # The decompressed stream is exactly the uncompressed file TensorFlow wrote.
    assert decompress(path.read_bytes()) == (root / "examples.tfrecord").read_bytes()


def test_sequence_examples(fixtures):
    root = fixtures / "records" / "tfrecord"
    manifest = json.loads((root / "sequence_examples.json").read_text())
    records = list(tf.io.tf_record_iterator(str(root / "sequence_examples.tfrecord")))
    assert [r.hex() for r in records] == [r["serialized_hex"] for r in manifest["records"]]
    seq = tf.train.SequenceExample.FromString(records[0])
    assert seq.SerializeToString(deterministic=True) == records[0]
    assert len(seq.feature_lists.feature_list) > 0


def test_str_records_flush_and_many_records(tmp_path):
    path = tmp_path / "s.tfrecord"
    w = tf.io.TFRecordWriter(str(path))
    w.write("héllo")
    w.write(bytearray(b"\x00\x01"))
    w.flush()
    # Flushed records are readable while the writer is still open.
    assert list(tf.io.tf_record_iterator(str(path))) == ["héllo".encode(), b"\x00\x01"]
    rng = np.random.default_rng(0)
    blobs = [rng.bytes(int(n)) for n in rng.integers(0, 3000, size=200)]
    for b in blobs:
        w.write(b)
    w.close()
    w.close()  # closing twice is fine
    assert list(tf.io.tf_record_iterator(str(path)))[2:] == blobs
    with pytest.raises(TypeError):
        tf.io.TFRecordWriter(str(tmp_path / "t")).write(3)


def test_options_validation():
    opts = tf.io.TFRecordOptions
    assert opts.get_compression_type_string(None) == ""
    assert opts.get_compression_type_string("") == ""
    assert opts.get_compression_type_string(tf.io.TFRecordCompressionType.NONE) == ""
    assert opts.get_compression_type_string(opts("GZIP")) == "GZIP"
    with pytest.raises(ValueError, match="LZ4"):
        opts("LZ4")
    with pytest.raises(ValueError):
        tf.io.TFRecordWriter("/tmp/never-created", "bzip2")
    assert tf1.python_io.TFRecordWriter is tf.io.TFRecordWriter


def _corrupt(tmp_path, golden_root, mutate):
    data = bytearray((golden_root / "examples.tfrecord").read_bytes())
    data = mutate(data)
    path = tmp_path / "bad.tfrecord"
    path.write_bytes(bytes(data))
    return path


def test_corrupt_payload_is_data_loss_naming_file_and_offset(golden, tmp_path):
    root, manifest = golden
    second = manifest["records"][1]["frame"]

    def flip(data):
        data[second["offset"] + 12 + 3] ^= 0xFF
        return data

    path = _corrupt(tmp_path, root, flip)
    it = tf.io.tf_record_iterator(str(path))
    assert next(it) == bytes.fromhex(manifest["records"][0]["serialized_hex"])
    with pytest.raises(tf.errors.DataLossError) as err:
        next(it)
    msg = str(err.value)
    assert str(path) in msg
    assert str(second["offset"] + 12) in msg
    assert "checksum" in msg


def test_corrupt_length_and_truncation(golden, tmp_path):
    root, manifest = golden
    third = manifest["records"][2]["frame"]

    def bad_length(data):
        data[third["offset"]] ^= 0x01
        return data

    path = _corrupt(tmp_path, root, bad_length)
    with pytest.raises(tf.errors.DataLossError, match=rf"at {third['offset']} in .*bad.tfrecord"):
        list(tf.io.tf_record_iterator(str(path)))

    def truncate(data):
        return data[: third["offset"] + 12 + 5]

    path = _corrupt(tmp_path, root, truncate)
    with pytest.raises(tf.errors.DataLossError, match=rf"truncated record at {third['offset']} in .*bad.tfrecord"):
        list(tf.io.tf_record_iterator(str(path)))


def test_truncated_compressed_stream(golden, tmp_path):
    root, manifest = golden
    data = (root / "examples.tfrecord.gz").read_bytes()
    path = tmp_path / "cut.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(tf.errors.DataLossError, match="cut.gz"):
        list(tf.io.tf_record_iterator(str(path), "GZIP"))
    path.write_bytes(b"not a gzip stream at all")
    with pytest.raises(tf.errors.DataLossError, match="cut.gz"):
        list(tf.io.tf_record_iterator(str(path), "GZIP"))


def test_missing_file_and_closed_writer(tmp_path):
    with pytest.raises(tf.errors.NotFoundError, match="missing.tfrecord"):
        tf.io.tf_record_iterator(str(tmp_path / "missing.tfrecord"))
    w = tf.io.TFRecordWriter(str(tmp_path / "w.tfrecord"))
    w.close()
    with pytest.raises(tf.errors.FailedPreconditionError, match="closed"):
        w.write(b"x")
    with pytest.raises(tf.errors.NotFoundError):
        tf.io.TFRecordWriter(str(tmp_path / "no" / "such" / "dir" / "x.tfrecord"))


def test_random_garbage_never_crashes(tmp_path):
    rng = np.random.default_rng(7)
    path = tmp_path / "g.tfrecord"
    for i in range(50):
        path.write_bytes(rng.bytes(int(rng.integers(0, 200))))
        try:
            list(tf.io.tf_record_iterator(str(path)))
        except tf.errors.DataLossError as e:
            assert "g.tfrecord" in str(e), i


def test_records_around_the_read_buffer_size(tmp_path):
    # The reader hands out records that lie whole in its 256 KiB buffer in
    # place and copies the ones that straddle its end: both must read back.
    rng = np.random.default_rng(1)
    sizes = [1000, 255 * 1024, 256 * 1024, 300 * 1024, 5, 1 << 20, 0, 70000, 4096]
    blobs = [rng.bytes(n) for n in sizes]
    path = str(tmp_path / "big.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        for b in blobs:
            w.write(b)
    assert list(tf.io.tf_record_iterator(path)) == blobs
    # A flipped payload byte in a straddling record is still caught.
    data = bytearray(open(path, "rb").read())
    offset = sum(len(b) + 16 for b in blobs[:3])
    data[offset + 12 + 200_000] ^= 0x01
    open(path, "wb").write(bytes(data))
    it = tf.io.tf_record_iterator(path)
    assert [next(it) for _ in range(3)] == blobs[:3]
    with pytest.raises(tf.errors.DataLossError, match=f"at {offset + 12} in .*big.tfrecord"):
        next(it)
