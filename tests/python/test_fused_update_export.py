"""ferroflow's fused dense update (ApplyFused) exported as TensorFlow's per-variable update ops.

An exported GraphDef holds, for every ``ApplyFused``, one ``ApplyAdam`` /
``ApplyMomentum`` / ... per variable under a ``NoOp`` with the fused op's
name, so TensorFlow can import and train the graph
(``tools/tf_meta_graph_check.py`` checks that against real TensorFlow).
Importing the file back into ferroflow restores the fused op. These tests
never import TensorFlow: they check the written nodes, and that running them
(ferroflow registers TensorFlow's update ops too) trains exactly like the
fused op.
"""

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.core.protobuf import meta_graph_pb2
from test_graph_def_tf_attrs import check_importable

OPTIMIZERS = {
    "sgd": (lambda gs: tf.train.GradientDescentOptimizer(0.1), "ApplyGradientDescent"),
    "proximal_sgd": (lambda gs: tf.train.ProximalGradientDescentOptimizer(0.1, 0.01, 0.02),
                     "ApplyProximalGradientDescent"),
    "momentum": (lambda gs: tf.train.MomentumOptimizer(0.1, 0.9), "ApplyMomentum"),
    "nesterov": (lambda gs: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True), "ApplyMomentum"),
    "adagrad": (lambda gs: tf.train.AdagradOptimizer(0.1), "ApplyAdagrad"),
    "proximal_adagrad": (lambda gs: tf.train.ProximalAdagradOptimizer(0.1, l1_regularization_strength=0.01),
                         "ApplyProximalAdagrad"),
    "adagrad_da": (lambda gs: tf.train.AdagradDAOptimizer(0.1, global_step=gs, l2_regularization_strength=0.01),
                   "ApplyAdagradDA"),
    "adadelta": (lambda gs: tf.train.AdadeltaOptimizer(1.0), "ApplyAdadelta"),
    "adam": (lambda gs: tf.train.AdamOptimizer(0.05), "ApplyAdam"),
    "ftrl": (lambda gs: tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.01), "ApplyFtrl"),
    "ftrl_shrinkage": (lambda gs: tf.train.FtrlOptimizer(0.1, l2_shrinkage_regularization_strength=0.05),
                       "ApplyFtrlV2"),
    "rmsprop": (lambda gs: tf.train.RMSPropOptimizer(0.05, momentum=0.5), "ApplyRMSProp"),
    "centered_rmsprop": (lambda gs: tf.train.RMSPropOptimizer(0.05, momentum=0.5, centered=True),
                         "ApplyCenteredRMSProp"),
}

STEPS = 3


def _build(make):
    """A two-variable model trained by ``make``'s optimizer; returns the variables."""
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2) / 4 - 0.5, name="w")
    b = tf.Variable(np.array([0.25, -0.5], np.float32), name="b")
    x = tf.constant(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3), name="x")
    loss = tf.reduce_sum(tf.square(tf.matmul(x, w) + b), name="loss")
    gs = tf.train.get_or_create_global_step()
    train = make(gs).minimize(loss, global_step=gs, name="train")
    tf.add_to_collection("train_op", train)
    return [w, b]


def _train(graph, names):
    """Initializes ``graph``, runs ``train`` STEPS times; the named variables after every step."""
    with graph.as_default(), tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out = []
        for _ in range(STEPS):
            sess.run(tf.get_collection("train_op")[0])
            out.append(sess.run([n + ":0" for n in names]))
        assert sess.run(tf.train.get_global_step()) == STEPS
        return out


def _strip_fused_attrs(meta):
    for node in meta.graph_def.node:
        for key in ("_ferroflow_fused", "_ferroflow_expansion"):
            if key in node.attr:
                del node.attr[key]
    return meta


