"""tf.train.SyncReplicasOptimizer in one process, as the mnist_replica example ran it with one worker:
SyncReplicasOptimizer(opt, replicas_to_aggregate=1, total_num_replicas=1) wrapping plain SGD,
opt.minimize(loss, global_step=...), the chief's make_session_run_hook(is_chief=True) passed to
tf.train.MonitoredTrainingSession with StopAtStepHook, the local_step / sync token queue machinery run by the
hook, get_chief_queue_runner / get_init_tokens_op, and the aggregated gradient equal to the plain optimizer's
(the weights after N steps match a plain GradientDescentOptimizer's).

Deterministic: data and weights from numpy. stop_grace_period_secs=1: ferroflow's chief sync thread can still
be waiting in take_grad when the session closes, and the coordinator then waits out the grace period (TF 2.21
returns at once); the short grace keeps that wait small.
"""

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 5


def model(tf):
    x = tf.constant(fixed_init([16, 4], 1600, 1.0))
    y = tf.constant(fixed_init([16, 1], 1601, 1.0))
    w = tf.get_variable("w", initializer=fixed_init([4, 1], 1602, 0.5))
    b = tf.get_variable("b", initializer=np.zeros([1], np.float32))
    return tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))


def main(tf, steps=5):
    out = {}
    for kind in ("sgd",):
        tf.reset_default_graph()
        global_step = tf.train.get_or_create_global_step()
        loss = model(tf)
        base = tf.train.GradientDescentOptimizer(0.1)
        opt = tf.train.SyncReplicasOptimizer(base, replicas_to_aggregate=1, total_num_replicas=1,
                                             name="sync_replicas")
        train_op = opt.minimize(loss, global_step=global_step)
        sync_hook = opt.make_session_run_hook(is_chief=True, num_tokens=0)
        losses = []
        with tf.train.MonitoredTrainingSession(is_chief=True, hooks=[sync_hook, tf.train.StopAtStepHook(last_step=steps)],
                                               save_checkpoint_secs=None, save_summaries_steps=None,
                                               log_step_count_steps=None, stop_grace_period_secs=1) as sess:
            while not sess.should_stop():
                _, l, step = sess.run([train_op, loss, global_step])
                losses.append(float(l))
        out[kind] = {"losses": losses, "last_step": int(step)}
        out[kind]["local_vars"] = sorted(v.op.name for v in tf.local_variables())
        out[kind]["has_chief_queue_runner"] = opt.get_chief_queue_runner() is not None
        out[kind]["init_tokens_type"] = type(opt.get_init_tokens_op()).__name__

    # The same steps with plain SGD give the same losses.
    tf.reset_default_graph()
    global_step = tf.train.get_or_create_global_step()
    loss = model(tf)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=global_step)
    plain = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            plain.append(float(sess.run([train_op, loss])[1]))
    out["plain_sgd"] = plain
    out["losses"] = out["sgd"]["losses"]
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
