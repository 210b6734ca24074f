"""``TFConfigClusterResolver``: the cluster and this task's role from the ``TF_CONFIG`` variable.

``TF_CONFIG`` is a JSON object that Kubeflow's TFJob, SageMaker, Ray and
hand-written launch scripts put in each task's environment::

    {"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222"], "ps": ["host2:2222"]},
     "task": {"type": "worker", "index": 0}, "rpc_layer": "grpc"}

The resolver reads the variable on every call (as TensorFlow does), so a
change to ``os.environ["TF_CONFIG"]`` is seen at once. An unset or empty
variable means ``{}``: no cluster, a local run.
"""

from __future__ import annotations

import json
import os

from ferroflow.distribute.cluster_resolver.cluster_resolver import ClusterResolver, format_master_url
from ferroflow.training.server_lib import ClusterSpec

__all__ = ["TFConfigClusterResolver"]

_TF_CONFIG_ENV = "TF_CONFIG"


def _load_tf_config():
    text = os.environ.get(_TF_CONFIG_ENV, "")
    if not text.strip():
        return {}
    try:
        config = json.loads(text)
    except ValueError as e:
        raise ValueError(f"TF_CONFIG is not valid JSON ({e}): {text!r}") from None
    if not isinstance(config, dict):
        raise ValueError(f"TF_CONFIG must be a JSON object, got {type(config).__name__}: {text!r}")
    return config


def _tf_config_value(key, default=None):
    return _load_tf_config().get(key, default)


class TFConfigClusterResolver(ClusterResolver):
    """A cluster resolver over ``TF_CONFIG`` (``tf.distribute.cluster_resolver.TFConfigClusterResolver``).

    ``task_type``, ``task_id`` and ``rpc_layer`` given here override the
    ``task`` and ``rpc_layer`` entries of ``TF_CONFIG``.
    """

    def __init__(self, task_type=None, task_id=None, rpc_layer=None, environment=None):
        self._task_type = task_type
        self._task_id = task_id
        self._rpc_layer = rpc_layer
        self._environment = environment

    @property
    def task_type(self):
        """This task's job (``TF_CONFIG["task"]["type"]``), or None."""
        if self._task_type is not None:
            return str(self._task_type)
        task = _tf_config_value("task", {})
        return str(task["type"]) if "type" in task else None

    @task_type.setter
    def task_type(self, task_type):
        self._task_type = task_type

    @property
    def task_id(self):
        """This task's index in its job (``int(TF_CONFIG["task"]["index"])``), or None."""
        if self._task_id is not None:
            return int(self._task_id)
        task = _tf_config_value("task", {})
        return int(task["index"]) if "index" in task else None

    @task_id.setter
    def task_id(self, task_id):
        self._task_id = task_id

    @property
    def environment(self):
        return self._environment

    @property
    def rpc_layer(self):
        """The protocol prefix of session targets (``TF_CONFIG["rpc_layer"]``, e.g. ``"grpc"``), or None."""
        if self._rpc_layer is not None:
            return self._rpc_layer
        return _tf_config_value("rpc_layer")

    @rpc_layer.setter
    def rpc_layer(self, rpc_layer):
        self._rpc_layer = rpc_layer

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None):
        """Accelerators of a task (this one by default); see ``ClusterResolver.num_accelerators``."""
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        return super().num_accelerators(task_type, task_id, config_proto)

    def cluster_spec(self):
        """``ClusterSpec(TF_CONFIG["cluster"])`` (every job as given, an evaluator included), or an empty one."""
        config = _load_tf_config()
        if "cluster" not in config:
            return ClusterSpec({})
        return ClusterSpec(config["cluster"])

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        """The session target of a task (this one by default).

        ``TF_CONFIG["session_master"]`` if set; ``""`` (in-process) when the
        cluster is empty or is one job of one task; else the task's address,
        prefixed ``"<rpc_layer>://"`` when there is an rpc layer.
        """
        session_master = _tf_config_value("session_master")
        if session_master is not None:
            return session_master
        cluster = self.cluster_spec()
        if not cluster.jobs or (len(cluster.jobs) == 1 and len(cluster.job_tasks(cluster.jobs[0])) == 1):
            return ""
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        rpc_layer = self.rpc_layer if rpc_layer is None else rpc_layer
        return format_master_url(cluster.task_address(task_type, task_id), rpc_layer)
