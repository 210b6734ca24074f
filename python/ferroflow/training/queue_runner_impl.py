"""``tf.train.QueueRunner``, ``tf.train.add_queue_runner`` and ``tf.train.start_queue_runners``.

A ``QueueRunner`` runs each of its enqueue ops in a thread of its own until the coordinator stops or the op
raises one of ``queue_closed_exception_types`` (the input ran out: ``OutOfRangeError``); the last thread to
finish runs ``close_op``, and a stop requested on the coordinator runs ``cancel_op`` (closing the queue with
``cancel_pending_enqueues``), which wakes the threads waiting in enqueues. The enqueue ops run in Rust with the
GIL released while they wait. ``to_proto``/``from_proto`` read and write TensorFlow's ``QueueRunnerDef`` (the
``queue_runners`` collection of a MetaGraphDef).
"""

from __future__ import annotations

import logging
import threading
import weakref

from ferroflow.client import session as session_lib
from ferroflow.framework import errors, ops

__all__ = ["QueueRunner", "add_queue_runner", "start_queue_runners"]

_log = logging.getLogger(__name__)


class QueueRunner:
    """Holds a list of enqueue ops, each run in its own thread by ``create_threads``.

    ``queue``: the queue the ops fill (an object with a ``name``; its ``close()`` and
    ``close(cancel_pending_enqueues=True)`` give the default ``close_op`` and ``cancel_op``).
    ``queue_closed_exception_types``: exceptions that mean the queue is closed, ending a thread quietly
    (default ``(tf.errors.OutOfRangeError,)``).
    """

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None, import_scope=None):
        if queue_runner_def is not None:
            if queue or enqueue_ops:
                raise ValueError("queue_runner_def and queue are mutually exclusive.")
            self._init_from_proto(queue_runner_def, import_scope)
            return
        if not queue or not enqueue_ops:
            raise ValueError("Must provide queue and enqueue_ops.")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        if close_op is None:
            close_op = queue.close()
        if cancel_op is None:
            cancel_op = queue.close(cancel_pending_enqueues=True)
        self._close_op = close_op
        self._cancel_op = cancel_op
        if queue_closed_exception_types is None:
            queue_closed_exception_types = (errors.OutOfRangeError,)
        else:
            queue_closed_exception_types = tuple(queue_closed_exception_types)
            if not queue_closed_exception_types or not all(
                isinstance(t, type) and issubclass(t, errors.OpError) for t in queue_closed_exception_types
            ):
                raise TypeError(
                    "queue_closed_exception_types, when provided, must be a tuple of tf.errors.OpError subclasses; "
                    f"got {queue_closed_exception_types!r}"
                )
        self._queue_closed_exception_types = queue_closed_exception_types
        self._lock = threading.Lock()
        # Per session: how many enqueue threads are still running.
        self._runs_per_session = weakref.WeakKeyDictionary()
        self._exceptions_raised = []

    def _init_from_proto(self, queue_runner_def, import_scope=None):
        g = ops.get_default_graph()

        def element(name):
            return g.as_graph_element(ops.prepend_name_scope(name, import_scope))

        self._queue = element(queue_runner_def.queue_name)
        self._enqueue_ops = [element(n) for n in queue_runner_def.enqueue_op_name]
        self._close_op = element(queue_runner_def.close_op_name)
        self._cancel_op = element(queue_runner_def.cancel_op_name)
        codes = list(queue_runner_def.queue_closed_exception_types)
        self._queue_closed_exception_types = (
            tuple(errors.exception_type_from_error_code(c) for c in codes) if codes else (errors.OutOfRangeError,)
        )
        self._lock = threading.Lock()
        self._runs_per_session = weakref.WeakKeyDictionary()
        self._exceptions_raised = []

    def to_proto(self, export_scope=None):
        """This runner as a ``QueueRunnerDef`` (``None`` if its queue is outside ``export_scope``)."""
        if export_scope is not None and not self.queue.name.startswith(export_scope):
            return None
        d = queue_runner_def_class()()
        d.queue_name = ops.strip_name_scope(self.queue.name, export_scope)
        d.enqueue_op_name.extend(ops.strip_name_scope(op.name, export_scope) for op in self._enqueue_ops)
        d.close_op_name = ops.strip_name_scope(self._close_op.name, export_scope)
        d.cancel_op_name = ops.strip_name_scope(self._cancel_op.name, export_scope)
        d.queue_closed_exception_types.extend(
            errors.error_code_from_exception_type(t) for t in self._queue_closed_exception_types)
        return d

    @staticmethod
    def from_proto(queue_runner_def, import_scope=None):
        """A QueueRunner over the ops a ``QueueRunnerDef`` names in the default graph."""
        return QueueRunner(queue_runner_def=queue_runner_def, import_scope=import_scope)

    @property
    def queue(self):
        """The queue the enqueue ops fill."""
        return self._queue

    @property
    def enqueue_ops(self):
        """The enqueue ops, one thread each."""
        return self._enqueue_ops

    @property
    def close_op(self):
        """The op run when the last enqueue thread ends."""
        return self._close_op

    @property
    def cancel_op(self):
        """The op run when the coordinator requests a stop."""
        return self._cancel_op

    @property
    def queue_closed_exception_types(self):
        """The exception types that mean the queue was closed."""
        return self._queue_closed_exception_types

    @property
    def exceptions_raised(self):
        """Exceptions raised by the enqueue threads that had no coordinator to report them to."""
        return self._exceptions_raised

    @property
    def name(self):
        """The name of the queue."""
        return self._queue.name

    def _run(self, sess, enqueue_op, coord=None):
        """Runs ``enqueue_op`` until a stop or a closed queue; the last thread of ``sess`` closes it."""
        decremented = False
        try:
            enqueue = sess.make_callable(enqueue_op) if hasattr(sess, "make_callable") else None
            while True:
                if coord is not None and coord.should_stop():
                    break
                try:
                    if enqueue is not None:
                        enqueue()
                    else:
                        sess.run(enqueue_op)
                except self._queue_closed_exception_types:
                    with self._lock:
                        self._runs_per_session[sess] -= 1
                        decremented = True
                        last = self._runs_per_session[sess] == 0
                    if last:
                        try:
                            sess.run(self._close_op)
                        except Exception as e:  # noqa: BLE001 - closing after the end; only logged
                            _log.debug("Ignored exception while closing queue %s: %s", self.name, e)
                    return
        except Exception as e:  # noqa: BLE001 - reported to the coordinator or kept
            if coord is not None:
                coord.request_stop(e)
            else:
                _log.error("Exception in QueueRunner %s: %s", self.name, e)
                with self._lock:
                    self._exceptions_raised.append(e)
                raise
        finally:
            if not decremented:
                with self._lock:
                    self._runs_per_session[sess] -= 1

    def _close_on_stop(self, sess, cancel_op, coord):
        """Runs ``cancel_op`` once the coordinator requests a stop."""
        coord.wait_for_stop()
        try:
            sess.run(cancel_op)
        except Exception as e:  # noqa: BLE001 - the session may be closing already
            _log.debug("Ignored exception while cancelling queue %s: %s", self.name, e)

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """Creates (and with ``start`` starts) one thread per enqueue op, plus with ``coord`` a thread that
        runs ``cancel_op`` on a stop; the threads are registered with ``coord``. Returns them, or [] while
        threads of an earlier call for ``sess`` are still running."""
        with self._lock:
            if self._runs_per_session.get(sess, 0) > 0:
                return []
            self._runs_per_session[sess] = len(self._enqueue_ops)
            self._exceptions_raised = []
        threads = [
            threading.Thread(target=self._run, args=(sess, op, coord), name=f"QueueRunner-{self.name}-{i}")
            for i, op in enumerate(self._enqueue_ops)
        ]
        if coord is not None:
            threads.append(threading.Thread(target=self._close_on_stop, args=(sess, self._cancel_op, coord),
                                            name=f"QueueRunner-{self.name}-cancel"))
        for t in threads:
            if coord is not None:
                coord.register_thread(t)
            t.daemon = daemon
            if start:
                t.start()
        return threads


