"""Session wrappers that run hooks, initialize or restore the model, and recover from failures:
``tf.train.MonitoredSession``, ``SingularMonitoredSession``, ``MonitoredTrainingSession``, ``Scaffold``
and the session creators.

A ``MonitoredSession`` is built from layers, outermost first:

* ``_RecoverableSession`` (``MonitoredSession`` only): on ``AbortedError`` or ``UnavailableError`` it
  closes the session, creates a new one through the creator (which restores the latest checkpoint) and
  runs the call again;
* ``_CoordinatedSession``: re-raises exceptions reported to the session's ``Coordinator`` by other threads,
  and stops and joins those threads on close;
* ``_HookedSession``: calls the hooks' ``before_run``/``after_run`` around each run and merges their
  fetches, feeds and run options into one ``Session.run``.
"""

from __future__ import annotations

import inspect
import logging
import sys

from ferroflow.framework import errors, ops
from ferroflow.ops import control_flow_ops, lookup_ops, variables
from ferroflow.protos import RunMetadata, RunOptions
from ferroflow.summary import summary_ops
from ferroflow.training import basic_session_run_hooks, coordinator
from ferroflow.training import queue_runner_impl as queue_runner
from ferroflow.training import saver as saver_lib
from ferroflow.training.session_manager import SessionManager
from ferroflow.training.session_run_hook import (
    SessionRunArgs,
    SessionRunContext,
    SessionRunHook,
    SessionRunValues,
)

__all__ = [
    "ChiefSessionCreator",
    "MonitoredSession",
    "MonitoredTrainingSession",
    "Scaffold",
    "SessionCreator",
    "SingularMonitoredSession",
    "WorkerSessionCreator",
]

_log = logging.getLogger(__name__)

# Errors after which MonitoredSession recreates its session.
_PREEMPTION_ERRORS = (errors.AbortedError, errors.UnavailableError)

# Marks arguments of MonitoredTrainingSession left at TensorFlow's defaults.
USE_DEFAULT = object()


def _get_saver_or_default():
    """The only Saver in the ``SAVERS`` collection, else a new ``Saver(sharded=True, allow_empty=True)``
    added to it."""
    savers = ops.get_collection(ops.GraphKeys.SAVERS)
    if savers:
        if len(savers) > 1:
            raise RuntimeError(
                f"More than one item in collection {ops.GraphKeys.SAVERS}. Please indicate which one to use by "
                "passing it to the constructor."
            )
        return savers[0]
    saver = saver_lib.Saver(sharded=True, allow_empty=True)
    ops.add_to_collection(ops.GraphKeys.SAVERS, saver)
    return saver


def _default_summary_op():
    return summary_ops.merge_all()


