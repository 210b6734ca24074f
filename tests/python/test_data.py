"""tf.data pipelines against real TensorFlow 2.21 (fixtures by tests/fixtures/data/make_data.py).

Every pipeline in tests/fixtures/data/pipelines.py is built with ferroflow and
its elements compared with what TensorFlow produced from the same source:
values, dtypes, element counts (smaller final batches, drop_remainder) and the
OutOfRangeError at the end; shuffled pipelines as multisets.
"""

import json
import os
import sys

import numpy as np
import pytest

import ferroflow as tf

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "data")
sys.path.insert(0, FIXTURES)
import pipelines  # noqa: E402

with open(os.path.join(FIXTURES, "expected.json")) as _fh:
    MANIFEST = json.load(_fh)
EXPECTED = np.load(os.path.join(FIXTURES, "expected.npz"))


def expected(name):
    info = MANIFEST["pipelines"][name]
    return [[EXPECTED[f"{name}__{i}__{j}"] for j in range(info["components"])] for i in range(info["count"])]


def _key(element):
    return tuple((c.dtype.str, c.shape, c.tobytes()) for c in element)


@pytest.mark.parametrize("name", sorted(MANIFEST["pipelines"]))
def test_pipeline_matches_tensorflow(name):
    build = pipelines.pipelines(tf)[name]
    got = pipelines.run(tf, build)
    want = expected(name)
    assert len(got) == len(want), f"{name}: {len(got)} elements, TensorFlow gives {len(want)}"
    if name in pipelines.UNORDERED:
        # Batches of a shuffled stream differ; their values together and their sizes do not.
        assert [_key(e)[0][:2] for e in got] == [_key(e)[0][:2] for e in want]
        flat_got = np.sort(np.concatenate([c.ravel() for e in got for c in e]))
        flat_want = np.sort(np.concatenate([c.ravel() for e in want for c in e]))
        np.testing.assert_array_equal(flat_got, flat_want)
        return
    for i, (g, w) in enumerate(zip(got, want)):
        assert len(g) == len(w), f"{name} element {i}: {len(g)} components vs {len(w)}"
        for j, (a, b) in enumerate(zip(g, w)):
            assert a.dtype == b.dtype, f"{name} element {i} component {j}: {a.dtype} vs {b.dtype}"
            np.testing.assert_array_equal(a, b, err_msg=f"{name} element {i} component {j}")


def _drain(sess, nxt, limit=10000):
    out = []
    try:
        while len(out) < limit:
            out.append(sess.run(nxt))
    except tf.errors.OutOfRangeError:
        return out
    raise AssertionError("no OutOfRangeError")


def test_shuffle_same_seed_same_order_and_reshuffles_each_epoch():
    def order():
        with tf.Graph().as_default():
            ds = tf.data.Dataset.range(50).shuffle(50, seed=11).repeat(2)
            nxt = ds.make_one_shot_iterator().get_next()
            with tf.Session() as s:
                return [int(v) for v in _drain(s, nxt)]

    a, b = order(), order()
    assert a == b
    assert sorted(a[:50]) == list(range(50)) and sorted(a[50:]) == list(range(50))
    assert a[:50] != list(range(50))
    assert a[:50] != a[50:], "reshuffle_each_iteration defaults to True"


def test_shuffle_without_reshuffle_repeats_the_order():
    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(30).shuffle(30, seed=5, reshuffle_each_iteration=False).repeat(2)
        nxt = ds.make_one_shot_iterator().get_next()
        with tf.Session() as s:
            got = [int(v) for v in _drain(s, nxt)]
    assert got[:30] == got[30:] and sorted(got[:30]) == list(range(30))


def test_get_next_raises_out_of_range_and_iterator_reinitializes():
    with tf.Graph().as_default():
        it = tf.data.Dataset.range(3).make_initializable_iterator()
        nxt = it.get_next()
        with tf.Session() as s:
            with pytest.raises(tf.errors.FailedPreconditionError, match="not been initialized"):
                s.run(nxt)
            for _ in range(2):
                s.run(it.initializer)
                assert [int(v) for v in _drain(s, nxt)] == [0, 1, 2]
                with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
                    s.run(nxt)


def test_initializable_iterator_over_fed_placeholder():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        it = tf.data.Dataset.from_tensor_slices(x).map(lambda r: tf.reduce_sum(r)).batch(2) \
            .make_initializable_iterator()
        nxt = it.get_next()
        with tf.Session() as s:
            for n in (3, 5):
                data = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
                s.run(it.initializer, feed_dict={x: data})
                got = np.concatenate(_drain(s, nxt))
                np.testing.assert_allclose(got, data.sum(axis=1))


