"""TF1 readers and the whole-file ops against TensorFlow 2.21's outputs (tests/fixtures/queues/queues.json and
the data files next to it, made by make_queues.py)."""

import json
import os
import shutil
from pathlib import Path

import pytest

import ferroflow as tf

HERE = Path(__file__).parent.parent / "fixtures" / "queues"
FIXTURES = json.loads((HERE / "queues.json").read_text())["readers"]


def _read_all(make_reader, files, up_to=None):
    with tf.Graph().as_default():
        q = tf.FIFOQueue(10, [tf.string], shapes=[[]])
        r = make_reader()
        kv = r.read_up_to(q, up_to) if up_to else r.read(q)
        enq, close = q.enqueue_many([[str(HERE / f) for f in files]]), q.close()
        with tf.Session() as s:
            s.run(enq)
            s.run(close)
            got = []
            while True:
                try:
                    k, v = s.run(kv)
                except tf.errors.OutOfRangeError:
                    break
                rel = lambda b: b.decode().replace(str(HERE) + "/", "")  # noqa: E731
                if up_to:
                    got.append([[rel(x) for x in k], [x.decode("latin-1") for x in v]])
                else:
                    got.append([rel(k), v.decode("latin-1")])
            return {"records": got, "produced": int(s.run(r.num_records_produced())),
                    "completed": int(s.run(r.num_work_units_completed()))}


CASES = {
    "tfrecord": (tf.TFRecordReader, ["records.tfrecord"] * 2, None),
    "tfrecord_gzip": (lambda: tf.TFRecordReader(options=tf.io.TFRecordOptions(compression_type="GZIP")),
                      ["records.tfrecord.gz"], None),
    "tfrecord_up_to": (tf.TFRecordReader, ["records.tfrecord"] * 2, 3),
    "text": (lambda: tf.TextLineReader(skip_header_lines=2), ["lines.txt"], None),
    "text_noskip": (tf.TextLineReader, ["lines.txt"], None),
    "fixed": (lambda: tf.FixedLengthRecordReader(4, header_bytes=3, footer_bytes=2), ["fixed.bin"], None),
    "fixed_hop": (lambda: tf.FixedLengthRecordReader(4, header_bytes=3, footer_bytes=2, hop_bytes=3),
                  ["fixed.bin"], None),
    "fixed_gzip": (lambda: tf.FixedLengthRecordReader(4, header_bytes=3, footer_bytes=2, encoding="GZIP"),
                   ["fixed.bin.gz"], None),
    "whole": (tf.WholeFileReader, ["lines.txt", "fixed.bin"], None),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_reader_matches_tensorflow(case):
    make_reader, files, up_to = CASES[case]
    assert _read_all(make_reader, files, up_to) == FIXTURES[case]


def test_identity_reader_and_its_state():
    want = FIXTURES["identity"]
    with tf.Graph().as_default():
        q = tf.FIFOQueue(10, [tf.string], shapes=[[]])
        r = tf.IdentityReader()
        assert r.supports_serialize
        k, v = r.read(q)
        state = r.serialize_state()
        with tf.Session() as s:
            s.run(q.enqueue_many([["w1", "w2"]]))
            s.run(q.close())
            assert s.run([k, v]) == [b"w1", b"w1"]
            saved = s.run(state)
            assert s.run([k, v]) == [b"w2", b"w2"]
            s.run(r.restore_state(saved))
            assert s.run(r.num_records_produced()) == 1
            s.run(r.reset())
            assert s.run(r.num_records_produced()) == 0
    assert want["records"][0] == ["w1", "w1"]


def test_tfrecord_reader_serialize_state_is_unimplemented():
    with tf.Graph().as_default():
        r = tf.TFRecordReader()
        with tf.Session() as s, pytest.raises(tf.errors.UnimplementedError):
            s.run(r.serialize_state())


def test_corrupt_tfrecord_is_data_loss_naming_the_file(tmp_path):
    bad = tmp_path / "bad.tfrecord"
    data = bytearray((HERE / "records.tfrecord").read_bytes())
    data[25] ^= 0xFF  # inside the second record's payload
    bad.write_bytes(bytes(data))
    with tf.Graph().as_default():
        q = tf.FIFOQueue(10, [tf.string], shapes=[[]])
        k, v = tf.TFRecordReader().read(q)
        with tf.Session() as s:
            s.run(q.enqueue([str(bad)]))
            assert s.run(v) == b"rec0"
            with pytest.raises(tf.errors.DataLossError, match=r"at 20 in .*bad\.tfrecord"):
                s.run(v)


def test_missing_file_is_not_found():
    with tf.Graph().as_default():
        q = tf.FIFOQueue(10, [tf.string], shapes=[[]])
        k, v = tf.WholeFileReader().read(q)
        with tf.Session() as s:
            s.run(q.enqueue(["/nonexistent/ferroflow/file"]))
            with pytest.raises(tf.errors.NotFoundError, match="/nonexistent/ferroflow/file"):
                s.run(v)


def test_read_write_and_matching_files(tmp_path):
    target = tmp_path / "sub" / "dir" / "out.bin"
    with tf.Graph().as_default():
        w = tf.io.write_file(str(target), b"\x00payload\xff")
        r = tf.read_file(str(target))
        for name in ["a1.txt", "a2.txt", "b.txt"]:
            (tmp_path / name).write_bytes(b"x")
        m = tf.matching_files(str(tmp_path / "a*.txt"))
        m2 = tf.io.matching_files([str(tmp_path / "b.*"), str(tmp_path / "a1.*")])
        with tf.Session() as s:
            s.run(w)
            assert s.run(r) == b"\x00payload\xff"
            assert [p.decode() for p in s.run(m)] == [str(tmp_path / "a1.txt"), str(tmp_path / "a2.txt")]
            assert [p.decode() for p in s.run(m2)] == [str(tmp_path / "a1.txt"), str(tmp_path / "b.txt")]
            with pytest.raises(tf.errors.NotFoundError):
                s.run(tf.read_file(str(tmp_path / "missing")))
    # No temporary files are left behind by the atomic write.
    assert os.listdir(target.parent) == ["out.bin"]
    shutil.rmtree(tmp_path / "sub")
