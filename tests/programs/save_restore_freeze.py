"""The TF1 save/restore/freeze recipes: train a small model and save it with tf.train.Saver (global_step,
max_to_keep), reset_default_graph and rebuild, restore with latest_checkpoint and a var_list dict; restore
without the Python model via import_meta_graph + get_tensor_by_name + get_collection; freeze with
graph_util.convert_variables_to_constants and tf.train.write_graph, and load the frozen GraphDef with
tf.gfile.GFile + import_graph_def(name="prefix"); extract_sub_graph and remove_training_nodes on the way.

Weights start from numpy, so predictions and losses are deterministic.
"""

import os
import shutil
import tempfile

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 6


def build(tf):
    x = tf.placeholder(tf.float32, [None, 5], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    with tf.variable_scope("net"):
        w1 = tf.get_variable("w1", initializer=tf.constant(fixed_init([5, 8], 801)))
        b1 = tf.get_variable("b1", [8], initializer=tf.zeros_initializer())
        h = tf.nn.tanh(tf.matmul(x, w1) + b1)
        w2 = tf.get_variable("w2", initializer=tf.constant(fixed_init([8, 1], 802)))
        b2 = tf.get_variable("b2", [1], initializer=tf.constant_initializer(0.5))
    pred = tf.add(tf.matmul(h, w2), b2, name="pred")
    loss = tf.reduce_mean(tf.square(pred - y), name="loss")
    global_step = tf.Variable(0, name="global_step", trainable=False)
    train_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss, global_step=global_step, name="train_op")
    tf.add_to_collection("train_op", train_op)
    tf.add_to_collection("inputs", x)
    tf.add_to_collection("outputs", pred)
    return x, y, pred, loss, train_op, global_step


def main(tf, steps=6):
    tf.reset_default_graph()
    rng = np.random.RandomState(16)
    X = rng.uniform(-1, 1, size=(32, 5)).astype(np.float32)
    Y = (X @ np.arange(1, 6, dtype=np.float32)[:, None] * 0.2).astype(np.float32)
    ckpt_dir = tempfile.mkdtemp()
    out = {}

    x, y, pred, loss, train_op, global_step = build(tf)
    saver = tf.train.Saver(max_to_keep=2)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(steps):
            _, l = sess.run([train_op, loss], {x: X, y: Y})
            losses.append(float(l))
            if i % 2 == 1:
                saver.save(sess, os.path.join(ckpt_dir, "model.ckpt"), global_step=global_step)
        final_pred = sess.run(pred, {x: X[:4]})
    out["losses"] = losses
    out["checkpoints_kept"] = sorted(
        os.path.basename(p) for p in tf.train.get_checkpoint_state(ckpt_dir).all_model_checkpoint_paths
    )
    out["files"] = sorted(f for f in os.listdir(ckpt_dir))
    out["checkpoint_vars"] = sorted(n for n, _ in tf.train.list_variables(ckpt_dir))

    # Rebuild and restore into renamed variables through a var_list dict.
    tf.reset_default_graph()
    x, y, pred, loss, train_op, global_step = build(tf)
    var_list = {v.op.name: v for v in tf.global_variables() if v.op.name.startswith("net/")}
    restorer = tf.train.Saver(var_list)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        latest = tf.train.latest_checkpoint(ckpt_dir)
        restorer.restore(sess, latest)
        out["restored_pred"] = sess.run(pred, {x: X[:4]}).ravel().tolist()
        out["restored_step_untouched"] = int(sess.run(global_step))
        reader = tf.train.NewCheckpointReader(latest)
        out["reader_step"] = int(reader.get_tensor("global_step"))
        out["reader_shapes"] = {k: list(v) for k, v in sorted(reader.get_variable_to_shape_map().items())}
    out["final_pred"] = final_pred.ravel().tolist()

    # import_meta_graph: no Python model, continue training from the collections.
    tf.reset_default_graph()
    with tf.Session() as sess:
        new_saver = tf.train.import_meta_graph(latest + ".meta")
        new_saver.restore(sess, latest)
        graph = tf.get_default_graph()
        gx = graph.get_tensor_by_name("x:0")
        gy = graph.get_tensor_by_name("y:0")
        gloss = graph.get_tensor_by_name("loss:0")
        gtrain = tf.get_collection("train_op")[0]
        more = []
        for _ in range(2):
            _, l = sess.run([gtrain, gloss], {gx: X, gy: Y})
            more.append(float(l))
        out["meta_losses"] = more
        out["meta_step"] = int(sess.run(graph.get_tensor_by_name("global_step:0")))
        out["meta_outputs"] = [t.name for t in tf.get_collection("outputs")]

        # Freeze.
        frozen = tf.graph_util.convert_variables_to_constants(sess, graph.as_graph_def(), ["pred"])
        frozen = tf.graph_util.remove_training_nodes(frozen)
        frozen_pred = sess.run("pred:0", {gx: X[:4]})
        tf.train.write_graph(frozen, ckpt_dir, "frozen.pb", as_text=False)
        tf.train.write_graph(frozen, ckpt_dir, "frozen.pbtxt")
    out["frozen_ops"] = sorted({n.op for n in frozen.node})

    tf.reset_default_graph()
    with tf.gfile.GFile(os.path.join(ckpt_dir, "frozen.pb"), "rb") as f:
        graph_def = tf.GraphDef()
        graph_def.ParseFromString(f.read())
    with tf.Graph().as_default() as graph:
        tf.import_graph_def(graph_def, name="prefix")
        px = graph.get_tensor_by_name("prefix/x:0")
        ppred = graph.get_tensor_by_name("prefix/pred:0")
        with tf.Session(graph=graph) as sess:
            loaded = sess.run(ppred, {px: X[:4]})
    out["frozen_matches"] = bool(np.allclose(loaded, frozen_pred, atol=1e-6))
    out["frozen_pred"] = loaded.ravel().tolist()
    shutil.rmtree(ckpt_dir)
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
