"""The CPU bfloat16 rewrite (ConfigProto rewrite_options.auto_mixed_precision_onednn_bfloat16 / _mkl).

Fixtures: tests/fixtures/mixed_precision_bf16, made by TensorFlow 2.21 (oneDNN, which applies the
rewrite on this CPU) with tools/make_mixed_precision_bf16_fixtures.py.
"""

import json
import os
import re

import numpy as np
import pytest

import ferroflow as tf
from ferroflow.core.protobuf import rewriter_config_pb2

FIX = os.path.join(os.path.dirname(__file__), "..", "fixtures", "mixed_precision_bf16")
ON = rewriter_config_pb2.RewriterConfig.ON


def config(field="auto_mixed_precision_onednn_bfloat16"):
    cfg = tf.ConfigProto()
    setattr(cfg.graph_options.rewrite_options, field, ON)
    return cfg


def build_mlp(xp, yp, v):
    h = tf.nn.relu(tf.nn.bias_add(tf.matmul(xp, v["w1"]), v["b1"]))
    logits = tf.nn.bias_add(tf.matmul(h, v["w2"]), v["b2"], name="logits")
    return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=yp, logits=logits), name="loss")


def build_convnet(xp, yp, v):
    c = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(xp, v["k1"], [1, 1, 1, 1], "SAME"), v["c1"]))
    p = tf.nn.max_pool2d(c, 2, 2, "VALID")
    logits = tf.matmul(tf.reshape(p, [-1, 128]), v["w2"], name="logits")
    return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=yp, logits=logits), name="loss")


def train(name, build, cfg):
    """Three SGD steps as the fixture script ran them: losses, final weights, names of the casts run."""
    f = np.load(os.path.join(FIX, f"{name}.npz"))
    with tf.Graph().as_default():
        xp = tf.placeholder(tf.float32, f["x"].shape, name="x")
        yp = tf.placeholder(tf.float32, f["y"].shape, name="y")
        keys = [k[5:] for k in f.files if k.startswith("init_")]
        v = {k: tf.get_variable(k, initializer=f[f"init_{k}"]) for k in keys}
        loss = build(xp, yp, v)
        step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        logits = tf.get_default_graph().get_tensor_by_name("logits:0")
        casts, losses = set(), []
        with tf.Session(config=cfg) as s:
            s.run(tf.global_variables_initializer())
            for _ in range(3):
                md = tf.RunMetadata()
                opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
                out_logits, value, _ = s.run([logits, loss, step], {xp: f["x"], yp: f["y"]},
                                             options=opts, run_metadata=md)
                losses.append(value)
                for dev in md.step_stats.dev_stats:
                    casts.update(n.node_name for n in dev.node_stats if n.node_name.endswith("AutoMixedPrecision"))
            final = s.run(v)
    return f, out_logits, np.array(losses), final, casts


def cast_key(name):
    """Where a cast sits, in terms both graphs share: its direction and the tensor it converts, a
    gradient named by the gradient scope it belongs to (TensorFlow casts a gradient after the
    tuple/control_dependency Identity its optimizer adds, ferroflow after the product itself), the
    loss's float32 input as 'logits' (TF1's '_sg' scope as TF 2's), and TensorFlow's ArithmeticOptimizer renames
    of variable reads undone."""
    src, direction = re.fullmatch(r"(.*)-0-(CastTo\w+)-0-AutoMixedPrecision", name).groups()
    src = re.sub(r"([^/]+)/ArithmeticOptimizer/ReorderCastLikeAndValuePreserving_float_read", r"\1/read", src)
    # TF1's softmax_cross_entropy_with_logits scopes its ops '..._sg' (the fixture used TF 2's, unsuffixed).
    src = src.replace("softmax_cross_entropy_with_logits_sg", "softmax_cross_entropy_with_logits")
    if src.startswith("gradients/"):
        src = "gradient of " + src.split("/")[1].removesuffix("_grad")
    elif src.startswith("softmax_cross_entropy_with_logits/"):
        src = "logits"
    return direction, src


def tf_casts(name):
    with open(os.path.join(FIX, "meta.json")) as fh:
        return {cast_key(c) for c in json.load(fh)[name]["casts"]}


@pytest.mark.parametrize("name,build", [("mlp", build_mlp), ("convnet", build_convnet)])
def test_casts_losses_and_weights_match_tensorflow(name, build):
    f, logits, losses, final, casts = train(name, build, config())
    # As TensorFlow: the input and every variable read go to bfloat16 once, the weight gradients come
    # back to float32 for the (float32) updates, the logits go back to float32 for the loss (a deny op),
    # and the loss's gradient (float32, downstream of the deny op) goes to bfloat16 for the products.
    assert {cast_key(c) for c in casts} == tf_casts(name)
    assert logits.dtype == np.float32  # a fetch keeps the dtype the graph was built with
    np.testing.assert_allclose(losses, f["losses"], rtol=3e-2, atol=3e-3)
    for k, val in final.items():
        assert val.dtype == np.float32  # master weights
        np.testing.assert_allclose(val, f[f"final_{k}"], rtol=3e-2, atol=1e-2)
    # bfloat16 changes the numbers, so the rewrite did run.
    _, _, f32_losses, _, f32_casts = train(name, build, None)
    assert not f32_casts
    np.testing.assert_allclose(f32_losses, f["f32_losses"], rtol=1e-4, atol=1e-5)
    assert not np.array_equal(losses, f32_losses)


def test_old_option_name_turns_it_on():
    *_, casts = train("mlp", build_mlp, config("auto_mixed_precision_mkl"))
    assert "x-0-CastToBf16-0-AutoMixedPrecision" in casts


def test_mlp_reaches_float32_accuracy():
    data = np.load(os.path.join(os.path.dirname(tf.__file__), "datasets", "digits.npz"))
    images, labels = data[data.files[0]], data[data.files[1]]
    x_all = images.reshape(len(images), -1).astype(np.float32) / 16.0
    y_all = labels.astype(np.int64)
    test = np.arange(len(x_all)) % 5 == 0
    accs = []
    for cfg in (None, config()):
        with tf.Graph().as_default():
            tf.set_random_seed(0)
            xp = tf.placeholder(tf.float32, [None, 64])
            yp = tf.placeholder(tf.int64, [None])
            h = tf.layers.dense(xp, 64, tf.nn.relu)
            logits = tf.layers.dense(h, 10)
            loss = tf.losses.sparse_softmax_cross_entropy(yp, logits)
            step = tf.train.AdamOptimizer(0.01).minimize(loss)
            with tf.Session(config=cfg) as s:
                s.run(tf.global_variables_initializer())
                xs, ys = x_all[~test], y_all[~test]
                for i in range(300):
                    j = (i * 64) % (len(xs) - 64)
                    s.run(step, {xp: xs[j:j + 64], yp: ys[j:j + 64]})
                pred = s.run(logits, {xp: x_all[test]})
        accs.append(np.mean(pred.argmax(1) == y_all[test]))
    f32, bf16 = accs
    assert f32 > 0.9
    assert bf16 >= f32 - 0.02, (f32, bf16)
