"""tf.compat.v1.LMDBReader against liblmdb's reading of the LMDB files in tests/fixtures/lmdb (made and read by
tools/make_lmdb_fixtures.py, which also records TensorFlow 2.21's graph for the reader's methods; TensorFlow
2.21's kernel itself only raises UnimplementedError), plus corrupt, truncated and refused files."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest

import ferroflow as tf

HERE = Path(__file__).parent.parent / "fixtures" / "lmdb"
EXPECTED = json.loads((HERE / "expected.json").read_text())


def _entry(k, v):
    """An entry as the fixture records it."""
    key = k.decode("latin-1")
    if len(v) <= 64:
        return [key, v.hex()]
    return [key, {"len": len(v), "sha256": hashlib.sha256(v).hexdigest()}]


def _want(*names):
    return [e for n in names for e in EXPECTED["entries"][n]]


def _run(files, up_to=None, reader=None):
    """Reads `files` (paths) to the end; returns the entries, the batches' sizes, produced, completed."""
    with tf.Graph().as_default():
        q = tf.FIFOQueue(10, [tf.string], shapes=[[]])
        r = reader or tf.LMDBReader()
        kv = r.read_up_to(q, up_to) if up_to else r.read(q)
        with tf.Session() as s:
            s.run(q.enqueue_many([[str(f) for f in files]]))
            s.run(q.close())
            got, sizes = [], []
            while True:
                try:
                    k, v = s.run(kv)
                except tf.errors.OutOfRangeError:
                    break
                if up_to:
                    sizes.append(len(k))
                    got.extend(_entry(a, b) for a, b in zip(k, v))
                else:
                    got.append(_entry(k, v))
            return got, sizes, int(s.run(r.num_records_produced())), int(s.run(r.num_work_units_completed()))


def test_reads_entries_in_key_order_across_files():
    files = [HERE / "digits.mdb", HERE / "empty.mdb", HERE / "tree.mdb", HERE / "digits.mdb"]
    got, _, produced, completed = _run(files)
    want = _want("digits", "empty", "tree", "digits")
    assert got == want
    assert produced == len(want) == 92 and completed == 4
    # the tree file has three levels and two values on overflow pages
    assert sorted(e[1]["len"] for e in EXPECTED["entries"]["tree"] if isinstance(e[1], dict)) == [4100, 8200]


def test_read_up_to_stays_within_one_file():
    got, sizes, produced, completed = _run([HERE / "digits.mdb", HERE / "tree.mdb"], up_to=7)
    assert got == _want("digits", "tree")
    # 10 entries then 72: batches never span two files
    assert sizes == [7, 3] + [7] * 10 + [2]
    assert (produced, completed) == (82, 2)


def test_directory_of_data_mdb(tmp_path):
    shutil.copyfile(HERE / "digits.mdb", tmp_path / "data.mdb")
    got, _, _, _ = _run([tmp_path])
    assert got == _want("digits")


def test_graph_is_tensorflows():
    want = EXPECTED["tensorflow_graph"]
    with tf.Graph().as_default():
        q = tf.FIFOQueue(10, [tf.string], shapes=[[]])
        r = tf.compat.v1.LMDBReader(name="db", options=None)
        assert r.supports_serialize is want["reader"]["supports_serialize"]
        assert r.reader_ref.op.type == want["reader"]["type"]
        # ferroflow's Python dtypes do not mark references (a VariableV2's output is float32 too): compare
        # base types; the graph marks the reference (GraphDef export and import check it).
        assert r.reader_ref.dtype.name == want["reader"]["output_dtype"].replace("_ref", "")
        assert sorted(r.reader_ref.op.node_def.attr) == want["reader"]["attrs"]
        ops_ = {
            "read": r.read(q)[0].op,
            "read_up_to": r.read_up_to(q, 3)[0].op,
            "num_records_produced": r.num_records_produced().op,
            "num_work_units_completed": r.num_work_units_completed().op,
            "serialize_state": r.serialize_state().op,
            "restore_state": r.restore_state(""),
            "reset": r.reset(),
        }
        for k, op in ops_.items():
            assert op.type == want[k]["type"], k
            assert [i.op.type for i in op.inputs] == want[k]["inputs"], k
            assert [i.dtype.name for i in op.inputs] == [d.replace("_ref", "") for d in want[k]["input_dtypes"]], k
        with tf.Session() as s, pytest.raises(tf.errors.UnimplementedError, match="LMDBReader"):
            s.run(ops_["serialize_state"].outputs[0])


