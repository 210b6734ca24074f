"""Transfer learning from a TF1 checkpoint: a "pretrained" network saved with tf.train.Saver, then a new graph
whose body lives under another scope and whose head is new, warm-started three ways as fine-tuning scripts
did it: tf.train.init_from_checkpoint with an assignment map ({"old_scope/": "new_scope/"} and single
variables), tf.train.Saver(var_list={checkpoint_name: variable}) restoring only the body, and
tf.contrib-free variables_to_restore filtering by name with tf.train.list_variables; then the head alone is
trained (var_list), the body frozen, and a second run fine-tunes everything with a smaller learning rate
for the body (two optimizers grouped by tf.group).

Deterministic: everything from numpy.
"""

import os
import shutil
import tempfile

import numpy as np
from _common import fake_mnist, fixed_init, run_as_script

TF_STEPS = 5


def body(tf, x):
    h = tf.layers.dense(x, 32, activation=tf.nn.relu, name="fc1")
    return tf.layers.dense(h, 16, activation=tf.nn.relu, name="fc2")


def main(tf, steps=5):
    images, labels = fake_mnist(40, seed=81)
    tmp = tempfile.mkdtemp()
    ckpt = os.path.join(tmp, "pretrained.ckpt")
    out = {}

    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [None, 784])
    with tf.variable_scope("pretrained"):
        feats = body(tf, x)
        logits = tf.layers.dense(feats, 10, name="logits")
    values = {}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i, v in enumerate(tf.global_variables()):
            values[v.op.name] = fixed_init(v.shape.as_list(), 8100 + i, 0.1)
            v.load(values[v.op.name], sess)
        tf.train.Saver().save(sess, ckpt)
        out["pretrained_logits_sum"] = float(sess.run(logits, {x: images}).sum())
    out["checkpoint_vars"] = [[name, shape] for name, shape in tf.train.list_variables(ckpt)]

    def build():
        x = tf.placeholder(tf.float32, [None, 784], name="x")
        y = tf.placeholder(tf.float32, [None, 10], name="y")
        with tf.variable_scope("finetune"):
            feats = body(tf, x)
            with tf.variable_scope("head"):
                w = tf.get_variable("w", initializer=fixed_init([16, 10], 8200, 0.1))
                b = tf.get_variable("b", [10], initializer=tf.zeros_initializer())
        logits = tf.matmul(feats, w) + b
        loss = tf.losses.softmax_cross_entropy(y, logits)
        return x, y, loss

    # 1. init_from_checkpoint with a scope map.
    tf.reset_default_graph()
    x, y, loss = build()
    tf.train.init_from_checkpoint(ckpt, {"pretrained/fc1/": "finetune/fc1/"})
    fc2_kernel = [v for v in tf.global_variables() if v.op.name == "finetune/fc2/kernel"][0]
    tf.train.init_from_checkpoint(ckpt, {"pretrained/fc2/kernel": fc2_kernel, "pretrained/fc2/bias": "finetune/fc2/bias"})
    head_vars = tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="finetune/head")
    train_head = tf.train.GradientDescentOptimizer(0.5).minimize(loss, var_list=head_vars)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        k1 = sess.run(tf.get_default_graph().get_tensor_by_name("finetune/fc1/kernel:0"))
        out["init_from_ckpt_matches"] = bool(np.array_equal(k1, values["pretrained/fc1/kernel"]))
        out["init_from_ckpt_fc2"] = bool(np.array_equal(sess.run(fc2_kernel), values["pretrained/fc2/kernel"]))
        out["losses"] = [float(sess.run([train_head, loss], {x: images, y: labels})[1]) for _ in range(steps)]
        out["body_unchanged"] = bool(np.array_equal(sess.run(fc2_kernel), values["pretrained/fc2/kernel"]))

    # 2. Saver with a dict var_list, built from the checkpoint's names.
    tf.reset_default_graph()
    x, y, loss = build()
    ckpt_names = {name for name, _ in tf.train.list_variables(ckpt)}
    var_map = {}
    for v in tf.global_variables():
        old = v.op.name.replace("finetune/", "pretrained/", 1)
        if old in ckpt_names:
            var_map[old] = v
    out["restored_keys"] = sorted(var_map)
    restorer = tf.train.Saver(var_list=var_map)
    body_vars = [v for v in tf.trainable_variables() if "head" not in v.op.name]
    opt_body = tf.train.GradientDescentOptimizer(0.01)
    opt_head = tf.train.GradientDescentOptimizer(0.5)
    grads = tf.gradients(loss, body_vars + head_vars_of(tf))
    train = tf.group(opt_body.apply_gradients(zip(grads[:len(body_vars)], body_vars)),
                     opt_head.apply_gradients(zip(grads[len(body_vars):], head_vars_of(tf))))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        restorer.restore(sess, ckpt)
        out["finetune_losses"] = [float(sess.run([train, loss], {x: images, y: labels})[1]) for _ in range(steps)]
        out["fc1_moved"] = float(np.abs(sess.run(body_vars[0]) - values["pretrained/fc1/kernel"]).max())

    # A missing checkpoint key in the assignment map is an error naming it.
    tf.reset_default_graph()
    build()
    try:
        tf.train.init_from_checkpoint(ckpt, {"pretrained/nope/": "finetune/fc1/"})
        out["missing_error"] = None
    except ValueError as e:
        out["missing_error"] = type(e).__name__
    shutil.rmtree(tmp)
    return out


def head_vars_of(tf):
    return tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, scope="finetune/head")


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