@pytest.mark.parametrize("case", sorted(OPTIMIZERS))
def test_exported_update_is_tensorflows_ops_and_trains_the_same(case):
    make, tf_op = OPTIMIZERS[case]
    with tf.Graph().as_default() as g:
        variables = _build(make)
        names = [v.op.name for v in variables]
        meta = tf.train.export_meta_graph()
        want = _train(g, names)
    nodes = {n.name: n for n in meta.graph_def.node}
    assert "ApplyFused" not in {n.op for n in nodes.values()}
    check_importable(meta.graph_def)
    (group,) = [n for n in nodes.values() if "_ferroflow_fused" in n.attr]
    assert group.op == "NoOp" and group.name == "train/update"
    updates = [nodes[i[1:]] for i in group.input if i.startswith("^")]
    assert [u.op for u in updates] == [tf_op, tf_op]
    assert [u.input[0] for u in updates] == names
    assert all(u.attr["T"].type == tf.float32.as_datatype_enum for u in updates)
    if tf_op == "ApplyMomentum":
        assert all(u.attr["use_nesterov"].b == (case == "nesterov") for u in updates)

    # TensorFlow's ops, run here (the fused op is not restored without its attrs).
    with tf.Graph().as_default() as g2:
        tf.train.import_meta_graph(_strip_fused_attrs(meta_graph_pb2.MetaGraphDef.FromString(
            meta.SerializeToString())))
        assert [op.type for op in g2.get_operations() if op.type.startswith("Apply")] == [tf_op, tf_op]
        got = _train(g2, names)
    for step, (a, b) in enumerate(zip(want, got)):
        for name, x, y in zip(names, a, b):
            np.testing.assert_array_equal(y, x, err_msg=f"{case}: {name} after step {step + 1}")

    # Back into ferroflow as it is: one fused op again.
    with tf.Graph().as_default() as g3:
        tf.train.import_meta_graph(meta)
        types = [op.type for op in g3.get_operations()]
        assert "ApplyFused" in types and not any(t.startswith("Apply") and t != "ApplyFused" for t in types)
        assert g3.get_operation_by_name("train/update").type == "ApplyFused"
        got = _train(g3, names)
    for a, b in zip(want, got):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(y, x)


def test_export_keeps_devices_control_inputs_and_shapes():
    with tf.Graph().as_default() as g:
        with tf.device("/cpu:0"):
            _build(lambda gs: tf.train.AdamOptimizer(0.1))
        graph_def = g.as_graph_def(add_shapes=True)
    nodes = {n.name: n for n in graph_def.node}
    group = nodes["train/update"]
    written = [s.decode() for s in group.attr["_ferroflow_expansion"].list.s]
    updates = ["train/update/ApplyAdam", "train/update/ApplyAdam_1"]
    assert written == ["train/update/gradients_ready"] + updates
    for name in written + ["train/update"]:
        assert nodes[name].device == group.device
    assert [[d.size for d in nodes[n].attr["_output_shapes"].list.shape[0].dim] for n in updates] == [[3, 2], [2]]
    # No variable changes before every gradient is computed (a gradient may
    # read a variable through a reference), as with the fused op.
    ready = nodes["train/update/gradients_ready"]
    grads = {i.split(":")[0] for u in updates for i in nodes[u].input[9:10]}
    assert {i[1:] for i in ready.input} == grads
    assert all(nodes[u].input[-1] == "^train/update/gradients_ready" for u in updates)
    # The group runs after whatever the fused op waited for, and what waited
    # for the fused op now waits for the group.
    consumers = [n for n in graph_def.node if "^train/update" in n.input]
    assert consumers