def test_map_reads_captured_variable_and_placeholder():
    with tf.Graph().as_default():
        v = tf.Variable(2.0)
        scale = tf.placeholder(tf.float32, [])
        it = tf.data.Dataset.range(4).map(lambda i: tf.cast(i, tf.float32) * v * scale) \
            .make_initializable_iterator()
        nxt = it.get_next()
        with tf.Session() as s:
            s.run(tf.global_variables_initializer())
            s.run(it.initializer, feed_dict={scale: 10.0})
            assert [float(a) for a in _drain(s, nxt)] == [0.0, 20.0, 40.0, 60.0]
            s.run(v.assign(3.0))
            s.run(it.initializer, feed_dict={scale: 1.0})
            assert [float(a) for a in _drain(s, nxt)] == [0.0, 3.0, 6.0, 9.0]


def test_feedable_iterator_switches_by_string_handle():
    with tf.Graph().as_default():
        train = tf.data.Dataset.range(100).repeat()
        val = tf.data.Dataset.range(1000, 1003)
        handle = tf.placeholder(tf.string, [])
        it = tf.data.Iterator.from_string_handle(handle, train.output_types, train.output_shapes)
        nxt = it.get_next()
        train_it = train.make_one_shot_iterator()
        val_it = val.make_initializable_iterator()
        with tf.Session() as s:
            th, vh = s.run([train_it.string_handle(), val_it.string_handle()])
            assert th != vh
            assert [int(s.run(nxt, {handle: th})) for _ in range(3)] == [0, 1, 2]
            s.run(val_it.initializer)
            got = []
            with pytest.raises(tf.errors.OutOfRangeError):
                while True:
                    got.append(int(s.run(nxt, {handle: vh})))
            assert got == [1000, 1001, 1002]
            assert int(s.run(nxt, {handle: th})) == 3
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(nxt, {handle: b"no such iterator"})


def test_reinitializable_iterator_from_structure():
    with tf.Graph().as_default():
        a = tf.data.Dataset.range(3)
        b = tf.data.Dataset.range(10, 12)
        it = tf.data.Iterator.from_structure(a.output_types, a.output_shapes)
        init_a, init_b = it.make_initializer(a), it.make_initializer(b)
        nxt = it.get_next()
        with tf.Session() as s:
            s.run(init_a)
            assert [int(v) for v in _drain(s, nxt)] == [0, 1, 2]
            s.run(init_b)
            assert [int(v) for v in _drain(s, nxt)] == [10, 11]
        with pytest.raises(TypeError):
            it.make_initializer(tf.data.Dataset.from_tensors(np.float32(1.0)))


def test_output_types_shapes_classes():
    ds = tf.data.Dataset.from_tensor_slices(({"a": np.zeros((4, 3), np.float32)}, np.zeros(4, np.int32))).batch(2)
    assert ds.output_types == ({"a": tf.float32}, tf.int32)
    assert ds.output_shapes[0]["a"].as_list() == [None, 3]
    assert ds.output_shapes[1].as_list() == [None]
    assert ds.output_classes == ({"a": tf.Tensor}, tf.Tensor)
    d2 = tf.data.Dataset.range(8).batch(4, drop_remainder=True)
    assert d2.output_shapes.as_list() == [4]


def test_corrupt_tfrecord_raises_data_loss_naming_file_and_offset():
    corrupt = os.path.join(FIXTURES, "corrupt.tfrecord")
    good = os.path.join(FIXTURES, "good.tfrecord")
    want = MANIFEST["corrupt"]
    with tf.Graph().as_default():
        nxt = tf.data.TFRecordDataset([corrupt, good]).make_one_shot_iterator().get_next()
        with tf.Session() as s:
            got = [s.run(nxt).decode() for _ in want["before_error"]]
            assert got == want["before_error"]
            with pytest.raises(tf.errors.DataLossError) as e:
                s.run(nxt)
    msg = str(e.value)
    assert "corrupt.tfrecord" in msg
    # TensorFlow's words and offset (the payload's), plus the file.
    tf_words = want["error_message"].split("\n")[-2] if "\n" in want["error_message"] else want["error_message"]
    assert "corrupted record at 36" in tf_words and "corrupted record at 36" in msg, (msg, tf_words)


def test_corrupt_tfrecord_skipped_under_ignore_errors():
    corrupt = os.path.join(FIXTURES, "corrupt.tfrecord")
    good = os.path.join(FIXTURES, "good.tfrecord")
    with tf.Graph().as_default():
        ds = tf.data.TFRecordDataset([corrupt, good]).apply(tf.data.experimental.ignore_errors())
        nxt = ds.make_one_shot_iterator().get_next()
        with tf.Session() as s:
            got = [v.decode() for v in _drain(s, nxt)]
    assert got == MANIFEST["corrupt"]["ignore_errors"]


