"""Fixtures for tests/python/test_mixed_precision_bf16.py, made by TensorFlow 2.21 (oneDNN build).

Two TF1 graphs, an MLP and a small convnet, each trained 3 steps of plain SGD from fixed initial
weights, once with ConfigProto.graph_options.rewrite_options.auto_mixed_precision_onednn_bfloat16 = ON
and once without. Recorded per model: the inputs and initial weights, the losses of both runs, the
weights after the bfloat16 run, and the names of the Cast nodes grappler inserted (from the
partition graphs of a traced step), with the original names of the nodes it ran in bfloat16.

Run: PYTHONPATH= TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_mixed_precision_bf16_fixtures.py
"""

import json
import os

import numpy as np
import tensorflow as tf
from tensorflow.core.protobuf import rewriter_config_pb2

tf1 = tf.compat.v1
tf1.disable_eager_execution()
OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "mixed_precision_bf16")


def mlp(rng):
    x = rng.standard_normal((16, 20)).astype(np.float32)
    y = np.eye(5, dtype=np.float32)[rng.integers(0, 5, 16)]
    w = {"w1": rng.standard_normal((20, 32)).astype(np.float32) * 0.3, "b1": np.zeros(32, np.float32),
         "w2": rng.standard_normal((32, 5)).astype(np.float32) * 0.3, "b2": np.zeros(5, np.float32)}

    def build(xp, yp, v):
        h = tf.nn.relu(tf.nn.bias_add(tf.matmul(xp, v["w1"]), v["b1"]))
        logits = tf.nn.bias_add(tf.matmul(h, v["w2"]), v["b2"], name="logits")
        return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=yp, logits=logits), name="loss")

    return x, y, w, build


def convnet(rng):
    x = rng.standard_normal((4, 8, 8, 3)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 4)]
    w = {"k1": rng.standard_normal((3, 3, 3, 8)).astype(np.float32) * 0.3, "c1": np.zeros(8, np.float32),
         "w2": rng.standard_normal((128, 3)).astype(np.float32) * 0.2}

    def build(xp, yp, v):
        c = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(xp, v["k1"], [1, 1, 1, 1], "SAME"), v["c1"]))
        p = tf.nn.max_pool2d(c, 2, 2, "VALID")
        logits = tf.matmul(tf.reshape(p, [-1, 128]), v["w2"], name="logits")
        return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=yp, logits=logits), name="loss")

    return x, y, w, build


def run(model, seed, bf16):
    x, y, w, build = model(np.random.default_rng(seed))
    g = tf1.Graph()
    with g.as_default():
        xp = tf1.placeholder(tf.float32, x.shape, name="x")
        yp = tf1.placeholder(tf.float32, y.shape, name="y")
        v = {k: tf1.get_variable(k, initializer=val, use_resource=False) for k, val in w.items()}
        loss = build(xp, yp, v)
        train = tf1.train.GradientDescentOptimizer(0.1).minimize(loss)
        cfg = tf1.ConfigProto()
        if bf16:
            cfg.graph_options.rewrite_options.auto_mixed_precision_onednn_bfloat16 = (
                rewriter_config_pb2.RewriterConfig.ON)
        casts, bf16_nodes, losses = set(), set(), []
        with tf1.Session(config=cfg) as s:
            s.run(tf1.global_variables_initializer())
            for step in range(3):
                md = tf1.RunMetadata()
                ro = tf1.RunOptions(output_partition_graphs=True) if step == 0 else None
                losses.append(float(s.run([loss, train], {xp: x, yp: y}, options=ro, run_metadata=md)[0]))
                for pg in md.partition_graphs:
                    for n in pg.node:
                        if n.op == "Cast" and n.name.endswith("AutoMixedPrecision"):
                            casts.add(n.name)
                        elif "T" in n.attr and n.attr["T"].type == tf.bfloat16.as_datatype_enum:
                            bf16_nodes.add(n.name)
            final = s.run(v)
    return x, y, w, losses, final, sorted(casts), sorted(bf16_nodes)


def main():
    os.makedirs(OUT, exist_ok=True)
    meta = {"tensorflow": tf.__version__}
    for name, model, seed in [("mlp", mlp, 1), ("convnet", convnet, 2)]:
        x, y, w, losses, final, casts, nodes = run(model, seed, True)
        *_, f32_losses, _, _, _ = run(model, seed, False)
        arrays = {"x": x, "y": y, "losses": np.array(losses, np.float32), "f32_losses": np.array(f32_losses, np.float32)}
        arrays.update({f"init_{k}": val for k, val in w.items()})
        arrays.update({f"final_{k}": val for k, val in final.items()})
        np.savez(os.path.join(OUT, f"{name}.npz"), **arrays)
        meta[name] = {"casts": casts, "bf16_nodes": nodes}
        print(name, losses, f32_losses, len(casts), "casts")
    with open(os.path.join(OUT, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
