"""``tf.logging``: TensorFlow 1.x's logging functions, over Python's :mod:`logging`.

Messages go to the ``"tensorflow"`` logger, as in TensorFlow, so code that
configures ``logging.getLogger("tensorflow")`` keeps working. ferroflow's own
modules log to the ``"ferroflow"`` logger and its children (hooks, savers,
queue runners, ...); :func:`set_verbosity` sets the level of both loggers, so
``tf.logging.set_verbosity(tf.logging.INFO)`` shows the ``LoggingTensorHook``
and ``StepCounterHook`` lines as it does in TensorFlow.

When the root logger has no handler (nothing called ``logging.basicConfig``),
the first use of ``tf.logging`` gives each of the two loggers a handler that
writes ``LEVEL:logger:message`` lines to stderr (TensorFlow's format); with a
configured root logger, records only propagate to it.

``fatal`` logs at CRITICAL and returns, like TensorFlow's (it does not exit).
"""

from __future__ import annotations

import logging as _logging
import sys as _sys
import threading as _threading

__all__ = [
    "DEBUG",
    "ERROR",
    "FATAL",
    "INFO",
    "WARN",
    "TaskLevelStatusMessage",
    "debug",
    "error",
    "fatal",
    "flush",
    "get_verbosity",
    "info",
    "log",
    "log_every_n",
    "log_first_n",
    "log_if",
    "set_verbosity",
    "vlog",
    "warn",
    "warning",
]

# TensorFlow's level constants are Python's.
DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARN
ERROR = _logging.ERROR
FATAL = _logging.FATAL

_TF_LOGGER = "tensorflow"
_FF_LOGGER = "ferroflow"

_lock = _threading.Lock()
_configured = False
_handlers = []
_log_counts = {}


def _ensure_handlers():
    """Gives both loggers a stderr handler on first use when the root logger has none."""
    global _configured
    if _configured:
        return
    with _lock:
        if _configured:
            return
        if not _logging.getLogger().handlers:
            for name in (_TF_LOGGER, _FF_LOGGER):
                logger = _logging.getLogger(name)
                if not logger.handlers:
                    handler = _logging.StreamHandler(_sys.stderr)
                    handler.setFormatter(_logging.Formatter(_logging.BASIC_FORMAT, None))
                    logger.addHandler(handler)
                    _handlers.append(handler)
        _configured = True


def _logger():
    _ensure_handlers()
    return _logging.getLogger(_TF_LOGGER)


def _emit(level, msg, args, kwargs):
    # stacklevel 3: the record names the caller of tf.logging.<fn>, not this module.
    kwargs.setdefault("stacklevel", 3)
    _logger().log(level, msg, *args, **kwargs)


def log(level, msg, *args, **kwargs):
    """Logs ``msg % args`` at ``level`` (an int such as ``tf.logging.INFO``)."""
    _emit(level, msg, args, kwargs)


def debug(msg, *args, **kwargs):
    _emit(DEBUG, msg, args, kwargs)


def info(msg, *args, **kwargs):
    _emit(INFO, msg, args, kwargs)


def warning(msg, *args, **kwargs):
    _emit(WARN, msg, args, kwargs)


def warn(msg, *args, **kwargs):
    """``warning`` (TensorFlow's older name)."""
    _emit(WARN, msg, args, kwargs)


def error(msg, *args, **kwargs):
    _emit(ERROR, msg, args, kwargs)


def fatal(msg, *args, **kwargs):
    """Logs at FATAL (CRITICAL); like TensorFlow's, it does not stop the program."""
    _emit(FATAL, msg, args, kwargs)


def vlog(level, msg, *args, **kwargs):
    """Logs at ``level`` (TensorFlow's verbose-log call is plain ``log``)."""
    _emit(level, msg, args, kwargs)


def TaskLevelStatusMessage(msg):  # noqa: N802 - TensorFlow's name
    """Logs ``msg`` as an error (TensorFlow's task-status hook does the same outside Borg)."""
    _emit(ERROR, msg, (), {})


def flush():
    """Flushes the handlers of the TensorFlow and ferroflow loggers."""
    for name in (_TF_LOGGER, _FF_LOGGER):
        for handler in _logging.getLogger(name).handlers:
            handler.flush()


def _call_site():
    """(file, line) of the caller of the public function that called this."""
    frame = _sys._getframe(2)
    return frame.f_code.co_filename, frame.f_lineno


def _next_count(token):
    with _lock:
        count = _log_counts.get(token, 0)
        _log_counts[token] = count + 1
    return count


def log_if(level, msg, condition, *args):
    """Logs ``msg % args`` at ``level`` if ``condition`` is true."""
    if condition:
        _emit(level, msg, args, {})


def log_every_n(level, msg, n, *args):
    """Logs on the 1st, (n+1)-th, (2n+1)-th, ... time this call site runs."""
    if not _next_count(_call_site()) % n:
        _emit(level, msg, args, {})


def log_first_n(level, msg, n, *args):
    """Logs only the first ``n`` times this call site runs."""
    if _next_count(_call_site()) < n:
        _emit(level, msg, args, {})


def get_verbosity():
    """The effective level of the ``"tensorflow"`` logger (WARN unless set)."""
    return _logger().getEffectiveLevel()


def set_verbosity(v):
    """Sets the threshold of the ``"tensorflow"`` and ``"ferroflow"`` loggers to ``v``."""
    _logger().setLevel(v)
    _logging.getLogger(_FF_LOGGER).setLevel(v)
