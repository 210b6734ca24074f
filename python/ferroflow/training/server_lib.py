"""``tf.train.ClusterSpec`` (the machines of a distributed job) and ``tf.train.Server``.

A cluster is a set of jobs (``"ps"``, ``"worker"``, ``"chief"``, ...), each a
set of tasks numbered from 0, each task a ``"host:port"`` address. A job is
given as a list (task index = position) or, sparsely, as a dict
``{task index: address}``; ``as_cluster_def()`` is TensorFlow's
``ClusterDef`` message with the jobs sorted by name and each job's tasks by
index, byte for byte what TensorFlow writes.

``Server`` runs the server of one task in this process (``ferroflow_dist`` in
Rust; see the class for its security defaults). Its arguments are checked and
turned into the task's ``ServerDef`` as TensorFlow does.
"""

from __future__ import annotations

import json
import os
import socket

from ferroflow import _native
from ferroflow.core.protobuf import cluster_pb2, config_pb2, tensorflow_server_pb2
from ferroflow.framework import errors

__all__ = ["ClusterSpec", "Server"]


def _as_text(value, what):
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, str):
        return value
    raise TypeError(f"{what} {value!r} must be bytes or unicode")


class ClusterSpec:
    """A cluster as jobs of tasks: ``ClusterSpec({"ps": ["ps0:2222"], "worker": {1: "w1:2222"}})``.

    Built from a dict (job name -> list of addresses, or -> dict of task index
    -> address), a ``tf.train.ClusterDef`` or another ``ClusterSpec``.
    """

    def __init__(self, cluster):
        if isinstance(cluster, dict):
            self._cluster_spec = {}
            for job_name, tasks in cluster.items():
                if isinstance(tasks, (list, tuple)):
                    job_tasks = dict(enumerate(tasks))
                elif isinstance(tasks, dict):
                    job_tasks = {int(i): task for i, task in tasks.items()}
                else:
                    raise TypeError(
                        f"The tasks for job {job_name!r} must be a list or a dictionary from integers to strings."
                    )
                self._cluster_spec[job_name] = job_tasks
            self._cluster_def = self._make_cluster_def()
        elif isinstance(cluster, (cluster_pb2.ClusterDef, ClusterSpec)):
            cluster_def = cluster_pb2.ClusterDef()
            cluster_def.MergeFrom(cluster if isinstance(cluster, cluster_pb2.ClusterDef) else cluster.as_cluster_def())
            self._cluster_def = cluster_def
            self._cluster_spec = {job.name: dict(job.tasks.items()) for job in cluster_def.job}
        else:
            raise TypeError(
                "`cluster` must be a dictionary mapping one or more job names to lists of network addresses, "
                "or a `ClusterDef` protocol buffer"
            )

    def _make_cluster_def(self):
        cluster_def = cluster_pb2.ClusterDef()
        for job_name, tasks in sorted(self._cluster_spec.items()):
            job = cluster_def.job.add()
            job.name = _as_text(job_name, "Job name")
            for index, address in sorted(tasks.items()):
                job.tasks[index] = _as_text(address, "Task address")
        return cluster_def

    def __bool__(self):
        return bool(self._cluster_spec)

    # Equality compares the jobs and tasks (with a ClusterSpec, or with a dict of
    # {job: {index: address}}, as TensorFlow); a ClusterSpec is not hashable.
    def __eq__(self, other):
        return self._cluster_spec == other

    def __ne__(self, other):
        return self._cluster_spec != other

    __hash__ = None

    def __repr__(self):
        d = self.as_dict()
        return "ClusterSpec({" + ", ".join(f"{k!r}: {d[k]!r}" for k in sorted(d)) + "})"

    def as_dict(self):
        """``{job: [addresses]}`` for jobs whose indices are 0..n-1, ``{job: {index: address}}`` otherwise."""
        out = {}
        for job in self.jobs:
            indices = self.task_indices(job)
            if not indices:
                out[job] = {}
            elif max(indices) + 1 == len(indices):
                out[job] = self.job_tasks(job)
            else:
                out[job] = {i: self.task_address(job, i) for i in indices}
        return out

    def as_cluster_def(self):
        """The ``tf.train.ClusterDef`` message (jobs sorted by name)."""
        return self._cluster_def

    @property
    def jobs(self):
        """The job names, in the order they were given."""
        return list(self._cluster_spec)

    def _job(self, job_name):
        try:
            return self._cluster_spec[job_name]
        except (KeyError, TypeError):
            raise ValueError(f"No such job in cluster: {job_name!r}") from None

    def num_tasks(self, job_name):
        """How many tasks ``job_name`` has; ValueError for an unknown job."""
        return len(self._job(job_name))

    def task_indices(self, job_name):
        """The task indices of ``job_name``, ascending; ValueError for an unknown job."""
        return sorted(self._job(job_name))

    def task_address(self, job_name, task_index):
        """The address of task ``task_index`` of ``job_name``; ValueError if there is none."""
        job = self._job(job_name)
        try:
            return job[task_index]
        except (KeyError, TypeError):
            raise ValueError(f"No task with index {task_index!r} in job {job_name!r}") from None

    def job_tasks(self, job_name):
        """The addresses of ``job_name`` as a list indexed by task (None where a sparse job has no task)."""
        job = self._job(job_name)
        out = [None] * (max(job) + 1)
        for index, address in job.items():
            out[index] = address
        return out


