"""Graphs with TF1's dataflow control flow (Switch/Merge/Enter/Exit/NextIteration/LoopCond, TensorArrayV3,
loop gradients with stacks), written by TensorFlow 2.21 in TF1 mode, import into ferroflow as If/While ops
and compute TensorFlow's values (fixtures: tools/make_control_flow_v1_fixtures.py).
"""

from __future__ import annotations

import json
import logging
import pathlib

import numpy as np
import pytest
from google.protobuf import text_format

import ferroflow as tf
from ferroflow.core.framework import graph_pb2
from ferroflow.core.protobuf import meta_graph_pb2
from ferroflow.framework import control_flow_v1_import
from ferroflow.framework.meta_graph import read_meta_graph_file

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "control_flow_v1"
CASES = json.loads((FIXTURES / "cases.json").read_text())
GRAPH_CASES = sorted(k for k, v in CASES.items() if v["kind"] == "graph_def")
TRAINING_CASES = sorted(k for k, v in CASES.items() if v["kind"] == "meta_graph")
V1_OPS = {"Switch", "RefSwitch", "Merge", "RefMerge", "Enter", "RefEnter", "Exit", "RefExit", "NextIteration",
          "RefNextIteration", "LoopCond", "TensorArrayV3", "StackV2", "StackPushV2", "StackPopV2"}


def _graph_def(name):
    return graph_pb2.GraphDef.FromString((FIXTURES / f"{name}.pb").read_bytes())


def _runs(data, prefix):
    """``{feed name: array}`` of each run ``prefix<k>/feed/...`` in the npz, in order."""
    runs = []
    k = 0
    while any(key.startswith(f"{prefix}{k}/") for key in data.files):
        runs.append({key.split("/", 2)[2]: data[key] for key in data.files if key.startswith(f"{prefix}{k}/feed/")})
        k += 1
    return runs


def _close(got, want, what):
    if np.asarray(want).dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


@pytest.mark.parametrize("name", GRAPH_CASES)
def test_graph_def_imports_and_gives_tensorflows_values(name):
    case = CASES[name]
    data = np.load(FIXTURES / f"{name}.npz")
    g = tf.Graph()
    with g.as_default():
        tf.import_graph_def(_graph_def(name), name="")
        left = sorted({op.type for op in g.get_operations()} & V1_OPS)
        assert left == [], f"TF1 control-flow ops left after import: {left}"
        with tf.Session() as sess:
            runs = _runs(data, "run")
            assert len(runs) == case["runs"]
            for k, feeds in enumerate(runs):
                got = sess.run(case["fetches"], {f"{n}:0": v for n, v in feeds.items()})
                for i, value in enumerate(got):
                    _close(value, data[f"run{k}/fetch/{i}"], f"{name} run {k} fetch {case['fetches'][i]}")


@pytest.mark.parametrize("name, if_ops, while_ops", [
    ("cond", 1, 0), ("cond_tuple", 1, 0), ("nested_cond", 1, 0), ("conds_same_pred", 2, 0),
    ("while_counter", 0, 1), ("nested_while", 0, 1), ("while_cond_inside", 0, 1), ("cond_while_inside", 1, 0),
    ("dynamic_rnn_lstm", 0, 1),
])
def test_what_the_converter_builds(name, if_ops, while_ops):
    """Each tf.cond becomes one If and each tf.while_loop one While (nested ones inside the functions);
    the results keep the names of TF1's Merge and Exit nodes."""
    conversion = control_flow_v1_import.functionalize(_graph_def(name))
    types = [n.op for n in conversion.graph_def.node]
    assert types.count("If") == if_ops
    assert types.count("While") == while_ops
    names = {n.name for n in conversion.graph_def.node}
    for fetch in CASES[name]["fetches"]:
        if "/Exit" in fetch or "/Merge" in fetch:
            assert fetch.split(":")[0] in names
    assert conversion.graph_def.library.function


def test_names_of_results_resolve_and_inner_nodes_are_reported():
    g = tf.Graph()
    with g.as_default():
        tf.import_graph_def(_graph_def("while_counter"), name="")
        exit_op = g.get_operation_by_name("while/Exit")
        assert exit_op.type == "Identity" and exit_op.inputs[0].op.type == "While"
        assert g.get_tensor_by_name("while/Exit_1:0").dtype == tf.int32
        with pytest.raises((KeyError, ValueError)):
            g.get_tensor_by_name("while/Identity:0")
        assert "inside TF1 control flow" in g._v1_control_flow_removed["while/Identity"]


