"""Write tests/fixtures/distributed/*.json: what real TensorFlow 2.21 (tf.compat.v1, TF1 behaviour)
says about cluster specs, server defs, device names, replica_device_setter placements and TF_CONFIG.

Run from the repository root with the TensorFlow virtualenv (never needed by the tests):

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_distributed_fixtures.py

Files (inputs are Python literals, ``repr`` of what was passed, so the tests feed ferroflow the same):

- ``cluster_spec.json``: per case the input, ``repr(as_dict())``, ``jobs``, per job ``num_tasks``,
  ``task_indices``, ``job_tasks``, ``repr()``, ``as_cluster_def()`` serialized deterministically (hex);
  and the inputs TF rejects, with the exception type and message.
- ``server_def.json``: ``ServerDef``s that ``tf.train.Server`` would run for several arguments (TF's
  private ``server_lib._make_server_def``, so no server is started), hex; and the arguments it rejects.
- ``device_spec.json``: ``DeviceSpec.from_string`` fields and ``to_string``, merges, rejected strings.
- ``placements.json``: per case a graph-building snippet (TF1 API, run with ``tf`` bound to
  ``tf.compat.v1``) and the device of every op it creates, in creation order.
- ``tf_config.json``: per TF_CONFIG value (the spec's examples: the generic one, a Kubeflow TFJob
  with sparse workers, SageMaker's master/ps/worker, an evaluator, a cluster without chief, one task,
  none) what ``TFConfigClusterResolver`` returns.
"""

import json
import os
import pathlib

import tensorflow as tf
from tensorflow.python.training import server_lib

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "distributed"
v1 = tf.compat.v1

