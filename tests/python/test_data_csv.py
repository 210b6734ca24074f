"""tf.data.experimental.CsvDataset (the TF1 "Importing Data" guide's CSV section), checked against Python's
csv module reading the same files, the failures TensorFlow's (checked by hand with TF 2.21); make_csv_dataset
and Counter against TF 2.21 (fixture from tools/make_csv_dataset_fixtures.py, calls in _csv_dataset_cases.py)."""

import csv
import json

import numpy as np
import pytest

import ferroflow as tf
from _csv_dataset_cases import cases, write_files

ROWS = [["1", "2.5", "x"], ["3", "", "q,r"], ["5", "6.5", "z"]]


def _write(tmp_path):
    f1 = tmp_path / "f1.csv"
    f1.write_bytes(b'a,b,c\n1,2.5,x\n3,,"q,r"\n5,6.5,z\r\n')
    f2 = tmp_path / "f2.csv"
    f2.write_bytes(b"a,b,c\n7,8,w\n")
    return [str(f1), str(f2)]


def _all(ds):
    nxt = ds.make_one_shot_iterator().get_next()
    out = []
    with tf.Session() as sess:
        while True:
            try:
                out.append(sess.run(nxt))
            except tf.errors.OutOfRangeError:
                return out


def test_rows_as_the_csv_module_reads_them(tmp_path):
    files = _write(tmp_path)
    want = []
    for f in files:
        with open(f, newline="") as fh:
            want.extend(list(csv.reader(fh))[1:])
    ds = tf.data.experimental.CsvDataset(files, [tf.int32, [0.0], ["d"]], header=True)
    assert ds.output_types == (tf.int32, tf.float32, tf.string)
    assert [s.as_list() for s in ds.output_shapes] == [[], [], []]
    got = _all(ds)
    assert len(got) == len(want) == 4
    for (a, b, c), row in zip(got, want):
        assert a == int(row[0]) and isinstance(a, np.int32)
        assert b == np.float32(float(row[1]) if row[1] else 0.0)
        assert c == row[2].encode()


def test_select_cols_na_value_and_one_column(tmp_path):
    files = _write(tmp_path)
    got = _all(tf.data.experimental.CsvDataset(files, [[0], ["d"]], header=True, select_cols=[0, 2]))
    assert [(int(a), c) for a, c in got] == [(1, b"x"), (3, b"q,r"), (5, b"z"), (7, b"w")]
    one = tf.data.experimental.CsvDataset(files[0], [[-1.0]], header=True, select_cols=[1], na_value="6.5")
    assert one.output_types == (tf.float32,)
    assert [t for (t,) in _all(one)] == [2.5, -1.0, -1.0]


def test_errors_as_tensorflow(tmp_path):
    files = _write(tmp_path)
    cases = [
        (dict(record_defaults=[tf.int32, tf.float32, ["d"]], header=True), "Field 1 is required but missing"),
        (dict(record_defaults=[[0], [0.0], ["d"]]), "not a valid int32: a"),
        (dict(record_defaults=[[0]], header=True), "Expect 1 fields but have 3"),
        (
            dict(record_defaults=[[0], [0.0], ["d"]], header=True, use_quote_delim=False),
            "Expect 3 fields but have 4",
        ),
    ]
    for kwargs, message in cases:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            _all(tf.data.experimental.CsvDataset(files, **kwargs))
    with pytest.raises(ValueError, match="do not match"):
        tf.data.experimental.CsvDataset(files, [[0]], select_cols=[0, 1])
    with pytest.raises(TypeError, match="bool"):
        tf.data.experimental.CsvDataset(files, [tf.bool])


