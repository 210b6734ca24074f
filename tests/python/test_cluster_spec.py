"""tf.train.ClusterSpec, the ServerDef tf.train.Server runs, tf.DeviceSpec and Server basics.

The oracle is TensorFlow 2.21 (tests/fixtures/distributed/{cluster_spec,server_def,device_spec}.json,
written by tools/make_distributed_fixtures.py): as_dict, jobs, per-job lookups, repr, ClusterDef
bytes, equality, the errors and messages for bad input, ServerDef bytes, device-name parsing and merging.
"""

import ast
import json
import pathlib

import pytest

import ferroflow as tf
import ferroflow.compat.v1 as tf_v1
from ferroflow.core.protobuf import tensorflow_server_pb2
from ferroflow.training import server_lib

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "distributed"
CLUSTER = json.loads((FIXTURES / "cluster_spec.json").read_text())
SERVER = json.loads((FIXTURES / "server_def.json").read_text())
DEVICES = json.loads((FIXTURES / "device_spec.json").read_text())


def _hex(message):
    return message.SerializeToString(deterministic=True).hex()


@pytest.mark.parametrize("case", CLUSTER["cases"], ids=lambda c: c["input"][:40])
def test_cluster_spec_matches_tensorflow(case):
    spec = tf.train.ClusterSpec(ast.literal_eval(case["input"]))
    assert repr(spec.as_dict()) == case["as_dict"]
    assert repr(spec.jobs) == case["jobs"]
    assert repr(spec) == case["repr"]
    assert bool(spec) is case["bool"]
    assert _hex(spec.as_cluster_def()) == case["cluster_def"]
    assert isinstance(spec.as_cluster_def(), tf.train.ClusterDef)
    for job_repr, expected in case["per_job"].items():
        job = ast.literal_eval(job_repr)
        assert spec.num_tasks(job) == expected["num_tasks"]
        assert spec.task_indices(job) == expected["task_indices"]
        if "job_tasks" in expected:
            tasks = spec.job_tasks(job)
            assert repr(tasks) == expected["job_tasks"]
            for i in expected["task_indices"]:
                assert spec.task_address(job, i) == tasks[i]
    assert repr(tf.train.ClusterSpec(spec.as_cluster_def()).as_dict()) == case["roundtrip_def"]
    assert repr(tf.train.ClusterSpec(spec).as_dict()) == case["roundtrip_spec"]


def test_cluster_spec_from_tensorflow_bytes():
    for case in CLUSTER["cases"]:
        cluster_def = tf.train.ClusterDef.FromString(bytes.fromhex(case["cluster_def"]))
        spec = tf.train.ClusterSpec(cluster_def)
        assert _hex(spec.as_cluster_def()) == case["cluster_def"]
        assert repr(spec.as_dict()) == case["roundtrip_def"]


@pytest.mark.parametrize("case", CLUSTER["bad_inputs"], ids=lambda c: c["input"][:40])
def test_cluster_spec_rejects_what_tensorflow_rejects(case):
    with pytest.raises(Exception) as info:
        tf.train.ClusterSpec(ast.literal_eval(case["input"]))
    assert type(info.value).__name__ == case["type"]
    assert str(info.value) == case["message"]


def test_cluster_spec_lookup_errors():
    spec = tf.train.ClusterSpec({"worker": {1: "w1:2222"}, "ps": ["ps0:2222"]})
    calls = {
        "unknown_job_num_tasks": lambda: spec.num_tasks("chief"),
        "unknown_job_task_indices": lambda: spec.task_indices("chief"),
        "unknown_job_job_tasks": lambda: spec.job_tasks("chief"),
        "unknown_job_task_address": lambda: spec.task_address("chief", 0),
        "missing_task": lambda: spec.task_address("worker", 0),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError) as info:
            call()
        assert str(info.value) == CLUSTER["lookup_errors"][name]["message"], name


def test_cluster_spec_equality():
    eq = CLUSTER["equality"]
    assert (tf.train.ClusterSpec({"a": ["x:1"]}) == tf.train.ClusterSpec({"a": {0: "x:1"}})) is eq["same_dict_and_list"]
    assert (tf.train.ClusterSpec({"a": ["x:1"]}) != tf.train.ClusterSpec({"a": ["x:2"]})) is eq["different"]
    assert (tf.train.ClusterSpec({"a": ["x:1"]}) == {"a": {0: "x:1"}}) is eq["with_dict_of_dicts"]
    assert (tf.train.ClusterSpec({"a": ["x:1"]}) == {"a": ["x:1"]}) is eq["with_dict_of_lists"]
    by_def = tf.train.ClusterSpec(tf.train.ClusterSpec({"b": ["y:1"], "a": ["x:1"]}).as_cluster_def())
    assert (by_def == tf.train.ClusterSpec({"a": ["x:1"], "b": ["y:1"]})) is eq["def_vs_dict"]
    with pytest.raises(TypeError):
        hash(tf.train.ClusterSpec({}))


