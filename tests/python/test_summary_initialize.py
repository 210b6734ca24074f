"""tf.summary.initialize in graph mode, against TensorFlow 2.21 (tests/fixtures/summary/initialize.json, made by
tools/make_summary_initialize_fixtures.py): without a default TF 2 summary writer (ferroflow has none) it raises
RuntimeError whatever the arguments, and leaves the graph alone."""

import inspect
import json
import pathlib

import pytest

import ferroflow as tf

FIXTURE = json.loads(
    (pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "summary" / "initialize.json").read_text()
)


@pytest.mark.parametrize("case", FIXTURE["cases"], ids=lambda c: f"graph={c['graph']}-session={c['session']}")
def test_initialize_without_a_default_writer(case):
    graph = tf.Graph()
    with graph.as_default():
        tf.constant(1.0, name="c")
        sess = tf.Session(graph=graph)
        kwargs = {}
        if case["graph"]:
            kwargs["graph"] = graph
        if case["session"] == "argument":
            kwargs["session"] = sess
        error = {"RuntimeError": RuntimeError, "ValueError": ValueError}[case["outcome"]["error"]]
        with pytest.raises(error) as info:
            if case["session"] == "default":
                with sess.as_default():
                    tf.summary.initialize(**kwargs)
            else:
                tf.summary.initialize(**kwargs)
        sess.close()
    assert str(info.value).startswith(case["outcome"]["message"])
    assert [op.name for op in graph.get_operations()] == case["ops_after"]


def test_signature():
    assert list(inspect.signature(tf.summary.initialize).parameters) == ["graph", "session"]
    assert tf.compat.v1.summary.initialize is tf.summary.initialize
