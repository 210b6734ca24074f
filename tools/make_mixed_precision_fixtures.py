"""Writes tests/fixtures/mixed_precision/*.json from TensorFlow 2.21 (TF1 graph mode).

Run with the TensorFlow venv from the repository root:
    /work/tfvenv/bin/python tools/make_mixed_precision_fixtures.py

loss_scale.json: for a few DynamicLossScale settings, a tiny model trained with
MixedPrecisionLossScaleOptimizer(GradientDescent) where some steps feed a value
that makes the scaled gradient overflow (or NaN); after each step the loss
scale, the good-step counter, the weight and the global step are recorded,
plus the names of the variables TF creates.
"""

import json
import os

import numpy as np
import tensorflow as tf

tf1 = tf.compat.v1
tf1.disable_eager_execution()

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "mixed_precision")

# Feeds per step: a normal value, a huge one (scaled gradient overflows to inf), or NaN.
FEEDS = [1.0, 1.0, 1e36, 1.0, 1.0, 1.0, 1.0, float("nan"), 1.0, 1.0, 1.0, 1.0, 1.0,
         1e30, 1e30, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]

CASES = [
    {"name": "small_period", "kwargs": {"initial_loss_scale": 8.0, "increment_period": 3, "multiplier": 2.0}},
    {"name": "multiplier4", "kwargs": {"initial_loss_scale": 2.0 ** 15, "increment_period": 2, "multiplier": 4.0}},
    {"name": "floor_at_one", "kwargs": {"initial_loss_scale": 2.0, "increment_period": 5, "multiplier": 2.0}},
    {"name": "default", "kwargs": {}},
    {"name": "fixed", "fixed": 2.0},
]


def run_case(case):
    g = tf1.Graph()
    with g.as_default():
        x = tf1.placeholder(tf.float32, [], name="x")
        w = tf1.get_variable("w", initializer=tf1.constant([0.5, -0.25]), use_resource=True)
        loss = tf1.reduce_sum(w * x * 3.0)
        gs = tf1.train.get_or_create_global_step()
        if "fixed" in case:
            ls = tf1.train.experimental.FixedLossScale(case["fixed"])
        else:
            ls = tf1.train.experimental.DynamicLossScale(**case["kwargs"])
        opt = tf1.train.experimental.MixedPrecisionLossScaleOptimizer(
            tf1.train.GradientDescentOptimizer(0.01), ls)
        train = opt.minimize(loss, global_step=gs)
        names = sorted(v.name for v in tf1.global_variables())
        # Grappler off: its arithmetic rewrites reorder the products (and so where float32 overflows).
        config = tf1.ConfigProto()
        config.graph_options.rewrite_options.disable_meta_optimizer = True
        with tf1.Session(graph=g, config=config) as sess:
            sess.run(tf1.global_variables_initializer())
            steps = []
            for f in FEEDS:
                sess.run(train, {x: f})
                if "fixed" in case:
                    scale, good = float(sess.run(ls())), 0
                else:
                    scale, good = sess.run([ls._current_loss_scale, ls._num_good_steps])
                steps.append({"feed": repr(f), "loss_scale": float(scale), "good_steps": int(good),
                              "w": [float(v) for v in sess.run(w)], "global_step": int(sess.run(gs))})
    return {"name": case["name"], "kwargs": case.get("kwargs"), "fixed": case.get("fixed"),
            "variables": names, "steps": steps}


def main():
    os.makedirs(OUT, exist_ok=True)
    data = {"tf_version": tf.__version__, "feeds": [repr(f) for f in FEEDS],
            "cases": [run_case(c) for c in CASES]}
    # Graph-rewrite entry points on a CPU-only machine: what they return and change.
    g = tf1.Graph()
    with g.as_default():
        opt = tf1.train.GradientDescentOptimizer(0.1)
        wrapped = tf1.train.experimental.enable_mixed_precision_graph_rewrite(opt)
        data["enable_rewrite"] = {"type": type(wrapped).__name__, "loss_scale": type(wrapped._loss_scale).__name__,
                                  "name": wrapped.get_name()}
        tf1.train.experimental.disable_mixed_precision_graph_rewrite()
    with open(os.path.join(OUT, "loss_scale.json"), "w") as fh:
        json.dump(data, fh, indent=1)
    np.set_printoptions(precision=4)
    for c in data["cases"]:
        print(c["name"], c["variables"], [s["loss_scale"] for s in c["steps"]])


if __name__ == "__main__":
    main()