def test_import_twice_with_scopes():
    """Two imports into one graph get their own functions and scoped names."""
    g = tf.Graph()
    with g.as_default():
        tf.import_graph_def(_graph_def("while_counter"), name="a")
        tf.import_graph_def(_graph_def("nested_while"), name="b")
        tf.import_graph_def(_graph_def("while_counter"), name="c")
        with tf.Session() as sess:
            a, c = sess.run(["a/while/Exit_1:0", "c/while/Exit_1:0"], {"a/n:0": 3, "c/n:0": 4})
            assert (a, c) == (8, 16)
            r = sess.run(CASES["nested_while"]["fetches"][0].replace("while/", "b/while/", 1), {"b/x:0": 0.5})
            np.testing.assert_allclose(r, np.load(FIXTURES / "nested_while.npz")["run0/fetch/0"])


def test_loop_gradient_is_dropped_from_a_graph_def():
    """tf.gradients of a TF1 loop (stack pushes and pops) is left out; the forward loop imports."""
    g = tf.Graph()
    with g.as_default():
        tf.import_graph_def(_graph_def("while_grad"), name="")
        assert not [op.name for op in g.get_operations() if op.name.startswith("gradients/")
                    and op.type in ("StackPushV2", "StackPopV2", "StackV2")]
        removed = g._v1_control_flow_removed
        stacks = [n for n in removed if "Stack" in n]
        assert stacks and all("gradient of a TF1 while loop" in removed[n] for n in stacks)
        assert "gradients/while/while_context" in removed["gradients/b_count_2"]  # the gradient loop's LoopCond


def test_converted_graph_exports_and_imports_again():
    """A converted graph is an ordinary ferroflow graph: its GraphDef (If/While and functions) round-trips."""
    data = np.load(FIXTURES / "dynamic_rnn_lstm.npz")
    fetches = CASES["dynamic_rnn_lstm"]["fetches"]
    g = tf.Graph()
    with g.as_default():
        tf.import_graph_def(_graph_def("dynamic_rnn_lstm"), name="")
        exported = g.as_graph_def()
    assert not {n.op for n in exported.node} & V1_OPS
    g2 = tf.Graph()
    with g2.as_default():
        tf.import_graph_def(exported, name="")
        with tf.Session() as sess:
            got = sess.run(fetches, {"x:0": data["run0/feed/x"]})
    for i, value in enumerate(got):
        _close(value, data[f"run0/fetch/{i}"], fetches[i])


def _train(name, steps=3):
    data = np.load(FIXTURES / f"{name}.npz")
    g = tf.Graph()
    with g.as_default():
        saver = tf.train.import_meta_graph(str(FIXTURES / name / "model.meta"))
        train_op = tf.get_collection("train_op")[0]
        with tf.Session() as sess:
            saver.restore(sess, str(FIXTURES / name / "model"))
            for k, feeds in enumerate(_runs(data, "step")[:steps]):
                loss, _ = sess.run(["loss:0", train_op], {f"{n}:0": v for n, v in feeds.items()})
                _close(loss, data[f"step{k}/loss"], f"{name} loss at step {k}")
            feeds = _runs(data, "step")[0]
            _close(sess.run("loss:0", {f"{n}:0": v for n, v in feeds.items()}), data["final_loss"], "final loss")
            names = [key[len("var/"):] for key in data.files if key.startswith("var/")]
            values = sess.run([f"{n}:0" for n in names])
    for n, v in zip(names, values):
        np.testing.assert_allclose(v, data[f"var/{n}"], rtol=1e-4, atol=1e-6, err_msg=n)


@pytest.mark.parametrize("name", TRAINING_CASES)
def test_tf1_training_meta_graph_continues_training_with_tensorflows_numbers(name):
    """A MetaGraph TensorFlow exported with a dynamic_rnn, an optimizer and its state (Adam, Momentum;
    gradients clipped by global norm; a sparse embedding gradient) imports, restores and trains three
    steps as TensorFlow did: losses, weights, slots, global step."""
    _train(name)


def test_ref_variables_changed_inside_cond_and_loop():
    """assign_add in a cond branch (RefSwitch) and in a loop body (RefEnter) change the variable as in TF."""
    name = "ref_variables_side_effects"
    data = np.load(FIXTURES / f"{name}.npz")
    g = tf.Graph()
    with g.as_default():
        saver = tf.train.import_meta_graph(str(FIXTURES / name / "model.meta"))
        with tf.Session() as sess:
            saver.restore(sess, str(FIXTURES / name / "model"))
            for k, fetches in enumerate(CASES[name]["fetches"]):
                feeds = _runs(data, "run")[k]
                got = sess.run(fetches, {f"{n}:0": v for n, v in feeds.items()})
                for i, value in enumerate(got):
                    _close(value, data[f"run{k}/fetch/{i}"], f"run {k} {fetches[i]}")


