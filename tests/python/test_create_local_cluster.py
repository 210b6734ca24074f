"""tf.test.create_local_cluster against TensorFlow 2.21 (tests/fixtures/distributed/create_local_cluster.json,
made by tools/make_create_local_cluster_fixtures.py): the servers it returns, their ServerDefs (ports
aside), and a graph run across the cluster they form."""

import inspect
import json
import pathlib
import re

import numpy as np
import pytest
from google.protobuf import text_format

import ferroflow as tf

FIXTURE = json.loads(
    (pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "distributed" / "create_local_cluster.json").read_text()
)


def _stop(*servers):
    for s in servers:
        s._native.stop()


def _ports_in_cluster_order(server_def):
    ports = []
    for job in sorted(server_def.cluster.job, key=lambda j: {"worker": 0, "ps": 1}[j.name]):
        for index in sorted(job.tasks):
            ports.append(job.tasks[index].rsplit(":", 1)[1])
    return ports


def _normalized(server_def, ports):
    text = text_format.MessageToString(server_def)
    return re.sub(r"localhost:(\d+)", lambda m: f"localhost:PORT{ports.index(m.group(1))}", text)


@pytest.mark.parametrize("case", FIXTURE["cases"], ids=lambda c: "{num_workers}w{num_ps}ps".format(**c["args"]))
def test_servers_and_server_defs_match_tensorflow(case):
    kwargs = {k: v for k, v in case["args"].items() if not k.endswith("_config")}
    for key in ("worker_config", "ps_config"):
        if key in case["args"]:
            kwargs[key] = text_format.Parse(case["args"][key], tf.ConfigProto())
    workers, ps = tf.test.create_local_cluster(**kwargs)
    try:
        assert (len(workers), len(ps)) == (case["num_worker_servers"], case["num_ps_servers"])
        assert all(isinstance(s, tf.train.Server) for s in workers + ps)
        ports = _ports_in_cluster_order((workers or ps)[0].server_def)
        assert len(set(ports)) == len(ports) == len(workers) + len(ps)
        assert [_normalized(s.server_def, ports) for s in workers] == case["worker_server_defs"]
        assert [_normalized(s.server_def, ports) for s in ps] == case["ps_server_defs"]
        # Each server is started and listens on its own task's port.
        assert [s.target for s in workers + ps] == [f"grpc://localhost:{p}" for p in ports]
    finally:
        _stop(*workers, *ps)


def test_a_graph_runs_across_the_cluster():
    run = FIXTURE["run"]
    workers, ps = tf.test.create_local_cluster(2, 1)
    try:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.get_variable("v", initializer=tf.constant(np.array(run["init"], np.float32)))
            with tf.device("/job:worker/task:1"):
                x = tf.placeholder(tf.float32, [])
                y = v * x
                update = tf.assign_add(v, y)
            with tf.Session(workers[0].target) as sess:
                sess.run(tf.global_variables_initializer())
                first = sess.run(y, {x: run["scale"]})
                sess.run(update, {x: run["scale"]})
            # Another worker's session sees the ps's variable, by name.
            with tf.Session(workers[1].target) as sess:
                after = sess.run(v)
        np.testing.assert_array_equal(first, np.array(run["y"], np.float32))
        np.testing.assert_array_equal(after, np.array(run["v_after_update"], np.float32))
        np.testing.assert_array_equal(after, np.float32(run["init"]) * (1 + np.float32(run["scale"])))
    finally:
        _stop(*workers, *ps)


def test_signature_is_tensorflows():
    assert list(inspect.signature(tf.test.create_local_cluster).parameters) == [
        "num_workers", "num_ps", "protocol", "worker_config", "ps_config"]
    assert tf.compat.v1.test.create_local_cluster is tf.test.create_local_cluster
