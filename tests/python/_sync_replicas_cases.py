"""SyncReplicasOptimizer schedules shared by the fixture generator (``tools/make_sync_replicas_fixtures.py``,
run under real TensorFlow) and ``test_sync_replicas.py`` (run under ferroflow).

Between-graph replication squeezed into one graph and one session: each replica is its own copy of the
model (a name scope ``replica_<i>``, its own placeholder and its own ``SyncReplicasOptimizer``, hence its
own ``sync_rep_local_step``) over the same shared variables and global step. The accumulators (shared name
``<var>:0/grad_accum``) and the token queue (shared name ``sync_token_q``) are then one resource each, as on
a parameter server. Replica 0 is the chief; its sync op (the chief queue runner's enqueue op) is run
directly, so a schedule is a fixed sequence of single-threaded steps and both frameworks give the same
result:

* ``("run", i, feed)``: replica ``i`` runs its train op (apply its gradients, take a token) and the token
  is recorded;
* ``("run_timeout", i, feed)``: the same with a 300 ms run timeout, expected to end in
  DeadlineExceededError because no token is left (its gradients are applied first);
* ``("sync",)``: the chief's sync op (take the mean gradients, update, hand out tokens);
* ``("sync_timeout",)``: the sync op with a 300 ms timeout, expected to end in DeadlineExceededError
  because fewer than ``replicas_to_aggregate`` fresh gradients are in.

After every step the state is recorded: the variables, the global step, every replica's local step, the
dense accumulator's count and the token queue's size. ``feed`` is ``{"x": [...]}`` (the dense gradient
of ``w``) and, for sparse cases, ``"ids"`` (rows of ``emb`` gathered; each row's gradient is ``y``).

No TensorFlow or ferroflow import here: every function takes the TF1-style module.
"""

from __future__ import annotations

import numpy as np

TIMEOUT_MS = 300

# name -> (parameters, schedule)
CASES = {
    # W=3 replicas, 2 aggregated, 1 backup: fresh and stale gradients, the backup's token, timeouts.
    "backup_dense": (
        dict(replicas=3, replicas_to_aggregate=2, total_num_replicas=3, lr=0.5, sparse=False, averages=False),
        [
            ("run", 0, {"x": [1.0, 2.0]}),
            ("run", 1, {"x": [4.0, -8.0]}),
            ("sync",),
            ("run", 2, {"x": [16.0, 16.0]}),      # tagged 0 < accumulator step 1: dropped
            ("run", 0, {"x": [32.0, 0.0]}),       # still tagged 0 (its token was 0): dropped
            ("run", 2, {"x": [2.0, 6.0]}),        # tagged 1: fresh
            ("sync_timeout",),                    # one fresh gradient of two
            ("run_timeout", 0, {"x": [6.0, 10.0]}),  # fresh, then no token left
            ("sync",),
            ("run", 1, {"x": [64.0, 64.0]}),      # tagged 0: dropped
            ("run", 1, {"x": [3.0, 1.0]}),        # tagged 2: fresh
            ("run", 0, {"x": [128.0, 1.0]}),      # tagged 1: dropped
            ("run_timeout", 0, {"x": [5.0, 7.0]}),  # tagged 2: fresh
            ("sync",),
            ("run", 2, {"x": [1.0, 1.0]}),        # tagged 1: dropped
            ("run", 2, {"x": [9.0, 3.0]}),        # tagged 3: fresh
        ],
    ),
    # W=2 replicas = replicas_to_aggregate, no backups.
    "no_backup_dense": (
        dict(replicas=2, replicas_to_aggregate=2, total_num_replicas=None, lr=0.25, sparse=False, averages=False),
        [
            ("run", 0, {"x": [2.0, 4.0]}),
            ("run", 1, {"x": [6.0, 8.0]}),
            ("sync",),
            ("run", 0, {"x": [1.0, 1.0]}),
            ("run", 1, {"x": [1.0, 3.0]}),
            ("run_timeout", 0, {"x": [4.0, 4.0]}),
            ("run_timeout", 1, {"x": [8.0, 0.0]}),
            ("sync",),
            ("run", 1, {"x": [2.0, 2.0]}),
        ],
    ),
    # One replica computing both gradients of each update (total_num_replicas < replicas_to_aggregate),
    # with a sparse gradient (tf.gather) and moving averages of the variables on the chief.
    "sparse_averages_one_replica": (
        dict(replicas=1, replicas_to_aggregate=2, total_num_replicas=1, lr=0.5, sparse=True, averages=True),
        [
            ("run", 0, {"x": [1.0, 2.0], "ids": [0, 2]}),
            ("run", 0, {"x": [3.0, 2.0], "ids": [2, 3]}),
            ("sync",),
            ("run", 0, {"x": [4.0, 4.0], "ids": [1]}),
            ("run", 0, {"x": [8.0, 0.0], "ids": [3, 1]}),  # rows unique within a gradient (see the test)
            ("run_timeout", 0, {"x": [0.0, 8.0], "ids": [0]}),
            ("sync",),
            ("run", 0, {"x": [2.0, 2.0], "ids": [4, 0]}),
        ],
    ),
}

