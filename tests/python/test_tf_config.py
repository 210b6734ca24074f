"""TF_CONFIG: tf.distribute.cluster_resolver (TFConfigClusterResolver, SimpleClusterResolver,
UnionResolver) against TensorFlow 2.21, and ferroflow's Estimator-style TFConfig.

tests/fixtures/distributed/tf_config.json (tools/make_distributed_fixtures.py) holds, per TF_CONFIG
value (the spec's examples: generic chief/worker/ps/evaluator, Kubeflow TFJob, a sparse TFJob
cluster, SageMaker's master/ps/worker, no chief, no rpc_layer, one task, session_master, none),
what TensorFlow's TFConfigClusterResolver returned. TFConfig's expectations are the TF1 Estimator
RunConfig rules (the spec's section 1.2 with its worked example), written out below.
"""

import json
import pathlib

import pytest

import ferroflow as tf
import ferroflow.compat.v1 as tf_v1
from ferroflow.distribute.run_config import TFConfig

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "distributed"
RESOLVED = json.loads((FIXTURES / "tf_config.json").read_text())
CASES = sorted(k for k, v in RESOLVED.items() if isinstance(v, dict) and "tf_config" in v)
resolvers = tf.distribute.cluster_resolver


@pytest.fixture
def tf_config(monkeypatch):
    def set_config(value):
        monkeypatch.setenv("TF_CONFIG", value if isinstance(value, str) else json.dumps(value))

    return set_config


@pytest.mark.parametrize("name", CASES)
def test_tf_config_resolver_matches_tensorflow(name, tf_config):
    case = RESOLVED[name]
    tf_config(case["tf_config"])
    r = resolvers.TFConfigClusterResolver()
    spec = r.cluster_spec()
    assert repr(spec.as_dict()) == case["as_dict"]
    assert spec.jobs == case["jobs"]
    assert spec.as_cluster_def().SerializeToString(deterministic=True).hex() == case["cluster_def"]
    assert (r.task_type, r.task_id, r.rpc_layer, r.environment) == (
        case["task_type"], case["task_id"], case["rpc_layer"], case["environment"])
    assert r.master() == case["master"]
    assert r.master(rpc_layer="grpc+verbs") == case["master_rpc_override"]
    if "master_ps0" in case:
        assert r.master("ps", 0) == case["master_ps0"]


def test_constructor_overrides_tf_config(tf_config):
    tf_config(RESOLVED["generic_worker1"]["tf_config"])
    r = resolvers.TFConfigClusterResolver(task_type="chief", task_id=0, rpc_layer="http")
    expected = RESOLVED["constructor_overrides"]
    assert (r.task_type, r.task_id, r.rpc_layer, r.master()) == (
        expected["task_type"], expected["task_id"], expected["rpc_layer"], expected["master"])
    r.task_id = 5
    assert r.task_id == 5


def test_tf_config_is_read_on_every_call(tf_config, monkeypatch):
    r = resolvers.TFConfigClusterResolver()
    tf_config({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 0}})
    assert r.master() == "a:1"
    tf_config({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "worker", "index": 1}})
    assert r.master() == "b:1"
    monkeypatch.delenv("TF_CONFIG")
    assert r.cluster_spec().as_dict() == {} and r.master() == "" and r.task_type is None
    tf_config("")
    assert r.master() == ""


def test_bad_tf_config_is_named(tf_config):
    tf_config("{not json")
    with pytest.raises(ValueError, match="TF_CONFIG is not valid JSON"):
        resolvers.TFConfigClusterResolver().cluster_spec()
    tf_config("[1, 2]")
    with pytest.raises(ValueError, match="TF_CONFIG must be a JSON object"):
        resolvers.TFConfigClusterResolver().master()
    tf_config({"cluster": {"worker": ["a:1", "b:1"]}, "task": {"type": "ps", "index": 0}})
    with pytest.raises(ValueError, match="No such job in cluster: 'ps'"):
        resolvers.TFConfigClusterResolver().master()


def test_num_accelerators(tf_config):
    tf_config({})
    assert dict(resolvers.TFConfigClusterResolver().num_accelerators()) == RESOLVED["local_num_accelerators"]
    tf_config(RESOLVED["generic_worker1"]["tf_config"])
    with pytest.raises(tf.errors.UnimplementedError, match="distributed server"):
        resolvers.TFConfigClusterResolver().num_accelerators()


