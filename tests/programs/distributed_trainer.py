"""The TF1 distributed-training template ("Distributed TensorFlow" how-to, between-graph replication) run
in one process: a tf.train.ClusterSpec of one ps and one worker task on local ports, a tf.train.Server per
task, variables placed by tf.device(tf.train.replica_device_setter(worker_device=..., cluster=cluster)),
global_step from tf.train.get_or_create_global_step, tf.train.MonitoredTrainingSession(master=server.target,
is_chief=True, hooks=[StopAtStepHook]) training until should_stop; plus tf.train.Server.create_local_server
and a plain tf.Session(server.target) reading the variables the workers trained on the ps.

Weights start from numpy, so the losses are deterministic.
"""

import socket

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 6


def free_port():
    for port in range(20000 + (hash(socket.gethostname()) % 5000), 32000):
        with socket.socket() as s:
            try:
                s.bind(("localhost", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port below 32768")


def main(tf, steps=6):
    tf.reset_default_graph()
    ps_port = free_port()
    with socket.socket() as hold:
        hold.bind(("localhost", ps_port))
        worker_port = free_port()
    cluster = tf.train.ClusterSpec({"ps": ["localhost:%d" % ps_port], "worker": ["localhost:%d" % worker_port]})
    ps_server = tf.train.Server(cluster, job_name="ps", task_index=0)  # noqa: F841 (kept alive: it serves)
    server = tf.train.Server(cluster, job_name="worker", task_index=0)

    rng = np.random.RandomState(20)
    X = rng.randn(32, 4).astype(np.float32)
    Y = (X @ np.array([[1.0], [-1.0], [0.5], [2.0]], np.float32)).astype(np.float32)

    with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:0", cluster=cluster)):
        x = tf.placeholder(tf.float32, [None, 4])
        y = tf.placeholder(tf.float32, [None, 1])
        w = tf.Variable(fixed_init([4, 1], 2001), name="w")
        b = tf.Variable(tf.zeros([1]), name="b")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        global_step = tf.train.get_or_create_global_step()
        train_op = tf.train.AdagradOptimizer(0.5).minimize(loss, global_step=global_step)
    devices = sorted({(v.op.name, v.device) for v in tf.global_variables()})

    hooks = [tf.train.StopAtStepHook(last_step=steps)]
    losses = []
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=True, hooks=hooks,
                                           checkpoint_dir=None, save_summaries_steps=None) as mon_sess:
        i = 0
        while not mon_sess.should_stop():
            lo = (i * 8) % 32
            _, l = mon_sess.run([train_op, loss], {x: X[lo : lo + 8], y: Y[lo : lo + 8]})
            losses.append(float(l))
            i += 1
    with tf.Session(server.target) as sess:
        trained = sess.run(w).ravel().tolist()
        step = int(sess.run(global_step))
    out = {
        "losses": losses,
        "trained_w": trained,
        "global_step": step,
        "devices": [[n, d.replace("/device:CPU:0", "")] for n, d in devices],
        "loss_device": loss.device,
        "cluster": cluster.as_dict() == {"ps": ["localhost:%d" % ps_port], "worker": ["localhost:%d" % worker_port]},
        "jobs": sorted(cluster.jobs),
        "target_scheme": server.target.split("://")[0] if isinstance(server.target, str)
        else server.target.decode().split("://")[0],
    }
    tf.reset_default_graph()
    local = tf.train.Server.create_local_server()
    with tf.Session(local.target) as sess:
        out["local_server"] = float(sess.run(tf.constant(2.0) * 3.0))
    return out


if __name__ == "__main__":
    run_as_script(main, 6)
