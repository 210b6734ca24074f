"""TensorFlow loads the SavedModels ferroflow writes and computes ferroflow's outputs.

These tests need a Python with TensorFlow: the current one if it has
``tensorflow``, else the interpreter named by ``FERROFLOW_TF_PYTHON`` (e.g. a
separate venv: ``FERROFLOW_TF_PYTHON=/path/to/tfvenv/bin/python pytest
tests/python/test_saved_model_tf_interop.py``). Without either they are
skipped; ``test_saved_model.py`` checks the bytes of the protos in every run.
TensorFlow runs in a subprocess: ``tf.compat.v1.saved_model.loader.load``
feeds each signature and its ``saved_model_cli show --all`` must list ours.
"""

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import ferroflow as tf


def _tf_python():
    if importlib.util.find_spec("tensorflow") is not None:
        return sys.executable
    return os.environ.get("FERROFLOW_TF_PYTHON")


TF_PYTHON = _tf_python()
pytestmark = pytest.mark.skipif(TF_PYTHON is None, reason="needs TensorFlow (set FERROFLOW_TF_PYTHON)")

# Run by TensorFlow: load each model, run every signature on the inputs given, save the outputs.
_TF_SCRIPT = r"""
import json, sys
import numpy as np
import tensorflow as tf
tf.compat.v1.disable_v2_behavior()
jobs = json.load(open(sys.argv[1]))
results = {}
for job in jobs:
    with tf.compat.v1.Session(graph=tf.Graph()) as sess:
        meta = tf.compat.v1.saved_model.loader.load(sess, job["tags"], job["dir"])
        for key, inputs in job["signatures"].items():
            sig = meta.signature_def[key]
            feed = {sig.inputs[k].name: np.load(path) for k, path in inputs.items()}
            names = sorted(sig.outputs)
            values = sess.run([sig.outputs[n].name for n in names], feed)
            for n, v in zip(names, values):
                results[job["name"] + "/" + key + "/" + n] = np.asarray(v)
np.savez(sys.argv[2], **results)
"""


def _run_tf(tmp_path, jobs):
    for job in jobs:
        for key, inputs in job["signatures"].items():
            for name, value in list(inputs.items()):
                path = tmp_path / f"{job['name']}_{key}_{name}.npy"
                np.save(path, value)
                inputs[name] = str(path)
    jobs_file = tmp_path / "jobs.json"
    jobs_file.write_text(json.dumps(jobs))
    script = tmp_path / "tf_load.py"
    script.write_text(_TF_SCRIPT)
    out = tmp_path / "tf_out.npz"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    proc = subprocess.run([TF_PYTHON, str(script), str(jobs_file), str(out)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(np.load(out, allow_pickle=True))


def _saved_model_cli_show(export_dir):
    code = "import sys; from tensorflow.python.tools import saved_model_cli; sys.argv = ['saved_model_cli', " \
           f"'show', '--dir', {export_dir!r}, '--all']; saved_model_cli.main()"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    proc = subprocess.run([TF_PYTHON, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def _dense(x, units, name, activation=None):
    with tf.variable_scope(name):
        w = tf.get_variable("kernel", [x.shape[-1], units])
        b = tf.get_variable("bias", [units], initializer=tf.zeros_initializer())
    y = tf.nn.bias_add(tf.matmul(x, w), b)
    return activation(y) if activation else y


def _mlp(export_dir):
    rng = np.random.default_rng(0)
    x_val = rng.normal(size=(5, 6)).astype(np.float32)
    with tf.Session(graph=tf.Graph()) as sess:
        x = tf.placeholder(tf.float32, [None, 6], name="x")
        h = _dense(x, 16, "hidden", tf.nn.relu)
        logits = _dense(h, 4, "logits")
        probs = tf.nn.softmax(logits, name="probs")
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.constant([0, 1, 2, 3, 0]), logits=logits))
        train = tf.train.AdamOptimizer(0.05).minimize(loss)
        sess.run(tf.global_variables_initializer())
        for _ in range(5):  # trained a little, so the restored values are not the initializers'
            sess.run(train, {x: x_val})
        ours = sess.run({"probs": probs, "logits": logits}, {x: x_val})
        tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"probs": probs, "logits": logits})
    return {"serving_default": ({"x": x_val}, ours)}