def _make_server_def(server_or_cluster_def, job_name, task_index, protocol, config):
    """The ``ServerDef`` a ``Server`` with these arguments runs (TensorFlow's rules and errors)."""
    if isinstance(server_or_cluster_def, tensorflow_server_pb2.ServerDef):
        server_def = tensorflow_server_pb2.ServerDef()
        server_def.MergeFrom(server_or_cluster_def)
        if job_name is not None:
            server_def.job_name = job_name
        if task_index is not None:
            server_def.task_index = task_index
        if protocol is not None:
            server_def.protocol = protocol
    else:
        try:
            cluster_spec = ClusterSpec(server_or_cluster_def)
        except TypeError:
            raise TypeError(
                "Could not convert `server_or_cluster_def` to a `tf.train.ServerDef` or `tf.train.ClusterSpec`."
            ) from None
        if job_name is None:
            if len(cluster_spec.jobs) != 1:
                raise ValueError("Must specify an explicit `job_name`.")
            job_name = cluster_spec.jobs[0]
        if task_index is None:
            indices = cluster_spec.task_indices(job_name)
            if len(indices) != 1:
                raise ValueError("Must specify an explicit `task_index`.")
            task_index = indices[0]
        server_def = tensorflow_server_pb2.ServerDef(
            cluster=cluster_spec.as_cluster_def(), job_name=job_name, task_index=task_index,
            protocol="grpc" if protocol is None else protocol,
        )
    if config is not None:
        if not isinstance(config, config_pb2.ConfigProto):
            raise TypeError(f"config must be a tf.ConfigProto, got {type(config).__name__}")
        server_def.default_session_config.MergeFrom(config)
    return server_def


def _cluster_json(cluster_def):
    """The JSON the native server takes: job -> list (dense) or {index: address} (sparse)."""
    jobs = {}
    for job in cluster_def.job:
        tasks = dict(job.tasks)
        if sorted(tasks) == list(range(len(tasks))):
            jobs[job.name] = [tasks[i] for i in range(len(tasks))]
        else:
            jobs[job.name] = {str(i): a for i, a in tasks.items()}
    return json.dumps(jobs)


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """The server of one task of a cluster, running in this process (``tf.train.Server``).

    It holds the task's variables, queues and accumulators, shared by name among every
    session that runs graphs on it; ``tf.Session(server.target)`` runs a graph across the
    cluster with this process as the master (nodes without a ``/job:`` run here).

    Unlike TensorFlow's server it listens on 127.0.0.1 only, unless the environment says
    otherwise: ``FERROFLOW_BIND`` (an IP such as ``0.0.0.0``) with a cluster token
    (``FERROFLOW_CLUSTER_TOKEN`` or ``FERROFLOW_CLUSTER_TOKEN_FILE``) or mutual TLS
    (``FERROFLOW_TLS_CERT``/``_KEY``/``_CA``); ``FERROFLOW_INSECURE=1`` allows a non-loopback
    bind without either. Sessions of this process read the same token and TLS variables.
    ``FERROFLOW_EXIT_WHEN_CHIEF_DONE=1`` stops the server (ending ``join``) when the chief's
    ``MonitoredTrainingSession`` finishes.
    """

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None, config=None,
                 start=True):
        self._server_def = _make_server_def(server_or_cluster_def, job_name, task_index, protocol, config)
        if self._server_def.protocol not in ("", "grpc"):
            raise errors.UnimplementedError(
                None, None, f"tf.train.Server: protocol {self._server_def.protocol!r} is not supported (only 'grpc')")
        self._native = None
        if start:
            self.start()

    @staticmethod
    def create_local_server(config=None, start=True):
        """A one-task server (job ``localhost``) on a free port of 127.0.0.1."""
        return Server({"localhost": [f"localhost:{_free_port()}"]}, job_name="localhost", task_index=0,
                      protocol="grpc", config=config, start=start)

    def start(self):
        """Starts the server (a second call does nothing)."""
        if self._native is not None:
            return
        env = os.environ.get
        self._native = _native.Server(
            _cluster_json(self._server_def.cluster), self._server_def.job_name, self._server_def.task_index,
            bind=env("FERROFLOW_BIND") or None,
            insecure=env("FERROFLOW_INSECURE", "") not in ("", "0"),
            exit_when_chief_done=env("FERROFLOW_EXIT_WHEN_CHIEF_DONE", "") not in ("", "0"),
        )

    def join(self):
        """Blocks until the server stops (it stops when the chief is done, if started to; Ctrl-C interrupts)."""
        self._require_started().join()

    def _require_started(self):
        if self._native is None:
            raise errors.FailedPreconditionError(None, None, "tf.train.Server: the server was not started")
        return self._native

    @property
    def server_def(self):
        """The task's ``tf.train.ServerDef``."""
        return self._server_def

    @property
    def target(self):
        """``grpc://localhost:<port>``: the ``tf.Session`` target that runs graphs on this cluster from here."""
        return self._require_started().target