def test_cluster_spec_copy_is_independent():
    spec = tf.train.ClusterSpec({"ps": ["ps0:1"]})
    copy = tf.train.ClusterSpec(spec)
    copy.as_cluster_def().job[0].tasks[0] = "changed:1"
    assert spec.task_address("ps", 0) == "ps0:1"


@pytest.mark.parametrize("case", SERVER["good"], ids=lambda c: str(c.get("cluster", "from_server_def"))[:40])
def test_server_def_matches_tensorflow(case):
    if "from_server_def" in case:
        base = tensorflow_server_pb2.ServerDef.FromString(bytes.fromhex(case["from_server_def"]))
        config = tf.ConfigProto.FromString(bytes.fromhex(case["config"]))
        got = server_lib._make_server_def(base, None, case["task_index"], case["protocol"], config)
    else:
        got = server_lib._make_server_def(ast.literal_eval(case["cluster"]), case["job_name"], case["task_index"],
                                          case["protocol"], None)
    assert _hex(got) == case["server_def"]


@pytest.mark.parametrize("case", SERVER["bad"], ids=lambda c: c["message"][:30])
def test_server_rejects_what_tensorflow_rejects(case):
    with pytest.raises(Exception) as info:
        tf.train.Server(ast.literal_eval(case["cluster"]), job_name=case["job_name"], task_index=case["task_index"],
                        protocol=case["protocol"])
    assert type(info.value).__name__ == case["type"]
    assert str(info.value) == case["message"]


def test_server_runs_its_server_def():
    cluster = tf.train.ClusterSpec({"ps": ["localhost:2222"], "worker": ["localhost:2223"]})
    server = tf.train.Server(cluster, job_name="ps", task_index=0, start=False)
    assert server.server_def == server_lib._make_server_def(cluster, "ps", 0, None, None)
    with pytest.raises(tf.errors.FailedPreconditionError, match="not started"):
        _ = server.target
    local = tf.train.Server.create_local_server()
    assert local.server_def.job_name == "localhost"
    port = local.server_def.cluster.job[0].tasks[0].rsplit(":", 1)[1]
    assert local.target == f"grpc://localhost:{port}"
    with tf.Graph().as_default(), tf.Session(local.target) as sess:
        assert sess.run(tf.constant(3) * 2) == 6
    local._native.stop()
    assert tf.distribute.Server is tf.train.Server
    with pytest.raises(tf.errors.UnimplementedError, match="protocol 'grpc\\+verbs'"):
        tf.train.Server(cluster, job_name="ps", task_index=0, protocol="grpc+verbs")


@pytest.mark.parametrize("case", DEVICES["parsed"], ids=lambda c: c["input"] or "empty")
def test_device_spec_parse_matches_tensorflow(case):
    d = tf.DeviceSpec.from_string(case["input"])
    assert d.to_string() == case["to_string"]
    assert (d.job, d.replica, d.task, d.device_type, d.device_index) == (
        case["job"], case["replica"], case["task"], case["device_type"], case["device_index"])
    assert tf.DeviceSpec.from_string(d.to_string()) == d


@pytest.mark.parametrize("case", DEVICES["merges"], ids=lambda c: f"{c['base']}+{c['over']}")
def test_device_spec_merge_matches_tensorflow(case):
    merged = tf.DeviceSpec.from_string(case["base"]).make_merged_spec(tf.DeviceSpec.from_string(case["over"]))
    assert merged.to_string() == case["merged"]


@pytest.mark.parametrize("case", DEVICES["bad"], ids=lambda c: c["input"])
def test_device_spec_rejects_what_tensorflow_rejects(case):
    with pytest.raises(ValueError) as info:
        tf.DeviceSpec.from_string(case["input"])
    assert str(info.value) == case["message"]


def test_device_spec_constructor_and_mutation():
    for case in DEVICES["constructor"]:
        assert tf_v1.DeviceSpec(**ast.literal_eval(case["kwargs"])).to_string() == case["to_string"]
    extras = DEVICES["extras"]
    d = tf.DeviceSpec.from_string("/job:ps/task:1")
    d.merge_from(tf.DeviceSpec(device_type="GPU", device_index=0))
    assert d.to_string() == extras["merge_from"]
    replaced = tf.DeviceSpec.from_string("/job:ps/task:1/device:CPU:0").replace(task=4, device_type=None)
    assert replaced.to_string() == extras["replace"]
    assert tf.DeviceSpec(job="old", task=3).parse_from_string("/device:GPU:1").to_string() == extras["parse_from_string"]
    d.task = 7
    assert d.to_string() == "/job:ps/task:7/device:GPU:0"
    assert hash(tf.DeviceSpec.from_string("/cpu:0")) == hash(tf.DeviceSpec.from_string("/device:CPU:0"))


def test_tf_device_canonicalizes_strings():
    for spec, expected in DEVICES["extras"]["tf_device_canonical"].items():
        with tf.Graph().as_default():
            with tf.device(spec):
                assert tf.constant(1.0).op.device == expected
    with tf.Graph().as_default():
        with tf.device(tf.DeviceSpec(job="ps", task=2)):
            assert tf.constant(1.0).op.device == "/job:ps/task:2"
