"""TF1's cifar10_multi_gpu_train.py pattern: one tower per GPU under tf.device('/gpu:%d') and
tf.name_scope('tower_%d'), variables on the CPU through get_variable with
tf.get_variable_scope().reuse_variables() after the first tower, the towers' gradients averaged by
average_gradients (expand_dims + concat + reduce_mean), apply_gradients, batch-norm-free; the session runs
with allow_soft_placement so the GPU placements fall back to the CPU (ferroflow, and TensorFlow here, have
no GPU), and log_device_placement is left off.

Weights are loaded from numpy after initialization, so the losses are deterministic.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 5
NUM_GPUS = 2


def tower_loss(tf, scope, images, labels):
    with tf.device("/cpu:0"):
        w1 = tf.get_variable("w1", [8 * 8 * 3, 16], initializer=tf.truncated_normal_initializer(stddev=0.05))
        b1 = tf.get_variable("b1", [16], initializer=tf.constant_initializer(0.1))
        w2 = tf.get_variable("w2", [16, 10], initializer=tf.truncated_normal_initializer(stddev=0.05))
        b2 = tf.get_variable("b2", [10], initializer=tf.zeros_initializer())
    h = tf.nn.relu(tf.matmul(tf.reshape(images, [-1, 8 * 8 * 3]), w1) + b1)
    logits = tf.matmul(h, w2) + b2
    xent = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    tf.add_to_collection("losses", tf.multiply(tf.nn.l2_loss(w1), 1e-3, name="weight_loss"))
    tf.add_to_collection("losses", xent)
    losses = tf.get_collection("losses", scope)
    total_loss = tf.add_n(losses, name="total_loss")
    for l in losses + [total_loss]:
        tf.summary.scalar(l.op.name, l)
    return total_loss


def average_gradients(tf, tower_grads):
    average_grads = []
    for grad_and_vars in zip(*tower_grads):
        grads = []
        for g, _ in grad_and_vars:
            expanded_g = tf.expand_dims(g, 0)
            grads.append(expanded_g)
        grad = tf.concat(axis=0, values=grads)
        grad = tf.reduce_mean(grad, 0)
        v = grad_and_vars[0][1]
        grad_and_var = (grad, v)
        average_grads.append(grad_and_var)
    return average_grads


def main(tf, steps=5):
    tf.reset_default_graph()
    rng = np.random.RandomState(21)
    data = rng.rand(64, 8, 8, 3).astype(np.float32)
    targets = (data.mean(axis=(1, 2, 3)) * 10).astype(np.int32) % 10

    with tf.Graph().as_default(), tf.device("/cpu:0"):
        global_step = tf.get_variable(
            "global_step", [], initializer=tf.constant_initializer(0), trainable=False, dtype=tf.int32
        )
        lr = tf.train.exponential_decay(0.5, global_step, 100, 0.1, staircase=True)
        opt = tf.train.GradientDescentOptimizer(lr)
        images = tf.placeholder(tf.float32, [None, 8, 8, 3])
        labels = tf.placeholder(tf.int32, [None])
        image_splits = tf.split(images, NUM_GPUS)
        label_splits = tf.split(labels, NUM_GPUS)
        tower_grads = []
        tower_losses = []
        with tf.variable_scope(tf.get_variable_scope()):
            for i in range(NUM_GPUS):
                with tf.device("/gpu:%d" % i):
                    with tf.name_scope("%s_%d" % ("tower", i)) as scope:
                        loss = tower_loss(tf, scope, image_splits[i], label_splits[i])
                        tf.get_variable_scope().reuse_variables()
                        summaries = tf.get_collection(tf.GraphKeys.SUMMARIES, scope)
                        grads = opt.compute_gradients(loss)
                        tower_grads.append(grads)
                        tower_losses.append(loss)
        grads = average_gradients(tf, tower_grads)
        summaries.append(tf.summary.scalar("learning_rate", lr))
        apply_gradient_op = opt.apply_gradients(grads, global_step=global_step)
        variable_averages = tf.train.ExponentialMovingAverage(0.9999, global_step)
        variables_averages_op = variable_averages.apply(tf.trainable_variables())
        train_op = tf.group(apply_gradient_op, variables_averages_op)
        summary_op = tf.summary.merge(summaries)
        init = tf.global_variables_initializer()
        sess = tf.Session(config=tf.ConfigProto(allow_soft_placement=True, log_device_placement=False))
        sess.run(init)
        for k, v in enumerate(tf.trainable_variables()):
            v.load(fixed_init(v.shape.as_list(), 1000 + k), sess)
        losses = []
        for step in range(steps):
            lo = (step * 32) % 64
            _, l0, l1, summ = sess.run(
                [train_op, tower_losses[0], tower_losses[1], summary_op],
                {images: data[lo : lo + 32], labels: targets[lo : lo + 32]},
            )
            losses.append([float(l0), float(l1)])
        parsed = tf.Summary()
        parsed.ParseFromString(summ)
        devices = sorted({op.device for op in tf.get_default_graph().get_operations()})
        facts = {
            "tower0_losses": [a for a, _ in losses],
            "tower1_losses": [b for _, b in losses],
            "global_step": int(sess.run(global_step)),
            "summary_tags": sorted(v.tag for v in parsed.value),
            "trainable": [v.op.name for v in tf.trainable_variables()],
            "op_devices": devices,
            "tower_grad_names": sorted(g.op.name.split("/")[0] for g, _ in tower_grads[1]),
        }
        sess.close()
    return facts


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
