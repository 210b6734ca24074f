"""The Kubernetes manifests in deploy/kubernetes/: they parse, every pod's TF_CONFIG reads (through
ferroflow's TFConfigClusterResolver) as real TensorFlow 2.21 reads it, and the tasks are wired the
way the server needs them (headless Services, the cluster token from a Secret file, probes).

The fixture tests/fixtures/deploy/tf_config.json is made by tools/make_deploy_fixtures.py with
TensorFlow 2.21; the TF_CONFIG values are rebuilt here from the manifests, so a manifest that
changes without the fixture being remade fails.
"""

import importlib.util
import json
import pathlib
import re

import pytest
import yaml

from ferroflow.distribute.cluster_resolver import TFConfigClusterResolver
from ferroflow.training.server_lib import ClusterSpec

ROOT = pathlib.Path(__file__).resolve().parents[2]
MANIFESTS = ROOT / "deploy" / "kubernetes"
FIXTURE = json.loads((ROOT / "tests" / "fixtures" / "deploy" / "tf_config.json").read_text())
NAMESPACE = FIXTURE["namespace"]


def plain_docs():
    return [d for d in yaml.safe_load_all((MANIFESTS / "ferroflow-ps-workers.yaml").read_text()) if d]


def tfjob():
    return yaml.safe_load((MANIFESTS / "tfjob.yaml").read_text())


def expand_env(env, field_values):
    """Container variables as the kubelet sets them: ``$(VAR)`` of an earlier variable expanded,
    ``$$(VAR)`` a literal ``$(VAR)``, an unknown reference left as written."""
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


def operator_tf_config(job, replica_type, index, namespace):
    """The TF_CONFIG Kubeflow's training operator (TFJob v1) gives one replica."""
    name, specs = job["metadata"]["name"], job["spec"]["tfReplicaSpecs"]
    cluster = {}
    for rtype, spec in specs.items():
        if rtype.lower() == "evaluator":
            continue
        container = next(c for c in spec["template"]["spec"]["containers"] if c["name"] == "tensorflow")
        port = next((p["containerPort"] for p in container.get("ports", []) if p.get("name") == "tfjob-port"), 2222)
        cluster[rtype.lower()] = [f"{name}-{rtype.lower()}-{i}.{namespace}.svc:{port}" for i in range(spec["replicas"])]
    return {"cluster": cluster, "task": {"type": replica_type.lower(), "index": index}, "environment": "cloud"}