def test_train_op_without_gradient_rebuilder_fails_when_run(monkeypatch):
    monkeypatch.setattr(control_flow_v1_import, "_GRADIENT_REBUILDER", None)
    data = np.load(FIXTURES / "lstm_adam.npz")
    feeds = {f"{n}:0": v for n, v in _runs(data, "step")[0].items()}
    g = tf.Graph()
    with g.as_default():
        saver = tf.train.import_meta_graph(str(FIXTURES / "lstm_adam" / "model.meta"))
        train_op = tf.get_collection("train_op")[0]
        assert train_op.name == "train"
        with tf.Session() as sess:
            saver.restore(sess, str(FIXTURES / "lstm_adam" / "model"))
            _close(sess.run("loss:0", feeds), data["step0/loss"], "forward loss")
            with pytest.raises(tf.errors.UnimplementedError, match="'train' was not imported.*TF1 while loop"):
                sess.run(train_op, feeds)
        # The stand-in is ferroflow's own Unimplemented op, kept (with its message) by an export.
        assert g.get_operation_by_name("train/ferroflow_not_imported").type == "Unimplemented"
        exported = {n.name: n for n in tf.train.export_meta_graph().graph_def.node}
        assert b"'train' was not imported" in exported["train/ferroflow_not_imported"].attr["message"].s


def test_tf1_saved_model_loads_and_serves():
    data = np.load(FIXTURES / "saved_model_bilstm.npz")
    g = tf.Graph()
    with g.as_default(), tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, ["serve"], str(FIXTURES / "saved_model_bilstm"))
        sig = meta.signature_def["serving_default"]
        got = sess.run(sig.outputs["y"].name, {sig.inputs["x"].name: data["feed/x"]})
    _close(got, data["fetch/y"], "bidirectional LSTM output")


def test_collection_naming_a_node_inside_a_loop_is_left_out(caplog):
    meta = meta_graph_pb2.MetaGraphDef()
    meta.graph_def.CopyFrom(_graph_def("while_counter"))
    meta.collection_def["inner"].node_list.value.extend(["while/Identity:0", "while/Exit:0"])
    g = tf.Graph()
    with g.as_default(), caplog.at_level(logging.WARNING, logger="ferroflow"):
        tf.train.import_meta_graph(meta)
        assert [t.name for t in tf.get_collection("inner")] == ["while/Exit:0"]
    assert "while/Identity:0 is left out" in caplog.text


def _text_graph(text):
    return text_format.Parse(text, graph_pb2.GraphDef())


_LOOP = """
node {{ name: "c" op: "Const" attr {{ key: "dtype" value {{ type: DT_INT32 }} }}
  attr {{ key: "value" value {{ tensor {{ dtype: DT_INT32 tensor_shape {{}} int_val: 0 }} }} }} }}
node {{ name: "w/Enter" op: "Enter" input: "c" attr {{ key: "T" value {{ type: DT_INT32 }} }}
  attr {{ key: "frame_name" value {{ s: "w/while_context" }} }} }}
node {{ name: "w/Merge" op: "Merge" input: "w/Enter" input: "w/NextIteration"
  attr {{ key: "T" value {{ type: DT_INT32 }} }} attr {{ key: "N" value {{ i: 2 }} }} }}
node {{ name: "w/Less" op: "Less" input: "w/Merge" input: "c" attr {{ key: "T" value {{ type: DT_INT32 }} }} }}
node {{ name: "w/LoopCond" op: "{loop_cond}" input: "w/Less" }}
node {{ name: "w/Switch" op: "Switch" input: "w/Merge" input: "w/LoopCond" attr {{ key: "T" value {{ type: DT_INT32 }} }} }}
node {{ name: "w/NextIteration" op: "NextIteration" input: "w/Switch:1" attr {{ key: "T" value {{ type: DT_INT32 }} }} }}
node {{ name: "w/Exit" op: "Exit" input: "w/Switch" attr {{ key: "T" value {{ type: DT_INT32 }} }} }}
"""