CLUSTERS = [
    {"ps": ["ps0:2222", "ps1:2222"], "worker": ["w0:2222", "w1:2222", "w2:2222"]},
    {"worker": ["w0:2222", "w1:2222"], "ps": ["ps0:2222"], "chief": ["c0:2222"]},
    {"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["ps0:2222", "ps1:2222"]},
    {"worker": {"0": "w0:2222", "1": "w1:2222"}},
    {"local": ("localhost:2222",)},
    {"ps": [], "worker": ["w0:1"]},
    {b"chief": [b"c0:2222"], b"worker": ["w0:2222"]},
    {},
]
BAD_CLUSTERS = [
    "'ps:2222'",
    "['ps0:2222']",
    "{'ps': 'ps0:2222'}",
    "{'ps': None}",
    "{1: ['w0:2222']}",
    "{'ps': [1]}",
    "{'ps': {'a': 'x:1'}}",
    "None",
    "{'chief': ['c0:1'], b'worker': ['w0:1']}",
]
SERVER_ARGS = [
    ("{'worker': ['w0:2222', 'w1:2222']}", "worker", 1, None),
    ("{'local': ['localhost:2222']}", None, None, None),
    ("{'ps': ['ps0:2222'], 'worker': ['w0:1']}", "ps", 0, "grpc+verbs"),
    ("{'worker': {3: 'w3:2222'}}", None, None, None),
]
BAD_SERVER_ARGS = [
    ("{'ps': ['ps0:2222'], 'worker': ['w0:1']}", None, 0, None),
    ("{'worker': ['w0:2222', 'w1:2222']}", "worker", None, None),
    ("'worker'", "worker", 0, None),
]
DEVICE_STRINGS = [
    "", "/job:ps", "/job:ps/task:1", "/job:worker/replica:0/task:2/device:GPU:1", "/cpu:0", "/gpu:1", "/GPU:0",
    "/device:CPU:*", "/device:cpu:0", "/job:ps/replica:1/task:0/cpu:0", "task:3/job:w", "/device:XLA_CPU:0",
    "/job:localhost/replica:0/task:0/device:CPU:0", "//job:a//task:1", "/gpu:*",
]
BAD_DEVICE_STRINGS = ["/foo:1", "/cpu:0/gpu:0", "/device:CPU:0/device:GPU:0", "/task:abc", "/job:a/bar"]
MERGES = [
    ("/job:ps/task:0", "/device:GPU:1"),
    ("/job:worker", "/job:ps/task:0/device:CPU:0"),
    ("/job:ps/device:CPU:0", "/device:GPU:*"),
    ("/job:ps/task:1", ""),
    ("", "/job:ps/task:1"),
    ("/job:a/replica:2/task:3/device:GPU:4", "/job:b"),
]

# Graph-building snippets: `tf` is tf.compat.v1 in TensorFlow, the ferroflow module in the tests.
SETUP = "import numpy as np\n"
PLACEMENTS = {
    "cluster_round_robin": """
cluster = tf.train.ClusterSpec({"ps": ["ps0:2222", "ps1:2222"], "worker": ["w0:2222", "w1:2222"],
                                "chief": ["c0:2222"]})
with tf.device(tf.train.replica_device_setter(cluster=cluster)):
    vs = [tf.Variable(float(i), name="v%d" % i) for i in range(5)]
    s = tf.add_n(vs, name="total")
    w = tf.get_variable("w", [3, 2], initializer=tf.zeros_initializer())
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.matmul(x, w, name="y")
""",
    "worker_gpu_three_ps": """
with tf.device(tf.train.replica_device_setter(ps_tasks=3, worker_device="/job:worker/task:1/device:GPU:0")):
    a = tf.Variable([1.0, 2.0], name="a")
    b = tf.Variable([3.0, 4.0], name="b")
    c = tf.multiply(a, b, name="c")
    with tf.device("/device:CPU:0"):
        d = tf.Variable(1.0, name="d")
        e = tf.add(c, d, name="e")
""",
    "nested_explicit_devices": """
with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
    a = tf.Variable(1.0, name="a")
    with tf.device("/job:ps/task:0/device:CPU:0"):
        k = tf.constant(2.0, name="k")
        b = tf.Variable(2.0, name="b")
    with tf.device("/device:GPU:1"):
        c = tf.Variable(3.0, name="c")
        k1 = tf.constant(1.0, name="k1")
    p = tf.get_variable("p", [6, 2], initializer=tf.zeros_initializer(),
                        partitioner=tf.fixed_size_partitioner(3))
    q = tf.Variable(4.0, name="q")
""",
    "merge_devices_false": """
with tf.device(tf.train.replica_device_setter(ps_tasks=2, merge_devices=False)):
    a = tf.Variable(1.0, name="a")
    with tf.device("/job:other/task:7"):
        b = tf.Variable(2.0, name="b")
        k = tf.constant(1.0, name="k")
    with tf.device("/device:GPU:0"):
        c = tf.Variable(3.0, name="c")
        m = tf.constant(1.0, name="m")
""",
    "custom_devices_and_ps_ops": """
with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_device="/job:param/device:CPU:0",
                                              worker_device="/job:trainer/task:3",
                                              ps_ops=["VariableV2", "Placeholder"])):
    x = tf.placeholder(tf.float32, [2], name="x")
    y = tf.placeholder(tf.float32, [2], name="y")
    a = tf.Variable([1.0, 2.0], name="a")
    z = tf.add(x, a, name="z")
    with tf.device("/job:ps"):
        b = tf.Variable(1.0, name="b")
""",
    "ps_device_without_job": """
with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_device="/device:CPU:0", worker_device="")):
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b")
    c = tf.add(a, b, name="c")
""",
    "no_ps_job_in_cluster": """
setter = tf.train.replica_device_setter(cluster={"worker": ["w0:1", "w1:1"]})
assert setter is None
with tf.device("/job:worker/task:0"):
    with tf.device(setter):
        a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b")
""",
    "outer_device_and_device_function": """
def f(op):
    return "/device:GPU:2" if op.type == "Const" else ""
with tf.device("/job:worker/task:5"):
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        a = tf.Variable(1.0, name="a")
        with tf.device(f):
            k = tf.constant(1.0, name="k")
            b = tf.Variable(2.0, name="b")
            n = tf.negative(k, name="n")
        with tf.device(None):
            u = tf.constant(3.0, name="u")
""",
    "colocation": """
with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(2.0, name="b")
    with tf.colocate_with(b):
        k = tf.constant(1.0, name="k")
        with tf.device("/device:CPU:0"):
            k2 = tf.constant(2.0, name="k2")
    with tf.colocate_with(a.op):
        c = tf.Variable(3.0, name="c")
    upd = tf.assign_add(b, 1.0, name="upd")
    sa = tf.assign(a, k, name="sa")
""",
    "mlp_forward": """
with tf.device(tf.train.replica_device_setter(ps_tasks=2, worker_device="/job:worker/task:0")):
    x = tf.placeholder(tf.float32, [None, 4], name="x")
    with tf.variable_scope("hidden"):
        w1 = tf.get_variable("weights", [4, 8], initializer=tf.zeros_initializer())
        b1 = tf.get_variable("biases", [8], initializer=tf.zeros_initializer())
        h = tf.nn.relu(tf.matmul(x, w1) + b1)
    with tf.variable_scope("out"):
        w2 = tf.get_variable("weights", [8, 3], initializer=tf.zeros_initializer())
        b2 = tf.get_variable("biases", [3], initializer=tf.zeros_initializer())
        logits = tf.matmul(h, w2) + b2
    global_step = tf.train.get_or_create_global_step()
""",
}

TF_CONFIGS = {
    "generic_worker1": {
        "cluster": {"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"],
                    "ps": ["host3:2222", "host4:2222"], "evaluator": ["host5:2222"]},
        "task": {"type": "worker", "index": 1}, "rpc_layer": "grpc", "environment": "cloud",
    },
    "generic_chief": {
        "cluster": {"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"],
                    "ps": ["host3:2222", "host4:2222"], "evaluator": ["host5:2222"]},
        "task": {"type": "chief", "index": 0}, "rpc_layer": "grpc",
    },
    "generic_ps1_index_string": {
        "cluster": {"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"],
                    "ps": ["host3:2222", "host4:2222"]},
        "task": {"type": "ps", "index": "1"},
    },
    "evaluator": {
        "cluster": {"chief": ["host0:2222"], "worker": ["host1:2222"], "ps": ["host3:2222"],
                    "evaluator": ["host5:2222"]},
        "task": {"type": "evaluator", "index": 0},
    },
    "tfjob": {
        "cluster": {
            "chief": ["mnist-chief-0.kubeflow.svc:2222"],
            "ps": ["mnist-ps-0.kubeflow.svc:2222", "mnist-ps-1.kubeflow.svc:2222"],
            "worker": ["mnist-worker-0.kubeflow.svc:2222", "mnist-worker-1.kubeflow.svc:2222"],
        },
        "task": {"type": "worker", "index": 0}, "environment": "cloud",
    },
    "tfjob_sparse_cluster": {
        "cluster": {
            "ps": ["mnist-ps-0.kubeflow.svc:2222"],
            "worker": {"1": "mnist-worker-1.kubeflow.svc:2222"},
        },
        "task": {"type": "worker", "index": 1}, "environment": "cloud",
    },
    "sagemaker": {
        "cluster": {"master": ["algo-1:2222"], "ps": ["algo-1:2223", "algo-2:2223"], "worker": ["algo-2:2222"]},
        "environment": "cloud", "task": {"type": "worker", "index": 0},
    },
    "no_chief_worker0": {
        "cluster": {"worker": ["w0:2222", "w1:2222"], "ps": ["p0:2222"]},
        "task": {"type": "worker", "index": 0},
    },
    "no_rpc_layer_worker1": {
        "cluster": {"worker": ["w0:2222", "w1:2222"]},
        "task": {"type": "worker", "index": 1},
    },
    "single_task": {"cluster": {"worker": ["localhost:2222"]}, "task": {"type": "worker", "index": 0},
                    "rpc_layer": "grpc"},
    "session_master": {
        "cluster": {"worker": ["w0:2222", "w1:2222"]}, "task": {"type": "worker", "index": 1},
        "session_master": "grpc://explicit:1234",
    },
    "no_cluster": {"task": {"type": "worker", "index": 0}},
    "empty": {},
}


