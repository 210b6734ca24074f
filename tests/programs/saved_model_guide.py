"""TF 1.x guide "Save and Restore" (SavedModel part) and "Using the SavedModel format": train a small model,
export it with tf.saved_model.simple_save(session, export_dir, inputs, outputs); export a second one with
tf.saved_model.builder.SavedModelBuilder + add_meta_graph_and_variables(sess, [tag_constants.SERVING],
signature_def_map built from signature_def_utils.predict_signature_def and one built by hand from
utils.build_tensor_info + build_signature_def, assets_collection, main_op-free) and builder.save();
load both with tf.saved_model.loader.load(sess, tags, export_dir) in fresh graphs, look the tensors up by
the signature's TensorInfo names and run them; and the checkpoint side: inspect_checkpoint's
print_tensors_in_checkpoint_file (TF's tensorflow.python.tools module, ferroflow.tools here; its stdout is
captured, values printed to 5 digits) and tf.train.list_variables.

Weights come from numpy, so the predictions are deterministic.
"""

import contextlib
import io
import os
import shutil
import tempfile

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 5


def main(tf, steps=5):
    tf.reset_default_graph()
    rng = np.random.RandomState(12)
    X = rng.randn(16, 4).astype(np.float32)
    Y = (X.sum(1, keepdims=True) > 0).astype(np.float32)
    root = tempfile.mkdtemp()
    out = {}

    x = tf.placeholder(tf.float32, [None, 4], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    w = tf.Variable(fixed_init([4, 1], 1201), name="w")
    b = tf.Variable(tf.zeros([1]), name="b")
    logits = tf.add(tf.matmul(x, w), b, name="logits")
    prob = tf.sigmoid(logits, name="prob")
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    saver = tf.train.Saver()
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            losses.append(float(sess.run([train, loss], {x: X, y: Y})[1]))
        expected = sess.run(prob, {x: X[:3]})
        ckpt = saver.save(sess, os.path.join(root, "ckpt", "model.ckpt"))

        simple_dir = os.path.join(root, "simple")
        tf.saved_model.simple_save(sess, simple_dir, inputs={"x": x}, outputs={"prob": prob})

        builder_dir = os.path.join(root, "builder", "1")
        builder = tf.saved_model.builder.SavedModelBuilder(builder_dir)
        predict_sig = tf.saved_model.signature_def_utils.predict_signature_def(
            inputs={"features": x}, outputs={"scores": prob, "logits": logits}
        )
        tensor_info_x = tf.saved_model.utils.build_tensor_info(x)
        tensor_info_y = tf.saved_model.utils.build_tensor_info(prob)
        classify_sig = tf.saved_model.signature_def_utils.build_signature_def(
            inputs={tf.saved_model.signature_constants.PREDICT_INPUTS: tensor_info_x},
            outputs={tf.saved_model.signature_constants.PREDICT_OUTPUTS: tensor_info_y},
            method_name=tf.saved_model.signature_constants.PREDICT_METHOD_NAME,
        )
        builder.add_meta_graph_and_variables(
            sess,
            [tf.saved_model.tag_constants.SERVING],
            signature_def_map={
                "predict_images": predict_sig,
                tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY: classify_sig,
            },
            strip_default_attrs=True,
        )
        saved_path = builder.save()
    out["losses"] = losses
    out["expected"] = expected.ravel().tolist()
    out["tensor_info"] = [tensor_info_x.name, tensor_info_x.dtype, [d.size for d in tensor_info_x.tensor_shape.dim]]
    out["saved_path_type"] = type(saved_path).__name__
    out["saved_pb"] = os.path.basename(saved_path if isinstance(saved_path, str) else saved_path.decode())
    out["simple_files"] = sorted(os.listdir(simple_dir))
    out["variables_files"] = sorted(os.listdir(os.path.join(simple_dir, "variables")))

    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], simple_dir)
        sig = meta.signature_def[tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
        x_name = sig.inputs["x"].name
        p_name = sig.outputs["prob"].name
        got = sess.run(p_name, {x_name: X[:3]})
        out["simple_signature"] = [x_name, p_name, sig.method_name, sorted(meta.signature_def)]
        out["simple_pred"] = got.ravel().tolist()
        out["simple_tags"] = list(meta.meta_info_def.tags)

    with tf.Session(graph=tf.Graph()) as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], builder_dir)
        sig = meta.signature_def["predict_images"]
        feed = tf.get_default_graph().get_tensor_by_name(sig.inputs["features"].name)
        scores = tf.get_default_graph().get_tensor_by_name(sig.outputs["scores"].name)
        out["builder_pred"] = sess.run(scores, {feed: X[:3]}).ravel().tolist()
        out["builder_signatures"] = sorted(
            (k, v.method_name, sorted(v.inputs), sorted(v.outputs)) for k, v in meta.signature_def.items()
        )
        out["builder_vars"] = sorted(v.op.name for v in tf.global_variables())
        out["maybe_saved_model"] = tf.saved_model.loader.maybe_saved_model_directory(builder_dir)

    if tf.__name__.startswith("ferroflow"):
        from ferroflow.tools import inspect_checkpoint as chkp
    else:
        from tensorflow.python.tools import inspect_checkpoint as chkp
    printed = []
    for kwargs in ({"tensor_name": "", "all_tensors": True}, {"tensor_name": "w", "all_tensors": False},
                   {"tensor_name": "", "all_tensors": False}, {"tensor_name": "nope", "all_tensors": False},
                   {"tensor_name": "", "all_tensors": False, "all_tensor_names": True,
                    "count_exclude_pattern": "^b$"}):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), np.printoptions(precision=5):
            chkp.print_tensors_in_checkpoint_file(ckpt, **kwargs)
        printed.append(buf.getvalue())
    out["inspect_checkpoint"] = printed
    out["list_variables"] = [(n, s) for n, s in tf.train.list_variables(ckpt)]
    shutil.rmtree(root)
    return out


if __name__ == "__main__":
    run_as_script(main, 5)