def test_simple_and_union_resolvers():
    spec = tf.train.ClusterSpec({"worker": ["w0:1", "w1:1"], "ps": {2: "p2:1"}})
    simple = resolvers.SimpleClusterResolver(spec, master="grpc://w0:1", task_type="worker", task_id=1,
                                             num_accelerators={"GPU": 2}, rpc_layer="grpc")
    assert simple.cluster_spec() is spec
    assert simple.master() == "grpc://grpc://w0:1"  # TensorFlow prefixes the rpc layer even here
    assert simple.master("worker", 1) == "grpc://w1:1"
    assert simple.master("ps", 2, rpc_layer="http") == "http://p2:1"
    assert (simple.task_type, simple.task_id, simple.num_accelerators()) == ("worker", 1, {"GPU": 2})
    with pytest.raises(TypeError, match="cluster_spec must be a `tf.train.ClusterSpec`."):
        resolvers.SimpleClusterResolver({"worker": ["w0:1"]})
    with pytest.raises(TypeError, match="master must be a string."):
        resolvers.SimpleClusterResolver(spec, master=None)
    other = resolvers.SimpleClusterResolver(tf.train.ClusterSpec({"worker": ["w2:1"], "ps": {0: "p0:1"}}))
    union = resolvers.UnionResolver(simple, other)
    assert union.cluster_spec().as_dict() == {"worker": ["w0:1", "w1:1", "w2:1"], "ps": {0: "p0:1", 2: "p2:1"}}
    assert union.task_type == "worker" and union.rpc_layer == "grpc"
    clash = resolvers.SimpleClusterResolver(tf.train.ClusterSpec({"ps": {2: "x:1"}}))
    with pytest.raises(KeyError, match="Duplicate keys"):
        resolvers.UnionResolver(simple, clash).cluster_spec()
    with pytest.raises(TypeError):
        resolvers.ClusterResolver()
    assert tf_v1.distribute.cluster_resolver.TFConfigClusterResolver is resolvers.TFConfigClusterResolver


SPEC_CLUSTER = {"chief": ["c:1"], "worker": ["w0:1", "w1:1", "w2:1"], "ps": ["p0:1", "p1:1"],
                "evaluator": ["e:1"]}


@pytest.mark.parametrize("task, expected", [
    ({"type": "chief", "index": 0},
     dict(master="grpc://c:1", is_chief=True, global_id_in_cluster=0, device_filters=["/job:ps", "/job:chief"])),
    ({"type": "worker", "index": 2},
     dict(master="grpc://w2:1", is_chief=False, global_id_in_cluster=3,
          device_filters=["/job:ps", "/job:worker/task:2"])),
    ({"type": "ps", "index": 1},
     dict(master="grpc://p1:1", is_chief=False, global_id_in_cluster=5,
          device_filters=["/job:ps", "/job:worker", "/job:master"])),
])
def test_estimator_style_derived_values(task, expected):
    config = TFConfig({"cluster": SPEC_CLUSTER, "task": task})
    for key, value in expected.items():
        assert getattr(config, key) == value, key
    assert (config.num_ps_replicas, config.num_worker_replicas) == (2, 4)
    assert "evaluator" not in config.cluster_spec.jobs


def test_estimator_style_evaluator_local_and_errors():
    evaluator = TFConfig({"cluster": SPEC_CLUSTER, "task": {"type": "evaluator", "index": 0},
                          "eval_session_master": "grpc://e:1"})
    assert (evaluator.cluster_spec.as_dict(), evaluator.master, evaluator.is_chief) == ({}, "grpc://e:1", False)
    assert (evaluator.num_ps_replicas, evaluator.num_worker_replicas, evaluator.global_id_in_cluster) == (0, 0, None)
    local = TFConfig.from_env({})
    assert (local.task_type, local.task_id, local.master, local.is_chief, local.num_worker_replicas) == (
        "worker", 0, "", True, 1)
    sagemaker = TFConfig(json.loads(RESOLVED["sagemaker"]["tf_config"]))
    assert (sagemaker.master, sagemaker.is_chief, sagemaker.num_worker_replicas) == ("grpc://algo-2:2222", False, 2)
    single = TFConfig({"cluster": {"chief": ["c:1"]}, "task": {"type": "chief", "index": 0}})
    assert single.master == "" and single.is_chief
    for value, message in [
        ({"cluster": {"worker": ["w:1"]}, "task": {"type": "worker", "index": 0}}, 'must have one "chief" node'),
        ({"cluster": {"chief": ["a:1", "b:1"]}, "task": {"type": "chief", "index": 0}}, 'only one "chief" node'),
        ({"cluster": {"chief": ["a:1"], "master": ["b:1"]}, "task": {"type": "chief", "index": 0}}, "`master`"),
        ({"cluster": {"chief": ["a:1"]}, "task": {"index": 0}}, "task type must be set"),
        ({"cluster": {"chief": ["a:1"]}, "task": {"type": "chief"}}, "task index must be set"),
        ({"cluster": {"chief": ["a:1"]}, "task": {"type": "chief", "index": -1}}, "non-negative"),
        ({"cluster": {"chief": ["a:1"]}, "task": {"type": "ps", "index": 0}}, "not a valid task_type"),
        ({"cluster": {"chief": ["a:1"]}, "task": {"type": "chief", "index": 1}}, "not a valid task_id"),
        ({"task": {"type": "ps", "index": 0}}, "task type must be WORKER"),
        ({"task": {"type": "worker", "index": 1}}, "task index must be 0"),
    ]:
        with pytest.raises(ValueError, match=message):
            TFConfig(value)
