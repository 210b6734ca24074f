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
"""

import json
import os
import pathlib

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "tf_apply"

W0 = [[0.5, -0.25], [0.125, 1.0], [-0.75, 0.3]]
X = [[1.0, 2.0, -1.0], [0.5, -0.5, 0.25], [0.0, 1.0, 2.0], [-1.0, 0.1, 0.2]]


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


def main():
    import tensorflow.compat.v1 as tf

    tf.disable_eager_execution()
    tf.disable_resource_variables()
    OUT.mkdir(parents=True, exist_ok=True)
    doc = {"tensorflow_version": tf.__version__, "x": X, "w0": W0, "cases": {}}
    for case, make in optimizers(tf).items():
        with tf.Graph().as_default() as g:
            step = tf.train.get_or_create_global_step()
            w = tf.get_variable("w", initializer=tf.constant(W0, tf.float32))
            x = tf.constant(X, tf.float32, name="x")
            loss = tf.reduce_sum(tf.square(tf.matmul(x, w)), name="loss")
            train = make().minimize(loss, global_step=step, name="train")
            tf.train.export_meta_graph(str(OUT / f"{case}.meta"))
            ops = sorted({n.op for n in g.as_graph_def().node if n.op.startswith("Apply")})
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                trajectory = []
                for _ in range(3):
                    sess.run(train)
                    trajectory.append(np.asarray(sess.run(w)).tolist())
        doc["cases"][case] = {"update_ops": ops, "w": trajectory}
    with open(OUT / "expected.json", "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote", sorted(os.listdir(OUT)))


if __name__ == "__main__":
    main()