W0 = [1.0, -1.0]
EMB0 = np.arange(10, dtype=np.float32).reshape(5, 2) / 4.0
Y = [0.5, 2.0]


def build(tf, replicas, replicas_to_aggregate, total_num_replicas, lr, sparse, averages):
    """The replicated model in the default graph: a dict of handles (see the module docs)."""
    gs = tf.train.get_or_create_global_step()
    w = tf.get_variable("w", initializer=tf.constant(W0, dtype=tf.float32))
    emb = tf.get_variable("emb", initializer=tf.constant(EMB0)) if sparse else None
    ema = tf.train.ExponentialMovingAverage(0.5) if averages else None
    reps = []
    for i in range(replicas):
        with tf.name_scope(f"replica_{i}"):
            x = tf.placeholder(tf.float32, [2], name="x")
            loss = tf.reduce_sum(w * x)
            ids = None
            if sparse:
                ids = tf.placeholder(tf.int32, [None], name="ids")
                loss = loss + tf.reduce_sum(tf.gather(emb, ids) * tf.constant(Y, dtype=tf.float32))
            # Only the chief averages: in a real cluster every worker's graph has its own copy.
            opt = tf.train.SyncReplicasOptimizer(
                tf.train.GradientDescentOptimizer(lr), replicas_to_aggregate=replicas_to_aggregate,
                total_num_replicas=total_num_replicas,
                variable_averages=ema if (averages and i == 0) else None,
                variables_to_average=([w, emb] if sparse else [w]) if (averages and i == 0) else None)
            train_op = opt.minimize(loss, global_step=gs)
        reps.append({"x": x, "ids": ids, "opt": opt, "train_op": train_op})
    chief = reps[0]["opt"]
    handles = {
        "gs": gs, "w": w, "emb": emb, "ema": ema, "replicas": reps,
        "sync_op": chief.get_chief_queue_runner().enqueue_ops[0],
        "init_tokens": chief.get_init_tokens_op(),
        "accum_count": chief._accumulator_list[0][0].num_accumulated(),
        "queue_size": chief._sync_token_queue.size(),
        "local_steps": [r["opt"]._local_step for r in reps],
    }
    if averages:
        handles["w_avg"] = ema.average(w)
    return handles


def _feed(rep, feed):
    out = {rep["x"]: np.asarray(feed["x"], np.float32)}
    if rep["ids"] is not None:
        out[rep["ids"]] = np.asarray(feed.get("ids", []), np.int32)
    return out


def _state(tf, sess, h):
    fetches = {"w": h["w"], "gs": h["gs"], "accum_count": h["accum_count"], "queue_size": h["queue_size"],
               "local_steps": h["local_steps"]}
    if h["emb"] is not None:
        fetches["emb"] = h["emb"]
    if "w_avg" in h:
        fetches["w_avg"] = h["w_avg"]
    values = sess.run(fetches)
    return {k: np.asarray(v).tolist() for k, v in values.items()}


def run_case(tf, name):
    """Runs case ``name`` in a fresh graph and session; returns the record of every step."""
    params, schedule = CASES[name]
    graph = tf.Graph()
    with graph.as_default():
        h = build(tf, **params)
        sess = tf.Session()
        try:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.local_variables_initializer())
            sess.run(h["replicas"][0]["opt"].chief_init_op)
            for rep in h["replicas"][1:]:
                sess.run(rep["opt"].local_step_init_op)
            sess.run(h["init_tokens"])
            records = [{"step": ["init"], "state": _state(tf, sess, h)}]
            timeout = tf.RunOptions(timeout_in_ms=TIMEOUT_MS)
            for step in schedule:
                kind = step[0]
                result = None
                if kind in ("run", "run_timeout"):
                    rep = h["replicas"][step[1]]
                    args = dict(feed_dict=_feed(rep, step[2]))
                    if kind == "run_timeout":
                        args["options"] = timeout
                    try:
                        result = int(sess.run(rep["train_op"], **args))
                    except tf.errors.OpError as e:
                        result = type(e).__name__
                elif kind in ("sync", "sync_timeout"):
                    args = {"options": timeout} if kind == "sync_timeout" else {}
                    try:
                        sess.run(h["sync_op"], **args)
                    except tf.errors.OpError as e:
                        result = type(e).__name__
                else:
                    raise ValueError(f"unknown step {step!r}")
                records.append({"step": [kind] + [s for s in step[1:2]], "result": result,
                                "state": _state(tf, sess, h)})
            return records
        finally:
            sess.close()