def hexdef(message):
    return message.SerializeToString(deterministic=True).hex()


def error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - recording whatever TF raises
        return {"type": type(e).__name__, "message": str(e)}
    raise AssertionError("expected an error")


def cluster_spec_fixture():
    cases = []
    for cluster in CLUSTERS:
        spec = tf.train.ClusterSpec(cluster)
        jobs = {}
        for job in spec.jobs:
            entry = {"num_tasks": spec.num_tasks(job), "task_indices": spec.task_indices(job)}
            if spec.task_indices(job):
                entry["job_tasks"] = repr(spec.job_tasks(job))
            jobs[repr(job)] = entry
        cases.append({
            "input": repr(cluster), "as_dict": repr(spec.as_dict()), "jobs": repr(spec.jobs), "per_job": jobs,
            "repr": repr(spec), "cluster_def": hexdef(spec.as_cluster_def()), "bool": bool(spec),
            "roundtrip_def": repr(tf.train.ClusterSpec(spec.as_cluster_def()).as_dict()),
            "roundtrip_spec": repr(tf.train.ClusterSpec(spec).as_dict()),
        })
    spec = tf.train.ClusterSpec({"worker": {1: "w1:2222"}, "ps": ["ps0:2222"]})
    lookups = {
        "unknown_job_num_tasks": error(lambda: spec.num_tasks("chief")),
        "unknown_job_task_indices": error(lambda: spec.task_indices("chief")),
        "unknown_job_job_tasks": error(lambda: spec.job_tasks("chief")),
        "unknown_job_task_address": error(lambda: spec.task_address("chief", 0)),
        "missing_task": error(lambda: spec.task_address("worker", 0)),
    }
    bad = [{"input": text, **error(lambda text=text: tf.train.ClusterSpec(eval(text)))} for text in BAD_CLUSTERS]
    eq = {
        "same_dict_and_list": tf.train.ClusterSpec({"a": ["x:1"]}) == tf.train.ClusterSpec({"a": {0: "x:1"}}),
        "different": tf.train.ClusterSpec({"a": ["x:1"]}) != tf.train.ClusterSpec({"a": ["x:2"]}),
        "with_dict_of_dicts": tf.train.ClusterSpec({"a": ["x:1"]}) == {"a": {0: "x:1"}},
        "with_dict_of_lists": tf.train.ClusterSpec({"a": ["x:1"]}) == {"a": ["x:1"]},
        "def_vs_dict": tf.train.ClusterSpec(tf.train.ClusterSpec({"b": ["y:1"], "a": ["x:1"]}).as_cluster_def())
        == tf.train.ClusterSpec({"a": ["x:1"], "b": ["y:1"]}),
    }
    return {"cases": cases, "lookup_errors": lookups, "bad_inputs": bad, "equality": eq}


