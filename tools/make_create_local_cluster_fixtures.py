"""Write tests/fixtures/distributed/create_local_cluster.json: what TensorFlow 2.21's
``tf.compat.v1.test.create_local_cluster`` returns and how its servers behave.

Run from the repository root with the TensorFlow virtualenv (it needs ``portpicker``, which TF's
version imports; the tests never need TensorFlow):

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_create_local_cluster_fixtures.py

Per case (the call's arguments, configs as ConfigProto text): how many servers of each kind came
back, and each server's ``ServerDef`` as protobuf text with every port replaced by ``PORT<i>``, ``i``
numbering the distinct ports in the order the cluster lists them (worker tasks, then ps tasks), so a
test can compare ferroflow's ServerDefs whatever ports it picked. ``run`` records a small graph run
across the cluster (a variable on ``/job:ps/task:0`` read by a worker task): the feeds and fetches.
"""

import json
import pathlib
import re

import numpy as np
import tensorflow as tf
from google.protobuf import text_format

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "distributed"
v1 = tf.compat.v1

CASES = [
    {"num_workers": 1, "num_ps": 0},
    {"num_workers": 2, "num_ps": 1, "worker_config": "intra_op_parallelism_threads: 2"},
    {"num_workers": 1, "num_ps": 2, "ps_config": "allow_soft_placement: true", "protocol": "grpc"},
    {"num_workers": 0, "num_ps": 1},
]


def _ports_in_cluster_order(server_def):
    ports = []
    for job in sorted(server_def.cluster.job, key=lambda j: {"worker": 0, "ps": 1}[j.name]):
        for index in sorted(job.tasks):
            ports.append(job.tasks[index].rsplit(":", 1)[1])
    return ports


def _normalized(server_def, ports):
    text = text_format.MessageToString(server_def)
    return re.sub(r"localhost:(\d+)", lambda m: f"localhost:PORT{ports.index(m.group(1))}", text)


def main():
    v1.disable_eager_execution()
    cases = []
    for case in CASES:
        kwargs = {k: v for k, v in case.items() if not k.endswith("_config")}
        for key in ("worker_config", "ps_config"):
            if key in case:
                kwargs[key] = text_format.Parse(case[key], v1.ConfigProto())
        workers, ps = v1.test.create_local_cluster(**kwargs)
        first = (workers or ps)[0].server_def
        ports = _ports_in_cluster_order(first)
        cases.append({
            "args": case,
            "num_worker_servers": len(workers),
            "num_ps_servers": len(ps),
            "worker_server_defs": [_normalized(s.server_def, ports) for s in workers],
            "ps_server_defs": [_normalized(s.server_def, ports) for s in ps],
            "targets_are_localhost": all(s.target.startswith("grpc://localhost:") for s in workers + ps),
        })

    workers, ps = v1.test.create_local_cluster(2, 1)
    init = np.array([1.0, 2.0, 3.0], np.float32)
    scale = np.float32(2.5)
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            v = v1.get_variable("v", initializer=tf.constant(init))
        with tf.device("/job:worker/task:1"):
            x = v1.placeholder(tf.float32, [])
            y = v * x
            update = v1.assign_add(v, y)
        with v1.Session(workers[0].target) as sess:
            sess.run(v1.global_variables_initializer())
            first = sess.run(y, {x: scale})
            sess.run(update, {x: scale})
        with v1.Session(workers[1].target) as sess:
            after = sess.run(v)
    run = {"init": init.tolist(), "scale": float(scale), "y": first.tolist(), "v_after_update": after.tolist()}

    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "create_local_cluster.json"
    path.write_text(json.dumps({"tensorflow": tf.__version__, "cases": cases, "run": run}, indent=1) + "\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
