"""tf.summary ops (naming, collections, errors, values) and FileWriter behaviour, incl. TensorBoard reading our logs."""

import os
import warnings

import numpy as np
import pytest

import ferroflow as tf
import ferroflow.compat.v1 as tf1


def _run(op, feed=None):
    with tf.Session() as sess:
        return tf.Summary.FromString(sess.run(op, feed))


def _events(logdir):
    files = sorted(f for f in os.listdir(logdir) if f.startswith("events.out.tfevents."))
    return [list(tf.train.summary_iterator(os.path.join(logdir, f))) for f in files]


def test_tags_scopes_families_and_collections():
    with tf.name_scope("train"):
        s = tf.summary.scalar("loss", tf.constant(2.5))
        h = tf.summary.histogram("w", tf.constant([1.0, 2.0]), family="weights")
    t = tf.summary.scalar("bad name!", 1.0, collections=["mine"])
    assert s.op.name == "train/loss" and s.dtype == tf.string and s.shape.as_list() == []
    assert h.op.name == "train/weights/w"
    assert t.op.name == "bad_name_"
    assert [v.tag for v in _run(s).value] == ["train/loss"]
    assert [v.tag for v in _run(h).value] == ["weights/train/weights/w"]
    assert [v.tag for v in _run(t).value] == ["bad_name_"]
    assert tf.get_collection(tf.GraphKeys.SUMMARIES) == [s, h]
    assert tf.get_collection("mine") == [t]
    merged = tf.summary.merge_all()
    assert merged.op.name == "Merge/MergeSummary"
    assert [v.tag for v in _run(merged).value] == ["train/loss", "weights/train/weights/w"]
    assert tf.summary.merge_all(key="nothing here") is None
    assert tf.summary.merge([s, t], name="both").op.name == "both/both"
    assert tf.summary.merge_all(scope="train").op.name == "Merge_1/MergeSummary"


