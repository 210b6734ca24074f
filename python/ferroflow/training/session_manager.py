"""``tf.train.SessionManager``: creates sessions, restores them from the latest checkpoint or initializes
them, and waits for a model another task initializes.

A model is *ready* when its ``ready_op`` (by default ``report_uninitialized_variables()``) returns an empty
1-D string tensor; otherwise the names it returns explain what is missing.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from ferroflow.client import session as session_lib
from ferroflow.framework import errors, ops
from ferroflow.training import checkpoint_management

__all__ = ["SessionManager"]

_log = logging.getLogger(__name__)


def _maybe_name(obj):
    """The name of an op or tensor, for messages."""
    if obj is None:
        return "None"
    return getattr(obj, "name", None) or f"<no name for {type(obj).__name__}>"


def _checkpoint_state(checkpoint_dir):
    """The ``CheckpointState`` of ``checkpoint_dir`` (``tf.train.get_checkpoint_state``), or None."""
    return checkpoint_management.get_checkpoint_state(checkpoint_dir)


class SessionManager:
    """Training helper that restores a model from a checkpoint or initializes it, and creates sessions.

    ``local_init_op`` runs in every new session (once ``ready_for_local_init_op`` reports ready);
    ``ready_op`` decides whether the model is ready; ``recovery_wait_secs`` is the pause between checks
    while waiting for a checkpoint or for another task to make the model ready.
    """

    def __init__(self, local_init_op=None, ready_op=None, ready_for_local_init_op=None, graph=None,
                 recovery_wait_secs=30, local_init_run_options=None, local_init_feed_dict=None):
        if graph is None:
            graph = ops.get_default_graph()
        if ready_for_local_init_op is not None and local_init_op is None:
            raise ValueError(
                "If you pass a ready_for_local_init_op you must also pass a local_init_op , "
                f"ready_for_local_init_op [{ready_for_local_init_op}]"
            )
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._graph = graph
        self._recovery_wait_secs = recovery_wait_secs
        self._local_init_run_options = local_init_run_options
        self._target = None

    def _restore_checkpoint(self, master, saver=None, checkpoint_dir=None, checkpoint_filename_with_path=None,
                            wait_for_checkpoint=False, max_wait_secs=7200, config=None):
        """A new session, restored if a checkpoint is available: ``(sess, restored)``."""
        self._target = master
        if checkpoint_dir and checkpoint_filename_with_path:
            raise ValueError("Can not provide both checkpoint_dir and checkpoint_filename_with_path.")
        sess = session_lib.Session(self._target, graph=self._graph, config=config)
        if not saver or not (checkpoint_dir or checkpoint_filename_with_path):
            return sess, False
        if checkpoint_filename_with_path:
            saver.restore(sess, checkpoint_filename_with_path)
            return sess, True
        waited = 0
        ckpt = _checkpoint_state(checkpoint_dir)
        while not ckpt or not ckpt.model_checkpoint_path:
            if wait_for_checkpoint and waited < max_wait_secs:
                _log.info("Waiting for checkpoint to be available.")
                time.sleep(self._recovery_wait_secs)
                waited += self._recovery_wait_secs
                ckpt = _checkpoint_state(checkpoint_dir)
            else:
                return sess, False
        saver.restore(sess, ckpt.model_checkpoint_path)
        saver.recover_last_checkpoints(list(ckpt.all_model_checkpoint_paths))
        return sess, True

    def prepare_session(self, master, init_op=None, saver=None, checkpoint_dir=None,
                        checkpoint_filename_with_path=None, wait_for_checkpoint=False, max_wait_secs=7200,
                        config=None, init_feed_dict=None, init_fn=None):
        """A session with a ready model: restored from the latest checkpoint in ``checkpoint_dir`` (or
        ``checkpoint_filename_with_path``) with ``saver`` if there is one, else initialized by ``init_op``
        (fed ``init_feed_dict``) and ``init_fn(sess)``; then ``local_init_op`` runs.

        Raises RuntimeError if nothing can initialize the model or it is still not ready afterwards.
        """
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir=checkpoint_dir, checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs, config=config,
        )
        if not restored:
            if init_op is None and not init_fn and self._local_init_op is None:
                raise RuntimeError("Model is not initialized and no init_op or init_fn or local_init_op was given")
            if init_op is not None:
                sess.run(init_op, feed_dict=init_feed_dict)
            if init_fn:
                init_fn(sess)
        ok, msg = self._try_run_local_init_op(sess)
        if not ok:
            raise RuntimeError(
                "Init operations did not make model ready for local_init.  "
                f"Init op: {_maybe_name(init_op)}, init fn: {init_fn}, error: {msg}"
            )
        ready, msg = self._model_ready(sess)
        if not ready:
            raise RuntimeError(
                "Init operations did not make model ready.  "
                f"Init op: {_maybe_name(init_op)}, init fn: {init_fn}, local_init_op: "
                f"{_maybe_name(self._local_init_op)}, error: {msg}"
            )
        return sess

    def recover_session(self, master, saver=None, checkpoint_dir=None, checkpoint_filename_with_path=None,
                        wait_for_checkpoint=False, max_wait_secs=7200, config=None):
        """A new session restored from a checkpoint if possible: ``(sess, initialized)``, where
        ``initialized`` is True only if the restore made the model ready."""
        sess, restored = self._restore_checkpoint(
            master, saver, checkpoint_dir=checkpoint_dir, checkpoint_filename_with_path=checkpoint_filename_with_path,
            wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs, config=config,
        )
        ok, msg = self._try_run_local_init_op(sess)
        if not restored:
            return sess, False
        source = checkpoint_dir or checkpoint_filename_with_path
        if not ok:
            _log.info("Restoring model from %s did not make model ready for local init: %s", source, msg)
            return sess, False
        ready, msg = self._model_ready(sess)
        if not ready:
            _log.info("Restoring model from %s did not make model ready: %s", source, msg)
            return sess, False
        _log.info("Restored model from %s", source)
        return sess, True

    def wait_for_session(self, master, config=None, max_wait_secs=float("Inf")):
        """Creates sessions until one finds the model ready (checking every ``recovery_wait_secs``).

        Raises ``tf.errors.DeadlineExceededError`` if none is ready within ``max_wait_secs``.
        """
        self._target = master
        if max_wait_secs is None:
            max_wait_secs = float("Inf")
        deadline = time.monotonic() + max_wait_secs
        while True:
            sess = session_lib.Session(self._target, graph=self._graph, config=config)
            not_ready_msg = None
            ok, not_ready_local_msg = self._try_run_local_init_op(sess)
            if ok:
                ready, not_ready_msg = self._model_ready(sess)
                if ready:
                    return sess
            self._safe_close(sess)
            if deadline - time.monotonic() - self._recovery_wait_secs < 0:
                raise errors.DeadlineExceededError(
                    None, None, f"Session was not ready after waiting {max_wait_secs} secs."
                )
            _log.info(
                "Waiting for model to be ready.  Ready_for_local_init_op:  %s, ready: %s",
                not_ready_local_msg, not_ready_msg,
            )
            time.sleep(self._recovery_wait_secs)

    @staticmethod
    def _safe_close(sess):
        try:
            sess.close()
        except Exception:  # noqa: BLE001 - closing a session that is being given up on
            _log.debug("ignored an error while closing a session", exc_info=True)

    def _model_ready(self, sess):
        return _ready(self._ready_op, sess, "Model not ready")

    def _model_ready_for_local_init(self, sess):
        return _ready(self._ready_for_local_init_op, sess, "Model not ready for local init")

    def _try_run_local_init_op(self, sess):
        """Runs ``local_init_op`` if the model is ready for it: ``(ran_or_not_needed, why_not)``."""
        if self._local_init_op is None:
            return True, None
        ready, msg = self._model_ready_for_local_init(sess)
        if not ready:
            return False, msg
        _log.info("Running local_init_op.")
        sess.run(self._local_init_op, feed_dict=self._local_init_feed_dict, options=self._local_init_run_options)
        _log.info("Done running local_init_op.")
        return True, None


def _ready(op, sess, msg):
    """``(True, None)`` if ``op`` (a ready op) reports nothing missing, else ``(False, explanation)``."""
    if op is None:
        return True, None
    try:
        value = sess.run(op)
    except errors.FailedPreconditionError as e:
        if "uninitialized" not in str(e):
            _log.warning("%s : error [%s]", msg, e)
            raise
        return False, str(e)
    value = np.asarray(value) if value is not None else None
    if value is None or value.dtype == np.int32 or value.size == 0:
        return True, None
    names = ", ".join(v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in value.ravel())
    return False, "Variables not initialized: " + names
