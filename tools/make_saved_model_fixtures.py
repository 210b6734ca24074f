"""Regenerate tests/fixtures/saved_model/ with real TensorFlow (never needed by the tests).

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_saved_model_fixtures.py

Writes SavedModels the way TensorFlow 1.x code wrote them
(``tf.compat.v1`` graph mode, reference variables ``VariableV2``), into
tests/fixtures/saved_model/:

* ``tf_mlp/``: a two-layer MLP (``x`` [None, 4] float32 -> 8 relu -> 3,
  softmax), ``SavedModelBuilder`` with tags ``[serve]``, signatures
  ``serving_default`` (predict: ``x`` -> ``probs``, ``logits``) and
  ``classes`` (predict: ``x`` -> ``class_ids`` int64, ``probs``), and
  ``main_op=tf.compat.v1.saved_model.main_op.main_op()``.
* ``tf_conv/``: a tiny convnet (conv2d + bias + relu + max_pool + dense),
  a ``[serve]`` meta graph (signature ``serving_default``: ``images`` ->
  ``logits``) and a ``[train]`` meta graph added with ``add_meta_graph``
  after building a loss and a ``GradientDescentOptimizer`` step (signature
  ``loss``: ``images``, ``labels`` -> ``loss``), so a loader must pick by
  tag set.
* ``tf_simple_save/``: ``tf.compat.v1.saved_model.simple_save`` of a linear
  model (``x`` [None, 3] -> ``y`` [None, 2]).
* ``tf_asset/``: a model without variables whose init op reads an asset
  (``assets/vocab.txt``, collected in ``GraphKeys.ASSET_FILEPATHS``) into
  a local string variable; its signature returns ``contents`` (the file's
  bytes) and ``y = x + len(contents)``. The asset's path baked into the
  graph points into a temporary directory deleted before this script ends,
  so a loader that does not feed ``<dir>/assets/vocab.txt`` to the asset
  tensor when running the init op fails.
* ``tf_lookup/``: a ``StaticHashTable`` over a vocabulary asset
  (``TextFileInitializer``, whole line -> line number), initialized by the
  main op ``tables_initializer()``; ``words`` -> ``ids``.
* ``expected.npz``: for every model and signature, the inputs fed and the
  outputs TensorFlow's own loader (``tf.compat.v1.saved_model.loader.load``
  on the final directory) computed, under keys
  ``<model>/<signature>/inputs/<key>`` and ``<model>/<signature>/outputs/<key>``.
* ``expected.json``: the same, for Rust tests: ``{model: {"tags": [...],
  "signatures": {key: {"inputs": {k: {"dtype", "shape", "values"}},
  "outputs": {...}}}}}`` with values flattened in row-major order (strings
  as UTF-8 text).
"""

import json
import os
import pathlib
import shutil
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "saved_model"


def _dense(tf, x, n_in, n_out, name, seed):
    # Initial values from NumPy, not TF's random ops: TF's main_op() re-runs every variable
    # initializer after the restore, so the outputs a loader computes are the initializers' values,
    # and these stay the same in any implementation.
    rng = np.random.default_rng(seed)
    with tf.variable_scope(name):
        w = tf.get_variable(
            "kernel",
            [n_in, n_out],
            initializer=tf.constant_initializer(rng.normal(0.0, 0.5, [n_in, n_out]).astype(np.float32)),
        )
        b = tf.get_variable(
            "bias", [n_out], initializer=tf.constant_initializer(rng.uniform(-0.1, 0.1, [n_out]).astype(np.float32))
        )
    return tf.nn.bias_add(tf.matmul(x, w), b)


def make_mlp(tf, export_dir):
    sm = tf.saved_model
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        h = tf.nn.relu(_dense(tf, x, 4, 8, "dense1", 1))
        logits = tf.identity(_dense(tf, h, 8, 3, "dense2", 3), name="logits")
        probs = tf.nn.softmax(logits, name="probs")
        class_ids = tf.argmax(logits, axis=1, name="class_ids")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            b = sm.builder.SavedModelBuilder(export_dir)
            b.add_meta_graph_and_variables(
                sess,
                [sm.tag_constants.SERVING],
                signature_def_map={
                    "serving_default": sm.signature_def_utils.predict_signature_def(
                        inputs={"x": x}, outputs={"probs": probs, "logits": logits}
                    ),
                    "classes": sm.signature_def_utils.predict_signature_def(
                        inputs={"x": x}, outputs={"class_ids": class_ids, "probs": probs}
                    ),
                },
                main_op=sm.main_op.main_op(),
            )
            b.save()
    x_val = np.array(
        [[0.5, -1.0, 2.0, 0.25], [1.5, 0.0, -0.5, 1.0], [-2.0, 1.0, 0.5, -0.75]],
        dtype=np.float32,
    )
    return ["serve"], {"serving_default": {"x": x_val}, "classes": {"x": x_val}}