def server_def_fixture():
    good = []
    for cluster, job, task, protocol in SERVER_ARGS:
        sd = server_lib._make_server_def(eval(cluster), job, task, protocol, None)
        good.append({"cluster": cluster, "job_name": job, "task_index": task, "protocol": protocol,
                     "server_def": hexdef(sd)})
    config = v1.ConfigProto(device_filters=["/job:ps", "/job:worker/task:1"], operation_timeout_in_ms=5000)
    base = server_lib._make_server_def({"worker": ["w0:1", "w1:1"]}, "worker", 0, None, None)
    merged = server_lib._make_server_def(base, None, 1, "grpc", config)
    good.append({"from_server_def": hexdef(base), "task_index": 1, "protocol": "grpc",
                 "config": hexdef(config), "server_def": hexdef(merged)})
    bad = []
    for cluster, job, task, protocol in BAD_SERVER_ARGS:
        bad.append({"cluster": cluster, "job_name": job, "task_index": task, "protocol": protocol,
                    **error(lambda c=cluster, j=job, t=task, p=protocol: server_lib._make_server_def(
                        eval(c), j, t, p, None))})
    return {"good": good, "bad": bad}


def device_spec_fixture():
    parsed = []
    for s in DEVICE_STRINGS:
        d = tf.DeviceSpec.from_string(s)
        parsed.append({"input": s, "to_string": d.to_string(), "job": d.job, "replica": d.replica,
                       "task": d.task, "device_type": d.device_type, "device_index": d.device_index})
    merges = []
    for a, b in MERGES:
        merged = tf.DeviceSpec.from_string(a).make_merged_spec(tf.DeviceSpec.from_string(b))
        merges.append({"base": a, "over": b, "merged": merged.to_string()})
    bad = [{"input": s, **error(lambda s=s: tf.DeviceSpec.from_string(s))} for s in BAD_DEVICE_STRINGS]
    ctor = [
        {"kwargs": repr(kw), "to_string": v1.DeviceSpec(**kw).to_string()}
        for kw in [{"job": "ps", "task": "1"}, {"device_type": "gpu", "device_index": "3"},
                   {"device_type": "TPU"}, {"replica": 0, "device_type": "custom"}, {}]
    ]
    d = v1.DeviceSpec.from_string("/job:ps/task:1")
    d.merge_from(v1.DeviceSpec(device_type="GPU", device_index=0))
    replaced = v1.DeviceSpec.from_string("/job:ps/task:1/device:CPU:0").replace(task=4, device_type=None)
    parsed_in_place = v1.DeviceSpec(job="old", task=3).parse_from_string("/device:GPU:1")
    extras = {"merge_from": d.to_string(), "replace": replaced.to_string(),
              "parse_from_string": parsed_in_place.to_string(),
              "tf_device_canonical": {}}
    g = tf.Graph()
    with g.as_default():
        for s in ["/cpu:0", "/job:ps/task:0/gpu:1", "/job:worker/replica:0/task:1", "/device:GPU:*"]:
            with v1.device(s):
                extras["tf_device_canonical"][s] = tf.constant(1.0).op.device
    return {"parsed": parsed, "merges": merges, "bad": bad, "constructor": ctor, "extras": extras}


