"""``tf.train.QueueRunner``, ``tf.train.add_queue_runner`` and ``tf.train.start_queue_runners``.

ferroflow has no queue ops yet (no ``FIFOQueue``), so a ``QueueRunner`` here drives arbitrary "enqueue" ops:
each gets a thread that runs it until the coordinator stops or it raises one of
``queue_closed_exception_types``; the last thread to finish runs ``close_op``, and a stop requested on the
coordinator runs ``cancel_op``. ``queue`` only names the runner (and would supply the default close and
cancel ops, so with no queue type both must be given). ``QueueRunnerDef`` serialization (``to_proto``,
``from_proto``, ``queue_runner_def``) is not available.
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
        if queue_runner_def is not None or import_scope is not None:
            raise NotImplementedError(
                "QueueRunner(queue_runner_def=..., import_scope=...): ferroflow has no QueueRunnerDef support"
            )
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