def make_conv(tf, export_dir):
    sm = tf.saved_model
    with tf.Graph().as_default():
        images = tf.placeholder(tf.float32, [None, 8, 8, 1], name="images")
        with tf.variable_scope("conv"):
            k = tf.get_variable(
                "kernel",
                [3, 3, 1, 4],
                initializer=tf.random_normal_initializer(stddev=0.5, seed=7),
            )
            kb = tf.get_variable(
                "bias", [4], initializer=tf.random_uniform_initializer(-0.1, 0.1, seed=8)
            )
        c = tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(images, k, [1, 1, 1, 1], "SAME"), kb))
        p = tf.nn.max_pool(c, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
        flat = tf.reshape(p, [-1, 4 * 4 * 4])
        logits = tf.identity(_dense(tf, flat, 64, 2, "dense", 9), name="logits")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            b = sm.builder.SavedModelBuilder(export_dir)
            b.add_meta_graph_and_variables(
                sess,
                [sm.tag_constants.SERVING],
                signature_def_map={
                    "serving_default": sm.signature_def_utils.predict_signature_def(
                        inputs={"images": images}, outputs={"logits": logits}
                    )
                },
            )
            labels = tf.placeholder(tf.int64, [None], name="labels")
            loss = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits),
                name="loss",
            )
            tf.train.GradientDescentOptimizer(0.1).minimize(loss, name="train_op")
            b.add_meta_graph(
                [sm.tag_constants.TRAINING],
                signature_def_map={
                    "loss": sm.signature_def_utils.predict_signature_def(
                        inputs={"images": images, "labels": labels}, outputs={"loss": loss}
                    )
                },
            )
            b.save()
    rng = np.random.RandomState(0)
    img = rng.uniform(-1.0, 1.0, size=(2, 8, 8, 1)).astype(np.float32)
    return {
        "serve": (["serve"], {"serving_default": {"images": img}}),
        "train": (
            ["train"],
            {"loss": {"images": img, "labels": np.array([0, 1], dtype=np.int64)}},
        ),
    }


def make_simple_save(tf, export_dir):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = tf.identity(_dense(tf, x, 3, 2, "linear", 11), name="y")
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.saved_model.simple_save(sess, export_dir, inputs={"x": x}, outputs={"y": y})
    x_val = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]], dtype=np.float32)
    return ["serve"], {"serving_default": {"x": x_val}}


VOCAB = "apple\nbanana\ncherry\n"


def make_asset(tf, export_dir, scratch):
    sm = tf.saved_model
    vocab = os.path.join(scratch, "vocab.txt")
    with open(vocab, "w") as f:
        f.write(VOCAB)
    with tf.Graph().as_default():
        asset = tf.constant(vocab, name="vocab_path")
        tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, asset)
        contents_var = tf.Variable(
            tf.io.read_file(asset),
            trainable=False,
            collections=[tf.GraphKeys.LOCAL_VARIABLES],
            name="vocab_contents",
        )
        x = tf.placeholder(tf.float32, [None], name="x")
        contents = tf.identity(contents_var, name="contents")
        length = tf.cast(tf.size(tf.io.decode_raw(contents, tf.uint8)), tf.float32)
        y = tf.add(x, length, name="y")
        with tf.Session() as sess:
            sess.run(tf.local_variables_initializer())
            b = sm.builder.SavedModelBuilder(export_dir)
            b.add_meta_graph_and_variables(
                sess,
                [sm.tag_constants.SERVING],
                signature_def_map={
                    "serving_default": sm.signature_def_utils.predict_signature_def(
                        inputs={"x": x}, outputs={"y": y, "contents": contents}
                    )
                },
                assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS),
                main_op=tf.local_variables_initializer(),
            )
            b.save()
    return ["serve"], {"serving_default": {"x": np.array([0.0, 1.5, -4.0], dtype=np.float32)}}


