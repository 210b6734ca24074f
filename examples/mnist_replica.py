"""Between-graph replicated training of an MNIST-shaped classifier on a ps/worker cluster.

A TF1 parameter-server program written against ``tf.compat.v1`` only, so the same file runs under
ferroflow (``--backend ferroflow``, the default) and under TensorFlow (``--backend tf``). Every
task runs this program:

* a ``ps`` task starts a ``tf.train.Server`` and serves the variables (``server.join()``);
* each ``worker`` builds the whole graph, its variables placed on the ps tasks by
  ``tf.train.replica_device_setter``, and trains with
  ``tf.train.MonitoredTrainingSession(master=server.target, is_chief=...)``: the chief (the
  ``chief`` task, or worker 0 when the cluster has no chief job) initializes the variables,
  the others wait for them.

Training is asynchronous by default; ``--sync_replicas`` wraps the optimizer in
``tf.train.SyncReplicasOptimizer`` so that each update averages ``--replicas_to_aggregate``
gradients (default: one per worker). Every worker stops once the global step reaches
``--train_steps`` and prints its final loss and accuracy on a held-out set.

The cluster comes from flags or, without them, from ``TF_CONFIG`` (as Kubeflow's TFJob sets it)::

    # one ps and two workers on this machine, each in its own terminal
    python examples/mnist_replica.py --ps_hosts=localhost:2222 \\
        --worker_hosts=localhost:2223,localhost:2224 --job_name=ps --task_index=0
    python examples/mnist_replica.py --ps_hosts=localhost:2222 \\
        --worker_hosts=localhost:2223,localhost:2224 --job_name=worker --task_index=0
    python examples/mnist_replica.py --ps_hosts=localhost:2222 \\
        --worker_hosts=localhost:2223,localhost:2224 --job_name=worker --task_index=1

    # the same task from TF_CONFIG
    TF_CONFIG='{"cluster": {"ps": ["localhost:2222"], "worker": ["localhost:2223", "localhost:2224"]},
                "task": {"type": "worker", "index": 1}}' python examples/mnist_replica.py

With neither flags nor ``TF_CONFIG`` it trains in this one process (session target ``""``).

The data is synthetic and needs no download: 28x28 grey images in ten classes, each class a
fixed random stroke pattern plus per-image noise, generated from ``--data_seed`` the same way
on every task (each worker draws its own batches from it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

IMAGE_PIXELS = 28
NUM_CLASSES = 10
TRAIN_SIZE = 10000
TEST_SIZE = 2000


def synthetic_mnist(seed):
    """Deterministic MNIST-shaped data: ``(train_x, train_y, test_x, test_y)``, images in [0, 1] as float32."""
    rng = np.random.default_rng(seed)
    pixels = IMAGE_PIXELS * IMAGE_PIXELS
    prototypes = (rng.random((NUM_CLASSES, pixels)) < 0.1).astype(np.float32)

    def draw(n):
        labels = rng.integers(0, NUM_CLASSES, n)
        images = prototypes[labels] * rng.uniform(0.1, 0.6, (n, 1)) + rng.normal(0.0, 0.6, (n, pixels))
        return np.clip(images, 0.0, 1.0).astype(np.float32), labels.astype(np.int64)

    train_x, train_y = draw(TRAIN_SIZE)
    test_x, test_y = draw(TEST_SIZE)
    return train_x, train_y, test_x, test_y


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", choices=["ferroflow", "tf"], default="ferroflow",
                   help="run on ferroflow or on TensorFlow's tf.compat.v1 (default: %(default)s)")
    p.add_argument("--job_name", default=None, help='"ps" or "worker" (default: from TF_CONFIG)')
    p.add_argument("--task_index", type=int, default=None, help="index of this task in its job")
    p.add_argument("--ps_hosts", default=None, help="comma-separated host:port of the ps tasks")
    p.add_argument("--worker_hosts", default=None, help="comma-separated host:port of the worker tasks")
    p.add_argument("--sync_replicas", action="store_true", help="aggregate gradients with SyncReplicasOptimizer")
    p.add_argument("--replicas_to_aggregate", type=int, default=None,
                   help="gradients per update with --sync_replicas (default: the number of workers)")
    p.add_argument("--train_steps", type=int, default=200, help="global steps to train (default: %(default)s)")
    p.add_argument("--batch_size", type=int, default=100, help="images per worker step (default: %(default)s)")
    p.add_argument("--hidden_units", type=int, default=100, help="units of the hidden layer (default: %(default)s)")
    p.add_argument("--learning_rate", type=float, default=0.01, help="Adam's learning rate (default: %(default)s)")
    p.add_argument("--data_seed", type=int, default=1234, help="seed of the synthetic data (default: %(default)s)")
    p.add_argument("--log_every", type=int, default=50, help="print the loss every this many local steps")
    p.add_argument("--logdir", default=None, help="checkpoint directory of the chief (default: no checkpoints)")
    return p.parse_args(argv)


def resolve_cluster(args):
    """``(cluster dict or None, job_name, task_index)`` from the flags, else from TF_CONFIG."""
    if args.ps_hosts or args.worker_hosts or args.job_name:
        if not (args.ps_hosts and args.worker_hosts and args.job_name):
            raise SystemExit("mnist_replica: --ps_hosts, --worker_hosts and --job_name go together")
        cluster = {"ps": args.ps_hosts.split(","), "worker": args.worker_hosts.split(",")}
        return cluster, args.job_name, 0 if args.task_index is None else args.task_index
    tf_config = json.loads(os.environ.get("TF_CONFIG") or "{}")
    cluster = tf_config.get("cluster")
    if not cluster:
        return None, "worker", 0
    task = tf_config.get("task", {})
    if "type" not in task:
        raise SystemExit('mnist_replica: TF_CONFIG has a "cluster" but no "task": {"type": ..., "index": ...}')
    job_name = task["type"]
    task_index = int(task.get("index", 0)) if args.task_index is None else args.task_index
    if job_name == "evaluator":
        raise SystemExit("mnist_replica: an evaluator task has nothing to do in this example")
    return {job: hosts for job, hosts in cluster.items() if job != "evaluator"}, job_name, task_index


def is_chief_task(cluster, job_name, task_index):
    """Whether a task is the chief: the ``chief`` (or legacy ``master``) task, else worker 0 (tf.distribute's rule)."""
    chief_job = next((j for j in ("chief", "master") if j in cluster), None)
    if chief_job:
        return job_name == chief_job
    return job_name == "worker" and task_index == 0


def main(argv=None):
    args = parse_args(argv)
    if args.backend == "tf":
        import tensorflow.compat.v1 as tf
    else:
        import ferroflow.compat.v1 as tf
    tf.disable_v2_behavior()

    cluster, job_name, task_index = resolve_cluster(args)
    if cluster is None:
        server, master, worker_device, is_chief, num_workers, config = None, "", None, True, 1, None
    else:
        cluster_spec = tf.train.ClusterSpec(cluster)
        server = tf.train.Server(cluster_spec, job_name=job_name, task_index=task_index)
        if job_name == "ps":
            print(f"ps {task_index}: serving on {cluster_spec.task_address('ps', task_index)}", flush=True)
            server.join()
            return 0
        is_chief = is_chief_task(cluster, job_name, task_index)
        num_workers = sum(len(cluster.get(j, [])) for j in ("chief", "master", "worker"))
        worker_device = f"/job:{job_name}/task:{task_index}"
        master = server.target
        # Talk only to the ps tasks and this task: no waiting for the other workers.
        config = tf.ConfigProto(device_filters=["/job:ps", worker_device])

    name = f"{job_name} {task_index}"
    train_x, train_y, test_x, test_y = synthetic_mnist(args.data_seed)
    pixels = IMAGE_PIXELS * IMAGE_PIXELS
    tf.set_random_seed(args.data_seed)

    with tf.device(tf.train.replica_device_setter(worker_device=worker_device, cluster=cluster)):
        global_step = tf.train.get_or_create_global_step()
        x = tf.placeholder(tf.float32, [None, pixels], name="x")
        y = tf.placeholder(tf.int64, [None], name="y")
        hid_w = tf.Variable(tf.truncated_normal([pixels, args.hidden_units], stddev=1.0 / IMAGE_PIXELS), name="hid_w")
        hid_b = tf.Variable(tf.zeros([args.hidden_units]), name="hid_b")
        sm_w = tf.Variable(tf.truncated_normal([args.hidden_units, NUM_CLASSES],
                                               stddev=1.0 / np.sqrt(args.hidden_units)), name="sm_w")
        sm_b = tf.Variable(tf.zeros([NUM_CLASSES]), name="sm_b")
        hidden = tf.nn.relu(tf.matmul(x, hid_w) + hid_b)
        logits = tf.matmul(hidden, sm_w) + sm_b
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))

        opt = tf.train.AdamOptimizer(args.learning_rate)
        hooks = [tf.train.StopAtStepHook(last_step=args.train_steps)]
        if args.sync_replicas:
            replicas = args.replicas_to_aggregate or num_workers
            opt = tf.train.SyncReplicasOptimizer(opt, replicas_to_aggregate=replicas,
                                                 total_num_replicas=num_workers, name="mnist_sync_replicas")
            hooks.append(opt.make_session_run_hook(is_chief))
        train_op = opt.minimize(loss, global_step=global_step)

    final = {}

    class FinalEvaluation(tf.train.SessionRunHook):
        """Measures loss and accuracy on the held-out images when training ends."""

        def end(self, session):
            final["loss"], final["accuracy"], final["step"] = session.run(
                [loss, accuracy, global_step], {x: test_x, y: test_y})

    hooks.append(FinalEvaluation())
    mode = "sync" if args.sync_replicas else "async"
    print(f"{name}: {'chief, ' if is_chief else ''}{mode} training of {args.train_steps} global steps, "
          f"{num_workers} worker(s), master {master!r}", flush=True)

    rng = np.random.default_rng(args.data_seed + 1 + task_index)
    local_step, start = 0, time.time()
    with tf.train.MonitoredTrainingSession(master=master, is_chief=is_chief, checkpoint_dir=args.logdir,
                                           hooks=hooks, config=config, save_summaries_steps=None,
                                           save_summaries_secs=None, log_step_count_steps=None,
                                           stop_grace_period_secs=5) as sess:
        while not sess.should_stop():
            # In sync mode a worker that pushes a gradient after the last update would wait for a
            # token forever (TensorFlow's behaviour): look at the global step first.
            if args.sync_replicas and sess.run(global_step) >= args.train_steps:
                break
            batch = rng.integers(0, TRAIN_SIZE, args.batch_size)
            _, step, batch_loss = sess.run([train_op, global_step, loss], {x: train_x[batch], y: train_y[batch]})
            local_step += 1
            if local_step % args.log_every == 0:
                print(f"{name}: local step {local_step}, global step {step}, loss {batch_loss:.4f}", flush=True)
    elapsed = time.time() - start
    print(f"{name}: {local_step} local steps in {elapsed:.1f} s; global step {final.get('step')}", flush=True)
    if final:
        print(f"{name}: final loss {final['loss']:.4f}, accuracy {final['accuracy']:.4f} "
              f"on {TEST_SIZE} held-out images", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