def test_missing_file_is_not_found():
    with tf.Graph().as_default():
        nxt = tf.data.TextLineDataset("/nonexistent/ferroflow/file.txt").make_one_shot_iterator().get_next()
        with tf.Session() as s:
            with pytest.raises(tf.errors.NotFoundError, match="file.txt"):
                s.run(nxt)


def test_map_error_is_typed_and_ignore_errors_drops_the_element():
    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_tensor_slices(np.array([1.0, -1.0, 4.0], np.float32)).map(
            lambda v: tf.debugging.assert_non_negative(v) and tf.sqrt(v) if False else tf.sqrt(v))
        ds = tf.data.Dataset.from_tensor_slices(np.array([4, 0, 2], np.int32)).map(lambda v: 8 // v)
        nxt = ds.make_one_shot_iterator().get_next()
        skip = ds.apply(tf.data.experimental.ignore_errors()).make_one_shot_iterator().get_next()
        with tf.Session() as s:
            assert int(s.run(nxt)) == 2
            with pytest.raises(tf.errors.InvalidArgumentError):
                s.run(nxt)
            assert [int(v) for v in _drain(s, skip)] == [2, 4]


def test_batch_of_different_shapes_is_invalid_argument():
    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(1, 4).map(lambda v: tf.fill(tf.expand_dims(v, 0), v)).batch(2)
        nxt = ds.make_one_shot_iterator().get_next()
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot batch tensors with different shapes"):
                s.run(nxt)


def test_compat_v1_helpers_and_one_shot_is_lazy():
    import ferroflow.compat.v1 as v1

    with tf.Graph().as_default():
        ds = v1.data.Dataset.range(3)
        it = v1.data.make_one_shot_iterator(ds)
        it2 = v1.data.make_initializable_iterator(ds)
        with tf.Session() as s:
            assert [int(v) for v in _drain(s, it.get_next())] == [0, 1, 2]
            s.run(it2.initializer)
            assert int(s.run(it2.get_next())) == 0


def test_from_generator_errors_are_typed():
    def wrong_type():
        yield np.zeros(2)

    def wrong_shape():
        yield np.zeros(3, np.int64)

    def raises():
        yield 1
        raise RuntimeError("generator broke")

    with tf.Graph().as_default():
        a = tf.data.Dataset.from_generator(wrong_type, tf.int64).make_one_shot_iterator().get_next()
        b = tf.data.Dataset.from_generator(wrong_shape, tf.int64, tf.TensorShape([2])) \
            .make_one_shot_iterator().get_next()
        c = tf.data.Dataset.from_generator(raises, tf.int64).make_one_shot_iterator().get_next()
        with tf.Session() as s:
            with pytest.raises(tf.errors.InvalidArgumentError, match="could not be converted"):
                s.run(a)
            with pytest.raises(tf.errors.InvalidArgumentError, match="shape"):
                s.run(b)
            assert int(s.run(c)) == 1
            with pytest.raises(tf.errors.UnknownError, match="generator broke"):
                s.run(c)


def test_from_generator_with_prefetch_closes_cleanly():
    def forever():
        i = 0
        while True:
            yield i
            i += 1

    with tf.Graph().as_default():
        nxt = tf.data.Dataset.from_generator(forever, tf.int64).prefetch(4).make_one_shot_iterator().get_next()
        s = tf.Session()
        assert [int(s.run(nxt)) for _ in range(3)] == [0, 1, 2]
        s.close()


def test_cache_to_file_is_read_back_by_a_later_session(tmp_path):
    calls = []

    def gen():
        for i in range(4):
            calls.append(i)
            yield i * i

    prefix = str(tmp_path / "squares")
    for _session in range(2):
        with tf.Graph().as_default():
            ds = tf.data.Dataset.from_generator(gen, tf.int64).cache(prefix).repeat(2)
            nxt = ds.make_one_shot_iterator().get_next()
            with tf.Session() as s:
                assert [int(v) for v in _drain(s, nxt)] == [0, 1, 4, 9] * 2
        # The generator ran for the first pass of the first session only.
        assert calls == [0, 1, 2, 3]
    assert os.path.exists(prefix + ".ffcache")


def test_cache_to_file_interrupted_pass_leaves_no_file(tmp_path):
    prefix = str(tmp_path / "partial")
    with tf.Graph().as_default():
        nxt = tf.data.Dataset.range(100).cache(prefix).make_one_shot_iterator().get_next()
        with tf.Session() as s:
            assert int(s.run(nxt)) == 0
    assert os.listdir(tmp_path) == []


def test_get_next_checks_the_iterator_shapes():
    with tf.Graph().as_default():
        ds = tf.data.Dataset.from_generator(lambda: iter([np.zeros(3, np.float32)]), tf.float32)
        it = tf.data.Iterator.from_structure(tf.float32, tf.TensorShape([2]))
        init = it.make_initializer(ds)
        nxt = it.get_next()
        with tf.Session() as s:
            s.run(init)
            with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes at component 0"):
                s.run(nxt)


def test_pipeline_survives_meta_graph_export_and_import():
    with tf.Graph().as_default():
        c = tf.constant(3, tf.int64)
        ds = tf.data.Dataset.range(5).map(lambda v: v * c).filter(lambda v: tf.greater(v, 2)).batch(2)
        it = ds.make_initializable_iterator()
        nxt = it.get_next()
        meta = tf.train.export_meta_graph()
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(meta)
        with tf.Session() as s:
            s.run(g.get_operation_by_name(it.initializer.name))
            got = _drain(s, g.get_tensor_by_name(nxt.name))
    assert [b.tolist() for b in got] == [[3, 6], [9, 12]]


def test_runs_an_input_pipeline_tensorflow_exported():
    want = MANIFEST["tf_meta_graph"]
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(os.path.join(FIXTURES, "tf_pipeline.meta"))
        with tf.Session() as s:
            s.run(g.get_operation_by_name(want["initializer"]))
            got = [b.tolist() for b in _drain(s, g.get_tensor_by_name(want["get_next"]))]
    assert got == want["batches"]


def test_runs_a_one_shot_iterator_tensorflow_exported():
    want = MANIFEST["tf_meta_graph"]["one_shot"]
    assert "OneShotIterator" in want["ops"]
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(os.path.join(FIXTURES, "tf_one_shot.meta"))
        with tf.Session() as s:
            got = [b.tolist() for b in _drain(s, g.get_tensor_by_name(want["get_next"]))]
    assert got == want["batches"]


def test_one_shot_iterator_is_tensorflows_op_with_a_factory_function():
    with tf.Graph().as_default():
        c = tf.constant(2.0)
        ds = tf.data.Dataset.from_tensor_slices(np.arange(7, dtype=np.float32)).map(lambda v: v * c) \
            .filter(lambda v: tf.greater(v, 2.0)).batch(2)
        it = ds.make_one_shot_iterator()
        assert it._iterator_resource.op.type == "OneShotIterator"
        nxt = it.get_next()
        meta = tf.train.export_meta_graph()
        with tf.Session() as s:
            want = [b.tolist() for b in _drain(s, nxt)]
        assert want == [[4.0, 6.0], [8.0, 10.0], [12.0]]
        # Over a placeholder the pipeline cannot be rebuilt in a function: ferroflow's own op.
        p = tf.placeholder(tf.float32, [None])
        assert tf.data.Dataset.from_tensor_slices(p).make_one_shot_iterator()._iterator_resource.op.type \
            == "OneShotIteratorFromDataset"
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(meta)
        with tf.Session() as s:
            assert [b.tolist() for b in _drain(s, g.get_tensor_by_name(nxt.name))] == want


def test_tf_2_21_argument_spellings():
    with tf.Graph().as_default():
        a, b = tf.data.Dataset.range(3), tf.data.Dataset.range(10, 13)
        z = tf.data.Dataset.zip(a, b).batch(2, num_parallel_calls=2, deterministic=True)
        z2 = tf.data.Dataset.zip(datasets={"a": a, "b": b})
        nxt, nxt2 = z.make_one_shot_iterator().get_next(), z2.make_one_shot_iterator().get_next()
        with tf.Session() as s:
            got = [tuple(x.tolist() for x in e) for e in _drain(s, nxt)]
            assert got == [([0, 1], [10, 11]), ([2], [12])]
            assert s.run(nxt2) == {"a": 0, "b": 10}


@pytest.mark.parametrize("name", sorted(MANIFEST["tf_exported"]))
def test_runs_the_pipeline_tensorflow_exported(name):
    """The same pipeline built and exported by TensorFlow (its op names and attrs) runs here with its results."""
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(os.path.join(FIXTURES, "tf_meta", f"{name}.meta"))
        fetch = [g.get_tensor_by_name(n) for n in MANIFEST["tf_exported"][name]]
        with tf.Session() as s:
            got = [pipelines._flat(e) for e in _drain(s, fetch)]
    want = expected(name)
    assert len(got) == len(want)
    if name in pipelines.UNORDERED:
        np.testing.assert_array_equal(np.sort(np.concatenate([c.ravel() for e in got for c in e])),
                                      np.sort(np.concatenate([c.ravel() for e in want for c in e])))
        return
    for g_el, w_el in zip(got, want):
        for a, b in zip(g_el, w_el):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)
