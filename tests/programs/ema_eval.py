"""The train/eval split of tensorflow/models' TF1 scripts (official mnist r1, cifar10_eval.py, the slim-free
Inception train loop): tf.train.ExponentialMovingAverage(decay, num_updates=global_step) over the trainable
variables, ema.apply built under tf.control_dependencies([apply_op]) and a train no_op after both,
checkpoints written with a Saver; then the eval script in a fresh graph restores the shadow values into the
model's own variables through ema.variables_to_restore() (with moving_avg_variables=...), evaluates in a
loop over batches with tf.nn.in_top_k and a checkpoint-state read, and compares with the raw weights;
ema.average(v), average_name(v), the tf.GraphKeys.MOVING_AVERAGE_VARIABLES collection and the names of the
shadow variables.

Weights start from numpy values: every number is deterministic.
"""

import os
import shutil
import tempfile

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 10
MOVING_AVERAGE_DECAY = 0.9


def inference(tf, images):
    with tf.variable_scope("hidden"):
        w = tf.get_variable("weights", initializer=fixed_init([8, 16], 800))
        b = tf.get_variable("biases", [16], initializer=tf.constant_initializer(0.1))
        h = tf.nn.relu(tf.matmul(images, w) + b)
    with tf.variable_scope("softmax_linear"):
        w = tf.get_variable("weights", initializer=fixed_init([16, 3], 801))
        b = tf.get_variable("biases", [3], initializer=tf.zeros_initializer())
        return tf.add(tf.matmul(h, w), b, name="logits")


def main(tf, steps=10):
    rng = np.random.RandomState(80)
    X = rng.randn(60, 8).astype(np.float32)
    Y = np.argmax(X[:, :3] + 0.5 * X[:, 3:6], axis=1).astype(np.int32)
    train_dir = tempfile.mkdtemp()
    out = {}

    # --- train.py
    tf.reset_default_graph()
    global_step = tf.train.get_or_create_global_step()
    images = tf.placeholder(tf.float32, [None, 8])
    labels = tf.placeholder(tf.int32, [None])
    logits = inference(tf, images)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    opt = tf.train.GradientDescentOptimizer(0.5)
    apply_op = opt.apply_gradients(opt.compute_gradients(loss), global_step=global_step)
    ema = tf.train.ExponentialMovingAverage(MOVING_AVERAGE_DECAY, num_updates=global_step)
    # As cifar10.train(): the averages are built after the update, so they read the new weights.
    with tf.control_dependencies([apply_op]):
        ema_op = ema.apply(tf.trainable_variables())
    with tf.control_dependencies([apply_op, ema_op]):
        train_op = tf.no_op(name="train")
    out["shadow_names"] = [ema.average(v).op.name for v in tf.trainable_variables()]
    out["average_names"] = [ema.average_name(v) for v in tf.trainable_variables()]
    out["moving_average_variables"] = [v.op.name for v in tf.moving_average_variables()]
    out["ema_op_name"] = ema_op.name
    out["ema_name"] = ema.name
    saver = tf.train.Saver(max_to_keep=3)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step in range(steps):
            _, l = sess.run([train_op, loss], {images: X[:48], labels: Y[:48]})
            losses.append(float(l))
            if step % 4 == 3 or step == steps - 1:
                saver.save(sess, os.path.join(train_dir, "model.ckpt"), global_step=global_step)
        out["decay_used"] = float(sess.run(tf.minimum(MOVING_AVERAGE_DECAY, (1.0 + tf.cast(global_step, tf.float32)) /
                                                      (10.0 + tf.cast(global_step, tf.float32)))))
        raw_w = sess.run(tf.trainable_variables()[0])
        shadow_w = sess.run(ema.average(tf.trainable_variables()[0]))
    out["losses"] = losses
    out["shadow_minus_raw"] = float(np.abs(shadow_w - raw_w).sum())
    out["checkpoint_vars"] = sorted(n for n, _ in tf.train.list_variables(train_dir))

    # --- eval.py
    def evaluate(use_averages):
        tf.reset_default_graph()
        images = tf.placeholder(tf.float32, [None, 8])
        labels = tf.placeholder(tf.int32, [None])
        logits = inference(tf, images)
        top_k_op = tf.nn.in_top_k(logits, labels, 1)
        eval_loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        if use_averages:
            variable_averages = tf.train.ExponentialMovingAverage(MOVING_AVERAGE_DECAY)
            variables_to_restore = variable_averages.variables_to_restore()
        else:
            variables_to_restore = None
        saver = tf.train.Saver(variables_to_restore)
        with tf.Session() as sess:
            ckpt = tf.train.get_checkpoint_state(train_dir)
            saver.restore(sess, ckpt.model_checkpoint_path)
            global_step = ckpt.model_checkpoint_path.split("/")[-1].split("-")[-1]
            true_count, batch_losses = 0, []
            for i in range(0, 60, 12):
                predictions, l = sess.run([top_k_op, eval_loss], {images: X[i : i + 12], labels: Y[i : i + 12]})
                true_count += int(np.sum(predictions))
                batch_losses.append(float(l))
        keys = sorted(variables_to_restore) if variables_to_restore else None
        return {"precision": true_count / 60.0, "batch_losses": batch_losses, "step": global_step, "keys": keys}

    out["eval_averaged"] = evaluate(True)
    out["eval_raw"] = evaluate(False)

    # variables_to_restore with moving_avg_variables: only those get the shadow names.
    tf.reset_default_graph()
    tf.train.get_or_create_global_step()
    inference(tf, tf.placeholder(tf.float32, [None, 8]))
    ema = tf.train.ExponentialMovingAverage(0.99)
    some = [v for v in tf.trainable_variables() if "hidden" in v.op.name]
    out["restore_map_partial"] = {k: v.op.name for k, v in ema.variables_to_restore(some).items()}
    shutil.rmtree(train_dir)
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
