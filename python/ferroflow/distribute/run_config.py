"""TF_CONFIG's derived values as TF1's ``tf.estimator.RunConfig`` computes them.

A TF1 ps/worker program (and ``ferroflow server``) needs more than the
resolver gives: whether this task is the chief, the session target, how
many ps and worker replicas there are, the task's id across the cluster and
its session device filters. ``TFConfig.from_env()`` reads ``TF_CONFIG`` and
applies the Estimator's rules (a ``chief`` job of one task is required when
a cluster is given; legacy ``master`` instead of ``chief`` accepted; the
session target is ``grpc://`` + the task's address, or ``""`` for a
one-task cluster; the ``evaluator`` stands outside the training cluster).
This is ferroflow's helper, not a TensorFlow name.
"""

from __future__ import annotations

import json
import os

from ferroflow.training.server_lib import ClusterSpec

__all__ = ["TFConfig"]

CHIEF, MASTER, WORKER, PS, EVALUATOR = "chief", "master", "worker", "ps", "evaluator"


class TFConfig:
    """The Estimator-style reading of one ``TF_CONFIG`` value.

    Attributes: ``cluster_spec`` (the training cluster: empty for a local run
    and for the evaluator, the evaluator job left out otherwise), ``task_type``,
    ``task_id``, ``master``, ``evaluation_master``, ``is_chief``,
    ``num_ps_replicas``, ``num_worker_replicas``, ``global_id_in_cluster``
    (None for the evaluator), ``device_filters``, ``rpc_layer``,
    ``environment``, ``model_dir``. ValueError names what is wrong with the value.
    """

    def __init__(self, tf_config=None):
        if tf_config is None:
            tf_config = {}
        if not isinstance(tf_config, dict):
            raise ValueError(f"TF_CONFIG must be a JSON object, got {type(tf_config).__name__}")
        self.tf_config = tf_config
        self.rpc_layer = tf_config.get("rpc_layer")
        self.environment = tf_config.get("environment", "local")
        self.model_dir = tf_config.get("model_dir")
        service = tf_config.get("service")
        if service is not None and not isinstance(service, dict):
            raise TypeError(f'If "service" is set in TF_CONFIG, it must be a dict. Given {type(service).__name__}')
        task = tf_config.get("task") or {}
        cluster = tf_config.get("cluster") or {}
        self.evaluation_master = tf_config.get("eval_session_master", "")
        if not cluster:
            self._local(task)
        else:
            self._distributed(ClusterSpec(cluster), task)

    @classmethod
    def from_env(cls, environ=None):
        """The reading of ``TF_CONFIG`` in ``environ`` (default ``os.environ``); unset or empty means ``{}``."""
        text = (os.environ if environ is None else environ).get("TF_CONFIG", "")
        if not text.strip():
            return cls({})
        try:
            value = json.loads(text)
        except ValueError as e:
            raise ValueError(f"TF_CONFIG is not valid JSON ({e}): {text!r}") from None
        return cls(value)

    def _local(self, task):
        self.task_type = task.get("type", WORKER)
        self.task_id = int(task.get("index", 0))
        if self.task_type != WORKER:
            raise ValueError('If "cluster" is not set in TF_CONFIG, task type must be WORKER.')
        if self.task_id != 0:
            raise ValueError('If "cluster" is not set in TF_CONFIG, task index must be 0.')
        self.cluster_spec = ClusterSpec({})
        self.master = self.tf_config.get("session_master", "")
        self.is_chief = True
        self.num_ps_replicas = 0
        self.num_worker_replicas = 1
        self.global_id_in_cluster = 0
        self.device_filters = []

    def _distributed(self, spec, task):
        jobs = spec.jobs
        if MASTER in jobs and CHIEF in jobs:
            raise ValueError("If `master` node exists in `cluster`, job `chief` is not supported.")
        chief = MASTER if MASTER in jobs else CHIEF
        task_type = task.get("type")
        task_id = task.get("index")
        if not task_type:
            raise ValueError('If "cluster" is set in TF_CONFIG, task type must be set.')
        if task_id is None:
            raise ValueError('If "cluster" is set in TF_CONFIG, task index must be set.')
        task_id = int(task_id)
        if task_id < 0:
            raise ValueError("Task index must be non-negative number.")
        self.task_type, self.task_id = task_type, task_id
        if task_type == EVALUATOR:  # outside the training cluster
            self.cluster_spec = ClusterSpec({})
            self.master = self.evaluation_master
            self.is_chief = False
            self.num_ps_replicas = 0
            self.num_worker_replicas = 0
            self.global_id_in_cluster = None
            self.device_filters = []
            return
        training = {job: tasks for job, tasks in spec.as_dict().items() if job != EVALUATOR}
        spec = ClusterSpec(training)
        if chief not in spec.jobs:
            raise ValueError(f'If "cluster" is set in TF_CONFIG, it must have one "{chief}" node.')
        if spec.num_tasks(chief) > 1:
            raise ValueError(f'The "cluster" in TF_CONFIG must have only one "{chief}" node.')
        if task_type not in spec.jobs:
            raise ValueError(
                f"{task_type} is not a valid task_type in the cluster_spec:\n{spec}\n\n"
                "Note that these values may be coming from the TF_CONFIG environment variable."
            )
        if task_id not in spec.task_indices(task_type):
            raise ValueError(
                f"{task_id} is not a valid task_id for task_type {task_type} in the cluster_spec:\n{spec}\n\n"
                "Note that these values may be coming from the TF_CONFIG environment variable."
            )
        self.cluster_spec = spec
        if "session_master" in self.tf_config:
            self.master = self.tf_config["session_master"]
        elif len(spec.jobs) == 1 and spec.num_tasks(spec.jobs[0]) == 1:
            self.master = ""
        else:
            self.master = "grpc://" + spec.task_address(task_type, task_id)
        self.is_chief = task_type == chief
        self.num_ps_replicas = spec.num_tasks(PS) if PS in spec.jobs else 0
        self.num_worker_replicas = sum(spec.num_tasks(j) for j in (WORKER, chief) if j in spec.jobs)
        order = [chief] + [j for j in sorted(spec.jobs) if j not in (chief, PS)] + ([PS] if PS in spec.jobs else [])
        next_id = 0
        for job in order:
            if job == task_type:
                self.global_id_in_cluster = next_id + task_id
                break
            next_id += spec.num_tasks(job)
        if task_type == MASTER:
            self.device_filters = ["/job:ps", "/job:master"]
        elif task_type == CHIEF:
            self.device_filters = ["/job:ps", "/job:chief"]
        elif task_type == WORKER:
            self.device_filters = ["/job:ps", f"/job:worker/task:{task_id}"]
        elif task_type == PS:
            self.device_filters = ["/job:ps", "/job:worker", "/job:master"]
        else:
            self.device_filters = []

    def __repr__(self):
        return (f"TFConfig(task_type={self.task_type!r}, task_id={self.task_id!r}, master={self.master!r}, "
                f"is_chief={self.is_chief!r}, num_ps_replicas={self.num_ps_replicas}, "
                f"num_worker_replicas={self.num_worker_replicas})")
