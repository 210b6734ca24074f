"""``tf.train.add_queue_runner`` and ``tf.train.start_queue_runners``.

ferroflow has no queue ops yet, hence no ``QueueRunner`` class; these functions keep TF1 programs that call
them working. A queue runner here is any object with TensorFlow's ``create_threads(sess, coord, daemon,
start)`` method.
"""

from __future__ import annotations

from ferroflow.client import session as session_lib
from ferroflow.framework import ops

__all__ = ["add_queue_runner", "start_queue_runners"]


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