def structure(tf):
    """Placement and wiring of a SyncReplicasOptimizer graph under ``replica_device_setter`` (2 ps tasks),
    as plain data: the device of each op the optimizer adds that holds state or waits, the local
    variables, the token queue runner, the init-tokens ops for several ``num_tokens``."""
    graph = tf.Graph()
    with graph.as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=2, worker_device="/job:worker/task:1")):
            gs = tf.train.get_or_create_global_step()
            w = tf.get_variable("w", initializer=tf.constant(W0, dtype=tf.float32))
            emb = tf.get_variable("emb", initializer=tf.constant(EMB0))
            b = tf.get_variable("b", initializer=tf.constant(2.0))
            x = tf.placeholder(tf.float32, [2], name="x")
            ids = tf.placeholder(tf.int32, [None], name="ids")
            loss = tf.reduce_sum(w * x) + tf.reduce_sum(tf.gather(emb, ids)) + b * 0.0
            opt = tf.train.SyncReplicasOptimizer(tf.train.AdamOptimizer(0.1), replicas_to_aggregate=2,
                                                 total_num_replicas=3)
            train_op = opt.minimize(loss, global_step=gs)
            tokens = {str(n): opt.get_init_tokens_op(n) for n in (-1, 0, 5)}
        stateful = ("ConditionalAccumulator", "ResourceConditionalAccumulator", "SparseConditionalAccumulator",
                    "FIFOQueueV2", "QueueDequeueV2", "QueueEnqueueManyV2", "VariableV2",
                    "ResourceAccumulatorApplyGradient", "ResourceAccumulatorTakeGradient",
                    "SparseAccumulatorApplyGradient", "SparseAccumulatorTakeGradient",
                    "ResourceAccumulatorSetGlobalStep", "AccumulatorSetGlobalStep")
        devices = {}
        shared_names = {}
        for op in graph.get_operations():
            if op.type in stateful:
                devices[op.name] = [op.type, op.device]
                if op.type in ("ResourceConditionalAccumulator", "SparseConditionalAccumulator", "FIFOQueueV2"):
                    shared_names[op.name] = op.get_attr("shared_name")
                    if isinstance(shared_names[op.name], bytes):
                        shared_names[op.name] = shared_names[op.name].decode()
        qr = opt.get_chief_queue_runner()
        return {
            "devices": devices,
            "shared_names": shared_names,
            "local_variables": [v.op.name for v in tf.local_variables()],
            "global_variables": [v.op.name for v in tf.global_variables()],
            "train_op": [train_op.op.type, train_op.dtype.name],
            "local_step_device": opt._local_step.device,
            "queue_runner": [qr.queue.name, len(qr.enqueue_ops)],
            "init_tokens": {k: [t.type, t.name if t.type == "NoOp" else None] for k, t in tokens.items()},
            "chief_init_inputs": sorted(i.type for i in opt.chief_init_op.control_inputs),
            "ready_for_local_init": opt.ready_for_local_init_op.op.name.split("/")[0],
            "variables": [v.op.name for v in opt.variables()],
            "slot_names": sorted(opt.get_slot_names()),
            "slot_m_of_w": opt.get_slot(w, "m").op.name,
        }


def errors(tf):
    """The errors TF raises for misuse: ``{what: [exception class name, message]}``."""
    out = {}

    def record(key, fn):
        try:
            fn()
            out[key] = None
        except Exception as e:  # noqa: BLE001 - the class name is what gets compared
            out[key] = [type(e).__name__, str(e)]

    graph = tf.Graph()
    with graph.as_default():
        w = tf.get_variable("w", initializer=tf.constant(W0, dtype=tf.float32))
        gs = tf.train.get_or_create_global_step()
        opt = tf.train.SyncReplicasOptimizer(tf.train.GradientDescentOptimizer(0.1), replicas_to_aggregate=3,
                                             total_num_replicas=1)
        grads = opt.compute_gradients(tf.reduce_sum(w))
        record("queue_runner_before_apply", opt.get_chief_queue_runner)
        record("init_tokens_before_apply", opt.get_init_tokens_op)
        record("hook_before_apply", lambda: opt.make_session_run_hook(True).begin())
        record("no_global_step", lambda: opt.apply_gradients(grads))
        record("no_variables", lambda: opt.apply_gradients([], global_step=gs))
        opt.apply_gradients(grads, global_step=gs)
        record("too_few_tokens", lambda: opt.get_init_tokens_op(num_tokens=1))
        record("enough_tokens", lambda: opt.get_init_tokens_op(num_tokens=2))
    return out
