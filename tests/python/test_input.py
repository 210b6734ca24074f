"""tf.train's queue-based input functions (input producers, limit_epochs, batch/shuffle_batch and their join and
maybe_ variants) against TensorFlow 2.21's outputs (tests/fixtures/queues/queues.json, make_queues.py), with
queue runners driven by start_queue_runners, MonitoredTrainingSession and Supervisor."""

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import ferroflow as tf

FIXTURES = json.loads((Path(__file__).parent.parent / "fixtures" / "queues" / "queues.json").read_text())


def _plain(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, np.ndarray) and v.dtype == object:
        return [_plain(x) for x in v.tolist()]
    return v.tolist() if hasattr(v, "tolist") else v


def _drain(build, timeout_ms=20000):
    """Every value ``build()``'s fetch gives until OutOfRangeError, with the queue runners running."""
    with tf.Graph().as_default():
        fetch = build()
        with tf.Session() as s:
            s.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(s, coord=coord)
            got = []
            opts = tf.RunOptions(timeout_in_ms=timeout_ms)
            try:
                while True:
                    got.append(_plain(s.run(fetch, options=opts)))
            except tf.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)
            return got


def _range(n, epochs):
    return tf.train.range_input_producer(n, num_epochs=epochs, shuffle=False).dequeue()


def test_batch_with_smaller_final_batch_matches_tensorflow():
    got = _drain(lambda: tf.train.batch([_range(10, 3)], batch_size=4, allow_smaller_final_batch=True))
    assert got == FIXTURES["range_batch_smaller_final"]


def test_batch_drops_the_incomplete_final_batch():
    got = _drain(lambda: tf.train.batch([_range(10, 3)], batch_size=4))
    assert got == FIXTURES["range_batch_drop_final"]


def test_slice_input_producer_batches_match_tensorflow():
    got = _drain(lambda: tf.train.batch(tf.train.slice_input_producer(
        [tf.constant(np.arange(7)), tf.constant(np.arange(7) * 10.0)], num_epochs=2, shuffle=False),
        batch_size=3, allow_smaller_final_batch=True))
    assert got == FIXTURES["slice_batch"]


def test_string_input_producer_epochs_match_tensorflow():
    got = _drain(lambda: tf.train.string_input_producer(["a", "b", "c"], num_epochs=2, shuffle=False).dequeue())
    assert got == FIXTURES["string_producer"]


def test_string_input_producer_shuffles_each_epoch_completely():
    got = _drain(lambda: tf.train.string_input_producer([f"f{i}" for i in range(8)], num_epochs=3,
                                                        seed=5).dequeue())
    assert len(got) == 24
    for e in range(3):
        assert sorted(got[8 * e:8 * e + 8]) == sorted(f"f{i}" for i in range(8))


def test_string_input_producer_rejects_empty_input():
    with tf.Graph().as_default(), pytest.raises(ValueError, match="non-null"):
        tf.train.string_input_producer([])


def test_batch_enqueue_many_matches_tensorflow():
    got = _drain(lambda: tf.train.batch(
        [tf.train.limit_epochs(tf.constant([[1, 2], [3, 4], [5, 6]]), num_epochs=2)],
        batch_size=4, enqueue_many=True, allow_smaller_final_batch=True))
    assert got == FIXTURES["batch_enqueue_many"]


def test_dynamic_pad_matches_tensorflow():
    got = _drain(lambda: tf.train.batch([tf.range(_range(4, 1))], batch_size=2, dynamic_pad=True,
                                        allow_smaller_final_batch=True))
    assert got == FIXTURES["dynamic_pad"]


def test_shuffle_batch_yields_tensorflows_multiset():
    got = _drain(lambda: tf.train.shuffle_batch(
        [_range(20, 2)], batch_size=6, capacity=30, min_after_dequeue=5, num_threads=2, seed=1,
        allow_smaller_final_batch=True))
    assert [len(b) for b in got] == [6] * 6 + [4]
    assert sorted(x for b in got for x in b) == FIXTURES["shuffle_batch_multiset"]


