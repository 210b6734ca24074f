"""One worker process of a SyncReplicasOptimizer cluster, for test_distributed_sync.py.

Run as ``python tests/python/_sync_worker.py '<json>'``; the JSON holds:

* ``cluster`` (``{"ps": [...], "worker": [...]}``), ``index`` (this worker; 0 is the chief);
* ``replicas_to_aggregate``, ``total_num_replicas``, ``runs`` (the most train runs of any worker);
* ``target``: stop once the local step (the token of the last run: the global step it was made at)
  reaches this, so no gradient is pushed after the last update;
* ``log``: a file this worker appends one JSON line to per run, ``{"k", "tag", "token"}`` (``tag`` is
  the local step the gradient was computed at), then ``{"done": ...}`` or ``{"error": ...}``;
* optional ``park_at``: after the run whose token reaches it, write ``{"parked": token}`` and sleep
  (holding that token, for the test to kill this process); ``sleep_s``: a pause before every run;
  ``timeout_ms``: the session's ``operation_timeout_in_ms``; ``fast_wait``: the non-chief's
  ``wait_for_session`` checks every this many seconds instead of 30; ``barrier``: logs of workers that
  must all have a session before this one trains; ``num_tokens``: the chief's initial tokens;
  ``gate``: ``[path, text]``: before opening its MonitoredTrainingSession, run one op on the ps (waiting
  for it to come up), then wait until the file at ``path`` has a line containing ``text``;
  ``linger_for``: after training, keep the session (and this task's server) until the log at this path
  says ``done`` (the chief's, so that its goodbye to the cluster finds this task up).

Besides the runs, the log gets ``{"waiting": ...}`` each time ``wait_for_session`` finds the model not
ready, ``{"session": ...}`` once the MonitoredTrainingSession is open, ``{"trained": ...}`` after the last
run (before the session closes).

The model: ``w`` (zeros, ``runs * num_workers`` floats) on the ps, loss ``sum(w * x)`` with ``x`` one-hot
at ``index * runs + k`` on the worker's ``k``-th run, so every gradient is a distinct one-hot vector and
a mean of gradients says which ones it averaged. The wrapped optimizer is plain gradient descent with
learning rate 1, and each update also puts ``(global step after the update, the mean gradient of w)``
into a queue on the ps (``shared_name="recorded"``), read by the test afterwards.
"""

import json
import logging
import os
import sys
import time

import numpy as np

import ferroflow.compat.v1 as tf
from ferroflow.training import monitored_session


class _Recording:
    """Wraps an optimizer: each aggregated update also records the new global step and w's mean gradient."""

    def __init__(self, inner, queue):
        self._inner = inner
        self._queue = queue

    def compute_gradients(self, *args, **kwargs):
        return self._inner.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        grads_and_vars = list(grads_and_vars)
        update = self._inner.apply_gradients(grads_and_vars, global_step)
        with tf.control_dependencies([update]):
            record = self._queue.enqueue([tf.identity(global_step), tf.identity(grads_and_vars[0][0])])
        return tf.group(update, record)


def build(cluster, index, replicas_to_aggregate, total_num_replicas, dim):
    """The replica's graph: ``(x, train_op, local_step, sync_optimizer)``."""
    worker_device = f"/job:worker/task:{index}"
    with tf.device(tf.train.replica_device_setter(worker_device=worker_device, cluster=cluster)):
        gs = tf.train.get_or_create_global_step()
        w = tf.get_variable("w", initializer=tf.zeros([dim]))
        with tf.device("/job:ps/task:0"):
            recorded = tf.FIFOQueue(-1, [tf.int64, tf.float32], shapes=[[], [dim]], name="recorded",
                                    shared_name="recorded")
        x = tf.placeholder(tf.float32, [dim], name="x")
        opt = tf.train.SyncReplicasOptimizer(
            _Recording(tf.train.GradientDescentOptimizer(1.0), recorded), replicas_to_aggregate,
            total_num_replicas=total_num_replicas)
        train_op = opt.minimize(tf.reduce_sum(w * x), global_step=gs)
    return x, train_op, opt._local_step, opt


def _fast_wait(seconds):
    """Makes the session managers of MonitoredTrainingSession check readiness every ``seconds``."""
    make = monitored_session._session_manager_for

    def patched(scaffold):
        manager = make(scaffold)
        manager._recovery_wait_secs = seconds
        return manager

    monitored_session._session_manager_for = patched