def test_scalar_values_and_dtypes():
    for dtype, value in [(tf.float64, 0.1), (tf.int32, 7), (tf.int64, -3), (tf.float16, 1.5)]:
        tf.reset_default_graph()
        v = _run(tf.summary.scalar("x", tf.constant(value, dtype=dtype))).value[0]
        assert v.simple_value == np.float32(value)
    tf.reset_default_graph()
    s = tf.scalar_summary(["a", "b"], tf.constant([1.0, 2.0]))
    assert s.op.name == "ScalarSummary"
    assert [(v.tag, v.simple_value) for v in _run(s).value] == [("a", 1.0), ("b", 2.0)]
    bad = tf.scalar_summary(["a", "b"], tf.constant([1.0, 2.0, 3.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"tags and values are not the same shape: \[2\] != \[3\]"):
        _run(bad)
    not_scalar = tf.summary.scalar("v", tf.constant([1.0, 2.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"\(tag 'v'\)"):
        _run(not_scalar)
    with pytest.raises(TypeError):
        tf.summary.scalar("s", tf.constant("text"))


def test_histogram_non_finite_values_fail_naming_the_node():
    x = tf.placeholder(tf.float32, [None])
    h = tf.summary.histogram("acts", x)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Nan in summary histogram for: acts"):
        _run(h, {x: [1.0, np.nan]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="Infinity in summary histogram for: acts"):
        _run(h, {x: [np.inf]})
    empty = _run(h, {x: np.zeros([0], np.float32)}).value[0].histo
    assert empty.num == 0 and list(empty.bucket) == [0.0]
    old = tf.histogram_summary("hist", tf.constant([0.5, -0.5, 0.0]))
    assert old.op.name == "HistogramSummary"
    assert _run(old).value[0].histo.num == 3


def test_float_images_are_normalised_like_tensorflow():
    pil = pytest.importorskip("PIL.Image")
    import io

    rng = np.random.default_rng(3)
    pos = rng.uniform(0, 2, size=(3, 4, 5, 1)).astype(np.float32)
    mixed = rng.uniform(-1, 3, size=(1, 4, 5, 3)).astype(np.float32)
    mixed[0, 0, 0, 1] = np.nan
    s = _run(tf.summary.merge([tf.summary.image("pos", pos, max_outputs=2), tf.summary.image("mixed", mixed, 1)]))
    assert [v.tag for v in s.value] == ["pos/image/0", "pos/image/1", "mixed/image"]

    def decode(v):
        return np.asarray(pil.open(io.BytesIO(v.image.encoded_image_string)))

    for i in range(2):
        img = pos[i]
        expected = (img * np.float32(255.0 / img.max())).astype(np.uint8)[..., 0]
        np.testing.assert_array_equal(decode(s.value[i]), expected)
        assert s.value[i].image.colorspace == 1
    img = mixed[0]
    finite = np.isfinite(img).all(axis=-1)
    m = np.float32(127.0) / max(abs(img[finite].min()), abs(img[finite].max()))
    expected = (np.where(finite[..., None], img, 0) * m + np.float32(128.0)).astype(np.uint8)
    expected[~finite] = [255, 0, 0]
    np.testing.assert_array_equal(decode(s.value[2]), expected)
    with pytest.raises(ValueError):
        tf.summary.image("rank3", np.zeros([4, 5, 3], np.float32))
    old = tf.image_summary("img", np.zeros([2, 3, 3, 4], np.uint8), max_images=5)
    assert [v.tag for v in _run(old).value] == ["img/image/0", "img/image/1"]


def test_audio_wav_encoding():
    clip = np.array([[0.0, 0.5, -0.5, 1.0, -1.0, 2.0]], np.float32)
    v = _run(tf.summary.audio("snd", clip, sample_rate=16000)).value[0]
    assert v.tag == "snd/audio/0"
    a = v.audio
    assert (a.sample_rate, a.num_channels, a.length_frames, a.content_type) == (16000.0, 1, 6, "audio/wav")
    wav = a.encoded_audio_string
    assert wav[:4] == b"RIFF" and wav[8:12] == b"WAVE"
    assert int.from_bytes(wav[24:28], "little") == 16000
    samples = np.frombuffer(wav[44:], "<i2")
    np.testing.assert_array_equal(samples, [0, 16384, -16384, 32767, -32768, 32767])
    stereo = tf.audio_summary("st", np.zeros([3, 10, 2], np.float32), 8000.0, max_outputs=1)
    (v,) = _run(stereo).value
    assert v.tag == "st/audio" and v.audio.num_channels == 2
    bad_rate = tf.summary.audio("r", clip, sample_rate=tf.constant(-1.0))
    with pytest.raises(tf.errors.InvalidArgumentError, match="sample_rate must be > 0"):
        _run(bad_rate)


def test_text_and_tensor_summaries():
    t = tf.summary.text("note", tf.constant([["a", "b"], ["c", "d"]]))
    v = _run(t).value[0]
    assert v.metadata.plugin_data.plugin_name == "text"
    np.testing.assert_array_equal(tf.make_ndarray(v.tensor), np.array([[b"a", b"b"], [b"c", b"d"]], object))
    with pytest.raises(ValueError, match="dtype string"):
        tf.summary.text("n", tf.constant(1.0))
    meta = tf.SummaryMetadata(display_name="shown")
    ts = tf.summary.tensor_summary("t", tf.constant(np.arange(6, dtype=np.int64).reshape(2, 3)),
                                   summary_description="desc", summary_metadata=meta)
    v = _run(ts).value[0]
    assert (v.metadata.display_name, v.metadata.summary_description) == ("shown", "desc")
    np.testing.assert_array_equal(tf.make_ndarray(v.tensor), np.arange(6).reshape(2, 3))
    for value in [np.array([True, False]), np.array([1.5, -2.0], np.float16), np.float64(2.25)]:
        tf.reset_default_graph()
        got = tf.make_ndarray(_run(tf.summary.tensor_summary("x", value)).value[0].tensor)
        np.testing.assert_array_equal(got, value)
        assert got.dtype == np.asarray(value).dtype


def test_merge_rejects_duplicate_tags():
    a = tf.summary.scalar("same", 1.0)
    b = tf.summary.scalar("x", 2.0)
    dup = tf.summary.merge([a, a])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Duplicate tag same found in summary inputs"):
        _run(dup)
    assert [v.tag for v in _run(tf.merge_summary([a, b])).value] == ["same", "x"]
    assert tf.merge_all_summaries() is not None
    junk = tf.summary.merge([tf.constant(b"\xff\xff not a proto")])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse"):
        _run(junk)


def test_file_writer_events(tmp_path):
    w = tf.summary.FileWriter(str(tmp_path), filename_suffix=".sfx", max_queue=2, flush_secs=1)
    assert w.get_logdir() == str(tmp_path)
    text = tf.summary.text("t", tf.constant("hi"))
    with tf.Session() as sess:
        serialized = sess.run(text)
    w.add_summary(serialized, 1)
    w.add_summary(tf.Summary.FromString(serialized), global_step=2)
    w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="loss", simple_value=0.5)]), 3)
    w.add_session_log(tf.SessionLog(status=tf.SessionLog.START), 0)
    w.add_run_metadata(tf.RunMetadata(), "step1", 1)
    with pytest.raises(ValueError, match="already used"):
        w.add_run_metadata(tf.RunMetadata(), "step1")
    w.add_event(tf.Event(wall_time=12.5, step=99, file_version="custom"))
    w.add_graph(tf.get_default_graph())
    with pytest.raises(TypeError):
        w.add_meta_graph("nope")
    with pytest.raises(TypeError):
        w.add_graph(42)
    w.flush()
    (events,) = _events(tmp_path)
    assert os.listdir(tmp_path)[0].endswith(".sfx")
    kinds = [(e.WhichOneof("what"), e.step) for e in events]
    assert kinds == [("file_version", 0), ("summary", 1), ("summary", 2), ("summary", 3), ("session_log", 0),
                     ("tagged_run_metadata", 1), ("file_version", 99), ("graph_def", 0)]
    assert events[1].summary.value[0].HasField("metadata")
    assert not events[2].summary.value[0].HasField("metadata")  # stripped: tag seen before
    assert events[3].summary.value[0].simple_value == 0.5
    assert events[6].wall_time == 12.5
    assert events[5].tagged_run_metadata.tag == "step1"
    graph = tf.GraphDef.FromString(events[7].graph_def)
    assert [n.name for n in graph.node] == [op.name for op in tf.get_default_graph().get_operations()]
    assert all("_output_shapes" in n.attr for n in graph.node)
    w.close()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w.add_summary(b"", 5)  # a no-op on a closed writer
    assert any("closed FileWriter" in str(c.message) for c in caught)
    assert len(_events(tmp_path)[0]) == 8


def test_reopen_starts_a_new_file_and_context_manager(tmp_path):
    with tf.summary.FileWriter(tmp_path / "logs") as w:
        w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=1)]), 1)
    w.reopen()
    w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=2)]), 2)
    w.close()
    files = _events(tmp_path / "logs")
    assert len(files) == 2
    assert [e.step for e in files[0]] == [0, 1] and [e.step for e in files[1]] == [0, 2]
    assert files[1][1].summary.value[0].simple_value == 2