def test_batch_with_four_threads_counts_exactly():
    got = _drain(lambda: tf.train.batch([_range(25, 4)], batch_size=8, num_threads=4,
                                        allow_smaller_final_batch=True))
    assert [len(b) for b in got] == [8] * 12 + [4]
    assert Counter(x for b in got for x in b) == Counter({i: 4 for i in range(25)})


def test_batch_join_and_shuffle_batch_join():
    got = _drain(lambda: tf.train.batch_join([[_range(5, 1)], [_range(5, 1) + 100]], batch_size=5))
    assert sorted(x for b in got for x in b) == list(range(5)) + list(range(100, 105))
    got = _drain(lambda: tf.train.shuffle_batch_join([[_range(6, 1)], [_range(6, 1) + 10]], batch_size=4,
                                                     capacity=12, min_after_dequeue=2,
                                                     allow_smaller_final_batch=True))
    assert sorted(x for b in got for x in b) == list(range(6)) + list(range(10, 16))


def test_dict_inputs_come_back_as_dicts():
    got = _drain(lambda: tf.train.batch({"a": _range(4, 1), "b": _range(4, 1) * 2}, batch_size=2))
    assert got == [{"a": [0, 1], "b": [0, 2]}, {"a": [2, 3], "b": [4, 6]}]


def test_maybe_batch_keeps_only_selected_elements():
    def build():
        x = _range(10, 1)
        return tf.train.maybe_batch([x], keep_input=tf.equal(x % 2, 0), batch_size=2,
                                    allow_smaller_final_batch=True)

    got = _drain(build)
    assert [x for b in got for x in b] == [0, 2, 4, 6, 8]

    def build_many():
        x = tf.train.limit_epochs(tf.constant([1, 2, 3, 4]), num_epochs=1)
        return tf.train.maybe_batch([x], keep_input=tf.constant([True, False, True, True]), batch_size=3,
                                    enqueue_many=True, allow_smaller_final_batch=True)

    assert _drain(build_many) == [[1, 3, 4]]


def test_summaries_and_queue_runners_have_tensorflows_names():
    want = FIXTURES["summaries"]
    with tf.Graph().as_default() as g:
        x = tf.train.string_input_producer(["a"]).dequeue()
        tf.train.batch([x], 4)
        tf.train.shuffle_batch([x], 4, capacity=50, min_after_dequeue=10)
        tf.train.batch_join([[x], [x]], 2)
        summaries = sorted(t.op.name for t in g.get_collection(tf.GraphKeys.SUMMARIES))
        runners = [[qr.name, len(qr.enqueue_ops)] for qr in g.get_collection(tf.GraphKeys.QUEUE_RUNNERS)]
    assert summaries == want["summaries"]
    assert runners == [list(r) for r in want["queue_runners"]]


def test_limit_epochs_raises_out_of_range_after_n_evaluations():
    with tf.Graph().as_default():
        t = tf.train.limit_epochs(tf.constant(7), num_epochs=3)
        assert len(tf.local_variables()) == 1
        with tf.Session() as s:
            s.run(tf.local_variables_initializer())
            assert [s.run(t) for _ in range(3)] == [7, 7, 7]
            with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 3"):
                s.run(t)
    with tf.Graph().as_default(), pytest.raises(ValueError):
        tf.train.limit_epochs(tf.constant(1), num_epochs=0)


def test_match_filenames_once(tmp_path):
    for name in ["x1.rec", "x2.rec", "y.txt"]:
        (tmp_path / name).write_bytes(b"")
    with tf.Graph().as_default():
        files = tf.train.match_filenames_once(str(tmp_path / "*.rec"))
        with tf.Session() as s:
            s.run(tf.local_variables_initializer())
            got = [f.decode() for f in s.run(files)]
    assert got == [str(tmp_path / "x1.rec"), str(tmp_path / "x2.rec")]