def test_in_a_training_pipeline(tmp_path):
    files = _write(tmp_path)
    ds = tf.data.experimental.CsvDataset(files, [[0], [0.0], ["d"]], header=True, select_cols=[0, 1, 2])
    ds = ds.map(lambda a, b, c: (tf.stack([tf.cast(a, tf.float32), b]), c)).repeat(2).batch(3)
    batches = _all(ds)
    assert [len(b[1]) for b in batches] == [3, 3, 2]
    np.testing.assert_allclose(batches[0][0], [[1.0, 2.5], [3.0, 0.0], [5.0, 6.5]])


def test_make_csv_dataset_and_counter_against_tensorflow(tmp_path, fixtures):
    expected = json.loads((fixtures / "csv_dataset.json").read_text())
    write_files(tmp_path)
    got = json.loads(json.dumps(cases(tf, tmp_path)))
    assert got == expected


def test_make_csv_dataset_errors(tmp_path):
    write_files(tmp_path)
    a = str(tmp_path / "a.csv")
    with pytest.raises(ValueError, match="must be one of the columns"):
        tf.data.experimental.make_csv_dataset(a, 2, label_name="nope")
    with pytest.raises(ValueError, match="without a header line"):
        tf.data.experimental.make_csv_dataset(a, 2, header=False)
    with pytest.raises(ValueError, match="No files match"):
        tf.data.experimental.make_csv_dataset(str(tmp_path / "none*.csv"), 2)
    (tmp_path / "c.csv").write_text("x,y\n1,2\n")
    with pytest.raises(ValueError, match="different column names"):
        tf.data.experimental.make_csv_dataset(str(tmp_path / "*.csv"), 2)


def test_dataset_enumerate_counter_ignore_errors():
    # TF 2.21 gives the same (checked by hand): int64 indexes from `start`, the counter's values, the failed
    # element dropped.
    ds = tf.data.Dataset.from_tensor_slices(["a", "b", "c"]).enumerate(start=5)
    assert ds.output_types == (tf.int64, tf.string)
    assert [s.as_list() for s in ds.output_shapes] == [[], []]
    counter = tf.data.Dataset.counter(3, 2).take(2)
    kept = tf.data.Dataset.from_tensor_slices([1.0, 0.0, 2.0]).map(lambda x: tf.check_numerics(1 / x, "inf"))
    assert _all(ds) == [(5, b"a"), (6, b"b"), (7, b"c")]
    assert _all(counter) == [3, 5]
    assert _all(kept.ignore_errors()) == [1.0, 0.5]
    assert _all(tf.data.Dataset.range(4).map_with_legacy_function(lambda x: x * 2)) == [0, 2, 4, 6]
    assert _all(tf.data.Dataset.range(4).filter_with_legacy_function(lambda x: x > 1)) == [2, 3]


def test_options_as_tensorflow():
    # TF 2.21's behaviour, checked by hand: typed properties, unknown names refused, later options win through
    # the pipeline, the pipeline itself unchanged.
    o = tf.data.Options()
    assert o.deterministic is None and o.experimental_distribute.auto_shard_policy == 0
    with pytest.raises(AttributeError, match="Cannot set the property bogus on Options"):
        o.bogus = 1
    with pytest.raises(TypeError, match='Property "deterministic" must be of type'):
        o.experimental_deterministic = 3
    o.experimental_optimization.map_parallelization = True
    o2 = tf.data.Options()
    o2.experimental_deterministic = False
    merged = o.merge(o2)
    assert merged.deterministic is False and merged.experimental_optimization.map_parallelization is True
    assert merged != o and o != tf.data.Options()
    ds = tf.data.Dataset.range(3).with_options(o).map(lambda x: x + 1)
    assert ds.options().experimental_optimization.map_parallelization is True
    o3 = tf.data.Options()
    o3.experimental_deterministic = True
    assert ds.with_options(o2).options().experimental_deterministic is False
    assert ds.with_options(o2).with_options(o3).options().deterministic is True
    assert tf.data.Dataset.range(2).options() == tf.data.Options()
    assert _all(ds.with_options(o2)) == [1, 2, 3]
