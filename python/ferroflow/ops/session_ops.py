"""Tensors kept in a session between runs: ``tf.get_session_handle``, ``tf.get_session_tensor``,
``tf.delete_session_tensor`` and the ``TensorHandle`` that ``Session.run`` returns for a handle.

``sess.run(tf.get_session_handle(x))`` keeps ``x``'s value in the session (the ``GetSessionHandle``
kernel stores it under a handle string, ``<node>;<id>;<device>`` as TensorFlow writes it) and returns a
``TensorHandle``. A later run reads it back through the placeholder and tensor that
``get_session_tensor`` makes (feed the handle, or the ``TensorHandle`` itself, to the placeholder), so
the value never travels through Python. ``TensorHandle.delete()`` (or garbage collection of the handle,
batched as TensorFlow batches it) drops it from the session.
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops
from ferroflow.ops import array_ops
from ferroflow.ops._op_util import make, make_op, type_attr

__all__ = ["TensorHandle", "delete_session_tensor", "get_session_handle", "get_session_tensor"]


class TensorHandle:
    """A tensor kept in ``session``: its handle string and dtype. ``eval()`` reads the value back."""

    def __init__(self, handle, dtype, session):
        self._handle = handle.decode() if isinstance(handle, bytes) else str(handle)
        self._dtype = dtypes.as_dtype(dtype)
        self._session = session
        self._deleted = False

    def __del__(self):
        session = getattr(self, "_session", None)
        if session is not None and not self._deleted:
            register = getattr(session, "_register_dead_handle", None)
            if register is not None:
                register(self._handle)

    def __str__(self):
        return self._handle

    @property
    def handle(self):
        """The handle string (what the ``get_session_tensor`` placeholder takes)."""
        return self._handle

    @property
    def dtype(self):
        return self._dtype

    def get_raw_handle(self):
        return self._handle

    def eval(self):
        """The kept tensor's value, read in its session."""
        holder, reader = _get_handle_reader(self._session.graph, self._handle, self._dtype)
        return self._session.run(reader, feed_dict={holder: self._handle})

    def delete(self):
        """Drops the kept tensor from the session."""
        if self._deleted:
            return
        self._deleted = True
        holder, deleter = _get_handle_deleter(self._session.graph, self._handle)
        self._session.run(deleter, feed_dict={holder: self._handle})

    @staticmethod
    def _get_device_name(handle):
        """The device named at the end of a handle string."""
        handle = handle.decode() if isinstance(handle, bytes) else str(handle)
        return handle.split(";")[-1]


def _get_handle_reader(graph, handle, dtype):
    """The ``(holder, reader)`` pair that reads kept tensors of ``dtype`` on ``handle``'s device, made once
    per graph."""
    device = TensorHandle._get_device_name(handle)
    return _cached_op(graph, "_handle_readers", (device, dtype), lambda: get_session_tensor(handle, dtype))


def _get_handle_deleter(graph, handle):
    """The ``(holder, deleter)`` pair that drops kept tensors on ``handle``'s device, made once per graph."""
    device = TensorHandle._get_device_name(handle)
    return _cached_op(graph, "_handle_deleters", device, lambda: delete_session_tensor(handle))


def _cached_op(graph, attribute, key, build):
    """The ``(holder, op)`` pair cached on ``graph`` under ``attribute[key]``, built on first use."""
    cache = getattr(graph, attribute, None)
    if cache is None:
        cache = {}
        setattr(graph, attribute, cache)
    pair = cache.get(key)
    if pair is None:
        with graph.as_default():
            pair = cache[key] = build()
    return pair


def get_session_handle(data, name=None):
    """A string handle to ``data``'s value, kept in the session when the handle is fetched."""
    if not isinstance(data, ops.Tensor):
        raise TypeError("`data` must be of type Tensor.")
    with ops.colocate_with(data):
        return make("GetSessionHandle", [data], {"T": type_attr(data.dtype.base_dtype)}, name or "GetSessionHandle")


def get_session_tensor(handle, dtype, name=None):
    """``(holder, tensor)``: feed a handle (or ``TensorHandle``) to the string placeholder ``holder`` and
    ``tensor`` is the kept value, of ``dtype``."""
    dtype = dtypes.as_dtype(dtype)
    with ops.device(TensorHandle._get_device_name(handle)):
        holder = array_ops.placeholder(dtypes.string)
        tensor = make("GetSessionTensor", [holder], {"dtype": type_attr(dtype)}, name or "GetSessionTensor")
    return holder, tensor


def delete_session_tensor(handle, name=None):
    """``(holder, deleter)``: running ``deleter`` with a handle fed to ``holder`` drops that tensor."""
    with ops.device(TensorHandle._get_device_name(handle)):
        holder = array_ops.placeholder(dtypes.string)
        deleter = make_op("DeleteSessionTensor", [holder], {}, name or "DeleteSessionTensor")
    return holder, deleter
