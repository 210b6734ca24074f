"""``tf.train.Supervisor`` (TensorFlow's deprecated training helper, superseded by
``MonitoredTrainingSession``) and ``tf.train.basic_train_loop``.

A Supervisor bundles a ``Coordinator``, a ``Saver`` and a ``SessionManager``: ``managed_session()`` restores
the model from the latest checkpoint in ``logdir`` or initializes it, starts the standard services (threads
writing summaries and steps/sec every ``save_summaries_secs`` and checkpoints every ``save_model_secs``),
and on exit stops the threads, closes the summary writer and the session, and re-raises any exception
(except ``OutOfRangeError``, a normal end of input).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time

from ferroflow.framework import dtypes, errors, ops
from ferroflow.ops import control_flow_ops, lookup_ops, variables
from ferroflow.protos import MetaGraphDef, SessionLog, Summary
from ferroflow.summary import summary_ops, writer
from ferroflow.training import coordinator, training_util
from ferroflow.training import saver as saver_lib
from ferroflow.training.session_manager import SessionManager

__all__ = ["Supervisor", "basic_train_loop"]

_log = logging.getLogger(__name__)


class Supervisor:
    """A training helper that initializes or restores the model, and checkpoints it and writes summaries
    from background threads. See the module docstring; arguments are TensorFlow's.

    Arguments left at ``USE_DEFAULT`` are taken from the graph's collections or built: ``ready_op``
    (``report_uninitialized_variables()``), ``ready_for_local_init_op`` (None), ``init_op`` (initialize the
    global variables), ``local_init_op`` (initialize the local variables), ``summary_op``
    (``tf.summary.merge_all()``), ``saver`` (``tf.train.Saver()`` if there are variables), ``global_step``
    (the GLOBAL_STEP collection or the ``global_step`` tensor) and ``summary_writer`` (a ``FileWriter`` on
    ``logdir``). Passing None turns the piece off. Only a chief (``is_chief``) initializes, saves and writes
    events; other tasks wait for the model to be ready. The graph is finalized.
    """

    USE_DEFAULT = 0

    def __init__(self, graph=None, ready_op=USE_DEFAULT, ready_for_local_init_op=USE_DEFAULT, is_chief=True,
                 init_op=USE_DEFAULT, init_feed_dict=None, local_init_op=USE_DEFAULT, logdir=None,
                 summary_op=USE_DEFAULT, saver=USE_DEFAULT, global_step=USE_DEFAULT, save_summaries_secs=120,
                 save_model_secs=600, recovery_wait_secs=30, stop_grace_secs=120, checkpoint_basename="model.ckpt",
                 session_manager=None, summary_writer=USE_DEFAULT, init_fn=None, local_init_run_options=None):
        if graph is None:
            graph = ops.get_default_graph()
        self._graph = graph
        with graph.as_default():
            self._init_ready_op(ready_op, ready_for_local_init_op)
            self._init_init_op(init_op, init_feed_dict)
            self._init_local_init_op(local_init_op)
            self._init_saver(saver)
            self._init_summary_op(summary_op)
            self._init_global_step(global_step)
        self._is_chief = is_chief
        self._coord = coordinator.Coordinator()
        self._recovery_wait_secs = recovery_wait_secs
        self._stop_grace_secs = stop_grace_secs
        self._init_fn = init_fn
        self._local_init_run_options = local_init_run_options
        # Only a chief checkpoints and writes events.
        self._logdir = None
        self._save_summaries_secs = None
        self._save_model_secs = None
        self._save_path = None
        self._summary_writer = None
        self._graph_added_to_summary = False
        if self._is_chief:
            self._logdir = logdir
            self._save_summaries_secs = save_summaries_secs
            self._save_model_secs = save_model_secs
            if self._logdir:
                self._save_path = os.path.join(self._logdir, checkpoint_basename)
            if summary_writer is Supervisor.USE_DEFAULT:
                if self._logdir:
                    self._summary_writer = writer.FileWriter(self._logdir)
            else:
                self._summary_writer = summary_writer
        if session_manager is None:
            session_manager = SessionManager(
                local_init_op=self._local_init_op,
                ready_op=self._ready_op,
                ready_for_local_init_op=self._ready_for_local_init_op,
                graph=self._graph,
                recovery_wait_secs=self._recovery_wait_secs,
                local_init_run_options=self._local_init_run_options,
            )
        self._session_manager = session_manager
        self._verify_setup()
        graph.finalize()

    def _first_in_collection(self, key):
        items = self._graph.get_collection(key)
        if len(items) > 1:
            _log.info("Found %d %s operations. Returning the first one.", len(items), key)
        return items[0] if items else None

    def _init_ready_op(self, ready_op, ready_for_local_init_op):
        if ready_op is Supervisor.USE_DEFAULT:
            ready_op = self._first_in_collection(ops.GraphKeys.READY_OP)
            if ready_op is None:
                ready_op = variables.report_uninitialized_variables()
                ops.add_to_collection(ops.GraphKeys.READY_OP, ready_op)
        self._ready_op = ready_op
        if ready_for_local_init_op is Supervisor.USE_DEFAULT:
            ready_for_local_init_op = self._first_in_collection(ops.GraphKeys.READY_FOR_LOCAL_INIT_OP)
        self._ready_for_local_init_op = ready_for_local_init_op

    def _init_init_op(self, init_op, init_feed_dict):
        if init_op is Supervisor.USE_DEFAULT:
            init_op = self._first_in_collection(ops.GraphKeys.INIT_OP)
            if init_op is None:
                init_op = variables.global_variables_initializer()
                ops.add_to_collection(ops.GraphKeys.INIT_OP, init_op)
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict

    def _init_local_init_op(self, local_init_op):
        if local_init_op is Supervisor.USE_DEFAULT:
            local_init_op = self._first_in_collection(ops.GraphKeys.LOCAL_INIT_OP)
            if local_init_op is None:
                local_init_op = control_flow_ops.group(variables.local_variables_initializer(),
                                                       lookup_ops.tables_initializer())
                ops.add_to_collection(ops.GraphKeys.LOCAL_INIT_OP, local_init_op)
        self._local_init_op = local_init_op

    def _init_saver(self, saver):
        if saver is Supervisor.USE_DEFAULT:
            saver = self._first_in_collection(ops.GraphKeys.SAVERS)
            if saver is None and variables.global_variables():
                saver = saver_lib.Saver()
                ops.add_to_collection(ops.GraphKeys.SAVERS, saver)
        self._saver = saver

    def _init_summary_op(self, summary_op):
        if summary_op is Supervisor.USE_DEFAULT:
            summary_op = self._first_in_collection(ops.GraphKeys.SUMMARY_OP)
            if summary_op is None:
                summary_op = summary_ops.merge_all()
                if summary_op is not None:
                    ops.add_to_collection(ops.GraphKeys.SUMMARY_OP, summary_op)
        self._summary_op = summary_op

    def _init_global_step(self, global_step):
        if global_step is Supervisor.USE_DEFAULT:
            global_step = self._first_in_collection(ops.GraphKeys.GLOBAL_STEP)
            if global_step is None:
                global_step = self._default_global_step_tensor()
                if global_step is not None:
                    ops.add_to_collection(ops.GraphKeys.GLOBAL_STEP, global_step)
        self._global_step = global_step

    def _default_global_step_tensor(self):
        try:
            step = self._graph.get_tensor_by_name("global_step:0")
        except KeyError:
            return None
        if step.dtype.base_dtype in (dtypes.int32, dtypes.int64):
            return step
        _log.warning("Found 'global_step' is not an int type: %s", step.dtype)
        return None

    def _verify_setup(self):
        if not self._is_chief:
            for op in self._graph.get_operations():
                if op.type in ("Variable", "VariableV2") and not op.device:
                    raise ValueError(f"When using replicas, all Variables must have their device set: {op}")

    @property
    def is_chief(self):
        """True for the chief supervisor."""
        return self._is_chief

    @property
    def session_manager(self):
        """The ``SessionManager`` that creates sessions."""
        return self._session_manager

    @property
    def coord(self):
        """The ``Coordinator`` of the supervisor's threads."""
        return self._coord

    @property
    def init_op(self):
        return self._init_op

    @property
    def init_feed_dict(self):
        return self._init_feed_dict

    @property
    def ready_op(self):
        return self._ready_op

    @property
    def ready_for_local_init_op(self):
        return self._ready_for_local_init_op

    @property
    def summary_writer(self):
        return self._summary_writer

    @property
    def summary_op(self):
        return self._summary_op

    @property
    def save_summaries_secs(self):
        return self._save_summaries_secs

    @property
    def global_step(self):
        return self._global_step

    @property
    def saver(self):
        return self._saver

    @property
    def save_model_secs(self):
        return self._save_model_secs

    @property
    def save_path(self):
        """Where checkpoints go: ``logdir/checkpoint_basename`` (None without a logdir)."""
        return self._save_path

    def _write_graph(self):
        """Writes ``graph.pbtxt`` to the logdir and the graph and meta graph to the event file (once)."""
        if not self._logdir and not self._summary_writer:
            return
        graph_def = self._graph.as_graph_def(add_shapes=True)
        if self._logdir:
            from ferroflow.framework.graph_io import write_graph

            write_graph(graph_def, self._logdir, "graph.pbtxt")
        if self._summary_writer and not self._graph_added_to_summary:
            meta = MetaGraphDef(graph_def=graph_def)
            if self._saver is not None and getattr(self._saver, "saver_def", None) is not None:
                meta.saver_def.CopyFrom(self._saver.saver_def)
            self._summary_writer.add_graph(self._graph)
            self._summary_writer.add_meta_graph(meta)
            self._graph_added_to_summary = True

    def start_standard_services(self, sess):
        """Starts the summary, step-counter and checkpoint threads the configuration calls for; returns them.

        Raises RuntimeError for a non-chief supervisor; does nothing (logs a warning) without a logdir.
        """
        if not self._is_chief:
            raise RuntimeError(
                "Only chief supervisor can start standard services. Because only chief supervisors can write "
                "events."
            )
        if not self._logdir:
            _log.warning("Standard services need a 'logdir' passed to the SessionManager")
            return []
        if self._global_step is not None and self._summary_writer:
            step = training_util.global_step(sess, self._global_step)
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START), step)
        threads = []
        if self._save_summaries_secs and self._summary_writer:
            if self._summary_op is not None:
                threads.append(SVSummaryThread(self, sess))
            if self._global_step is not None:
                threads.append(SVStepCounterThread(self, sess))
        if self._saver and self._save_model_secs:
            threads.append(SVTimerCheckpointThread(self, sess))
        for t in threads:
            t.start()
        return threads

    def prepare_or_wait_for_session(self, master="", config=None, wait_for_checkpoint=False, max_wait_secs=7200,
                                    start_standard_services=True):
        """A session with a ready model: a chief restores from ``logdir`` or initializes (then writes the
        graph and, with ``start_standard_services``, starts the services); others wait for the chief.
        Queue runners start too with ``start_standard_services``."""
        # A session recreated after a stop needs the coordinator running again.
        self._coord.clear_stop()
        if self._summary_writer:
            self._summary_writer.reopen()
        if self._is_chief:
            sess = self._session_manager.prepare_session(
                master, init_op=self.init_op, saver=self.saver, checkpoint_dir=self._logdir,
                wait_for_checkpoint=wait_for_checkpoint, max_wait_secs=max_wait_secs, config=config,
                init_feed_dict=self._init_feed_dict, init_fn=self._init_fn,
            )
            self._write_graph()
            if start_standard_services:
                _log.info("Starting standard services.")
                self.start_standard_services(sess)
        else:
            sess = self._session_manager.wait_for_session(master, config=config, max_wait_secs=max_wait_secs)
        if start_standard_services:
            _log.info("Starting queue runners.")
            self.start_queue_runners(sess)
        return sess

    def start_queue_runners(self, sess, queue_runners=None):
        """Starts the threads of ``queue_runners`` (default: the graph's QUEUE_RUNNERS collection) under the
        supervisor's coordinator; returns them."""
        if queue_runners is None:
            queue_runners = self._graph.get_collection(ops.GraphKeys.QUEUE_RUNNERS)
        threads = []
        for qr in queue_runners:
            threads.extend(qr.create_threads(sess, coord=self._coord, daemon=True, start=True))
        return threads

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """Starts a ``LooperThread`` calling ``target(*args, **kwargs)`` every ``timer_interval_secs`` seconds
        (back to back if None) until the supervisor stops; ``stop()`` joins it."""
        looper = coordinator.LooperThread(self._coord, timer_interval_secs, target=target, args=args,
                                          kwargs=kwargs)
        looper.start()
        return looper

    def stop(self, threads=None, close_summary_writer=True, ignore_live_threads=False):
        """Stops the services: requests a stop, joins the threads (the registered service, loop and queue
        runner threads plus ``threads``) within ``stop_grace_secs``, re-raising any exception they reported,
        then closes the summary writer. Does not close the session."""
        self._coord.request_stop()
        try:
            self._coord.join(threads, stop_grace_period_secs=self._stop_grace_secs,
                             ignore_live_threads=ignore_live_threads)
        finally:
            if close_summary_writer and self._summary_writer:
                self._summary_writer.add_session_log(SessionLog(status=SessionLog.STOP))
                self._summary_writer.close()
                self._graph_added_to_summary = False

    def request_stop(self, ex=None):
        """``Coordinator.request_stop`` of the supervisor's coordinator."""
        self._coord.request_stop(ex=ex)

    def should_stop(self):
        """True once a stop was requested."""
        return self._coord.should_stop()

    def stop_on_exception(self):
        """``Coordinator.stop_on_exception`` of the supervisor's coordinator."""
        return self._coord.stop_on_exception()

    def wait_for_stop(self):
        """Blocks until a stop is requested."""
        self._coord.wait_for_stop()

    def summary_computed(self, sess, summary, global_step=None):
        """Writes ``summary`` (a Summary or its serialization) at ``global_step`` (default: the current
        global step). RuntimeError if the supervisor has no summary writer."""
        if not self._summary_writer:
            raise RuntimeError("Writing a summary requires a summary writer.")
        if global_step is None and self.global_step is not None:
            global_step = training_util.global_step(sess, self.global_step)
        self._summary_writer.add_summary(summary, global_step)

    @contextlib.contextmanager
    def managed_session(self, master="", config=None, start_standard_services=True, close_summary_writer=True):
        """Context manager yielding a ready session (see ``prepare_or_wait_for_session``). On exit it stops
        the services and closes the session; an exception from the block or a service thread is re-raised,
        except ``OutOfRangeError``."""
        sess = None
        try:
            sess = self.prepare_or_wait_for_session(master=master, config=config,
                                                    start_standard_services=start_standard_services)
            yield sess
        except Exception as e:  # noqa: BLE001 - reported to the coordinator and re-raised by stop()
            self.request_stop(e)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                if sess is not None:
                    try:
                        sess.close()
                    except Exception:  # noqa: BLE001 - errors closing the session do not matter here
                        _log.debug("ignored an error while closing the session", exc_info=True)

    # TensorFlow's CamelCase names.
    PrepareSession = prepare_or_wait_for_session
    StartQueueRunners = start_queue_runners
    StartStandardServices = start_standard_services
    Stop = stop
    RequestStop = request_stop
    Loop = loop
    ShouldStop = should_stop
    StopOnException = stop_on_exception
    WaitForStop = wait_for_stop
    SummaryComputed = summary_computed


