"""Summary ops and FileWriter against event files written by TensorFlow (tests/fixtures/records/events).

The TF1 case is rebuilt from its manifest (summary calls, placeholders and
per-step inputs), run through ferroflow's summary ops, and compared value by
value with the Summary protos TensorFlow wrote: scalars, histograms, WAV
bytes, text tensors and metadata exactly; PNG images by decoded pixels.
"""

import base64
import io
import json
import os
import re

import numpy as np
import pytest

import ferroflow as tf

CASE = ("records", "events", "tf1_filewriter")
PLACEHOLDER_OF = {"scalar": "scalar_in", "histogram": "hist_in", "image": "image_in", "audio": "audio_in",
                  "text": "text_in"}


def _decode_png(data):
    image_mod = pytest.importorskip("PIL.Image")
    return np.asarray(image_mod.open(io.BytesIO(data)))


@pytest.fixture
def tf1_case(fixtures):
    root = fixtures.joinpath(*CASE)
    manifest = json.loads((root / "events.json").read_text())
    inputs = np.load(root / "inputs.npz")
    tf_events = list(tf.train.summary_iterator(str(root / "logdir" / manifest["event_file"])))
    return root, manifest, inputs, tf_events


def _build(manifest, inputs):
    """Builds the manifest's summaries; returns (placeholders by name, merged op)."""
    placeholders = {}
    for key in inputs.files:
        step, ph = key.split(".", 1)
        if step == "step0":
            arr = inputs[key]
            placeholders[ph] = tf.placeholder(tf.as_dtype(arr.dtype), arr.shape, name=ph)
    if any(k.endswith(".text_in") for k in manifest.get("text_inputs", {})):
        placeholders["text_in"] = tf.placeholder(tf.string, [], name="text_in")

    def calls():
        for kind, desc in manifest["summaries"].items():
            m = re.match(r"tf\.compat\.v1\.summary\.(\w+)\('([^']+)'", desc or "")
            if not m or m.group(1) != kind:
                continue
            kwargs = dict((k, float(v) if "." in v else int(v)) for k, v in re.findall(r"(\w+)=([\d.]+)", desc))
            ph = placeholders[PLACEHOLDER_OF[kind]]
            getattr(tf.summary, kind)(m.group(2), ph, **kwargs)

    scope = manifest["summaries"].get("name_scope")
    if scope:
        with tf.name_scope(scope):
            calls()
    else:
        calls()
    return placeholders, tf.summary.merge_all()


def _feeds(manifest, inputs, placeholders, step):
    feed = {placeholders[k.split(".", 1)[1]]: inputs[k] for k in inputs.files if k.startswith(f"step{step}.")}
    text = manifest.get("text_inputs", {}).get(f"step{step}.text_in")
    if text is not None:
        feed[placeholders["text_in"]] = text
    return feed


def _assert_values_equal(ours, theirs, strip_metadata=False):
    assert [v.tag for v in ours.value] == [v.tag for v in theirs.value]
    for a, b in zip(ours.value, theirs.value):
        kind = b.WhichOneof("value")
        assert a.WhichOneof("value") == kind, b.tag
        if kind == "image":
            assert (a.image.height, a.image.width, a.image.colorspace) == (
                b.image.height, b.image.width, b.image.colorspace)
            np.testing.assert_array_equal(_decode_png(a.image.encoded_image_string),
                                          _decode_png(b.image.encoded_image_string))
        else:
            # Scalars, histograms (every bucket), WAV bytes and tensors are exact.
            assert getattr(a, kind) == getattr(b, kind), b.tag
        if not strip_metadata:
            assert a.metadata == b.metadata, b.tag


def test_graph_nodes_match_tensorflow(tf1_case):
    _, manifest, inputs, _ = tf1_case
    _build(manifest, inputs)
    graph_event = next(e for e in manifest["events"] if e["kind"] == "graph_def")
    ops_ = tf.get_default_graph().get_operations()
    assert [o.name for o in ops_] == graph_event["graph_node_names"]
    assert [o.type for o in ops_] == graph_event["graph_node_ops"]
    # The same names come back from the GraphDef FileWriter.add_graph writes.
    gd = tf.get_default_graph().as_graph_def(add_shapes=True)
    assert [n.name for n in gd.node] == graph_event["graph_node_names"]
    assert [n.op for n in gd.node] == graph_event["graph_node_ops"]


def test_summary_op_outputs_equal_tensorflows(tf1_case):
    _, manifest, inputs, tf_events = tf1_case
    placeholders, merged = _build(manifest, inputs)
    tf_summaries = {e.step: e.summary for e in tf_events if e.WhichOneof("what") == "summary"}
    assert sorted(tf_summaries) == manifest["steps"]
    with tf.Session() as sess:
        for step in manifest["steps"]:
            out = sess.run(merged, _feeds(manifest, inputs, placeholders, step))
            assert isinstance(out, bytes)
            ours = tf.Summary.FromString(out)
            # The writer strips repeated metadata; the op output always has it.
            _assert_values_equal(ours, tf_summaries[step], strip_metadata=step != manifest["steps"][0])