def test_writer_with_graph_writes_meta_graph_and_aliases(tmp_path):
    tf.constant(1.0, name="c")
    w = tf.train.SummaryWriter(str(tmp_path), graph=tf.get_default_graph())
    w.close()
    (events,) = _events(tmp_path)
    assert [e.WhichOneof("what") for e in events] == ["file_version", "graph_def", "meta_graph_def"]
    meta = tf.MetaGraphDef.FromString(events[2].meta_graph_def)
    assert [n.name for n in meta.graph_def.node] == ["c"]
    assert tf.train.SummaryWriter is tf.summary.FileWriter
    assert tf.train.SummaryWriterCache is tf.summary.FileWriterCache
    assert tf1.summary.FileWriter is tf.summary.FileWriter
    assert tf1.train.summary_iterator is tf.train.summary_iterator


def test_file_writer_cache(tmp_path):
    a = tf.summary.FileWriterCache.get(str(tmp_path / "a"))
    assert tf.summary.FileWriterCache.get(str(tmp_path / "a")) is a
    b = tf.train.SummaryWriterCache.get(str(tmp_path / "b"))
    assert b is not a
    tf.summary.FileWriterCache.clear()
    assert tf.summary.FileWriterCache.get(str(tmp_path / "a")) is not a
    tf.summary.FileWriterCache.clear()


def test_flush_secs_flushes_in_background(tmp_path):
    import time

    w = tf.summary.FileWriter(str(tmp_path), flush_secs=0.2)
    w.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=1)]), 1)
    deadline = time.time() + 10
    while time.time() < deadline and len(_events(tmp_path)[0]) < 2:
        time.sleep(0.05)
    assert len(_events(tmp_path)[0]) == 2
    w.close()
    with pytest.raises(tf.errors.InvalidArgumentError, match="flush_secs"):
        tf.summary.FileWriter(str(tmp_path), flush_secs=0)


