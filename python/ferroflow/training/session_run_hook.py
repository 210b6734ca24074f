"""The hook interface of ``MonitoredSession.run`` (``tf.train.SessionRunHook`` and its argument types).

For every ``run()`` call a monitored session asks each hook's ``before_run`` for extra fetches, feeds and
run options (a ``SessionRunArgs``), runs them together with the caller's request in one ``Session.run``,
and hands each hook its own results in ``after_run`` (a ``SessionRunValues``).
"""

from __future__ import annotations

import collections

__all__ = ["SessionRunArgs", "SessionRunContext", "SessionRunHook", "SessionRunValues"]


class SessionRunHook:
    """Hook to extend calls to ``MonitoredSession.run()``.

    The calls, in order: ``begin()`` once before the graph is finalized; ``after_create_session(session,
    coord)`` each time a session is created (again after a recovery); ``before_run(run_context)`` /
    ``after_run(run_context, run_values)`` around every run; ``end(session)`` when the monitored session
    closes normally. Every method does nothing by default.
    """

    def begin(self):
        """Called once before the session is used; the hook may still add ops to the default graph."""

    def after_create_session(self, session, coord):
        """Called when a new session has been created and initialized (the graph is finalized)."""

    def before_run(self, run_context):
        """Called before each run; returns None or a ``SessionRunArgs`` to add to the run."""
        return None

    def after_run(self, run_context, run_values):
        """Called after each run with the results of what ``before_run`` asked for."""

    def end(self, session):
        """Called when the monitored session closes without an error; ``session`` can still run ops."""


class SessionRunArgs(collections.namedtuple("SessionRunArgs", ["fetches", "feed_dict", "options"])):
    """What a hook adds to a ``Session.run()`` call: ``fetches`` (any fetch structure), ``feed_dict`` and
    ``options`` (a ``RunOptions`` merged with the caller's)."""

    __slots__ = ()

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunContext:
    """Information about the ``run()`` call being made, and a way for hooks to request a stop."""

    def __init__(self, original_args, session):
        """``original_args``: the caller's ``SessionRunArgs``; ``session``: the session that runs."""
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    @property
    def original_args(self):
        """The caller's arguments, as a ``SessionRunArgs``."""
        return self._original_args

    @property
    def session(self):
        """The session that executes the run."""
        return self._session

    @property
    def stop_requested(self):
        """Whether a hook called ``request_stop()``."""
        return self._stop_requested

    def request_stop(self):
        """Asks the monitored session to stop after this run (``should_stop()`` becomes True)."""
        self._stop_requested = True


class SessionRunValues(collections.namedtuple("SessionRunValues", ["results", "options", "run_metadata"])):
    """The results of a run for one hook: ``results`` has the structure of the hook's fetches; ``options``
    and ``run_metadata`` are those of the whole run."""

    __slots__ = ()