class Scaffold:
    """The pieces a training session needs, taken from the constructor, else from the graph's collections,
    else built when ``finalize()`` is called (and then added to those collections):

    ``init_op`` (INIT_OP; default: initialize the global variables), ``ready_op`` (READY_OP; default:
    ``report_uninitialized_variables()``), ``ready_for_local_init_op`` (READY_FOR_LOCAL_INIT_OP; default:
    the uninitialized global variables), ``local_init_op`` (LOCAL_INIT_OP; default:
    ``default_local_init_op()``), ``summary_op`` (SUMMARY_OP; default: ``tf.summary.merge_all()``) and
    ``saver`` (SAVERS; default: ``Saver(sharded=True, allow_empty=True)``). ``init_fn(scaffold, session)``
    runs after ``init_op``. ``finalize()`` finalizes the graph.
    """

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None, ready_for_local_init_op=None,
                 local_init_op=None, summary_op=None, saver=None, copy_from_scaffold=None,
                 local_init_feed_dict=None):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")

            def coalesce(a, b):
                return a if a is not None else b

            init_op = coalesce(init_op, copy_from_scaffold.init_op)
            init_feed_dict = coalesce(init_feed_dict, copy_from_scaffold.init_feed_dict)
            init_fn = coalesce(init_fn, copy_from_scaffold._user_init_fn)
            ready_op = coalesce(ready_op, copy_from_scaffold.ready_op)
            ready_for_local_init_op = coalesce(ready_for_local_init_op, copy_from_scaffold.ready_for_local_init_op)
            local_init_op = coalesce(local_init_op, copy_from_scaffold.local_init_op)
            local_init_feed_dict = coalesce(local_init_feed_dict, copy_from_scaffold.local_init_feed_dict)
            summary_op = coalesce(summary_op, copy_from_scaffold.summary_op)
            saver = coalesce(saver, copy_from_scaffold.saver)
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._summary_op = summary_op
        self._saver = saver

    def finalize(self):
        """Builds the missing pieces and finalizes the default graph; returns self."""
        if self._init_op is None:
            self._init_op = Scaffold.get_or_default(
                "init_op", ops.GraphKeys.INIT_OP, lambda: control_flow_ops.group(variables.global_variables_initializer())
            )
        if self._ready_op is None:
            self._ready_op = Scaffold.get_or_default(
                "ready_op", ops.GraphKeys.READY_OP, variables.report_uninitialized_variables
            )
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = Scaffold.get_or_default(
                "ready_for_local_init_op", ops.GraphKeys.READY_FOR_LOCAL_INIT_OP,
                lambda: variables.report_uninitialized_variables(variables.global_variables()),
            )
        if self._local_init_op is None:
            self._local_init_op = Scaffold.get_or_default(
                "local_init_op", ops.GraphKeys.LOCAL_INIT_OP, Scaffold.default_local_init_op
            )
        if self._summary_op is None:
            self._summary_op = Scaffold.get_or_default("summary_op", ops.GraphKeys.SUMMARY_OP, _default_summary_op)
        if self._saver is None:
            self._saver = _get_saver_or_default()
        build = getattr(self._saver, "build", None)
        if build is not None:
            build()
        ops.get_default_graph().finalize()
        _log.info("Graph was finalized.")
        return self

    @property
    def init_fn(self):
        return self._init_fn

    @property
    def init_op(self):
        return self._init_op

    @property
    def ready_op(self):
        return self._ready_op

    @property
    def ready_for_local_init_op(self):
        return self._ready_for_local_init_op

    @property
    def local_init_op(self):
        return self._local_init_op

    @property
    def local_init_feed_dict(self):
        return self._local_init_feed_dict

    @property
    def summary_op(self):
        return self._summary_op

    @property
    def saver(self):
        return self._saver

    @property
    def init_feed_dict(self):
        return self._init_feed_dict

    @staticmethod
    def get_or_default(arg_name, collection_key, default_constructor):
        """The only item of collection ``collection_key``, else ``default_constructor()`` (added to the
        collection unless None). Raises RuntimeError if the collection holds several items."""
        elements = ops.get_collection(collection_key)
        if elements:
            if len(elements) > 1:
                raise RuntimeError(
                    f"More than one item in the collection {collection_key}. Please indicate which one to use by "
                    f"passing it to the tf.Scaffold constructor as:  tf.Scaffold({arg_name}=item to use)"
                )
            return elements[0]
        op = default_constructor()
        if op is not None:
            ops.add_to_collection(collection_key, op)
        return op

    @staticmethod
    def default_local_init_op():
        """An op initializing the local variables and the lookup tables (TABLE_INITIALIZERS), as
        TensorFlow's (ferroflow has no other local resources)."""
        return control_flow_ops.group(variables.local_variables_initializer(), lookup_ops.tables_initializer())


class SessionCreator:
    """A factory for ``tf.Session`` objects (``create_session()``)."""

    def create_session(self):
        raise NotImplementedError(f"create_session is not implemented for {type(self).__name__}.")


def _session_manager_for(scaffold):
    """A SessionManager over the default graph using ``scaffold``'s readiness and local-init ops."""
    return SessionManager(
        local_init_op=scaffold.local_init_op,
        local_init_feed_dict=scaffold.local_init_feed_dict,
        ready_op=scaffold.ready_op,
        ready_for_local_init_op=scaffold.ready_for_local_init_op,
        graph=ops.get_default_graph(),
    )