def _barrier(logs, timeout=30.0):
    """Waits until every log in ``logs`` says its worker has a session."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        ready = 0
        for path in logs:
            try:
                with open(path) as f:
                    ready += any('"session"' in line for line in f)
            except OSError:
                pass
        if ready == len(logs):
            return
        time.sleep(0.02)
    raise RuntimeError(f"barrier: not every worker got a session within {timeout} s")


class _LogWaits(logging.Handler):
    """Copies the session manager's "waiting for the model" messages into the worker's log."""

    def __init__(self, write):
        super().__init__(logging.INFO)
        self._write = write

    def emit(self, record):
        if record.getMessage().startswith("Waiting for model to be ready"):
            self._write(waiting=record.getMessage()[:300], t=time.time())


def _wait_for_line(path, text, timeout=30.0):
    """Waits until the file at ``path`` has a line containing ``text``."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with open(path) as f:
                if any(text in line for line in f):
                    return
        except OSError:
            pass
        time.sleep(0.02)
    raise RuntimeError(f"no line with {text!r} in {path} within {timeout} s")


def main(spec):
    cluster, index = spec["cluster"], spec["index"]
    runs, target = spec["runs"], spec["target"]
    dim = runs * len(cluster["worker"])
    is_chief = index == 0
    log = open(spec["log"], "a")  # noqa: SIM115 - kept open for the whole run

    def write(**record):
        log.write(json.dumps(record) + "\n")
        log.flush()

    if spec.get("fast_wait"):
        _fast_wait(spec["fast_wait"])
    manager_log = logging.getLogger("ferroflow.training.session_manager")
    manager_log.setLevel(logging.INFO)
    manager_log.addHandler(_LogWaits(write))
    server = tf.train.Server(tf.train.ClusterSpec(cluster), job_name="worker", task_index=index)
    x, train_op, local_step, opt = build(cluster, index, spec["replicas_to_aggregate"],
                                         spec["total_num_replicas"], dim)
    config = tf.ConfigProto(device_filters=["/job:ps", f"/job:worker/task:{index}"],
                            operation_timeout_in_ms=spec.get("timeout_ms", 0))
    hooks = [opt.make_session_run_hook(is_chief, num_tokens=spec.get("num_tokens", -1))]
    write(started=time.time())
    try:
        if spec.get("gate"):
            # A run on the ps first, which waits for the ps to come up (the connection retries); then
            # wait until another worker's log has the line given.
            with tf.Session(server.target, config=config) as probe:
                initialized = probe.run(tf.is_variable_initialized(tf.train.get_global_step()))
            write(ps_answered=bool(initialized), t=time.time())
            _wait_for_line(*spec["gate"])
        with tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief, hooks=hooks, config=config,
                                               save_summaries_steps=None, save_summaries_secs=None,
                                               save_checkpoint_secs=None, log_step_count_steps=None,
                                               stop_grace_period_secs=0.1) as sess:
            write(session=time.time())
            _barrier(spec.get("barrier", ()))
            raw = sess._tf_sess()
            for k in range(runs):
                if spec.get("sleep_s"):
                    time.sleep(spec["sleep_s"])
                tag = int(raw.run(local_step))
                if tag >= target:
                    break  # the last update is made: a gradient now would wait for a token forever
                onehot = np.zeros(dim, np.float32)
                onehot[index * runs + k] = 1.0
                token = int(sess.run(train_op, {x: onehot}))
                write(k=k, tag=tag, token=token, t=time.time())
                if spec.get("park_at") is not None and token >= spec["park_at"]:
                    write(parked=token)
                    time.sleep(600)
                if token >= target:
                    break
            write(trained=True, t=time.time())
            if spec.get("linger_for"):
                _wait_for_line(spec["linger_for"], '"done"')
    except tf.errors.OpError as e:
        write(error=type(e).__name__, message=str(e)[:500], t=time.time())
        log.close()
        os._exit(3)
    write(done=True, t=time.time())
    log.close()
    # The chief's queue-runner thread may still wait in take_grad on the ps: do not wait for it.
    os._exit(0)

if __name__ == "__main__":
    main(json.loads(sys.argv[1]))