def test_tensorboard_reads_our_log_directory(tmp_path):
    ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    x = tf.placeholder(tf.float32, [])
    w_ = tf.placeholder(tf.float32, [50])
    im = tf.placeholder(tf.uint8, [1, 4, 3, 3])
    tf.summary.scalar("loss", x)
    tf.summary.histogram("weights", w_)
    tf.summary.image("input", im, max_outputs=1)
    merged = tf.summary.merge_all()
    rng = np.random.default_rng(11)
    writer = tf.summary.FileWriter(str(tmp_path), graph=tf.get_default_graph())
    fed = {}
    with tf.Session() as sess:
        for step in (0, 5, 10):
            feed = {x: np.float32(step * 0.25), w_: rng.normal(size=50).astype(np.float32),
                    im: rng.integers(0, 255, size=(1, 4, 3, 3), dtype=np.uint8)}
            fed[step] = feed
            writer.add_summary(sess.run(merged, feed), step)
    writer.close()

    acc = ea.EventAccumulator(str(tmp_path), size_guidance={ea.SCALARS: 0, ea.HISTOGRAMS: 0, ea.IMAGES: 0})
    acc.Reload()
    tags = acc.Tags()
    assert tags[ea.SCALARS] == ["loss"]
    assert tags[ea.HISTOGRAMS] == ["weights"]
    assert tags[ea.IMAGES] == ["input/image"]
    assert tags[ea.GRAPH] is True
    assert [(s.step, s.value) for s in acc.Scalars("loss")] == [(0, 0.0), (5, 1.25), (10, 2.5)]
    for h in acc.Histograms("weights"):
        vals = fed[h.step][w_].astype(np.float64)
        assert h.histogram_value.num == 50
        assert h.histogram_value.min == vals.min() and h.histogram_value.max == vals.max()
        np.testing.assert_allclose(h.histogram_value.sum, vals.sum(), rtol=1e-12)
    images = acc.Images("input/image")
    assert [i.step for i in images] == [0, 5, 10]
    assert (images[0].width, images[0].height) == (3, 4)
    pil = pytest.importorskip("PIL.Image")
    import io

    for i in images:
        np.testing.assert_array_equal(np.asarray(pil.open(io.BytesIO(i.encoded_image_string))), fed[i.step][im][0])
    assert [n.name for n in acc.Graph().node][:3] == [op.name for op in tf.get_default_graph().get_operations()][:3]


def test_add_summary_argument_forms_and_metadata_stripping(tmp_path):
    w = tf.summary.FileWriter(str(tmp_path))
    meta = tf.SummaryMetadata(plugin_data=tf.SummaryMetadata.PluginData(plugin_name="text"))

    def value(tag, x, with_meta):
        v = tf.Summary.Value(tag=tag, simple_value=x)
        if with_meta:
            v.metadata.CopyFrom(meta)
        return v

    first = tf.Summary(value=[value("a", 1.0, True), value("a", 2.0, True), value("b", 3.0, False)])
    w.add_summary(first, np.int64(7))  # numpy step
    w.add_summary(first.SerializeToString(), None)  # bytes, no step
    w.add_summary(bytearray(tf.Summary(value=[value("c", 4.0, True)]).SerializeToString()), 2**40)
    w.add_summary(memoryview(tf.Summary(value=[value("c", 5.0, True)]).SerializeToString()), -3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not a serialized Summary"):
        w.add_summary(b"\x0a\x05\x0a", 1)
    with pytest.raises(TypeError, match="expects a Summary"):
        w.add_summary(3.5, 1)
    w.close()
    (events,) = _events(tmp_path)
    got = [(e.step, [(v.tag, v.simple_value, v.HasField("metadata")) for v in e.summary.value]) for e in events[1:]]
    # TF keeps a tag's metadata on its first value only, also within one summary.
    assert got == [(7, [("a", 1.0, True), ("a", 2.0, False), ("b", 3.0, False)]),
                   (0, [("a", 1.0, False), ("a", 2.0, False), ("b", 3.0, False)]),
                   (2**40, [("c", 4.0, True)]),
                   (-3, [("c", 5.0, False)])]
    assert events[1].summary.value[0].metadata == meta
    assert all(e.wall_time > 1e9 for e in events)
