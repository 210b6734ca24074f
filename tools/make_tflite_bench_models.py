"""Writes the MobileNet-shaped models `benches/tflite.py` times (issue 22).

A MobileNet v1 (Howard et al. 2017) layout built as a TF1 graph with
seeded random weights: conv 3x3/2 + batch norm + ReLU6, then 13
depthwise-separable blocks (depthwise 3x3 + BN + ReLU6, pointwise 1x1 + BN +
ReLU6), global average pooling, a 1x1 conv to the classes, softmax. Batch
norms are inference-mode ``FusedBatchNorm`` ops with random statistics, which
TF's converter folds into the convolutions, as it does for trained models.

Converted with TF's ``TFLiteConverter.from_session`` to a float model and a
full-integer int8 model (representative dataset of seeded uniform images,
int8 inputs and outputs). Needs TensorFlow (benchmark use only):

    /work/tfvenv/bin/python tools/make_tflite_bench_models.py OUT_DIR [--size 224] [--alpha 1.0]

writes ``OUT_DIR/mobilenet_float.tflite``, ``OUT_DIR/mobilenet_int8.tflite``
and ``OUT_DIR/mobilenet_frozen.pb``.
"""

import argparse
import os
import pathlib
import sys

import numpy as np

# (stride, output channels at alpha 1) of the 13 depthwise-separable blocks.
BLOCKS = [
    (1, 64),
    (2, 128),
    (1, 128),
    (2, 256),
    (1, 256),
    (2, 512),
    (1, 512),
    (1, 512),
    (1, 512),
    (1, 512),
    (1, 512),
    (2, 1024),
    (1, 1024),
]


def build_mobilenet(tf, size, alpha, classes, seed=2222):
    """The graph; returns (input placeholder, softmax output)."""
    rng = np.random.RandomState(seed)

    def var(name, shape, fan_in):
        # He initialisation keeps activations in range through 27 layers.
        value = rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)
        return tf.Variable(value.astype(np.float32), name=name)

    def batch_norm(h, channels, name):
        gamma = rng.uniform(0.8, 1.2, [channels]).astype(np.float32)
        beta = (rng.standard_normal([channels]) * 0.1).astype(np.float32)
        mean = (rng.standard_normal([channels]) * 0.1).astype(np.float32)
        variance = rng.uniform(0.8, 1.5, [channels]).astype(np.float32)
        h, _, _ = tf.nn.fused_batch_norm(
            h,
            tf.Variable(gamma, name=name + "/gamma"),
            tf.Variable(beta, name=name + "/beta"),
            mean=tf.Variable(mean, name=name + "/moving_mean"),
            variance=tf.Variable(variance, name=name + "/moving_variance"),
            epsilon=1e-3,
            is_training=False,
            name=name + "/fbn",
        )
        return h

    def ch(c):
        return max(8, int(c * alpha))

    x = tf.placeholder(tf.float32, [1, size, size, 3], name="input")
    c = ch(32)
    h = tf.nn.conv2d(x, var("conv0/kernel", [3, 3, 3, c], 27), [1, 2, 2, 1], "SAME", name="conv0")
    h = tf.nn.relu6(batch_norm(h, c, "conv0/bn"), name="conv0/relu6")
    for i, (stride, out) in enumerate(BLOCKS, start=1):
        out = ch(out)
        dw = var(f"block{i}/dw/kernel", [3, 3, c, 1], 9)
        h = tf.nn.depthwise_conv2d(h, dw, [1, stride, stride, 1], "SAME", name=f"block{i}/dw")
        h = tf.nn.relu6(batch_norm(h, c, f"block{i}/dw/bn"), name=f"block{i}/dw/relu6")
        pw = var(f"block{i}/pw/kernel", [1, 1, c, out], c)
        h = tf.nn.conv2d(h, pw, [1, 1, 1, 1], "SAME", name=f"block{i}/pw")
        h = tf.nn.relu6(batch_norm(h, out, f"block{i}/pw/bn"), name=f"block{i}/pw/relu6")
        c = out
    h = tf.reduce_mean(h, axis=[1, 2], keepdims=True, name="global_pool")
    w = var("logits/kernel", [1, 1, c, classes], c)
    b = tf.Variable(np.zeros([classes], np.float32), name="logits/bias")
    h = tf.nn.bias_add(tf.nn.conv2d(h, w, [1, 1, 1, 1], "SAME"), b, name="logits/conv")
    logits = tf.reshape(h, [1, classes], name="logits")
    y = tf.nn.softmax(logits, name="output")
    return x, y


def write_models(out_dir, size=224, alpha=1.0, classes=1000, n_representative=8):
    """Builds, converts and writes the models; returns {name: path}."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf2

    tf = tf2.compat.v1
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.RandomState(3222)
    representative = rng.uniform(-1.0, 1.0, [n_representative, 1, size, size, 3]).astype(np.float32)
    graph = tf.Graph()
    paths = {}
    with graph.as_default():
        x, y = build_mobilenet(tf, size, alpha, classes)
        with tf.Session(graph=graph) as sess:
            sess.run(tf.global_variables_initializer())
            frozen = tf.graph_util.convert_variables_to_constants(sess, graph.as_graph_def(), [y.op.name])
            (out / "mobilenet_frozen.pb").write_bytes(frozen.SerializeToString(deterministic=True))

            conv = tf.lite.TFLiteConverter.from_session(sess, [x], [y])
            paths["mobilenet_float"] = out / "mobilenet_float.tflite"
            paths["mobilenet_float"].write_bytes(conv.convert())

            conv = tf.lite.TFLiteConverter.from_session(sess, [x], [y])
            conv.optimizations = [tf2.lite.Optimize.DEFAULT]

            def gen():
                for sample in representative:
                    yield [sample]

            conv.representative_dataset = gen
            conv.target_spec.supported_ops = [tf2.lite.OpsSet.TFLITE_BUILTINS_INT8]
            conv.inference_input_type = tf2.int8
            conv.inference_output_type = tf2.int8
            paths["mobilenet_int8"] = out / "mobilenet_int8.tflite"
            paths["mobilenet_int8"].write_bytes(conv.convert())
    return {k: str(v) for k, v in paths.items()}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out_dir")
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--alpha", type=float, default=1.0)
    p.add_argument("--classes", type=int, default=1000)
    args = p.parse_args(argv)
    for name, path in write_models(args.out_dir, args.size, args.alpha, args.classes).items():
        print(name, path, os.path.getsize(path))


if __name__ == "__main__":
    sys.exit(main())