class SVSummaryThread(coordinator.LooperThread):
    """Runs the supervisor's summary op every ``save_summaries_secs`` and writes the result."""

    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv = sv
        self._sess = sess

    def run_loop(self):
        if self._sv.global_step is not None:
            summary_strs, global_step = self._sess.run([self._sv.summary_op, self._sv.global_step])
        else:
            summary_strs, global_step = self._sess.run(self._sv.summary_op), None
        if self._sv.summary_writer:
            _log.info("Recording summary at step %s.", global_step)
            self._sv.summary_writer.add_summary(summary_strs, global_step)


class SVStepCounterThread(coordinator.LooperThread):
    """Writes global steps per second (``<global step>/sec``) every ``save_summaries_secs``."""

    def __init__(self, sv, sess, step_counter=None):
        super().__init__(sv.coord, sv.save_summaries_secs)
        self._sv = sv
        self._sess = sess
        self._last_time = 0.0
        self._last_step = 0
        self._step_counter = sv.global_step if step_counter is None else step_counter
        self._summary_tag = f"{self._step_counter.op.name}/sec"
        self._logged = 0

    def start_loop(self):
        self._last_time = time.time()
        self._last_step = training_util.global_step(self._sess, self._step_counter)

    def run_loop(self):
        current_step = training_util.global_step(self._sess, self._step_counter)
        added_steps = current_step - self._last_step
        self._last_step = current_step
        now = time.time()
        elapsed = now - self._last_time
        self._last_time = now
        steps_per_sec = added_steps / elapsed if elapsed > 0 else float("inf")
        summary = Summary(value=[Summary.Value(tag=self._summary_tag, simple_value=steps_per_sec)])
        if self._sv.summary_writer:
            self._sv.summary_writer.add_summary(summary, current_step)
        if self._logged < 10:
            self._logged += 1
            _log.info("%s: %g", self._summary_tag, steps_per_sec)


