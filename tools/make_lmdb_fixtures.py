"""Writes tests/fixtures/lmdb/: small LMDB files made with the ``lmdb`` package (which bundles liblmdb) and
``expected.json``: each file's entries as liblmdb's cursor walks them (MDB_FIRST then MDB_NEXT, what
TensorFlow's LMDBReader kernel did per file), and the graph TensorFlow 2.21's ``tf.compat.v1.LMDBReader``
builds (its ops, their inputs and dtypes). TensorFlow 2.21 keeps the op and the Python class but its kernel
only raises UnimplementedError ("LMDB support is removed from TensorFlow"), so the values come from liblmdb,
the library TensorFlow's kernel called.

    /work/tfvenv/bin/pip install lmdb
    /work/tfvenv/bin/python tools/make_lmdb_fixtures.py

Files (each a compact copy, so no free pages; 4 KiB pages):

* ``digits.mdb``: keys ``b"0"`` .. ``b"9"``, values ``b"a"`` .. ``b"j"`` (what TensorFlow's own
  ``core/lib/lmdb/testdata/data.mdb`` holds), one leaf page.
* ``tree.mdb``: 72 entries with 465-505 byte keys, so pages hold few keys and the tree has three levels,
  and among them values of 4,100 and 8,200 bytes, which LMDB keeps on overflow pages (2 and 3 pages).
* ``empty.mdb``: a database without entries.
* ``tf_reader_graph.pb``: a GraphDef TensorFlow 2.21 wrote for a queue and an LMDBReader (see
  ``tf_graph_def``), which ferroflow imports and runs.
* ``dupsort.mdb`` (``digits.mdb`` with the main database's flags set to DUPSORT in both meta pages: the
  ``lmdb`` package cannot set flags on the main database) and ``subdb.mdb`` (a named database inside the
  main one): files ferroflow refuses with an error (TensorFlow would yield the sub-database's record as an
  entry).

TensorFlow's reader stops the process on a corrupt file (its LMDB checks are CHECKs), so the corrupt-file
cases are ferroflow's own tests (DataLossError).
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import random
import shutil
import tempfile

import lmdb

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "lmdb"


def write_db(name, entries, subdb=False):
    """Writes ``entries`` (key, value) in one transaction, then a compact copy to OUT / name."""
    with tempfile.TemporaryDirectory() as tmp:
        env = lmdb.open(os.path.join(tmp, "src"), map_size=1 << 24, max_dbs=2 if subdb else 0)
        db = env.open_db(b"inner") if subdb else None
        with env.begin(write=True, db=db) as txn:
            for k, v in entries:
                txn.put(k, v, db=db)
        os.makedirs(os.path.join(tmp, "copy"))
        env.copy(os.path.join(tmp, "copy"), compact=True)
        env.close()
        shutil.copyfile(os.path.join(tmp, "copy", "data.mdb"), OUT / name)


def tree_entries():
    rng = random.Random(17)
    entries = []
    for i in range(72):
        key = (b"%04d-" % i) + bytes(rng.randrange(33, 127) for _ in range(rng.randrange(460, 500)))
        value = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40)))
        entries.append((key, value))
    for i, size in [(7, 4100), (60, 8200)]:
        entries[i] = (entries[i][0], bytes(rng.randrange(256) for _ in range(size)))
    rng.shuffle(entries)
    return entries


def liblmdb_entries(name):
    """The (key, value) stream of OUT / name as liblmdb's cursor walks it (MDB_FIRST, then MDB_NEXT: what
    TensorFlow's LMDBReader kernel did for each file): keys as latin-1 text, values hex, values over 64 bytes as their length
    and SHA-256."""
    env = lmdb.open(str(OUT / name), subdir=False, readonly=True, lock=False)
    with env.begin() as txn:
        got = [[k.decode("latin-1"), v.hex() if len(v) <= 64 else {"len": len(v), "sha256": hashlib.sha256(v).hexdigest()}]
               for k, v in txn.cursor()]
    env.close()
    return got


def tf_graph():
    """TensorFlow 2.21's graph for LMDBReader's methods (op type and input op types per method) and what
    running it does (TensorFlow 2.21's kernel only raises: LMDB support was removed)."""
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    with tf.Graph().as_default():
        q = tf.FIFOQueue(10, [tf.string], shapes=[[]])
        r = tf.LMDBReader(name="db")
        ops = {
            "reader": r.reader_ref.op,
            "read": r.read(q)[0].op,
            "read_up_to": r.read_up_to(q, 3)[0].op,
            "num_records_produced": r.num_records_produced().op,
            "num_work_units_completed": r.num_work_units_completed().op,
            "serialize_state": r.serialize_state().op,
            "restore_state": r.restore_state(""),
            "reset": r.reset(),
        }
        graph = {k: {"type": op.type, "inputs": [i.op.type for i in op.inputs],
                     "input_dtypes": [i.dtype.name for i in op.inputs]}
                 for k, op in ops.items() if op is not None}
        graph["reader"]["output_dtype"] = r.reader_ref.dtype.name
        graph["reader"]["supports_serialize"] = r.supports_serialize
        graph["reader"]["attrs"] = sorted(r.reader_ref.op.node_def.attr)
        with tf.Session() as s:
            try:
                s.run(ops["read"].outputs[0])
                graph["run_error"] = None
            except tf.errors.OpError as e:
                graph["run_error"] = type(e).__name__
    return graph


def tf_graph_def():
    """A TensorFlow-written graph reading LMDB files: queue ``q`` fed by ``enqueue`` from the placeholder
    ``files``, ``close``, and ``read`` / ``read_up_to`` (3) / ``produced`` on LMDBReader ``db``."""
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    with tf.Graph().as_default() as g:
        files = tf.placeholder(tf.string, [None], name="files")
        q = tf.FIFOQueue(10, [tf.string], shapes=[[]], name="q")
        q.enqueue_many([files], name="enqueue")
        q.close(name="close")
        r = tf.LMDBReader(name="db")
        r.read(q, name="read")
        r.read_up_to(q, 3, name="read_up_to")
        r.num_records_produced(name="produced")
        return g.as_graph_def().SerializeToString()


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    write_db("digits.mdb", [(str(i).encode(), chr(ord("a") + i).encode()) for i in range(10)])
    write_db("tree.mdb", tree_entries())
    write_db("empty.mdb", [])
    data = bytearray((OUT / "digits.mdb").read_bytes())
    for meta in (0, 4096):
        # page header 16 bytes; meta: magic, version, address, mapsize (24 bytes), then the free DB's
        # 48-byte record, then the main DB's (md_pad u32, md_flags u16, ...); MDB_DUPSORT is 0x04.
        flags = meta + 16 + 24 + 48 + 4
        data[flags:flags + 2] = (0x04).to_bytes(2, "little")
    (OUT / "dupsort.mdb").write_bytes(bytes(data))
    write_db("subdb.mdb", [(b"k", b"1")], subdb=True)
    expected = {
        "entries": {name: liblmdb_entries(name + ".mdb") for name in ("digits", "tree", "empty")},
        "tensorflow_graph": tf_graph(),
    }
    (OUT / "tf_reader_graph.pb").write_bytes(tf_graph_def())
    with open(OUT / "expected.json", "w") as f:
        json.dump(expected, f, indent=0)
        f.write("\n")
    for name in sorted(os.listdir(OUT)):
        print(name, os.path.getsize(OUT / name))


if __name__ == "__main__":
    main()