def load_example():
    spec = importlib.util.spec_from_file_location("mnist_replica", ROOT / "examples" / "mnist_replica.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_expand_env_follows_the_kubelet():
    env = [{"name": "A", "value": "x"}, {"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
           {"name": "B", "value": "$(A).$(NS).$$(A).$(LATER)"}, {"name": "LATER", "value": "y"}]
    assert expand_env(env, {"metadata.namespace": "n"})["B"] == "x.n.$(A).$(LATER)"


def test_manifests_are_the_two_ps_and_two_workers():
    docs = plain_docs()
    names = {(d["kind"], d["metadata"]["name"]) for d in docs}
    tasks = [f"mnist-{t}-{i}" for t in ("ps", "worker") for i in range(2)]
    assert names == {(k, n) for n in tasks for k in ("Service", "Job")}
    job = tfjob()
    assert job["apiVersion"] == "kubeflow.org/v1" and job["kind"] == "TFJob"
    assert {t: s["replicas"] for t, s in job["spec"]["tfReplicaSpecs"].items()} == {"PS": 2, "Worker": 2}
    # Nobody deploys a token written in the repository: the Secret is created by hand.
    assert not any(d["kind"] == "Secret" for d in docs)


def test_tf_config_of_every_pod_is_the_fixtures():
    rebuilt = {}
    for doc in plain_docs():
        if doc["kind"] == "Job":
            env = expand_env(doc["spec"]["template"]["spec"]["containers"][0]["env"], {"metadata.namespace": NAMESPACE})
            rebuilt[("ferroflow-ps-workers.yaml", doc["metadata"]["name"])] = json.loads(env["TF_CONFIG"])
    job = tfjob()
    for rtype, spec in job["spec"]["tfReplicaSpecs"].items():
        for i in range(spec["replicas"]):
            pod = f"{job['metadata']['name']}-{rtype.lower()}-{i}"
            rebuilt[("tfjob.yaml", pod)] = operator_tf_config(job, rtype, i, NAMESPACE)
    fixture = {(p["source"], p["pod"]): json.loads(p["tf_config"]) for p in FIXTURE["pods"]}
    assert rebuilt == fixture, "manifests changed: rerun tools/make_deploy_fixtures.py"
    # The plain manifest gives each pod exactly the TFJob operator's value.
    for (source, pod), value in rebuilt.items():
        if source == "ferroflow-ps-workers.yaml":
            assert value == rebuilt[("tfjob.yaml", pod)]


@pytest.mark.parametrize("pod", FIXTURE["pods"], ids=lambda p: f"{p['source']}:{p['pod']}")
def test_resolver_reads_the_pod_as_tensorflow(pod, monkeypatch):
    monkeypatch.setenv("TF_CONFIG", pod["tf_config"])
    want = pod["tf"]
    resolver = TFConfigClusterResolver()
    spec = resolver.cluster_spec()
    assert spec.as_dict() == want["cluster"]
    assert (resolver.task_type, resolver.task_id) == (want["task_type"], want["task_id"])
    assert resolver.master() == want["master"]
    assert resolver.master(rpc_layer="grpc") == want["master_grpc"]
    # The pod's name is its task's DNS name (its headless Service).
    host = spec.task_address(resolver.task_type, resolver.task_id).split(":")[0]
    assert host == f"{pod['pod']}.{NAMESPACE}.svc"
    # The program the workers run picks the chief as TensorFlow does (no chief job: worker 0).
    example = load_example()
    assert example.is_chief_task(spec.as_dict(), resolver.task_type, resolver.task_id) is want["is_chief"]
    cluster, job_name, task_index = example.resolve_cluster(example.parse_args([]))
    assert ClusterSpec(cluster).as_dict() == want["cluster"]
    assert (job_name, task_index) == (want["task_type"], want["task_id"])


def containers_of_plain_jobs():
    return {d["metadata"]["name"]: d["spec"]["template"]["spec"] for d in plain_docs() if d["kind"] == "Job"}


def test_every_task_has_a_headless_service_selecting_its_pod():
    docs = plain_docs()
    services = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Service"}
    jobs = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Job"}
    for name, svc in services.items():
        assert svc["spec"]["clusterIP"] == "None"
        assert svc["spec"]["publishNotReadyAddresses"] is True
        assert [p["port"] for p in svc["spec"]["ports"]] == [2222]
        labels = jobs[name]["spec"]["template"]["metadata"]["labels"]
        assert svc["spec"]["selector"].items() <= labels.items()
        # No other pod matches this selector.
        others = [n for n, j in jobs.items() if n != name
                  and svc["spec"]["selector"].items() <= j["spec"]["template"]["metadata"]["labels"].items()]
        assert others == []


def secret_mounts(pod_spec, container):
    secret_volumes = {v["name"] for v in pod_spec["volumes"] if "secret" in v}
    return [m["mountPath"] for m in container["volumeMounts"] if m["name"] in secret_volumes and m.get("readOnly")]


def flag(args, name):
    values = [a.split("=", 1)[1] for a in args if a.startswith(name + "=")]
    return values[0] if values else None


def check_pod(pod_spec, container, is_ps):
    mounts = secret_mounts(pod_spec, container)
    assert mounts, "the cluster token is mounted from a Secret, read-only"
    assert pod_spec["securityContext"]["runAsNonRoot"] is True and pod_spec["securityContext"]["fsGroup"] == 1000
    assert [p["containerPort"] for p in container["ports"]] == [2222]
    assert "readinessProbe" in container and "livenessProbe" in container
    if is_ps:
        args = container["args"]
        assert args[0] == "server" and "command" not in container
        assert flag(args, "--bind") == "0.0.0.0"
        token = flag(args, "--token-file")
        assert token and any(token.startswith(m + "/") for m in mounts)
        assert "--exit-when-chief-done" in args and "--insecure" not in args
        assert container["readinessProbe"]["httpGet"]["path"] == "/healthz"
    else:
        assert container["command"] == ["python", "/opt/ferroflow/examples/mnist_replica.py"]
        env = {v["name"]: v.get("value") for v in container["env"]}
        token = env["FERROFLOW_CLUSTER_TOKEN_FILE"]
        assert any(token.startswith(m + "/") for m in mounts)
        assert "127.0.0.1:2222/healthz" in " ".join(container["readinessProbe"]["exec"]["command"])


def test_plain_pods_get_the_token_the_flags_and_probes():
    for name, pod_spec in containers_of_plain_jobs().items():
        assert pod_spec["restartPolicy"] == "OnFailure"
        check_pod(pod_spec, pod_spec["containers"][0], is_ps="-ps-" in name)


def test_tfjob_pods_follow_the_operators_conventions():
    for rtype, spec in tfjob()["spec"]["tfReplicaSpecs"].items():
        pod_spec = spec["template"]["spec"]
        (container,) = pod_spec["containers"]
        assert container["name"] == "tensorflow"
        assert container["ports"][0]["name"] == "tfjob-port"
        assert spec["template"]["metadata"]["annotations"]["sidecar.istio.io/inject"] == "false"
        assert "env" not in container or all(v["name"] != "TF_CONFIG" for v in container["env"])
        check_pod(pod_spec, container, is_ps=rtype == "PS")


def test_dockerfile_runs_the_server_by_default():
    text = (ROOT / "Dockerfile").read_text()
    stages = re.findall(r"^FROM (\S+)(?: AS (\S+))?", text, re.M)
    assert [s[0].split(":")[0] for s in stages] == ["rust", "python"]
    assert re.search(r'^ENTRYPOINT \["ferroflow"\]$', text, re.M)
    assert re.search(r'^CMD \["server"\]$', text, re.M)
    assert "COPY examples /opt/ferroflow/examples" in text
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {"target", ".git", "**/*.so"} <= set(ignored)