def test_monitored_training_session_starts_runners_and_ends_on_out_of_range():
    with tf.Graph().as_default():
        b = tf.train.batch([_range(10, 2)], batch_size=5)
        step = tf.train.get_or_create_global_step()
        inc = tf.assign_add(step, 1)
        seen = []
        with tf.train.MonitoredTrainingSession() as s:
            while not s.should_stop():
                v, _ = s.run([b, inc])
                seen.extend(v.tolist())
    assert seen == list(range(10)) * 2


def test_supervisor_managed_session_ends_on_out_of_range(tmp_path):
    with tf.Graph().as_default():
        b = tf.train.batch([_range(6, 1)], batch_size=3)
        seen = []
        sv = tf.train.Supervisor(logdir=str(tmp_path), save_summaries_secs=0, save_model_secs=0)
        with sv.managed_session() as s:
            while not sv.should_stop():
                seen.extend(s.run(b).tolist())
    assert seen == list(range(6))


def test_batch_of_sparse_tensors_matches_tensorflow():
    def build():
        x = _range(4, 1)
        sp = tf.SparseTensor(indices=tf.reshape(tf.range(tf.cast(x, tf.int64) + 1), [-1, 1]),
                             values=tf.range(x + 1) * 10, dense_shape=tf.reshape(tf.cast(x, tf.int64) + 1, [1]))
        return tf.train.batch([sp, x], batch_size=2, allow_smaller_final_batch=True)

    with tf.Graph().as_default():
        sp, x = build()
        assert isinstance(sp, tf.SparseTensor)
        with tf.Session() as s:
            s.run(tf.local_variables_initializer())
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(s, coord=coord)
            got = []
            try:
                while True:
                    v, xv = s.run([sp, x], options=tf.RunOptions(timeout_in_ms=20000))
                    got.append({"indices": v.indices.tolist(), "values": v.values.tolist(),
                                "dense_shape": v.dense_shape.tolist(), "x": xv.tolist()})
            except tf.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads)
    assert got == FIXTURES["sparse_batch"]


def test_queue_runners_round_trip_through_a_meta_graph(tmp_path):
    with tf.Graph().as_default():
        tf.train.batch([_range(7, 2)], batch_size=3, allow_smaller_final_batch=True, name="the_batch")
        meta = tf.train.export_meta_graph(str(tmp_path / "m.meta"))
        assert "queue_runners" in meta.collection_def
    got = _drain(lambda: (tf.train.import_meta_graph(str(tmp_path / "m.meta")),
                          tf.get_default_graph().get_tensor_by_name("the_batch:0"))[1])
    assert got == FIXTURES["meta_graph_batches"]


def test_tensorflows_meta_graph_with_queue_runners_runs():
    path = Path(__file__).parent.parent / "fixtures" / "queues" / "tf_queue_pipeline.meta"
    got = _drain(lambda: (tf.train.import_meta_graph(str(path)),
                          tf.get_default_graph().get_tensor_by_name("the_batch:0"))[1])
    assert got == FIXTURES["meta_graph_batches"]


def test_closing_the_session_under_running_queue_runners_ends_them():
    import threading
    import time

    with tf.Graph().as_default():
        b = tf.train.shuffle_batch([tf.train.range_input_producer(50).dequeue()], batch_size=4, capacity=20,
                                   min_after_dequeue=5, num_threads=4)
        s = tf.Session()
        coord = tf.train.Coordinator()
        before = threading.active_count()
        threads = tf.train.start_queue_runners(s, coord=coord)
        assert len(s.run(b)) == 4
        time.sleep(0.2)  # the runners now wait in full queues
        start = time.monotonic()
        s.close()
        for t in threads:
            t.join(1.0)
        assert time.monotonic() - start < 2.0
        assert not any(t.is_alive() for t in threads)
        assert threading.active_count() <= before
        # The runners reported why they stopped: the session closed under them (a waiting run is cancelled;
        # one starting afterwards finds the session closed).
        assert coord.should_stop()
        with pytest.raises((tf.errors.CancelledError, RuntimeError)):
            coord.join(threads)