def test_a_loop_without_loop_cond_is_unimplemented_naming_it():
    graph_def = _text_graph(_LOOP.format(loop_cond="Identity"))
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.UnimplementedError, match="w/while_context.*w/Enter.*LoopCond"):
            tf.import_graph_def(graph_def, name="")


def test_a_loop_reading_an_outside_tensor_without_enter_is_unimplemented_naming_it():
    graph_def = _text_graph(_LOOP.format(loop_cond="LoopCond").replace('input: "w/Merge" input: "c"',
                                                                        'input: "w/Merge" input: "x"').replace(
        'node { name: "c"', 'node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }\n'
        'node { name: "c"'))
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.UnimplementedError, match="w/while_context.*reads x"):
            tf.import_graph_def(graph_def, name="")


def test_a_merge_without_switch_is_unimplemented_naming_it():
    graph_def = _text_graph("""
node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "b" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "m" op: "Merge" input: "a" input: "b" attr { key: "T" value { type: DT_FLOAT } } attr { key: "N" value { i: 2 } } }
""")
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.UnimplementedError, match="Merge m is not the end of a tf.cond"):
            tf.import_graph_def(graph_def, name="")


def test_an_old_tensor_array_op_is_unimplemented_naming_it():
    graph_def = _text_graph("""
node { name: "n" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
  attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 2 } } } }
node { name: "ta" op: "TensorArrayV2" input: "n" attr { key: "dtype" value { type: DT_FLOAT } } }
""")
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.UnimplementedError, match="node ta is a TensorArrayV2"):
            tf.import_graph_def(graph_def, name="")


def test_gradient_requests_name_what_tf1_differentiated():
    """The importer tells each dropped gradient tensor the optimizer read by what TF1 took it of: the
    variables read inside the loop (a gather's sparse gradient by its values; its indices do not depend on
    the loop and stay), from the loss, weighted by TF1's grad_ys. The dense layer after the loop keeps
    TF1's own gradient nodes."""
    def requests(name):
        conversion = control_flow_v1_import.functionalize(read_meta_graph_file(FIXTURES / name / "model.meta").graph_def)
        return {(r.x, r.component) for r in conversion.gradient_requests}, conversion

    got, conversion = requests("lstm_adam")
    assert got == {("rnn/basic_lstm_cell/kernel", None), ("rnn/basic_lstm_cell/bias", None)}
    assert {tuple(r.ys) for r in conversion.gradient_requests} == {("loss:0",)}
    assert {tuple(r.grad_ys) for r in conversion.gradient_requests} == {("gradients/grad_ys_0:0",)}
    assert conversion.dropped_gradient_frames == ["gradients/rnn/while/while_context"]
    got, _ = requests("embedding_gru_adam")
    assert ("embedding", "values") in got and ("embedding", "indices") not in got


def test_train_op_fails_when_run_if_the_gradients_cannot_be_rebuilt(monkeypatch, caplog):
    monkeypatch.setattr(control_flow_v1_import, "_GRADIENT_REBUILDER", lambda graph, requests: [None] * len(requests))
    data = np.load(FIXTURES / "lstm_adam_clip.npz")
    feeds = {f"{n}:0": v for n, v in _runs(data, "step")[0].items()}
    g = tf.Graph()
    with g.as_default(), caplog.at_level(logging.WARNING, logger="ferroflow"):
        saver = tf.train.import_meta_graph(str(FIXTURES / "lstm_adam_clip" / "model.meta"))
        assert "could not be rebuilt" in caplog.text
        with tf.Session() as sess:
            saver.restore(sess, str(FIXTURES / "lstm_adam_clip" / "model"))
            _close(sess.run("loss:0", feeds), data["step0/loss"], "forward loss")
            with pytest.raises(tf.errors.UnimplementedError, match="'train' was not imported"):
                sess.run(tf.get_collection("train_op")[0], feeds)


def test_training_meta_graph_under_an_import_scope():
    data = np.load(FIXTURES / "lstm_adam.npz")
    g = tf.Graph()
    with g.as_default():
        saver = tf.train.import_meta_graph(str(FIXTURES / "lstm_adam" / "model.meta"), import_scope="m")
        train_op = g.get_operation_by_name("m/train")
        with tf.Session() as sess:
            saver.restore(sess, str(FIXTURES / "lstm_adam" / "model"))
            for k, feeds in enumerate(_runs(data, "step")):
                loss, _ = sess.run(["m/loss:0", train_op], {f"m/{n}:0": v for n, v in feeds.items()})
                _close(loss, data[f"step{k}/loss"], f"loss at step {k}")
