"""Regenerate tests/fixtures/tf_apply/ with real TensorFlow (never needed by the tests).

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/gen_tf_apply_fixtures.py

For every TensorFlow 1 optimizer (one case per raw update op it emits:
``ApplyGradientDescent``, ``ApplyMomentum``, ..., ``ApplyCenteredRMSProp``)
builds a small model with ``tensorflow.compat.v1`` (graph mode, reference
variables): ``w`` of shape [3, 2] with fixed values, ``loss =
sum((x @ w)^2)`` for a fixed ``x``, ``train = opt.minimize(loss,
global_step)``. It writes ``<case>.meta`` (the exported MetaGraphDef) and
``expected.json``: per case, the update op's type, the initial ``w``, and
``w`` after each of three training steps.

The ``sparse_<case>`` cases train an embedding table ``emb`` instead
(``loss = sum((embedding_lookup(emb, ids) * c)^2)`` with a repeated id), so
the gradient is an ``IndexedSlices`` and TensorFlow emits ``Unique``,
``UnsortedSegmentSum`` and ``SparseApply*`` (``ScatterSub`` for plain SGD,
scatter ops for Adam). ``sparse_<case>_rows1`` use a one-column table:
TensorFlow's sparse kernels update rows of one element on a separate path.
"""

import json
import os
import pathlib

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "tf_apply"

W0 = [[0.5, -0.25], [0.125, 1.0], [-0.75, 0.3]]
X = [[1.0, 2.0, -1.0], [0.5, -0.5, 0.25], [0.0, 1.0, 2.0], [-1.0, 0.1, 0.2]]
EMB0 = [[0.5, -0.25], [0.125, 1.0], [-0.75, 0.3], [0.2, 0.1], [1.0, -1.0], [0.3, 0.6]]
IDS = [0, 2, 2, 5]
SCALE = [1.0, -2.0]
# Optimizers whose sparse kernels have a separate path for rows of one element.
ROWS1 = ["adagrad", "adagrad_da", "ftrl", "ftrl_shrinkage", "proximal_sgd", "proximal_adagrad"]


def optimizers(tf):
    t = tf.train
    return {
        "sgd": lambda: t.GradientDescentOptimizer(0.01),
        "proximal_sgd": lambda: t.ProximalGradientDescentOptimizer(0.01, 0.001, 0.002),
        "momentum": lambda: t.MomentumOptimizer(0.01, 0.9),
        "nesterov": lambda: t.MomentumOptimizer(0.01, 0.9, use_nesterov=True),
        "adagrad": lambda: t.AdagradOptimizer(0.05),
        "proximal_adagrad": lambda: t.ProximalAdagradOptimizer(0.05, l1_regularization_strength=0.001,
                                                               l2_regularization_strength=0.002),
        "adagrad_da": lambda: t.AdagradDAOptimizer(0.05, global_step=tf.train.get_global_step(),
                                                   l1_regularization_strength=0.001,
                                                   l2_regularization_strength=0.002),
        "adadelta": lambda: t.AdadeltaOptimizer(1.0, 0.95, 1e-6),
        "adam": lambda: t.AdamOptimizer(0.01),
        "ftrl": lambda: t.FtrlOptimizer(0.05, l1_regularization_strength=0.001,
                                        l2_regularization_strength=0.002),
        "ftrl_shrinkage": lambda: t.FtrlOptimizer(0.05, l1_regularization_strength=0.001,
                                                  l2_regularization_strength=0.002,
                                                  l2_shrinkage_regularization_strength=0.01),
        "rmsprop": lambda: t.RMSPropOptimizer(0.01, momentum=0.5),
        "centered_rmsprop": lambda: t.RMSPropOptimizer(0.01, momentum=0.5, centered=True),
    }


def dense_model(tf):
    w = tf.get_variable("w", initializer=tf.constant(W0, tf.float32))
    x = tf.constant(X, tf.float32, name="x")
    return w, tf.reduce_sum(tf.square(tf.matmul(x, w)), name="loss")


def sparse_model(tf, columns):
    table = [row[:columns] for row in EMB0]
    emb = tf.get_variable("emb", initializer=tf.constant(table, tf.float32))
    rows = tf.nn.embedding_lookup(emb, tf.constant(IDS, tf.int64, name="ids"))
    return emb, tf.reduce_sum(tf.square(rows * tf.constant(SCALE[:columns])), name="loss")


def cases(tf):
    """``(case, make_optimizer, build_model)`` for every fixture."""
    out = []
    for name, make in optimizers(tf).items():
        out.append((name, make, dense_model))
        out.append((f"sparse_{name}", make, lambda tf: sparse_model(tf, 2)))
        if name in ROWS1:
            out.append((f"sparse_{name}_rows1", make, lambda tf: sparse_model(tf, 1)))
    return out


def main():
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    tf.disable_resource_variables()
    OUT.mkdir(parents=True, exist_ok=True)
    doc = {"tensorflow_version": tf.__version__, "x": X, "w0": W0, "emb0": EMB0, "ids": IDS, "cases": {}}
    for case, make, model in cases(tf):
        with tf.Graph().as_default() as g:
            step = tf.train.get_or_create_global_step()
            var, loss = model(tf)
            train = make().minimize(loss, global_step=step, name="train")
            tf.train.export_meta_graph(str(OUT / f"{case}.meta"))
            ops = sorted({n.op for n in g.as_graph_def().node if n.op.startswith(("Apply", "SparseApply"))})
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                start = np.asarray(sess.run(var)).tolist()
                trajectory = []
                for _ in range(3):
                    sess.run(train)
                    trajectory.append(np.asarray(sess.run(var)).tolist())
        doc["cases"][case] = {"update_ops": ops, "var": var.op.name, "start": start, "after": trajectory}
    with open(OUT / "expected.json", "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote", sorted(os.listdir(OUT)))


if __name__ == "__main__":
    main()
