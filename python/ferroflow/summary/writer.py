"""``tf.summary.FileWriter`` (old name ``tf.train.SummaryWriter``), ``FileWriterCache`` and
``tf.train.summary_iterator``.

Events are serialized here or in Rust and queued to a Rust thread that
appends them to ``<logdir>/events.out.tfevents.<time>.<host><suffix>``
(``ferroflow-records``'s ``EventFileWriter``): the first record is
``file_version: "brain.Event:2"``, as TensorFlow writes it, and TensorBoard
reads the files.
"""

from __future__ import annotations

import os
import threading
import time
import warnings

from ferroflow import _native
from ferroflow.core.framework import graph_pb2, summary_pb2
from ferroflow.core.protobuf import meta_graph_pb2
from ferroflow.core.util import event_pb2
from ferroflow.framework import ops
from ferroflow.platform.tf_record import tf_record_iterator

__all__ = ["FileWriter", "FileWriterCache", "summary_iterator"]


class FileWriter:
    """Writes ``Summary`` protocol buffers (and graphs, session logs, run metadata) to event files.

    ``add_summary`` and the other methods return at once: events are queued
    (at most ``max_queue``) and written by a background thread, which flushes
    the file at least every ``flush_secs`` seconds; ``flush`` waits until
    everything queued is on disk. With ``graph`` (or the deprecated
    ``graph_def``), the graph and a ``MetaGraphDef`` are written first.
    """

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None, filename_suffix=None,
                 session=None):
        if session is not None:
            raise NotImplementedError("FileWriter(session=...) writes through summary ops of TF2's "
                                      "summary writer resource, which ferroflow does not have")
        logdir = os.fspath(logdir)
        if isinstance(logdir, bytes):
            logdir = logdir.decode()
        self._logdir = logdir
        self.event_writer = _native.EventFileWriter(logdir, filename_suffix or "", int(max_queue), float(flush_secs))
        self._closed = False
        self._session_run_tags = {}
        if graph is not None or graph_def is not None:
            self.add_graph(graph=graph, graph_def=graph_def)
            maybe_graph_as_def = graph.as_graph_def(add_shapes=True) if isinstance(graph, ops.Graph) else graph
            from ferroflow.framework.graph_def_util import create_meta_graph_def

            self.add_meta_graph(create_meta_graph_def(graph_def=graph_def or maybe_graph_as_def))

    def __enter__(self):
        return self

    def __exit__(self, unused_type, unused_value, unused_traceback):
        self.close()

    def get_logdir(self):
        """The directory where event files are written."""
        return self._logdir

    def _warn_if_closed(self):
        if self._closed:
            warnings.warn("Attempting to use a closed FileWriter. The operation will be a noop unless the "
                          "FileWriter is explicitly reopened.", stacklevel=3)
            return True
        return False

    def add_summary(self, summary, global_step=None):
        """Adds a ``Summary`` (message or serialized bytes, e.g. the result of a summary op) at ``global_step``.

        A tag's plugin metadata is written with its first value only, as TensorFlow does.
        """
        if self._closed:
            self._warn_if_closed()
            return
        # The common cases first: one native call for a Summary or its bytes.
        if type(summary) is summary_pb2.Summary or type(summary) is bytes:
            if type(summary) is not bytes:
                summary = summary.SerializeToString()
            self.event_writer.add_summary(summary, global_step if type(global_step) is int or global_step is None
                                          else int(global_step))
            return
        if isinstance(summary, summary_pb2.Summary):
            summary = summary.SerializeToString()
        elif not isinstance(summary, (bytes, bytearray, memoryview)):
            if hasattr(summary, "SerializeToString"):
                summary = summary.SerializeToString()
            else:
                raise TypeError(f"add_summary() expects a Summary or its serialization, got {type(summary).__name__}")
        self.event_writer.add_summary(bytes(summary), None if global_step is None else int(global_step))

    def add_session_log(self, session_log, global_step=None):
        """Adds a ``SessionLog`` (e.g. ``SessionLog(status=SessionLog.START)``) at ``global_step``."""
        self._add_event(event_pb2.Event(session_log=session_log), global_step)

    def _add_graph_def(self, graph_def, global_step=None):
        self._add_event(event_pb2.Event(graph_def=graph_def.SerializeToString()), global_step)

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Adds a ``Graph`` (written as a ``GraphDef`` with output shapes) or, deprecated, a ``GraphDef``."""
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        if isinstance(graph, ops.Graph) or isinstance(graph_def, ops.Graph):
            if not isinstance(graph, ops.Graph):
                graph = graph_def
            true_graph_def = graph.as_graph_def(add_shapes=True)
        elif isinstance(graph, graph_pb2.GraphDef) or isinstance(graph_def, graph_pb2.GraphDef):
            true_graph_def = graph if isinstance(graph, graph_pb2.GraphDef) else graph_def
        else:
            raise TypeError("The passed graph must be an instance of `Graph` or the deprecated `GraphDef`")
        self._add_graph_def(true_graph_def, global_step)

    def add_meta_graph(self, meta_graph_def, global_step=None):
        """Adds a ``MetaGraphDef``."""
        if not isinstance(meta_graph_def, meta_graph_pb2.MetaGraphDef):
            raise TypeError(f"meta_graph_def must be type MetaGraphDef, saw type: {type(meta_graph_def)}")
        self._add_event(event_pb2.Event(meta_graph_def=meta_graph_def.SerializeToString()), global_step)

    def add_run_metadata(self, run_metadata, tag, global_step=None):
        """Adds ``RunMetadata`` under ``tag`` (each tag at most once)."""
        if tag in self._session_run_tags:
            raise ValueError("The provided tag was already used for this event type")
        self._session_run_tags[tag] = True
        tagged = event_pb2.TaggedRunMetadata(tag=tag, run_metadata=run_metadata.SerializeToString())
        self._add_event(event_pb2.Event(tagged_run_metadata=tagged), global_step)

    def _add_event(self, event, step):
        if self._warn_if_closed():
            return
        event.wall_time = time.time()
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event.SerializeToString())

    def add_event(self, event):
        """Adds an ``Event`` as it is (its ``wall_time`` and ``step`` are not touched)."""
        if self._warn_if_closed():
            return
        self.event_writer.add_event(event.SerializeToString())

    def flush(self):
        """Writes everything queued to disk."""
        if self._warn_if_closed():
            return
        self.event_writer.flush()

    def close(self):
        """Flushes and closes the event file; ``reopen`` starts a new one."""
        self.event_writer.close()
        self._closed = True

    def reopen(self):
        """Starts a new event file in the same directory after ``close`` (a no-op while open)."""
        self.event_writer.reopen()
        self._closed = False


class FileWriterCache:
    """One ``FileWriter`` per log directory, shared by everything that asks for it."""

    _cache = {}
    _lock = threading.RLock()

    @staticmethod
    def clear():
        """Closes and forgets every cached writer."""
        with FileWriterCache._lock:
            for item in FileWriterCache._cache.values():
                item.close()
            FileWriterCache._cache = {}

    @staticmethod
    def get(logdir):
        """The ``FileWriter`` of ``logdir`` (created with the default graph on first use)."""
        with FileWriterCache._lock:
            if logdir not in FileWriterCache._cache:
                FileWriterCache._cache[logdir] = FileWriter(logdir, graph=ops.get_default_graph())
            return FileWriterCache._cache[logdir]


class _SummaryIterator:
    def __init__(self, path):
        self._records = tf_record_iterator(path)

    def __iter__(self):
        return self

    def __next__(self):
        return event_pb2.Event.FromString(next(self._records))


def summary_iterator(path):
    """Iterates over the ``tf.Event`` protocol buffers of an event file."""
    return _SummaryIterator(path)