def make_lookup(tf, export_dir, scratch):
    """A vocabulary lookup the way TF1 serving models did it: a text-file table initialized by the main op."""
    sm = tf.saved_model
    vocab = os.path.join(scratch, "words.txt")
    with open(vocab, "w") as f:
        f.write(VOCAB)
    with tf.Graph().as_default():
        words = tf.placeholder(tf.string, [None], name="words")
        table = tf.lookup.StaticHashTable(
            tf.lookup.TextFileInitializer(
                vocab, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER
            ),
            default_value=-1,
        )
        ids = tf.identity(table.lookup(words), name="ids")
        with tf.Session() as sess:
            sess.run(tf.tables_initializer())
            b = sm.builder.SavedModelBuilder(export_dir)
            b.add_meta_graph_and_variables(
                sess,
                [sm.tag_constants.SERVING],
                signature_def_map={
                    "serving_default": sm.signature_def_utils.predict_signature_def(
                        inputs={"words": words}, outputs={"ids": ids}
                    )
                },
                assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS),
                main_op=tf.tables_initializer(),
            )
            b.save()
    words_val = np.array([b"banana", b"kiwi", b"apple", b"cherry"], dtype=object)
    return ["serve"], {"serving_default": {"words": words_val}}


def run_with_tf(tf, export_dir, tags, feeds_by_sig):
    """Loads ``export_dir`` with TensorFlow's loader and runs every signature."""
    results = {}
    with tf.Graph().as_default() as g, tf.Session(graph=g) as sess:
        meta = tf.saved_model.loader.load(sess, tags, export_dir)
        for key, feeds in feeds_by_sig.items():
            sig = meta.signature_def[key]
            feed = {sig.inputs[k].name: v for k, v in feeds.items()}
            out_keys = sorted(sig.outputs)
            vals = sess.run([sig.outputs[k].name for k in out_keys], feed)
            results[key] = (feeds, dict(zip(out_keys, vals)))
    return results


def _json_value(a):
    a = np.asarray(a)
    if a.dtype.kind in ("S", "O"):
        values = [v.decode("utf-8") if isinstance(v, bytes) else v for v in a.reshape(-1)]
        dtype = "string"
    else:
        values = a.reshape(-1).tolist()
        dtype = a.dtype.name
    return {"dtype": dtype, "shape": list(a.shape), "values": values}


def main():
    import tensorflow.compat.v1 as tf

    tf.disable_v2_behavior()
    tf.disable_resource_variables()
    OUT.mkdir(parents=True, exist_ok=True)
    for name in ("tf_mlp", "tf_conv", "tf_simple_save", "tf_asset", "tf_lookup"):
        shutil.rmtree(OUT / name, ignore_errors=True)

    specs = {}
    with tempfile.TemporaryDirectory() as scratch:
        # Export under a scratch directory and move into place afterwards, so
        # nothing in the graphs points into the fixture directory.
        def export(name, make, *extra):
            tmp = os.path.join(scratch, name)
            res = make(tf, tmp, *extra)
            shutil.move(tmp, OUT / name)
            return res

        specs["tf_mlp"] = export("tf_mlp", make_mlp)
        conv = export("tf_conv", make_conv)
        specs["tf_conv"] = conv["serve"]
        specs["tf_conv:train"] = conv["train"]
        specs["tf_simple_save"] = export("tf_simple_save", make_simple_save)
        specs["tf_asset"] = export("tf_asset", make_asset, scratch)
        specs["tf_lookup"] = export("tf_lookup", make_lookup, scratch)
    # The scratch directory (the asset's original path) is gone now.

    arrays = {}
    manifest = {"tensorflow": tf.__version__}
    for spec_name, (tags, feeds_by_sig) in specs.items():
        model = spec_name.split(":")[0]
        results = run_with_tf(tf, str(OUT / model), tags, feeds_by_sig)
        entry = manifest.setdefault(spec_name, {"dir": model, "tags": tags, "signatures": {}})
        for key, (feeds, outs) in results.items():
            sig = {"inputs": {}, "outputs": {}}
            for kind, values in (("inputs", feeds), ("outputs", outs)):
                for k, v in values.items():
                    v = np.asarray(v)
                    # Strings as fixed-width bytes, so the tests read the npz without pickle.
                    arrays[f"{spec_name}/{key}/{kind}/{k}"] = v.astype(bytes) if v.dtype == object else v
                    sig[kind][k] = _json_value(v)
            entry["signatures"][key] = sig
    np.savez(OUT / "expected.npz", **arrays)
    with open(OUT / "expected.json", "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    print(json.dumps(manifest, sort_keys=True)[:2000])


if __name__ == "__main__":
    main()