class SVTimerCheckpointThread(coordinator.LooperThread):
    """Saves a checkpoint to the supervisor's ``save_path`` every ``save_model_secs``."""

    def __init__(self, sv, sess):
        super().__init__(sv.coord, sv.save_model_secs)
        self._sv = sv
        self._sess = sess

    def run_loop(self):
        _log.info("Saving checkpoint to path %s", self._sv.save_path)
        self._sv.saver.save(self._sess, self._sv.save_path, global_step=self._sv.global_step)
        if self._sv.summary_writer and self._sv.global_step is not None:
            step = training_util.global_step(self._sess, self._sv.global_step)
            self._sv.summary_writer.add_session_log(
                SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._sv.save_path), step
            )


def basic_train_loop(supervisor, train_step_fn, args=None, kwargs=None, master=""):
    """Calls ``train_step_fn(session, *args, **kwargs)`` in a ``supervisor.managed_session(master)`` until
    the supervisor stops; starts over with a new session after an ``AbortedError``."""
    args = list(args or [])
    kwargs = dict(kwargs or {})
    should_retry = True
    while should_retry:
        try:
            should_retry = False
            with supervisor.managed_session(master) as sess:
                while not supervisor.should_stop():
                    train_step_fn(sess, *args, **kwargs)
        except errors.AbortedError:
            # A restarted server: train on in a new session.
            should_retry = True