def test_histograms_match_numpy_and_golden_json(tf1_case):
    _, manifest, inputs, _ = tf1_case
    placeholders, merged = _build(manifest, inputs)
    by_step = {int(e["step"]): e for e in manifest["events"] if e["kind"] == "summary"}
    with tf.Session() as sess:
        for step in manifest["steps"]:
            s = tf.Summary.FromString(sess.run(merged, _feeds(manifest, inputs, placeholders, step)))
            histo = next(v.histo for v in s.value if v.WhichOneof("value") == "histo")
            data = inputs[f"step{step}.hist_in"].astype(np.float64).ravel()
            assert histo.num == data.size
            assert histo.min == data.min() and histo.max == data.max()
            np.testing.assert_allclose(histo.sum, data.sum(), rtol=1e-12)
            np.testing.assert_allclose(histo.sum_squares, (data * data).sum(), rtol=1e-12)
            # Each value falls in the bucket whose right edge is the first limit above it.
            limits = np.array(histo.bucket_limit)
            counts = np.bincount(np.searchsorted(limits, data, side="right"), minlength=len(limits))
            nonzero = np.array(histo.bucket) > 0
            np.testing.assert_array_equal(np.array(histo.bucket)[nonzero], counts[: len(limits)][nonzero])
            assert sum(histo.bucket) == data.size
            golden = next(v for v in by_step[step]["summary_values"] if v["value_kind"] == "histo")["histo"]
            np.testing.assert_allclose(histo.bucket_limit, golden["bucket_limit"], rtol=1e-14)
            assert list(histo.bucket) == golden["bucket"]


def test_file_writer_reproduces_tensorflows_event_file(tf1_case, tmp_path):
    _, manifest, inputs, tf_events = tf1_case
    placeholders, merged = _build(manifest, inputs)
    writer = tf.summary.FileWriter(str(tmp_path), graph=tf.get_default_graph())
    with tf.Session() as sess:
        for e in tf_events:
            if e.WhichOneof("what") == "session_log":
                writer.add_session_log(e.session_log, e.step)
        for step in manifest["steps"]:
            writer.add_summary(sess.run(merged, _feeds(manifest, inputs, placeholders, step)), step)
    writer.close()
    files = os.listdir(tmp_path)
    assert len(files) == 1 and re.match(r"events\.out\.tfevents\.\d{10}\.", files[0])
    ours = list(tf.train.summary_iterator(str(tmp_path / files[0])))
    assert [(e.WhichOneof("what"), e.step) for e in ours] == [(e.WhichOneof("what"), e.step) for e in tf_events]
    assert ours[0].file_version == tf_events[0].file_version == "brain.Event:2"
    assert ours[0].source_metadata == tf_events[0].source_metadata
    assert ours[0].wall_time == int(ours[0].wall_time)
    for a, b in zip(ours, tf_events):
        kind = b.WhichOneof("what")
        if kind == "summary":
            # Metadata is kept only on a tag's first value, as TensorFlow's writer does.
            _assert_values_equal(a.summary, b.summary)
        elif kind == "session_log":
            assert a.session_log == b.session_log
        elif kind == "graph_def":
            ga, gb = tf.GraphDef.FromString(a.graph_def), tf.GraphDef.FromString(b.graph_def)
            assert [(n.name, n.op, list(n.input)) for n in ga.node] == [(n.name, n.op, list(n.input)) for n in gb.node]
            for na, nb in zip(ga.node, gb.node):
                if nb.op == "Const":
                    assert na.attr["value"].tensor == nb.attr["value"].tensor, nb.name
        elif kind == "meta_graph_def":
            ma, mb = tf.MetaGraphDef.FromString(a.meta_graph_def), tf.MetaGraphDef.FromString(b.meta_graph_def)
            assert [n.name for n in ma.graph_def.node] == [n.name for n in mb.graph_def.node]


def _strings(value):
    if isinstance(value, dict):
        return bytes.fromhex(value["hex"])
    return [_strings(x) for x in value]


def _assert_decoded(arr, golden):
    assert list(arr.shape) == golden["shape"]
    if golden["dtype"] == "string":
        assert arr.tolist() == _strings(golden["value"])
    else:
        assert arr.dtype == np.dtype(golden["dtype"])
        np.testing.assert_allclose(arr, np.array(golden["value"], dtype=arr.dtype), rtol=1e-14)


def test_golden_event_files_read_back(fixtures):
    for case in ("tf1_filewriter", "tf2_summary"):
        root = fixtures / "records" / "events" / case
        manifest = json.loads((root / "events.json").read_text())
        events = list(tf.train.summary_iterator(str(root / "logdir" / manifest["event_file"])))
        assert len(events) == manifest["num_events"]
        for ours, rec in zip(events, manifest["events"]):
            assert ours.WhichOneof("what") == rec["kind"]
            assert ours.step == int(rec["step"])
            assert ours.wall_time == pytest.approx(float(rec["wall_time"]), rel=1e-15)
            if rec["kind"] == "summary":
                for v, golden in zip(ours.summary.value, rec["summary_values"]):
                    assert v.tag == golden["tag"]
                    assert v.WhichOneof("value") == golden["value_kind"]
                    if golden["value_kind"] == "simple_value":
                        assert v.simple_value == pytest.approx(float(golden["simple_value"]), rel=1e-7)
                    if golden["value_kind"] in ("image", "audio"):
                        field = "encoded_image_string" if golden["value_kind"] == "image" else "encoded_audio_string"
                        blob = getattr(getattr(v, golden["value_kind"]), field)
                        assert blob == base64.b64decode(golden[golden["value_kind"]][field])
                    if "decoded_tensor" in golden:
                        _assert_decoded(tf.make_ndarray(v.tensor), golden["decoded_tensor"])
            if rec["kind"] in ("graph_def", "meta_graph_def"):
                assert len(getattr(ours, rec["kind"])) == int(rec[f"{rec['kind']}_len"])