def test_an_edited_expansion_is_kept_as_tensorflow_ops():
    with tf.Graph().as_default():
        names = [v.op.name for v in _build(lambda gs: tf.train.MomentumOptimizer(0.1, 0.9))]
        meta = tf.train.export_meta_graph()
    # A tool dropped one of the per-variable updates: the recorded fused op
    # would update a variable the graph no longer updates, so it stays out.
    nodes = list(meta.graph_def.node)
    group = next(n for n in nodes if n.name == "train/update")
    group.input.remove("^train/update/ApplyMomentum_1")
    kept = [n for n in nodes if n.name != "train/update/ApplyMomentum_1"]
    del meta.graph_def.node[:]
    meta.graph_def.node.extend(kept)
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(meta)
        assert [op.type for op in g.get_operations() if op.type.startswith("Apply")] == ["ApplyMomentum"]
        got = _train(g, names)
    assert not np.array_equal(got[-1][0], np.arange(6, dtype=np.float32).reshape(3, 2) / 4 - 0.5)
    np.testing.assert_array_equal(got[-1][1], np.float32([0.25, -0.5]))


SPARSE_OPS = {
    "sgd": ["ScatterSub"], "proximal_sgd": ["SparseApplyProximalGradientDescent"],
    "momentum": ["SparseApplyMomentum"], "nesterov": ["SparseApplyMomentum"], "adagrad": ["SparseApplyAdagrad"],
    "proximal_adagrad": ["SparseApplyProximalAdagrad"], "adagrad_da": ["SparseApplyAdagradDA"],
    "adadelta": ["SparseApplyAdadelta"], "adam": ["Assign", "Assign", "AssignSub", "ScatterAdd", "ScatterAdd"],
    "ftrl": ["SparseApplyFtrl"], "ftrl_shrinkage": ["SparseApplyFtrlV2"], "rmsprop": ["SparseApplyRMSProp"],
    "centered_rmsprop": ["SparseApplyCenteredRMSProp"],
}
_UPDATE_TYPES = ("Apply", "SparseApply", "Scatter", "Assign")


def _build_sparse(make, columns):
    """An embedding table trained through ``gather`` (an IndexedSlices gradient, a repeated row)."""
    table = np.linspace(-1, 1, 6 * columns, dtype=np.float32).reshape(6, columns)
    emb = tf.Variable(table, name="emb")
    rows = tf.gather(emb, tf.constant([4, 1, 4, 0], tf.int64, name="ids"))
    loss = tf.reduce_sum(tf.square(rows * tf.constant(np.float32([1.0, -2.0][:columns]))), name="loss")
    gs = tf.train.get_or_create_global_step()
    train = make(gs).minimize(loss, global_step=gs, name="train")
    tf.add_to_collection("train_op", train)
    return ["emb"]


def _update_types(graph):
    """The variable-updating ops of the training step (the global step's AssignAdd and the optimizer's
    own non-slot updates, such as Adam's beta powers, aside)."""
    return sorted(op.type for op in graph.get_operations() if op.type.startswith(_UPDATE_TYPES)
                  and "/update" in op.name)


@pytest.mark.parametrize("columns", [2, 1])
@pytest.mark.parametrize("case", sorted(OPTIMIZERS))
def test_exported_sparse_update_is_tensorflows_ops_and_trains_the_same(case, columns):
    make, _ = OPTIMIZERS[case]
    with tf.Graph().as_default() as g:
        names = _build_sparse(make, columns)
        assert "SparseApplyFused" in {op.type for op in g.get_operations()}
        meta = tf.train.export_meta_graph()
        want = _train(g, names)
    assert "SparseApplyFused" not in {n.op for n in meta.graph_def.node}
    check_importable(meta.graph_def)
    with tf.Graph().as_default() as g2:
        tf.train.import_meta_graph(_strip_fused_attrs(meta_graph_pb2.MetaGraphDef.FromString(
            meta.SerializeToString())))
        assert _update_types(g2) == SPARSE_OPS[case]
        got = _train(g2, names)
    for step, (a, b) in enumerate(zip(want, got)):
        np.testing.assert_array_equal(b[0], a[0], err_msg=f"{case}: emb after step {step + 1}")
    with tf.Graph().as_default() as g3:
        tf.train.import_meta_graph(meta)
        assert _update_types(g3) == ["SparseApplyFused"]
        got = _train(g3, names)
    for a, b in zip(want, got):
        np.testing.assert_array_equal(b[0], a[0])
