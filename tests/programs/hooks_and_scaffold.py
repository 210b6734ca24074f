"""The tf.train hook machinery of TF1 training scripts: MonitoredTrainingSession with a Scaffold (init_fn,
custom Saver, local_init_op), LoggingTensorHook(every_n_iter, formatter), CheckpointSaverHook with a
CheckpointSaverListener, SummarySaverHook, StepCounterHook, FeedFnHook, FinalOpsHook, a custom hook that
requests a stop through run_context.request_stop(); then tf.train.init_from_checkpoint with an assignment map
into a renamed model and SingularMonitoredSession restoring from the checkpoint directory.

Weights start from numpy, so losses are deterministic; wall-clock outputs (steps/sec) are not compared.
"""

import glob
import os
import shutil
import tempfile

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 12


def build(tf, scope="model"):
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    with tf.variable_scope(scope):
        w = tf.get_variable("w", initializer=tf.constant(fixed_init([3, 1], 1300)))
        b = tf.get_variable("b", initializer=tf.constant([0.0]))
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y), name="loss")
    return x, y, w, b, loss


def main(tf, steps=12):
    tf.reset_default_graph()
    rng = np.random.RandomState(25)
    X = rng.rand(40, 3).astype(np.float32)
    Y = X @ np.array([[1.0], [-2.0], [0.5]], np.float32) + 0.3
    ckpt_dir = tempfile.mkdtemp()
    logged, listener_calls, stopped_at, init_fn_called = [], [], [], []

    x, y, w, b, loss = build(tf)
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.AdamOptimizer(0.1).minimize(loss, global_step=global_step)
    tf.summary.scalar("loss", loss)
    counter = tf.Variable(0, trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES], name="counter")
    count_op = tf.assign_add(counter, 1)

    class Listener(tf.train.CheckpointSaverListener):
        def begin(self):
            listener_calls.append("begin")

        def after_save(self, session, global_step_value):
            listener_calls.append(("after_save", int(global_step_value)))

        def end(self, session, global_step_value):
            listener_calls.append(("end", int(global_step_value)))

    class StopAtLoss(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs([loss, global_step])

        def after_run(self, run_context, run_values):
            l, step = run_values.results
            if l < 0.05:
                stopped_at.append(int(step))
                run_context.request_stop()

    feeds = iter(range(10**6))

    def feed_fn():
        i = next(feeds) % 4
        return {x: X[i * 10 : i * 10 + 10], y: Y[i * 10 : i * 10 + 10]}

    scaffold = tf.train.Scaffold(
        init_fn=lambda scaffold, sess: init_fn_called.append(type(scaffold).__name__),
        saver=tf.train.Saver(max_to_keep=3),
        local_init_op=tf.local_variables_initializer(),
    )
    final_hook = tf.train.FinalOpsHook([w, counter])
    hooks = [
        tf.train.StopAtStepHook(last_step=steps),
        tf.train.LoggingTensorHook(
            {"loss": loss, "step": global_step},
            every_n_iter=4,
            formatter=lambda d: logged.append((int(d["step"]), float(d["loss"]))) or "logged",
        ),
        tf.train.CheckpointSaverHook(ckpt_dir, save_steps=5, scaffold=scaffold, listeners=[Listener()]),
        tf.train.SummarySaverHook(save_steps=3, output_dir=ckpt_dir, scaffold=scaffold),
        tf.train.StepCounterHook(every_n_steps=4, output_dir=ckpt_dir),
        tf.train.FeedFnHook(feed_fn),
        StopAtLoss(),
    ]
    losses = []
    with tf.train.MonitoredTrainingSession(
        scaffold=scaffold,
        hooks=hooks,
        chief_only_hooks=[],
        save_checkpoint_secs=None,
        save_summaries_steps=None,
        save_summaries_secs=None,
        log_step_count_steps=None,
    ) as sess:
        while not sess.should_stop():
            _, l, _ = sess.run([train_op, loss, count_op])
            losses.append(float(l))
    with tf.train.MonitoredSession(
        session_creator=tf.train.ChiefSessionCreator(checkpoint_dir=ckpt_dir), hooks=[final_hook]
    ) as s2:
        s2.run(count_op)
    final_w, final_counter = final_hook.final_ops_values

    event_tags = set()
    for path in glob.glob(os.path.join(ckpt_dir, "events.out.tfevents.*")):
        for e in tf.train.summary_iterator(path):
            for v in e.summary.value:
                event_tags.add(v.tag)
    ckpts = sorted(
        os.path.basename(p) for p in tf.train.get_checkpoint_state(ckpt_dir).all_model_checkpoint_paths
    )

    # init_from_checkpoint into renamed variables, then SingularMonitoredSession restoring the original.
    tf.reset_default_graph()
    x2, y2, w2, b2, loss2 = build(tf, scope="renamed")
    tf.train.init_from_checkpoint(ckpt_dir, {"model/": "renamed/"})
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        warm_loss = float(sess.run(loss2, {x2: X, y2: Y}))
    tf.reset_default_graph()
    x3, y3, w3, b3, loss3 = build(tf)
    tf.train.get_or_create_global_step()
    with tf.train.SingularMonitoredSession(checkpoint_dir=ckpt_dir) as sess:
        restored_loss = float(sess.run(loss3, {x3: X, y3: Y}))
        restored_step = int(sess.run(tf.train.get_global_step()))
    shutil.rmtree(ckpt_dir)
    return {
        "losses": losses,
        "logged": [list(t) for t in logged],
        "listener_calls": [list(c) if isinstance(c, tuple) else c for c in listener_calls],
        "stopped_at": stopped_at,
        "init_fn_called": init_fn_called,
        "final_w": final_w.ravel().tolist(),
        "final_counter": int(final_counter),
        "event_tags": sorted(event_tags),
        "checkpoints": ckpts,
        "warm_loss": warm_loss,
        "restored_loss": restored_loss,
        "restored_step": restored_step,
    }


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