_QUEUE_RUNNER_DEF = None


def queue_runner_def_class():
    """TensorFlow's ``QueueRunnerDef`` message class (``tensorflow/core/protobuf/queue_runner.proto``),
    built once in ferroflow's descriptor pool. Field 5 is TensorFlow's ``error.Code`` enum, declared here
    as the int32 it is on the wire."""
    global _QUEUE_RUNNER_DEF
    if _QUEUE_RUNNER_DEF is None:
        from google.protobuf import descriptor_pb2, message_factory

        from ferroflow.core import _pool

        name = "ferroflow/core/protobuf/queue_runner.proto"
        try:
            desc = _pool.POOL.FindMessageTypeByName("tensorflow.QueueRunnerDef")
        except KeyError:
            f = descriptor_pb2.FileDescriptorProto(name=name, package="tensorflow", syntax="proto3")
            m = f.message_type.add(name="QueueRunnerDef")
            label, rep = descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL, descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED
            string, int32 = descriptor_pb2.FieldDescriptorProto.TYPE_STRING, descriptor_pb2.FieldDescriptorProto.TYPE_INT32
            for number, field, kind, lab in [(1, "queue_name", string, label), (2, "enqueue_op_name", string, rep),
                                             (3, "close_op_name", string, label), (4, "cancel_op_name", string, label),
                                             (5, "queue_closed_exception_types", int32, rep)]:
                m.field.add(name=field, number=number, type=kind, label=lab)
            _pool.POOL.Add(f)
            desc = _pool.POOL.FindMessageTypeByName("tensorflow.QueueRunnerDef")
        _QUEUE_RUNNER_DEF = message_factory.GetMessageClass(desc)
    return _QUEUE_RUNNER_DEF


def add_queue_runner(qr, collection=ops.GraphKeys.QUEUE_RUNNERS):
    """Adds the queue runner ``qr`` to the default graph's ``collection`` for ``start_queue_runners``."""
    ops.add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True, collection=ops.GraphKeys.QUEUE_RUNNERS):
    """Creates (and, with ``start``, starts) the threads of every queue runner in ``collection`` of
    ``sess``'s graph; returns them (an empty list when there are none).

    ``sess`` defaults to the default session (ValueError if there is none); a monitored session starts its
    queue runners itself, so it gets an empty list. TypeError for anything else that is not a Session.
    """
    if sess is None:
        sess = session_lib.get_default_session()
        if sess is None:
            raise ValueError(
                "Cannot start queue runners: No default session is registered. Use `with sess.as_default()` or "
                "pass an explicit session to tf.start_queue_runners(sess=sess)"
            )
    if not isinstance(sess, session_lib.BaseSession):
        if type(sess).__name__ in ("MonitoredSession", "SingularMonitoredSession"):
            return []
        raise TypeError(f"sess must be a `tf.Session` object. Given class: {type(sess)}")
    threads = []
    with sess.graph.as_default():
        for qr in ops.get_collection(collection):
            threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads


ops.register_proto_function(
    ops.GraphKeys.QUEUE_RUNNERS,
    proto_type=queue_runner_def_class(),
    to_proto=lambda runner, export_scope=None: runner.to_proto(export_scope=export_scope),
    from_proto=QueueRunner.from_proto,
)