class ChiefSessionCreator(SessionCreator):
    """Creates a session for the chief: finalizes ``scaffold``, then restores the latest checkpoint of
    ``checkpoint_dir`` (or ``checkpoint_filename_with_path``) or initializes the model."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None, checkpoint_filename_with_path=None):
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path
        self._scaffold = scaffold or Scaffold()
        self._session_manager = None
        self._master = master
        self._config = config

    def _get_session_manager(self):
        if self._session_manager is None:
            self._session_manager = _session_manager_for(self._scaffold)
        return self._session_manager

    def create_session(self):
        self._scaffold.finalize()
        return self._get_session_manager().prepare_session(
            self._master,
            saver=self._scaffold.saver,
            checkpoint_dir=self._checkpoint_dir,
            checkpoint_filename_with_path=self._checkpoint_filename_with_path,
            config=self._config,
            init_op=self._scaffold.init_op,
            init_feed_dict=self._scaffold.init_feed_dict,
            init_fn=self._scaffold.init_fn,
        )


class WorkerSessionCreator(SessionCreator):
    """Creates a session for a worker: waits (up to ``max_wait_secs``) until the model is ready."""

    def __init__(self, scaffold=None, master="", config=None, max_wait_secs=30 * 60):
        self._scaffold = scaffold or Scaffold()
        self._session_manager = None
        self._master = master
        self._config = config
        self._max_wait_secs = max_wait_secs

    def _get_session_manager(self):
        if self._session_manager is None:
            self._session_manager = _session_manager_for(self._scaffold)
        return self._session_manager

    def create_session(self):
        self._scaffold.finalize()
        return self._get_session_manager().wait_for_session(
            self._master, config=self._config, max_wait_secs=self._max_wait_secs
        )


def _unfinalize(graph):
    """Makes ``graph`` editable again after the session that finalized it closes, as TensorFlow does."""
    graph._unsafe_unfinalize()


def _step_fn_arguments(step_fn):
    """The parameter names of ``step_fn`` (a bound method's ``self`` included, as TensorFlow counts it)."""
    names = tuple(inspect.signature(step_fn).parameters)
    if inspect.ismethod(step_fn):
        names = ("self",) + names
    return names


class _MonitoredSession:
    """What ``MonitoredSession`` and ``SingularMonitoredSession`` share."""

    def __init__(self, session_creator, hooks, should_recover, stop_grace_period_secs=120):
        self._graph_was_finalized = ops.get_default_graph().finalized
        self._hooks = list(hooks or [])
        self._stop_requested_in_step_fn = False
        for h in self._hooks:
            h.begin()
        self._coordinated_creator = self._CoordinatedSessionCreator(
            session_creator=session_creator or ChiefSessionCreator(),
            hooks=self._hooks,
            stop_grace_period_secs=stop_grace_period_secs,
        )
        if should_recover:
            self._sess = _RecoverableSession(self._coordinated_creator)
        else:
            self._sess = self._coordinated_creator.create_session()

    @property
    def graph(self):
        """The graph that was launched in this session."""
        if self._tf_sess() is None:
            return None
        return self._tf_sess().graph

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Runs like ``tf.Session.run``, with the hooks called around it."""
        return self._sess.run(fetches, feed_dict=feed_dict, options=options, run_metadata=run_metadata)

    def run_step_fn(self, step_fn):
        """Calls ``step_fn(step_context)`` and returns its result. ``step_context.session`` is the raw
        session (no hooks), ``step_context.run_with_hooks(...)`` runs like ``run``, and
        ``step_context.request_stop()`` ends the loop (``should_stop()`` becomes True)."""
        args = _step_fn_arguments(step_fn)
        if args != ("step_context",) and args != ("self", "step_context"):
            raise ValueError(
                "`step_fn` may either have one `step_context` argument, or `self` and `step_context` arguments "
                f"if it's an instance method. Got {args} instead."
            )
        try:
            return self._sess.run_step_fn(step_fn, self._tf_sess(), run_with_hooks=None)
        except StopIteration:
            # step_context.request_stop(): the caller sees StopIteration, should_stop() turns True.
            self._stop_requested_in_step_fn = True
            raise

    class StepContext:
        """What a ``step_fn`` gets: the raw ``session``, ``run_with_hooks`` and ``request_stop``."""

        def __init__(self, session, run_with_hooks_fn):
            self._session = session
            self._run_with_hooks_fn = run_with_hooks_fn

        @property
        def session(self):
            return self._session

        def run_with_hooks(self, *args, **kwargs):
            """Runs like ``MonitoredSession.run``, with the hooks."""
            return self._run_with_hooks_fn(*args, **kwargs)

        def request_stop(self):
            """Ends ``step_fn`` (by raising StopIteration) and makes ``should_stop()`` True."""
            raise StopIteration("step_fn has requested the iterations to stop.")

    def should_stop(self):
        """True once a hook or ``step_fn`` requested a stop, a coordinated thread stopped, or the session
        was closed."""
        return self._sess is None or self._stop_requested_in_step_fn or self._sess.should_stop()

    def close(self):
        """Calls the hooks' ``end()``, then stops the coordinated threads and closes the session."""
        self._close_internal()

    def __enter__(self):
        return self

    def __exit__(self, exception_type, exception_value, traceback):
        if exception_type in (errors.OutOfRangeError, StopIteration):
            exception_type = None
        self._close_internal(exception_type)
        # True suppresses the exception: the end of input is a normal end of training.
        return exception_type is None

    class _CoordinatedSessionCreator(SessionCreator):
        """Creates the raw session, then the coordinator, queue runners and hooked session around it."""

        def __init__(self, session_creator, hooks, stop_grace_period_secs):
            self._session_creator = session_creator
            self._hooks = hooks
            self.coord = None
            self.tf_sess = None
            self._stop_grace_period_secs = stop_grace_period_secs

        def create_session(self):
            self.tf_sess = self._session_creator.create_session()
            # No exception type is a clean stop here: every one must reach the caller.
            self.coord = coordinator.Coordinator(clean_stop_exception_types=[])
            if ops.get_collection(ops.GraphKeys.QUEUE_RUNNERS):
                queue_runner.start_queue_runners(sess=self.tf_sess, coord=self.coord)
            for hook in self._hooks:
                hook.after_create_session(self.tf_sess, self.coord)
            return _CoordinatedSession(_HookedSession(self.tf_sess, self._hooks), self.coord,
                                       self._stop_grace_period_secs)

    def _close_internal(self, exception_type=None):
        try:
            if not exception_type:
                for h in self._hooks:
                    h.end(self._coordinated_creator.tf_sess)
        finally:
            try:
                if self._sess is None:
                    raise RuntimeError("Session is already closed.")
                self._sess.close()
            finally:
                self._sess = None
                self._coordinated_creator.tf_sess = None
                self._coordinated_creator.coord = None
                if not self._graph_was_finalized:
                    _unfinalize(ops.get_default_graph())

    def _is_closed(self):
        return self._sess is None

    def _tf_sess(self):
        return self._coordinated_creator.tf_sess


class MonitoredSession(_MonitoredSession):
    """Session-like object that initializes or restores the model, runs hooks, and recovers.

    On creation: every hook's ``begin()``; ``scaffold.finalize()``; the session is created and the model
    restored from the latest checkpoint or initialized (by ``session_creator``, a ``ChiefSessionCreator``
    by default); queue runners start; every hook's ``after_create_session(session, coord)``.

    ``run()``: the hooks' ``before_run`` (in order), one ``Session.run`` of the caller's fetches merged with
    the hooks' fetches, feeds and options, the hooks' ``after_run`` (in order), then the caller's results.
    On ``AbortedError`` or ``UnavailableError`` the session is recreated (restoring the latest checkpoint)
    and the call repeated.

    ``close()``: the hooks' ``end(session)``, then the threads are stopped and the session closed. Used as a
    context manager, ``OutOfRangeError`` and ``StopIteration`` raised in the block end it normally.
    """

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        super().__init__(session_creator, hooks, should_recover=True, stop_grace_period_secs=stop_grace_period_secs)


class SingularMonitoredSession(_MonitoredSession):
    """A ``MonitoredSession`` for a single process: always the chief, no recovery from
    ``AbortedError``/``UnavailableError``, and ``raw_session()`` gives the underlying ``tf.Session`` (to run
    without hooks, or to save and restore)."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        session_creator = ChiefSessionCreator(
            scaffold=scaffold, master=master, config=config, checkpoint_dir=checkpoint_dir,
            checkpoint_filename_with_path=checkpoint_filename_with_path,
        )
        super().__init__(session_creator, hooks, should_recover=False, stop_grace_period_secs=stop_grace_period_secs)

    def raw_session(self):
        """The underlying ``tf.Session``."""
        return self._tf_sess()


class _ClusterDoneHook(SessionRunHook):
    """The chief's: when training ends normally, tells the cluster's other tasks it is done.

    ferroflow servers started with ``--exit-when-chief-done`` (or ``FERROFLOW_EXIT_WHEN_CHIEF_DONE=1``)
    then stop, so ps processes exit 0 instead of blocking in ``join()`` forever; other servers
    ignore the message.
    """

    def end(self, session):
        native = getattr(session, "_native", None)
        if native is not None:
            native.shutdown_cluster()


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None, scaffold=None, hooks=None,  # noqa: N802
                             chief_only_hooks=None, save_checkpoint_secs=USE_DEFAULT,
                             save_summaries_steps=USE_DEFAULT, save_summaries_secs=USE_DEFAULT, config=None,
                             stop_grace_period_secs=120, log_step_count_steps=100, max_wait_secs=7200,
                             save_checkpoint_steps=USE_DEFAULT, summary_dir=None, save_graph_def=True):
    """A ``MonitoredSession`` set up for training.

    The chief (``is_chief``) restores from or initializes into ``checkpoint_dir`` and gets, besides
    ``hooks`` and ``chief_only_hooks``: a ``StepCounterHook`` every ``log_step_count_steps`` steps and a
    ``SummarySaverHook`` (every ``save_summaries_steps`` steps, default 100, or ``save_summaries_secs``
    seconds) writing to ``summary_dir`` (default ``checkpoint_dir``), and a ``CheckpointSaverHook`` into
    ``checkpoint_dir`` (every ``save_checkpoint_secs`` seconds, default 600, or ``save_checkpoint_steps``
    steps; seconds win if both are given). Setting both of a pair to None disables that hook. A worker
    (``is_chief=False``) waits up to ``max_wait_secs`` for the chief to make the model ready and runs
    ``hooks`` only.
    """
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    elif save_summaries_secs is USE_DEFAULT:
        save_summaries_secs = None
    elif save_summaries_steps is USE_DEFAULT:
        save_summaries_steps = None
    if save_checkpoint_steps is USE_DEFAULT and save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_steps, save_checkpoint_secs = None, 600
    elif save_checkpoint_secs is USE_DEFAULT:
        save_checkpoint_secs = None
    elif save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_steps = None
    if save_checkpoint_secs is not None and save_checkpoint_steps is not None:
        save_checkpoint_steps = None

    scaffold = scaffold or Scaffold()
    if not is_chief:
        session_creator = WorkerSessionCreator(scaffold=scaffold, master=master, config=config,
                                               max_wait_secs=max_wait_secs)
        return MonitoredSession(session_creator=session_creator, hooks=hooks or [],
                                stop_grace_period_secs=stop_grace_period_secs)

    all_hooks = list(chief_only_hooks or [])
    session_creator = ChiefSessionCreator(scaffold=scaffold, checkpoint_dir=checkpoint_dir, master=master,
                                          config=config)
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(
                basic_session_run_hooks.StepCounterHook(output_dir=summary_dir, every_n_steps=log_step_count_steps)
            )
        if (save_summaries_steps and save_summaries_steps > 0) or (save_summaries_secs and save_summaries_secs > 0):
            all_hooks.append(
                basic_session_run_hooks.SummarySaverHook(
                    scaffold=scaffold, save_steps=save_summaries_steps, save_secs=save_summaries_secs,
                    output_dir=summary_dir,
                )
            )
    if checkpoint_dir and (
        (save_checkpoint_secs and save_checkpoint_secs > 0) or (save_checkpoint_steps and save_checkpoint_steps > 0)
    ):
        all_hooks.append(
            basic_session_run_hooks.CheckpointSaverHook(
                checkpoint_dir, save_steps=save_checkpoint_steps, save_secs=save_checkpoint_secs, scaffold=scaffold,
                save_graph_def=save_graph_def,
            )
        )
    if isinstance(master, (str, bytes)) and (master.decode() if isinstance(master, bytes) else master).startswith(
            "grpc://"):
        all_hooks.append(_ClusterDoneHook())
    all_hooks.extend(hooks or [])
    return MonitoredSession(session_creator=session_creator, hooks=all_hooks,
                            stop_grace_period_secs=stop_grace_period_secs)


class _WrappedSession:
    """A session wrapper; ``should_stop`` asks every layer."""

    def __init__(self, sess):
        self._sess = sess
        self._wrapped_is_stoppable = isinstance(self._sess, _WrappedSession)

    @property
    def graph(self):
        return self._sess.graph

    @property
    def sess_str(self):
        return self._sess.sess_str

    def should_stop(self):
        if self._check_stop():
            return True
        if self._sess is None:
            return True
        return self._wrapped_is_stoppable and self._sess.should_stop()

    def _check_stop(self):
        """Whether this layer wants to stop (layers override it)."""
        return False

    def close(self):
        if self._sess is not None:
            try:
                self._sess.close()
            except _PREEMPTION_ERRORS as e:
                _log.error(
                    "An error occurred when attempting to close the session. This may be due to a preemption in "
                    "a connected worker or parameter server. Error: %s", e,
                )
            finally:
                self._sess = None

    def run(self, *args, **kwargs):
        return self._sess.run(*args, **kwargs)

    def run_step_fn(self, step_fn, raw_session, run_with_hooks):
        run_with_hooks = run_with_hooks or self.run
        return step_fn(_MonitoredSession.StepContext(raw_session, run_with_hooks))


class _RecoverableSession(_WrappedSession):
    """Recreates the session (through its creator, which restores the latest checkpoint) after a
    preemption error, and repeats the call."""

    def __init__(self, sess_creator):
        self._sess_creator = sess_creator
        super().__init__(self._create_session())

    def _create_session(self):
        while True:
            try:
                return self._sess_creator.create_session()
            except _PREEMPTION_ERRORS as e:
                _log.info(
                    "An error was raised while a session was being created. A new session will be created. "
                    "Error: %s", e,
                )

    def _check_stop(self):
        try:
            if self._sess is None:
                return True
            return self._sess._check_stop()
        except _PREEMPTION_ERRORS as e:
            _log.info("An error was raised while considering whether the session is complete. The current "
                      "session will be closed and a new one created. Error: %s", e)
            self.close()
            self._sess = self._create_session()
            # A new session means the computation goes on.
            return False
        except Exception:  # noqa: BLE001 - should_stop answers True rather than raising
            return True

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        while True:
            try:
                if self._sess is None:
                    self._sess = self._create_session()
                return self._sess.run(fetches, feed_dict=feed_dict, options=options, run_metadata=run_metadata)
            except _PREEMPTION_ERRORS as e:
                _log.info(
                    "An error was raised. The current session will be closed and a new session created, "
                    "restored from the latest checkpoint. Error: %s", e,
                )
                self.close()
                self._sess = None

    def run_step_fn(self, step_fn, raw_session, run_with_hooks):
        while True:
            try:
                if self._sess is None:
                    self._sess = self._create_session()
                # The raw session of the (possibly recreated) session, and its hooked run.
                return self._sess.run_step_fn(step_fn, self._sess_creator.tf_sess, run_with_hooks=None)
            except _PREEMPTION_ERRORS as e:
                _log.info(
                    "An error was raised in step_fn. The current session will be closed and a new session "
                    "created. Error: %s", e,
                )
                self.close()
                self._sess = None


class _CoordinatedSession(_WrappedSession):
    """Surfaces exceptions reported to the coordinator, and stops its threads on close."""

    def __init__(self, sess, coord, stop_grace_period_secs=120):
        super().__init__(sess)
        self._coord = coord
        self._stop_grace_period_secs = stop_grace_period_secs

    def _check_stop(self):
        # An exception reported by another thread belongs to the caller.
        self._coord.raise_requested_exception()
        return self._coord.should_stop()

    def close(self):
        self._coord.request_stop()
        try:
            self._coord.join(stop_grace_period_secs=self._stop_grace_period_secs, ignore_live_threads=True)
        finally:
            try:
                _WrappedSession.close(self)
            except Exception:  # noqa: BLE001 - join() already reported what matters
                _log.debug("ignored an error while closing the session", exc_info=True)

    def run(self, *args, **kwargs):
        try:
            return self._sess.run(*args, **kwargs)
        except _PREEMPTION_ERRORS:
            raise
        except Exception:
            # A thread's preemption error may be the root cause of this one: raise that instead.
            original = sys.exc_info()
            try:
                self._coord.raise_requested_exception()
            except _PREEMPTION_ERRORS:
                raise
            except Exception:  # noqa: BLE001 - the original error is the one to report
                pass
            raise original[1].with_traceback(original[2]) from None


class _HookedSession(_WrappedSession):
    """Calls the hooks around every run."""

    def __init__(self, sess, hooks):
        super().__init__(sess)
        self._hooks = hooks
        self._should_stop = False

    def _check_stop(self):
        return self._should_stop

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        if self.should_stop():
            raise RuntimeError("Run called even after should_stop requested.")
        actual_fetches = {"caller": fetches}
        run_context = SessionRunContext(original_args=SessionRunArgs(fetches, feed_dict), session=self._sess)
        options = options if options is not None else RunOptions()
        feed_dict = self._call_hook_before_run(run_context, actual_fetches, feed_dict, options)
        run_metadata = run_metadata if run_metadata is not None else RunMetadata()
        outputs = _WrappedSession.run(self, fetches=actual_fetches, feed_dict=feed_dict, options=options,
                                      run_metadata=run_metadata)
        for hook in self._hooks:
            hook.after_run(
                run_context,
                SessionRunValues(results=outputs.get(hook), options=options, run_metadata=run_metadata),
            )
        self._should_stop = self._should_stop or run_context.stop_requested
        return outputs["caller"]

    def _call_hook_before_run(self, run_context, fetch_dict, user_feed_dict, options):
        """Collects the hooks' fetches (into ``fetch_dict``, keyed by hook), feeds and options."""
        hook_feeds = {}
        for hook in self._hooks:
            request = hook.before_run(run_context)
            if request is None:
                continue
            if request.fetches is not None:
                fetch_dict[hook] = request.fetches
            if request.feed_dict:
                _raise_if_feeds_intersect(hook_feeds, request.feed_dict, "Same tensor is fed by two hooks.")
                hook_feeds.update(request.feed_dict)
            if request.options is not None:
                _merge_run_options(options, request.options)
        if not hook_feeds:
            return user_feed_dict
        if not user_feed_dict:
            return hook_feeds
        _raise_if_feeds_intersect(user_feed_dict, hook_feeds, "Same tensor is fed by a SessionRunHook and user.")
        merged = dict(hook_feeds)
        merged.update(user_feed_dict)
        return merged


def _raise_if_feeds_intersect(feeds1, feeds2, message):
    common = set(feeds1) & set(feeds2)
    if common:
        raise RuntimeError(message + " Conflict(s): " + str(list(common)))


def _merge_run_options(options, incoming):
    """Merges a hook's ``RunOptions`` into the run's: the larger trace level, timeout, ... wins."""
    options.trace_level = max(options.trace_level, incoming.trace_level)
    options.timeout_in_ms = max(options.timeout_in_ms, incoming.timeout_in_ms)
    options.inter_op_thread_pool = max(options.inter_op_thread_pool, incoming.inter_op_thread_pool)
    options.output_partition_graphs = max(options.output_partition_graphs, incoming.output_partition_graphs)
    options.report_tensor_allocations_upon_oom = max(
        options.report_tensor_allocations_upon_oom, incoming.report_tensor_allocations_upon_oom
    )

