"""Write tests/fixtures/deploy/tf_config.json: the TF_CONFIG every pod of deploy/kubernetes/ gets, and
what real TensorFlow 2.21 reads from it.

Run from the repository root with an interpreter that has TensorFlow 2.21 and PyYAML (never
needed by the tests):

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_deploy_fixtures.py

Two sources of TF_CONFIG, both in namespace ``NAMESPACE``:

- ``ferroflow-ps-workers.yaml``: the ``TF_CONFIG`` variable of each Job's container, with
  ``$(VAR)`` references expanded as the kubelet does (from the variables listed before it;
  ``fieldRef: metadata.namespace`` is the namespace);
- ``tfjob.yaml``: the value Kubeflow's training operator (v1) writes for each replica:
  ``{"cluster": {type: ["<name>-<type>-<i>.<ns>.svc:<tfjob-port>", ...]}, "task": {"type", "index"},
  "environment": "cloud"}``, job names the lowercased replica types.

For each pod the file records the TF_CONFIG text and TensorFlow's answers:
``TFConfigClusterResolver`` (``cluster_spec().as_dict()``, ``task_type``, ``task_id``, ``master()``
and ``master(rpc_layer="grpc")``) and ``multi_worker_util.is_chief`` (a ``chief`` task, else
worker 0). The test rebuilds the TF_CONFIG values from the manifests, so a manifest changed
without rerunning this script fails it.
"""

import json
import os
import pathlib
import re

import yaml
from tensorflow.python.distribute import multi_worker_util
from tensorflow.python.distribute.cluster_resolver import TFConfigClusterResolver

ROOT = pathlib.Path(__file__).resolve().parent.parent
MANIFESTS = ROOT / "deploy" / "kubernetes"
OUT = ROOT / "tests" / "fixtures" / "deploy"
NAMESPACE = "team-a"


def expand_env(env, field_values):
    """A container's variables as the kubelet sets them: ``$(VAR)`` of a variable listed earlier is
    replaced by its value, ``$$(VAR)`` gives a literal ``$(VAR)``, unknown references stay as written."""
    values = {}
    for var in env:
        if "valueFrom" in var:
            values[var["name"]] = field_values[var["valueFrom"]["fieldRef"]["fieldPath"]]
            continue
        values[var["name"]] = re.sub(
            r"\$(\$)?\(([A-Za-z_][A-Za-z0-9_]*)\)",
            lambda m, values=values: f"$({m.group(2)})" if m.group(1) else values.get(m.group(2), m.group(0)),
            var.get("value", ""))
    return values


def plain_pods():
    docs = [d for d in yaml.safe_load_all((MANIFESTS / "ferroflow-ps-workers.yaml").read_text()) if d]
    pods = []
    for doc in docs:
        if doc["kind"] != "Job":
            continue
        container = doc["spec"]["template"]["spec"]["containers"][0]
        env = expand_env(container["env"], {"metadata.namespace": NAMESPACE})
        pods.append({"source": "ferroflow-ps-workers.yaml", "pod": doc["metadata"]["name"],
                     "tf_config": env["TF_CONFIG"]})
    return pods


def tfjob_pods():
    job = yaml.safe_load((MANIFESTS / "tfjob.yaml").read_text())
    name = job["metadata"]["name"]
    specs = job["spec"]["tfReplicaSpecs"]
    cluster = {}
    for rtype, spec in specs.items():
        if rtype.lower() == "evaluator":
            continue
        container = next(c for c in spec["template"]["spec"]["containers"] if c["name"] == "tensorflow")
        port = next((p["containerPort"] for p in container.get("ports", []) if p.get("name") == "tfjob-port"), 2222)
        cluster[rtype.lower()] = [f"{name}-{rtype.lower()}-{i}.{NAMESPACE}.svc:{port}"
                                  for i in range(spec["replicas"])]
    pods = []
    for rtype, spec in specs.items():
        for i in range(spec["replicas"]):
            value = {"cluster": cluster, "task": {"type": rtype.lower(), "index": i}, "environment": "cloud"}
            pods.append({"source": "tfjob.yaml", "pod": f"{name}-{rtype.lower()}-{i}",
                         "tf_config": json.dumps(value, separators=(",", ":"))})
    return pods


def tf_reading(text):
    os.environ["TF_CONFIG"] = text
    r = TFConfigClusterResolver()
    spec = r.cluster_spec()
    return {
        "cluster": spec.as_dict(),
        "task_type": r.task_type,
        "task_id": r.task_id,
        "master": r.master(),
        "master_grpc": r.master(rpc_layer="grpc"),
        "is_chief": bool(multi_worker_util.is_chief(spec, r.task_type, r.task_id)),
    }


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    pods = plain_pods() + tfjob_pods()
    for pod in pods:
        pod["tf"] = tf_reading(pod["tf_config"])
    (OUT / "tf_config.json").write_text(json.dumps({"namespace": NAMESPACE, "pods": pods}, indent=1) + "\n")
    print(f"wrote {len(pods)} pods to {OUT / 'tf_config.json'}")


if __name__ == "__main__":
    main()