def _read_error(path):
    with pytest.raises(tf.errors.OpError) as info:
        _run([path])
    return info.value


@pytest.mark.parametrize("cut", [0, 100, 4096, 8192 + 4096, 98304 - 4096])
def test_truncated_file_is_data_loss_naming_it(tmp_path, cut):
    path = tmp_path / "cut.mdb"
    path.write_bytes((HERE / "tree.mdb").read_bytes()[:cut])
    e = _read_error(path)
    assert isinstance(e, tf.errors.DataLossError), e
    assert str(path) in e.message


def test_corrupt_pages_are_data_loss(tmp_path):
    data = bytearray((HERE / "tree.mdb").read_bytes())
    # Every byte past the meta pages flipped in turn would be slow; flip a spread of them instead.
    bad = []
    for offset in range(8192, len(data), 997):
        copy = bytearray(data)
        copy[offset] ^= 0xFF
        path = tmp_path / f"c{offset}.mdb"
        path.write_bytes(bytes(copy))
        try:
            _run([path])
        except tf.errors.DataLossError as e:
            assert str(path) in e.message
            bad.append(offset)
    # a flipped key or value byte reads fine; flipped structure must fail cleanly (never a crash or hang)
    assert bad


def test_missing_file_and_refused_databases(tmp_path):
    assert isinstance(_read_error(tmp_path / "nope.mdb"), tf.errors.NotFoundError)
    e = _read_error(HERE / "dupsort.mdb")
    assert isinstance(e, tf.errors.UnimplementedError) and "MDB_DUPSORT" in e.message and "dupsort.mdb" in e.message
    e = _read_error(HERE / "subdb.mdb")
    assert isinstance(e, tf.errors.UnimplementedError) and "sub-database" in e.message
    not_lmdb = tmp_path / "text.mdb"
    not_lmdb.write_bytes(b"hello" * 2000)
    assert isinstance(_read_error(not_lmdb), tf.errors.DataLossError)


def test_runs_tensorflows_graph_def():
    # TensorFlow 2.21 writes the graph but cannot run it (its kernel raises UnimplementedError); ferroflow can.
    gd = tf.compat.v1.GraphDef.FromString((HERE / "tf_reader_graph.pb").read_bytes())
    with tf.Graph().as_default():
        tf.import_graph_def(gd, name="")
        with tf.Session() as s:
            s.run("enqueue", {"files:0": [str(HERE / "digits.mdb"), str(HERE / "tree.mdb")]})
            s.run("close")
            got = [_entry(*s.run(["read:0", "read:1"])) for _ in range(4)]
            keys, values = s.run(["read_up_to:0", "read_up_to:1"])
            got += [_entry(k, v) for k, v in zip(keys, values)]
            assert got == _want("digits")[:7]
            assert s.run("produced:0") == 7


def test_not_differentiable_as_in_tensorflow():
    from ferroflow import _native

    # TensorFlow's io_ops.py marks these NotDifferentiable (and registers nothing for FakeQueue).
    for op in ["LMDBReader", "ReaderRead", "ReaderReadUpTo", "ReaderNumRecordsProduced", "ReaderNumWorkUnitsCompleted",
               "ReaderSerializeState", "ReaderRestoreState", "ReaderReset"]:
        assert _native.has_gradient(op), op
    assert not _native.has_gradient("FakeQueue")
