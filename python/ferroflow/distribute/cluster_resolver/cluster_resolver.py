"""``ClusterResolver`` (the interface), ``SimpleClusterResolver`` and ``UnionClusterResolver``.

A cluster resolver answers: which tasks make up the cluster
(``cluster_spec()``), which session target reaches a task (``master()``),
which task this process is (``task_type``, ``task_id``) and how many
accelerators a task has (``num_accelerators()``).
"""

from __future__ import annotations

import abc
import collections

from ferroflow.framework import errors
from ferroflow.training.server_lib import ClusterSpec

__all__ = ["ClusterResolver", "SimpleClusterResolver", "UnionClusterResolver", "format_master_url"]


def format_master_url(master, rpc_layer=None):
    """``"<rpc_layer>://<master>"``, or ``master`` itself without an rpc layer."""
    return f"{rpc_layer}://{master}" if rpc_layer else master


def get_accelerator_devices(master, config_proto):
    """The devices a session on ``master`` lists. Only the in-process target ``""`` is reachable:
    ferroflow has no distributed server yet, so a remote master raises UnimplementedError."""
    if master:
        raise errors.UnimplementedError(
            None, None,
            f"Listing the devices of {master!r} needs ferroflow's distributed server, which is not built yet; "
            "only the in-process target '' is available.",
        )
    from ferroflow.client.session import Session
    from ferroflow.framework import ops

    with ops.Graph().as_default(), Session(master, config=config_proto) as sess:
        return sess.list_devices()


class ClusterResolver(abc.ABC):
    """The interface of every cluster resolver (``tf.distribute.cluster_resolver.ClusterResolver``)."""

    @abc.abstractmethod
    def cluster_spec(self):
        """The cluster as a ``tf.train.ClusterSpec``."""
        raise NotImplementedError()

    @abc.abstractmethod
    def master(self, task_type=None, task_id=None, rpc_layer=None):
        """The session target of a task (this one by default)."""
        raise NotImplementedError()

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None):
        """``{device type: count}`` of the devices of ``master(task_type, task_id)``, counting only
        the given task's devices when both are given (as a TF1 graph-mode session lists them)."""
        devices = get_accelerator_devices(self.master(task_type, task_id), config_proto)
        counts = collections.defaultdict(int)
        for device in devices:
            if task_type is not None and task_id is not None:
                if f"/job:{task_type}" not in device.name or f"/task:{task_id}" not in device.name:
                    continue
            counts[device.device_type] += 1
        return counts

    @property
    def environment(self):
        """Where the cluster runs (``""`` unless a resolver knows better)."""
        return ""

    @property
    def task_type(self):
        return getattr(self, "_task_type", None)

    @task_type.setter
    def task_type(self, task_type):
        self._task_type = task_type

    @property
    def task_id(self):
        return getattr(self, "_task_id", None)

    @task_id.setter
    def task_id(self, task_id):
        self._task_id = task_id


class SimpleClusterResolver(ClusterResolver):
    """A resolver over a fixed ``ClusterSpec`` and master."""

    def __init__(self, cluster_spec, master="", task_type=None, task_id=None, environment="",
                 num_accelerators=None, rpc_layer=None):
        super().__init__()
        self._task_type = task_type
        self._task_id = task_id
        self._environment = environment
        self._num_accelerators = num_accelerators
        self._rpc_layer = rpc_layer
        if not isinstance(cluster_spec, ClusterSpec):
            raise TypeError("cluster_spec must be a `tf.train.ClusterSpec`.")
        self._cluster_spec = cluster_spec
        if not isinstance(master, str):
            raise TypeError("master must be a string.")
        self._master = master

    def cluster_spec(self):
        return self._cluster_spec

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        """The given task's address (with ``rpc_layer``'s prefix), else the master given at construction."""
        if task_type is not None and task_id is not None:
            master = self._cluster_spec.task_address(task_type, task_id)
        else:
            master = self._master
        return format_master_url(master, rpc_layer=rpc_layer or self._rpc_layer)

    @property
    def task_type(self):
        return self._task_type

    @task_type.setter
    def task_type(self, task_type):
        self._task_type = task_type

    @property
    def task_id(self):
        return self._task_id

    @task_id.setter
    def task_id(self, task_id):
        self._task_id = task_id

    @property
    def environment(self):
        return self._environment

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None):
        """The ``num_accelerators`` given at construction (``{}`` if none)."""
        return {} if self._num_accelerators is None else self._num_accelerators

    @property
    def rpc_layer(self):
        return self._rpc_layer

    @rpc_layer.setter
    def rpc_layer(self, rpc_layer):
        self._rpc_layer = rpc_layer


class UnionClusterResolver(ClusterResolver):
    """The union of several resolvers' clusters (``tf.distribute.cluster_resolver.UnionResolver``).

    Jobs given by several resolvers are concatenated (lists) or merged
    (sparse dicts; a task index given twice is a KeyError). Everything but
    the cluster comes from the first resolver unless given here.
    """

    def __init__(self, *args, **kwargs):
        super().__init__()
        self._rpc_layer = kwargs.pop("rpc_layer", None)
        self._task_type = kwargs.pop("task_type", None)
        self._task_id = kwargs.pop("task_id", None)
        if kwargs:
            raise ValueError(f"Unexpected kwargs provided {kwargs!r}")
        if not args:
            raise ValueError("At least one ClusterResolver is required.")
        for resolver in args:
            if not isinstance(resolver, ClusterResolver):
                raise TypeError("All arguments must be a sub-class of `ClusterResolver.`")
        self._cluster_resolvers = args

    def cluster_spec(self):
        dicts = [resolver.cluster_spec().as_dict() for resolver in self._cluster_resolvers]
        merged = {}
        for cluster in dicts:  # a job is a list only if every resolver gives it as a list
            for job, tasks in cluster.items():
                if job in merged:
                    if isinstance(tasks, dict):
                        merged[job] = {}
                else:
                    merged[job] = [] if isinstance(tasks, list) else {}
        for cluster in dicts:
            for job, tasks in cluster.items():
                if isinstance(merged[job], list):
                    merged[job].extend(tasks)
                    continue
                task_dict = dict(enumerate(tasks)) if isinstance(tasks, list) else dict(tasks)
                duplicates = set(task_dict) & set(merged[job])
                if duplicates:
                    raise KeyError(f"Duplicate keys detected when merging two ClusterSpecs: {duplicates!r}")
                merged[job].update(task_dict)
        return ClusterSpec(merged)

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        if task_type is not None and task_id is not None:
            master = self.cluster_spec().task_address(task_type, task_id)
            return format_master_url(master, rpc_layer or self._rpc_layer)
        return self._cluster_resolvers[0].master(rpc_layer=rpc_layer)

    @property
    def task_type(self):
        return self._task_type or self._cluster_resolvers[0].task_type

    @task_type.setter
    def task_type(self, task_type):
        self._task_type = task_type

    @property
    def task_id(self):
        return self._task_id or self._cluster_resolvers[0].task_id

    @task_id.setter
    def task_id(self, task_id):
        self._task_id = task_id

    @property
    def environment(self):
        return self._cluster_resolvers[0].environment

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None):
        return self._cluster_resolvers[0].num_accelerators(task_type, task_id, config_proto)

    @property
    def rpc_layer(self):
        return self._rpc_layer or self._cluster_resolvers[0].rpc_layer

    @rpc_layer.setter
    def rpc_layer(self, rpc_layer):
        self._rpc_layer = rpc_layer
