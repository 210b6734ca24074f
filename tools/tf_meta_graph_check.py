"""Checks that real TensorFlow imports and runs the graphs ferroflow exports (not run by CI).

    python tools/tf_meta_graph_check.py --tf-python /work/tfvenv/bin/python [--keep DIR] [--case NAME ...]

For each case, ferroflow (this Python) builds a TF1-style graph, runs its
initializer, saves a checkpoint with ``Saver.save`` (which writes the
``.meta`` MetaGraphDef), evaluates the loss on a fixed batch and runs the
training op a few times, recording every number. Then TensorFlow (``--tf-python``,
``tensorflow.compat.v1`` in graph mode) runs ``import_meta_graph`` on the
``.meta`` file, runs the imported initializer, restores the checkpoint with
the imported saver and does the same, fetching the loss and training op by
name from the ``loss`` / ``train_op`` collections. A case passes when
TensorFlow's initial values equal ferroflow's exactly, the restored values
too, and the losses and trained variables agree to float32 round-off
(relative 1e-5: the two frameworks' kernels may round differently).

* ``mlp``: two dense layers, softmax cross entropy, summaries, gradients
  applied by ``assign_sub`` (plain gradient descent written out);
* ``conv``: ``tests/python/_meta_graph_model.py``'s conv net (Conv2D, MaxPool,
  BiasAdd, ArgMax), ``strip_default_attrs=True``;
* ``ops``: reductions over several axes (their gradients use ``ReducedShape``,
  exported as TensorFlow ops), concat/stack/split/unstack, gather, tile,
  transpose, slicing, casts, ``add_n``, int64 indices;
* ``control_flow``: ``tf.cond`` and a ``tf.while_loop`` with a nested cond and a
  captured variable, their outputs feeding the loss and an update written
  out by hand (ferroflow's If/While and their FunctionDefs run in TensorFlow);
* ``write_graph``: the ``mlp`` graph written by ``tf.io.write_graph`` (text),
  read back by TensorFlow's ``import_graph_def``, initialised and run;
* ``minimize``: ``AdamOptimizer.minimize`` with a global step: ferroflow's
  fused update op (``ApplyFused``) is exported as TensorFlow's ``ApplyAdam``
  per variable, so TensorFlow imports, restores and trains the graph;
* ``minimize_<optimizer>``: the same with Momentum (Nesterov), centered
  RMSProp, FTRL with l2 shrinkage, AdagradDA and Adadelta, each written as
  TensorFlow's own update op (``ApplyMomentum``, ``ApplyCenteredRMSProp``,
  ``ApplyFtrlV2``, ``ApplyAdagradDA`` fed the step plus one,
  ``ApplyAdadelta``);
* ``sparse_<optimizer>``: a model with an embedding table looked up by the
  labels (repeated rows), so the table's gradient is an ``IndexedSlices``:
  ferroflow's sparse update is written as ``Unique``, ``UnsortedSegmentSum``
  and ``SparseApply*`` (``ScatterSub`` for SGD, the decays and scatter-adds
  for Adam), next to the dense update of the other variables.

Run it with the Python that has ferroflow importable (the development venv).
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent

# The sibling checkpoint check picks the framework and reads variables the
# same way.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from tf_interop_check import _import, _variables, cli_parser, finish, report, work_dir  # noqa: E402

OPTIMIZERS = {
    "nesterov": lambda t, step: t.MomentumOptimizer(0.05, 0.9, use_nesterov=True),
    "centered_rmsprop": lambda t, step: t.RMSPropOptimizer(0.01, momentum=0.5, centered=True),
    "ftrl_shrinkage": lambda t, step: t.FtrlOptimizer(0.1, l2_shrinkage_regularization_strength=0.01),
    "adagrad_da": lambda t, step: t.AdagradDAOptimizer(0.1, global_step=step),
    "adadelta": lambda t, step: t.AdadeltaOptimizer(1.0),
}
SPARSE_OPTIMIZERS = {
    **OPTIMIZERS,
    "sgd": lambda t, step: t.GradientDescentOptimizer(0.1),
    "adam": lambda t, step: t.AdamOptimizer(0.05),
    "adagrad": lambda t, step: t.AdagradOptimizer(0.1),
    "proximal_adagrad": lambda t, step: t.ProximalAdagradOptimizer(0.1, l1_regularization_strength=0.01),
    "proximal_sgd": lambda t, step: t.ProximalGradientDescentOptimizer(0.1, l2_regularization_strength=0.01),
    "rmsprop": lambda t, step: t.RMSPropOptimizer(0.01, momentum=0.5),
}
CASES = (("mlp", "conv", "ops", "write_graph", "minimize", "control_flow") + tuple(f"minimize_{o}" for o in OPTIMIZERS)
         + tuple(f"sparse_{o}" for o in SPARSE_OPTIMIZERS))
STEPS = 3
LR = 0.1


def _batch(seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=[8, 6]).astype(np.float32), rng.integers(0, 3, size=[8]).astype(np.int64)


def _ops_batch(seed=0):
    x, labels = _batch(seed)
    return x, labels % 6


def _conv_batch(seed=0):
    sys.path.insert(0, str(ROOT / "tests" / "python"))
    import _meta_graph_model as model

    return model.batch(seed)


def _sgd(tf, loss, global_step=None):
    """Gradient descent written out with ``tf.gradients`` and ``assign_sub`` (no fused update op)."""
    params = tf.trainable_variables()
    grads = tf.gradients(loss, params)
    # Every gradient first: with reference variables an update may otherwise land before another
    # variable's gradient has read it (TensorFlow runs independent ops in any order).
    with tf.control_dependencies(grads):
        updates = [p.assign_sub(LR * g) for p, g in zip(params, grads)]
    if global_step is not None:
        with tf.control_dependencies(updates):
            updates = [tf.assign_add(global_step, 1)]
    return tf.group(*updates, name="train")


def _model_mlp(tf, train=True):
    rng = np.random.default_rng(1)
    x = tf.placeholder(tf.float32, [None, 6], name="x")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    with tf.variable_scope("hidden"):
        w = tf.get_variable("kernel", [6, 5], initializer=tf.constant_initializer(rng.normal(size=[6, 5])))
        b = tf.get_variable("bias", [5], initializer=tf.zeros_initializer())
        h = tf.nn.relu(tf.matmul(x, w) + b)
    with tf.variable_scope("out"):
        w2 = tf.get_variable("kernel", [5, 3], initializer=tf.constant_initializer(rng.normal(size=[5, 3])))
        logits = tf.matmul(h, w2)
    xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    loss = tf.reduce_mean(xent, name="loss")
    tf.summary.scalar("loss", loss)
    tf.summary.histogram("logits", logits)
    tf.summary.merge_all(name="summaries")
    step = tf.train.get_or_create_global_step()
    return {"loss": loss, "train": _sgd(tf, loss, step) if train else None}


def _model_conv(tf):
    sys.path.insert(0, str(ROOT / "tests" / "python"))
    import _meta_graph_model as model

    x, labels, logits, loss = model.build(tf)
    return {"loss": loss, "train": _sgd(tf, loss), "strip": True}


def _model_ops(tf):
    rng = np.random.default_rng(2)
    x = tf.placeholder(tf.float32, [None, 6], name="x")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    w = tf.get_variable("w", [6, 4], initializer=tf.constant_initializer(rng.normal(size=[6, 4])))
    t = tf.get_variable("t", [2, 3, 4], initializer=tf.constant_initializer(rng.normal(size=[2, 3, 4])))
    h = tf.tanh(tf.matmul(x, w))
    parts = tf.split(h, 2, axis=1)
    joined = tf.concat([parts[1], parts[0], h], axis=1)
    cols = tf.unstack(joined[:, :3], axis=1)
    stacked = tf.stack(cols, axis=0)
    picked = tf.gather(tf.transpose(stacked), labels, axis=1)
    tiled = tf.tile(tf.expand_dims(t, 0), [2, 1, 1, 1])
    r1 = tf.reduce_sum(tf.square(tiled), axis=[1, 3])
    r2 = tf.reduce_max(t, axis=-1)
    r3 = tf.reduce_mean(tf.sigmoid(t), axis=tf.constant([0, 2], tf.int64))
    mask = tf.cast(tf.greater(picked, 0.0), tf.float32)
    loss = tf.add_n([
        tf.reduce_mean(tf.square(picked) * mask),
        tf.reduce_sum(r1) * 0.01,
        tf.reduce_sum(r2),
        tf.reduce_prod(r3),
        tf.reduce_sum(tf.reshape(joined, [-1])[::3]),
    ], name="loss")
    return {"loss": loss, "train": _sgd(tf, loss)}


def _model_minimize(tf):
    out = _model_mlp(tf, train=False)
    step = tf.train.get_global_step()
    out["train"] = tf.train.AdamOptimizer(0.05).minimize(out["loss"], global_step=step, name="train")
    return out


def _model_optimizer(name):
    def build(tf):
        out = _model_mlp(tf, train=False)
        step = tf.train.get_global_step()
        out["train"] = OPTIMIZERS[name](tf.train, step).minimize(out["loss"], global_step=step, name="train")
        return out

    return build


def _model_sparse(name):
    def build(tf):
        rng = np.random.default_rng(2)
        x = tf.placeholder(tf.float32, [None, 6], name="x")
        labels = tf.placeholder(tf.int64, [None], name="labels")
        w = tf.get_variable("kernel", [6, 3], initializer=tf.constant_initializer(rng.normal(size=[6, 3])))
        emb = tf.get_variable("embedding", [3, 3], initializer=tf.constant_initializer(rng.normal(size=[3, 3])))
        logits = tf.matmul(x, w) + tf.nn.embedding_lookup(emb, labels)
        xent = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
        loss = tf.reduce_mean(xent, name="loss")
        step = tf.train.get_or_create_global_step()
        train = SPARSE_OPTIMIZERS[name](tf.train, step).minimize(loss, global_step=step, name="train")
        return {"loss": loss, "train": train}

    return build


def _model_control_flow(tf):
    """tf.cond and tf.while_loop (a captured variable, a nested cond in the body) whose outputs drive
    the loss and a hand-written update (TensorFlow runs ferroflow's If/While and their FunctionDefs;
    their gradients are ferroflow's own ops, so the update is written without tf.gradients)."""
    rng = np.random.default_rng(2)
    x = tf.placeholder(tf.float32, [None, 6], name="x")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    w = tf.get_variable("w", [6, 3], initializer=tf.constant_initializer(rng.normal(size=[6, 3]) * 0.5))
    u = tf.get_variable("u", [3, 3], initializer=tf.constant_initializer(rng.normal(size=[3, 3]) * 0.5))
    h = tf.matmul(x, w)
    y = tf.cond(tf.reduce_sum(h) > 0, lambda: tf.nn.relu(h) * 2.0, lambda: tf.tanh(h) - 1.0)

    def body(i, z):
        z = tf.cond(i < 2, lambda: tf.tanh(tf.matmul(z, u)) + z, lambda: z * 0.5)
        return i + 1, z

    _, z = tf.while_loop(lambda i, z: i < 4, body, [0, y])
    onehot = tf.one_hot(labels, 3)
    loss = tf.reduce_mean(tf.square(z - onehot), name="loss")
    train = tf.group(tf.assign_sub(u, 0.05 * tf.reduce_mean(z) * tf.ones_like(u)),
                     tf.assign_sub(w, 0.05 * loss * tf.ones_like(w)), name="train")
    return {"loss": loss, "train": train}


MODELS = {"mlp": _model_mlp, "control_flow": _model_control_flow, "conv": _model_conv, "ops": _model_ops, "write_graph": _model_mlp,
          "minimize": _model_minimize, **{f"minimize_{o}": _model_optimizer(o) for o in OPTIMIZERS},
          **{f"sparse_{o}": _model_sparse(o) for o in SPARSE_OPTIMIZERS}}
BATCHES = {"conv": _conv_batch, "ops": _ops_batch}


def _feed(case, seed):
    """The feed of batch ``seed`` for ``case``: the placeholders ``x`` and ``labels``."""
    x, labels = BATCHES.get(case, _batch)(seed)
    return {"x:0": x, "labels:0": labels}


def _run(sess, loss, train, case):
    """The loss on batch 0, then ``STEPS`` training steps (batches 1, 2, ...), then the loss again."""
    out = {"loss_before": sess.run(loss, _feed(case, 0))}
    for step in range(STEPS):
        sess.run(train, _feed(case, step + 1))
    out["loss_after"] = sess.run(loss, _feed(case, 0))
    return out


def _write_ff(case, directory):
    tf = _import("ff")
    prefix = str(directory / "model")
    with tf.Graph().as_default() as g:
        parts = MODELS[case](tf)
        tf.add_to_collection("loss", parts["loss"])
        tf.add_to_collection("train_op", parts["train"])
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            init = _variables(tf, sess)
            saver.save(sess, prefix, strip_default_attrs=parts.get("strip", False))
            if case == "write_graph":
                tf.io.write_graph(g, str(directory), "graph.pbtxt")
            numbers = _run(sess, parts["loss"], parts["train"], case)
            trained = _variables(tf, sess)
    _save(directory / "ff", init=init, trained=trained, **numbers)


def _read_tf(case, directory):
    tf = _import("tf")
    prefix = str(directory / "model")
    meta = prefix + ".meta"
    with tf.Graph().as_default():
        if case == "write_graph":
            from google.protobuf import text_format

            graph_def = text_format.Parse((directory / "graph.pbtxt").read_text(), tf.GraphDef())
            tf.import_graph_def(graph_def, name="")
            g = tf.get_default_graph()
            variables = sorted(n.name for n in graph_def.node if n.op == "VariableV2")
            with tf.Session() as sess:
                sess.run(g.get_operation_by_name("init"))  # ferroflow's global_variables_initializer()
                init = {v: sess.run(v + ":0") for v in variables}
                numbers = _run(sess, "loss:0", "train", case)
                trained = {v: sess.run(v + ":0") for v in variables}
            _save(directory / "tf", init=init, trained=trained, **numbers)
            return
        saver = tf.train.import_meta_graph(meta)
        loss = tf.get_collection("loss")[0]
        # (The last one: `minimize` adds its own op to the same collection.)
        train = tf.get_collection("train_op")[-1]
        updates = sorted({op.type for op in tf.get_default_graph().get_operations()
                          if op.type.startswith(("Apply", "SparseApply", "Scatter"))})
        (directory / "tf_update_ops.txt").write_text(" ".join(updates))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            init = _variables(tf, sess)
            saver.restore(sess, prefix)
            restored = _variables(tf, sess)
            numbers = _run(sess, loss, train, case)
            trained = _variables(tf, sess)
    _save(directory / "tf", init=init, restored=restored, trained=trained, **numbers)


def _save(path, **groups):
    arrays, names = {}, {}
    for group, value in groups.items():
        if isinstance(value, dict):
            names[group] = sorted(value)
            for i, k in enumerate(names[group]):
                arrays[f"{group}_{i}"] = np.asarray(value[k])
        else:
            arrays[group] = np.asarray(value)
    np.savez(str(path) + ".npz", **arrays)
    pathlib.Path(str(path) + ".json").write_text(json.dumps(names))


def _load(path):
    names = json.loads(pathlib.Path(str(path) + ".json").read_text())
    data = np.load(str(path) + ".npz")
    out = {k: data[k] for k in data.files if not any(k.startswith(g + "_") for g in names)}
    for group, keys in names.items():
        out[group] = {k: data[f"{group}_{i}"] for i, k in enumerate(keys)}
    return out


def _compare(label, want, got, exact):
    if isinstance(want, dict):
        if sorted(want) != sorted(got):
            return [f"{label}: names differ: {sorted(want)} vs {sorted(got)}"]
        return [p for k in sorted(want) for p in _compare(f"{label} {k}", want[k], got[k], exact)]
    if want.shape != got.shape or want.dtype != got.dtype:
        return [f"{label}: {want.dtype}{list(want.shape)} vs {got.dtype}{list(got.shape)}"]
    if exact and want.tobytes() != got.tobytes():
        return [f"{label}: values differ (max abs diff {np.max(np.abs(want - got))})"]
    if not exact and not np.allclose(want, got, rtol=1e-5, atol=1e-6):
        return [f"{label}: values differ (max abs diff {np.max(np.abs(want - got))})"]
    return []


def check(case, pythons, work):
    """Runs one case; returns ``(problems, summary line)``."""
    directory = work / case
    directory.mkdir(parents=True)
    for framework in ("ff", "tf"):
        cmd = [pythons[framework], str(pathlib.Path(__file__).resolve()), "--side", framework, case, str(directory)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
        if proc.returncode != 0:
            tail = "\n".join(proc.stderr.strip().splitlines()[-8:])
            return [f"{framework} failed (exit {proc.returncode}):\n{tail}"], ""
    ff, tf = _load(directory / "ff"), _load(directory / "tf")
    problems, summary = [], []
    if case.startswith(("minimize", "sparse")):
        summary.append("TensorFlow's update ops: " + (directory / "tf_update_ops.txt").read_text())
    problems += _compare("initial values", ff["init"], tf["init"], exact=True)
    if case != "write_graph":  # (a GraphDef has no saver to restore with)
        problems += _compare("restored values", ff["init"], tf["restored"], exact=True)
    for key in ("loss_before", "loss_after"):
        if key in ff and key in tf:
            problems += _compare(key, ff[key], tf[key], exact=False)
            summary.append(f"{key} ff {float(ff[key]):.7g} tf {float(tf[key]):.7g}")
    problems += _compare(f"variables after {STEPS} steps", ff["trained"], tf["trained"], exact=False)
    diff = max(float(np.max(np.abs(ff["trained"][k] - tf["trained"][k]))) for k in ff["trained"])
    summary.append(f"max |trained var diff| {diff:.2g}")
    return problems, "; ".join(summary)


def main(argv=None):
    parser = cli_parser(__doc__.split("\n")[0], CASES, ("FRAMEWORK", "CASE", "DIR"))
    args = parser.parse_args(argv)
    if args.side:
        framework, case, directory = args.side
        (_write_ff if framework == "ff" else _read_tf)(case, pathlib.Path(directory))
        return 0
    pythons = {"ff": sys.executable, "tf": args.tf_python}
    work = work_dir(args.keep, "tf_meta_graph_")
    failed = 0
    for case in args.case or CASES:
        problems, summary = check(case, pythons, work)
        failed += report(f"{case:12s} {summary}", problems)
    return finish(work, args.keep, failed)


if __name__ == "__main__":
    sys.exit(main())
