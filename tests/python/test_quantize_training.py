"""tf.compat.v1.train.do_quantize_training_on_graphdef: TensorFlow 1's quantized-training rewrite.

``tests/fixtures/compat_v1_last/quantize_training/`` (``tools/make_compat_v1_last_fixtures.py``)
holds GraphDefs TensorFlow 2.21 built and what its rewrite made of them: ferroflow's rewrite of
the same input equals TensorFlow's output node for node (names, ops, inputs, attrs, order), for a
model with a Saver, variables, every kind of input TensorFlow distinguishes, a Conv2D, a control
input and gradient MatMuls. The rewritten graphs also import and run in ferroflow, learning the
same ranges as TensorFlow's run, and a ferroflow graph's Saver saves and restores the new variables.
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import ferroflow as tf
import ferroflow.compat.v1 as tf1

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "compat_v1_last" / "quantize_training"


def _graph_def(name):
    return tf.GraphDef.FromString((FIXTURES / name).read_bytes())


@pytest.mark.parametrize("case, num_bits", [("model", 8), ("small", 4)])
def test_rewrite_equals_tensorflow(case, num_bits):
    got = tf1.train.do_quantize_training_on_graphdef(_graph_def(f"{case}.input.pb"), num_bits)
    want = _graph_def(f"{case}.output.pb")
    assert [n.name for n in got.node] == [n.name for n in want.node]
    for g, w in zip(got.node, want.node):
        assert g == w, g.name
    assert got == want


def test_errors_match_tensorflow():
    expected = json.loads((FIXTURES / "errors.json").read_text())
    bits = {"three_inputs": 8, "zero_bits": 0, "two_savers": 8}
    classes = {"NotImplementedError": NotImplementedError, "IndexError": IndexError, "ValueError": ValueError}
    for case, (cls, message) in expected.items():
        with pytest.raises(classes[cls]) as info:
            tf1.train.do_quantize_training_on_graphdef(_graph_def(f"{case}.input.pb"), bits[case])
        assert str(info.value) == message, case
    with pytest.raises(TypeError, match="GraphDef"):
        tf1.train.do_quantize_training_on_graphdef(b"not a graph", 8)


def test_rewritten_graph_runs_like_tensorflow():
    runs = np.load(FIXTURES / "small_runs.npz")
    with tf.Graph().as_default():
        tf.import_graph_def(_graph_def("small.output.pb"), name="")
        with tf.Session() as sess:
            sess.run("w/Assign")
            for feed, want in zip(runs["feeds"], runs["outputs"]):
                np.testing.assert_allclose(sess.run("y:0", {"x:0": feed}), want, rtol=1e-6, atol=1e-6)
            ranges = sess.run(["x/Min/Variable:0", "x/Max/Variable:0", "w/read/Min/Variable:0",
                               "w/read/Max/Variable:0"])
    np.testing.assert_allclose(ranges, runs["ranges"], rtol=1e-6)


def test_ferroflow_graph_with_saver(tmp_path):
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        w = tf.Variable(np.linspace(-1.0, 1.0, 6).reshape(3, 2).astype(np.float32), name="w")
        tf.nn.relu(tf.matmul(x, w), name="y")
        tf.train.Saver()
        graph_def = g.as_graph_def()
    out = tf1.train.do_quantize_training_on_graphdef(graph_def, 8)
    added = ["x/Min/Variable", "x/Max/Variable", "w/read/Min/Variable", "w/read/Max/Variable"]
    nodes = {n.name: n for n in out.node}
    assert list(nodes["y"].input) == ["MatMul"]
    assert list(nodes["MatMul"].input) == ["x/QuantizeAndDequantizeV2", "w/read/QuantizeAndDequantizeV2"]
    assert list(nodes["save/SaveV2"].input)[3:] == ["w"] + added
    path = str(tmp_path / "quantized")
    feed = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, -1.0]], np.float32)
    with tf.Graph().as_default():
        tf.import_graph_def(out, name="")
        with tf.Session() as sess:
            sess.run("w/Assign")
            sess.run("y:0", {"x:0": feed})
            learned = sess.run([name + ":0" for name in added])
            np.testing.assert_allclose(learned[:2], [feed.min(), feed.max()])
            np.testing.assert_allclose(learned[2:], [-1.0, 1.0])
            # The rewritten Saver (multi-element string constants, as TensorFlow writes them) saves and
            # restores the new variables.
            sess.run("save/control_dependency:0", {"save/Const:0": path})
            assert sorted(n for n, _ in tf.train.list_variables(path)) == sorted(["w"] + added)
            sess.run(tf.assign(tf.get_default_graph().get_tensor_by_name("x/Min/Variable:0"), 5.0))
            sess.run("save/restore_all", {"save/Const:0": path})
            np.testing.assert_allclose(sess.run([name + ":0" for name in added]), learned)


def test_string_tensor_content_reads_as_tensorflow_writes_it():
    # TensorFlow's C++ wrote these Saver constants (15 strings) as varint lengths, then the bytes.
    nodes = {n.name: n for n in _graph_def("model.output.pb").node}
    tensor = nodes["save/SaveV2/tensor_names"].attr["value"].tensor
    assert tensor.tensor_content and not tensor.string_val
    names = tf.make_ndarray(tensor).tolist()
    assert names[:3] == [b"filt", b"w1", b"w3"] and names[-1] == b"filt/read/Max/Variable" and len(names) == 15
    assert tf.make_ndarray(nodes["save/SaveV2/shape_and_slices"].attr["value"].tensor).tolist() == [b""] * 15
    broken = type(tensor)()
    broken.CopyFrom(tensor)
    broken.tensor_content = tensor.tensor_content[:-1]
    with pytest.raises(ValueError, match="length-prefixed strings"):
        tf.make_ndarray(broken)
