"""tf.train.write_graph / tf.io.write_graph and gfile's atomic file replacement."""

import os

import pytest
from google.protobuf import text_format

import ferroflow as tf
from ferroflow.platform import gfile


def _graph():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        tf.identity(x * 2.0, name="y")
    return g


def test_write_graph_text_and_binary_round_trip(tmp_path):
    g = _graph()
    text_path = tf.train.write_graph(g, str(tmp_path / "new" / "dir"), "graph.pbtxt")
    assert text_path == os.path.join(str(tmp_path / "new" / "dir"), "graph.pbtxt")
    parsed = text_format.Parse(open(text_path).read(), tf.GraphDef())
    assert [n.name for n in parsed.node] == [n.name for n in g.as_graph_def().node]
    assert {"x", "y"} <= {n.name for n in parsed.node}

    bin_path = tf.io.write_graph(g.as_graph_def(), str(tmp_path), "graph.pb", as_text=False)
    assert tf.GraphDef.FromString(open(bin_path, "rb").read()) == g.as_graph_def()
    # No temporary files are left beside the outputs.
    assert sorted(os.listdir(tmp_path)) == ["graph.pb", "new"]


def test_write_graph_rejects_other_objects(tmp_path):
    with pytest.raises(TypeError, match="tf.Graph or a tf.GraphDef"):
        tf.train.write_graph("not a graph", str(tmp_path), "g.pbtxt")


def test_atomic_write_replaces_whole_files(tmp_path):
    path = tmp_path / "state"
    gfile.atomic_write_string_to_file(str(path), "first")
    gfile.atomic_write_string_to_file(str(path), b"second")
    assert path.read_bytes() == b"second"
    with pytest.raises(tf.errors.AlreadyExistsError, match="state"):
        gfile.atomic_write_string_to_file(str(path), "third", overwrite=False)
    assert path.read_bytes() == b"second"
    with pytest.raises(tf.errors.NotFoundError, match="missing"):
        gfile.atomic_write_string_to_file(str(tmp_path / "missing" / "f"), "x")
    assert sorted(os.listdir(tmp_path)) == ["state"]