def placements_fixture():
    out = {}
    for name, code in PLACEMENTS.items():
        g = tf.Graph()
        with g.as_default():
            exec(SETUP + code, {"tf": v1})
        out[name] = {"code": code, "devices": [[op.name, op.type, op.device] for op in g.get_operations()]}
    return out


def tf_config_fixture():
    out = {}
    saved = os.environ.get("TF_CONFIG")
    try:
        for name, config in TF_CONFIGS.items():
            text = json.dumps(config)  # stored as the string TF saw: the fixture's sorted keys reorder jobs
            os.environ["TF_CONFIG"] = text
            r = tf.distribute.cluster_resolver.TFConfigClusterResolver()
            spec = r.cluster_spec()
            entry = {
                "tf_config": text, "as_dict": repr(spec.as_dict()), "jobs": spec.jobs,
                "cluster_def": hexdef(spec.as_cluster_def()), "task_type": r.task_type, "task_id": r.task_id,
                "rpc_layer": r.rpc_layer, "environment": r.environment, "master": r.master(),
                "master_rpc_override": r.master(rpc_layer="grpc+verbs"),
            }
            if spec.jobs and "ps" in spec.jobs:
                entry["master_ps0"] = r.master("ps", 0)
            out[name] = entry
        os.environ["TF_CONFIG"] = json.dumps(TF_CONFIGS["generic_worker1"])
        r = tf.distribute.cluster_resolver.TFConfigClusterResolver(task_type="chief", task_id=0, rpc_layer="http")
        out["constructor_overrides"] = {"task_type": r.task_type, "task_id": r.task_id, "rpc_layer": r.rpc_layer,
                                        "master": r.master()}
        os.environ["TF_CONFIG"] = json.dumps({})
        out["local_num_accelerators"] = dict(tf.distribute.cluster_resolver.TFConfigClusterResolver()
                                             .num_accelerators())
    finally:
        if saved is None:
            os.environ.pop("TF_CONFIG", None)
        else:
            os.environ["TF_CONFIG"] = saved
    return out


def main():
    v1.disable_v2_behavior()
    OUT.mkdir(parents=True, exist_ok=True)
    for name, make in [("cluster_spec", cluster_spec_fixture), ("server_def", server_def_fixture),
                       ("device_spec", device_spec_fixture), ("placements", placements_fixture),
                       ("tf_config", tf_config_fixture)]:
        data = {"tensorflow_version": tf.__version__, **make()}
        (OUT / f"{name}.json").write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        print("wrote", OUT / f"{name}.json")


if __name__ == "__main__":
    main()