def _convnet(export_dir):
    rng = np.random.default_rng(1)
    images_val = rng.uniform(size=(3, 12, 12, 2)).astype(np.float32)
    sdu = tf.saved_model.signature_def_utils
    with tf.Session(graph=tf.Graph()) as sess:
        images = tf.placeholder(tf.float32, [None, 12, 12, 2], name="images")
        with tf.variable_scope("conv"):
            kernel = tf.get_variable("kernel", [3, 3, 2, 4])
            bias = tf.get_variable("bias", [4], initializer=tf.constant_initializer(0.1))
        conv = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(images, kernel, [1, 1, 1, 1], "SAME"), bias))
        pool = tf.nn.max_pool(conv, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        flat = tf.reshape(pool, [-1, 6 * 6 * 4])
        logits = _dense(flat, 3, "fc")
        scores = tf.reduce_max(tf.nn.softmax(logits), axis=1, name="scores")
        sess.run(tf.global_variables_initializer())
        ours = sess.run({"logits": logits, "scores": scores}, {images: images_val})
        builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
        builder.add_meta_graph_and_variables(sess, [tf.saved_model.tag_constants.SERVING], {
            "serving_default": sdu.predict_signature_def({"images": images}, {"logits": logits}),
            "scores": sdu.predict_signature_def({"images": images}, {"scores": scores}),
        })
        builder.save()
    return {"serving_default": ({"images": images_val}, {"logits": ours["logits"]}),
            "scores": ({"images": images_val}, {"scores": ours["scores"]})}


def _asset_model(export_dir, tmp_path):
    vocab = tmp_path / "vocab_src" / "words.txt"
    vocab.parent.mkdir(exist_ok=True)
    vocab.write_bytes(b"alpha\nbeta\ngamma\n")
    with tf.Session(graph=tf.Graph()) as sess:
        path = tf.constant(str(vocab), name="vocab_path")
        tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, path)
        contents = tf.get_local_variable("contents", dtype=tf.string, initializer=tf.constant(b""))
        with tf.control_dependencies([tf.assign(contents, tf.io.read_file(path))]):
            init = tf.no_op(name="read_vocab")
        x = tf.placeholder(tf.float32, [None], name="x")
        y = tf.multiply(x, 3.0, name="y")
        tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": y, "contents": contents.value()},
                                   legacy_init_op=init)
    vocab.unlink()  # TensorFlow must read the copy under assets/
    x_val = np.array([1.0, 2.0], np.float32)
    return {"serving_default": ({"x": x_val}, {"y": x_val * 3.0, "contents": b"alpha\nbeta\ngamma\n"})}


def _lookup_model(export_dir, tmp_path):
    vocab = tmp_path / "vocab_src" / "labels.txt"
    vocab.parent.mkdir(exist_ok=True)
    vocab.write_bytes(b"red\ngreen\nblue\n")
    with tf.Session(graph=tf.Graph()) as sess:
        words = tf.placeholder(tf.string, [None], name="words")
        table = tf.lookup.StaticHashTable(tf.lookup.TextFileInitializer(
            str(vocab), tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
            tf.lookup.TextFileIndex.LINE_NUMBER), default_value=-1)
        ids = tf.identity(table.lookup(words), name="ids")
        sess.run(tf.tables_initializer())
        tf.saved_model.simple_save(sess, export_dir, {"words": words}, {"ids": ids},
                                   legacy_init_op=tf.tables_initializer())
    vocab.unlink()  # the table must be filled from the copy under assets/
    words_val = np.array([b"blue", b"pink", b"red"])
    return {"serving_default": ({"words": words_val}, {"ids": np.array([2, -1, 0], np.int64)})}


def test_tensorflow_loads_ferroflow_saved_models(tmp_path):
    models = {
        "mlp": _mlp(str(tmp_path / "mlp")),
        "conv": _convnet(str(tmp_path / "conv")),
        "asset": _asset_model(str(tmp_path / "asset"), tmp_path),
        "lookup": _lookup_model(str(tmp_path / "lookup"), tmp_path),
    }
    jobs = [{"name": name, "dir": str(tmp_path / name), "tags": ["serve"],
             "signatures": {key: dict(inputs) for key, (inputs, _) in sigs.items()}}
            for name, sigs in models.items()]
    got = _run_tf(tmp_path, jobs)
    for name, sigs in models.items():
        for key, (_, outputs) in sigs.items():
            for out, want in outputs.items():
                value = got[f"{name}/{key}/{out}"]
                if isinstance(want, bytes):
                    assert value.item() == want
                else:
                    np.testing.assert_allclose(value, want, rtol=1e-5, atol=1e-6, err_msg=f"{name}/{key}/{out}")


def test_saved_model_cli_lists_our_signatures(tmp_path):
    export_dir = str(tmp_path / "conv")
    _convnet(export_dir)
    shown = _saved_model_cli_show(export_dir)
    assert "MetaGraphDef with tag-set: 'serve' contains the following SignatureDefs:" in shown
    assert "signature_def['serving_default']:" in shown and "signature_def['scores']:" in shown
    assert "name: images:0" in shown and "shape: (-1, 12, 12, 2)" in shown
    # Ours prints the same for the signatures.
    import io

    from ferroflow.tools import saved_model_cli

    buf = io.StringIO()
    saved_model_cli.show(export_dir, all_=True, out=buf)
    for line in buf.getvalue().splitlines():
        if line.strip().startswith(("inputs[", "outputs[", "dtype:", "shape:", "name:", "Method name")):
            assert line.strip() in shown, line
