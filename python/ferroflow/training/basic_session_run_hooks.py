"""The standard ``SessionRunHook``s: logging, stopping, step counting, NaN checks, summaries, checkpoints,
profiling (``tf.train.LoggingTensorHook``, ``StopAtStepHook``, ``CheckpointSaverHook``, ...).

Hooks that look at the global step fetch a read of it (``_get_or_create_global_step_read``) alongside the
caller's fetches. That read runs before the train op of the same step, so the value a hook receives is the
step *before* the run; like TensorFlow's hooks, they re-read the step when a decision depends on it.
"""

from __future__ import annotations

import logging
import os
import time

import numpy as np

from ferroflow.framework import errors, ops
from ferroflow.protos import MetaGraphDef, RunOptions, SessionLog, Summary
from ferroflow.summary import writer
from ferroflow.training import training_util
from ferroflow.training.session_run_hook import SessionRunArgs, SessionRunHook

__all__ = [
    "CheckpointSaverHook",
    "CheckpointSaverListener",
    "FeedFnHook",
    "FinalOpsHook",
    "GlobalStepWaiterHook",
    "LoggingTensorHook",
    "NanLossDuringTrainingError",
    "NanTensorHook",
    "ProfilerHook",
    "SecondOrStepTimer",
    "StepCounterHook",
    "StopAtStepHook",
    "SummarySaverHook",
]

_log = logging.getLogger(__name__)

# Graph collection caching the read of the global step that hooks fetch.
_GLOBAL_STEP_READ_KEY = "global_step_read_op_cache"


def _get_or_create_global_step_read(graph=None):
    """A tensor reading the global step (cached in the graph), or None if the graph has no global step."""
    graph = graph or ops.get_default_graph()
    cached = graph.get_collection(_GLOBAL_STEP_READ_KEY)
    if cached:
        return cached[0]
    step = training_util.get_global_step(graph)
    if step is None:
        return None
    # The variable's snapshot (its `read` op, created with the variable, so before any train op): nodes run
    # in creation order, so a read built from it sees the step before this run's update, the "stale" value
    # the hooks expect. A fresh read of the variable created now would run after the update instead.
    value = step.value() if hasattr(step, "value") else step
    with graph.as_default(), ops.control_dependencies(None), ops.name_scope(None):
        with ops.name_scope(step.op.name + "/"):
            read = value + 0
    graph.add_to_collection(_GLOBAL_STEP_READ_KEY, read)
    return read


def _summary_writer(logdir):
    """The shared event-file writer of ``logdir`` (``tf.summary.FileWriterCache``)."""
    return writer.FileWriterCache.get(logdir)


def _as_graph_element(obj):
    """``obj`` (a tensor, or a tensor/op name) resolved in the default graph."""
    graph = ops.get_default_graph()
    if not isinstance(obj, str):
        if getattr(obj, "graph", None) is not graph:
            raise ValueError(f"Passed {obj} should have graph attribute that is equal to current graph {graph}.")
        return obj
    if ":" in obj:
        return graph.as_graph_element(obj)
    element = graph.as_graph_element(obj + ":0")
    try:
        graph.as_graph_element(obj + ":1")
    except (KeyError, ValueError):
        return element
    raise ValueError(f"Name {obj} is ambiguous, as this `Operation` has multiple outputs (at least 2).")


class _HookTimer:
    """When a hook should act, by step or by time."""

    def reset(self):
        """Forgets the last trigger."""

    def should_trigger_for_step(self, step):
        raise NotImplementedError

    def update_last_triggered_step(self, step):
        """Records a trigger at ``step``; returns ``(elapsed_secs, elapsed_steps)`` since the previous one
        (both None the first time)."""
        raise NotImplementedError

    def last_triggered_step(self):
        raise NotImplementedError


class SecondOrStepTimer(_HookTimer):
    """Triggers at most once every ``every_secs`` seconds or once every ``every_steps`` steps (exactly one
    of the two must be given). The first call always triggers."""

    def __init__(self, every_secs=None, every_steps=None):
        if every_secs is None and every_steps is None:
            raise ValueError("Either every_secs or every_steps should be provided.")
        if every_secs is not None and every_steps is not None:
            raise ValueError("Can not provide both every_secs and every_steps.")
        self._every_secs = every_secs
        self._every_steps = every_steps
        self.reset()

    def reset(self):
        self._last_triggered_step = None
        self._last_triggered_time = None

    def should_trigger_for_step(self, step):
        """Whether ``step`` is due: the first step, or ``every_steps`` steps / ``every_secs`` seconds after
        the last trigger (never the same step twice)."""
        if self._last_triggered_step is None:
            return True
        if self._last_triggered_step == step:
            return False
        if self._every_secs is not None and time.time() >= self._last_triggered_time + self._every_secs:
            return True
        if self._every_steps is not None and step >= self._last_triggered_step + self._every_steps:
            return True
        return False

    def update_last_triggered_step(self, step):
        now = time.time()
        if self._last_triggered_time is None:
            elapsed_secs = elapsed_steps = None
        else:
            elapsed_secs = now - self._last_triggered_time
            elapsed_steps = step - self._last_triggered_step
        self._last_triggered_time = now
        self._last_triggered_step = step
        return elapsed_secs, elapsed_steps

    def last_triggered_step(self):
        """The step of the last trigger (None before the first)."""
        return self._last_triggered_step


class _NeverTriggerTimer(_HookTimer):
    """A timer that never triggers (``LoggingTensorHook(at_end=True)`` alone)."""

    def should_trigger_for_step(self, step):
        return False

    def update_last_triggered_step(self, step):
        return None, None

    def last_triggered_step(self):
        return None


class LoggingTensorHook(SessionRunHook):
    """Logs (at INFO, on the ``ferroflow`` logger) the values of ``tensors`` every ``every_n_iter`` local
    steps, every ``every_n_secs`` seconds, and/or at the end.

    ``tensors``: a dict from tags to tensors or tensor names (logged sorted by tag), or a list of tensors or
    names (logged in that order). ``formatter``: a function from the ``{tag: value}`` dict to the string to
    log; by default ``"tag = value, ..."`` followed by the seconds since the last log.
    """

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False, formatter=None):
        only_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and every_n_secs must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if isinstance(tensors, dict):
            self._tag_order = sorted(tensors.keys())
        else:
            self._tag_order = list(tensors)
            tensors = {item: item for item in self._tag_order}
        self._tensors = tensors
        self._formatter = formatter
        self._timer = _NeverTriggerTimer() if only_at_end else SecondOrStepTimer(
            every_secs=every_n_secs, every_steps=every_n_iter
        )
        self._log_at_end = at_end

    def begin(self):
        self._timer.reset()
        self._iter_count = 0
        self._current_tensors = {tag: _as_graph_element(t) for tag, t in self._tensors.items()}

    def before_run(self, run_context):
        self._should_trigger = self._timer.should_trigger_for_step(self._iter_count)
        if self._should_trigger:
            return SessionRunArgs(self._current_tensors)
        return None

    def _log_tensors(self, tensor_values):
        saved = np.get_printoptions()
        np.set_printoptions(suppress=True)
        try:
            elapsed_secs, _ = self._timer.update_last_triggered_step(self._iter_count)
            if self._formatter is not None:
                _log.info("%s", self._formatter(tensor_values))
            else:
                stats = ", ".join(f"{tag} = {tensor_values[tag]}" for tag in self._tag_order)
                if elapsed_secs is not None:
                    _log.info("%s (%.3f sec)", stats, elapsed_secs)
                else:
                    _log.info("%s", stats)
        finally:
            np.set_printoptions(**saved)

    def after_run(self, run_context, run_values):
        if self._should_trigger:
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session):
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))


class StopAtStepHook(SessionRunHook):
    """Requests a stop after ``num_steps`` more global steps (counted from session creation) or once the
    global step reaches ``last_step``. Exactly one of the two must be given."""

    def __init__(self, num_steps=None, last_step=None):
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps = num_steps
        self._last_step = last_step

    def begin(self):
        self._global_step_tensor = _get_or_create_global_step_read()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use StopAtStepHook.")

    def after_create_session(self, session, coord):
        if self._last_step is None:
            self._last_step = int(session.run(self._global_step_tensor)) + self._num_steps

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        if run_values.results + 1 >= self._last_step:
            # The fetched value may predate this step's update: confirm with a fresh read.
            if run_context.session.run(self._global_step_tensor) >= self._last_step:
                run_context.request_stop()


class CheckpointSaverListener:
    """Interface for code that runs around the saves of a ``CheckpointSaverHook``.

    ``begin()`` once, ``before_save(session, global_step_value)`` and ``after_save(session,
    global_step_value)`` around every save (``after_save`` returning True requests a stop), and
    ``end(session, global_step_value)`` after the final save.
    """

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint every ``save_secs`` seconds or ``save_steps`` steps, once when the session is
    created and once at the end (unless that step was just saved).

    Checkpoints go to ``checkpoint_dir/checkpoint_basename-<step>`` through ``saver`` (else
    ``scaffold.saver``, else the only Saver in the ``SAVERS`` collection). With ``save_graph_def`` the
    graph is written to ``graph.pbtxt`` and, with the meta graph, to the directory's event file. Each save
    also logs a ``SessionLog.CHECKPOINT`` event there.
    """

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None, checkpoint_basename="model.ckpt",
                 scaffold=None, listeners=None, save_graph_def=True):
        _log.info("Create CheckpointSaverHook.")
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver = saver
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or [])
        self._steps_per_run = 1
        self._save_graph_def = save_graph_def

    def begin(self):
        self._summary_writer = _summary_writer(self._checkpoint_dir)
        self._global_step_tensor = _get_or_create_global_step_read()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use CheckpointSaverHook.")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord):
        global_step = int(session.run(self._global_step_tensor))
        if self._save_graph_def:
            # Written here rather than in begin(): other hooks may add ops in their begin().
            self._write_graph()
        # The checkpoint saved here is the state at step `global_step`.
        self._save(session, global_step)
        self._timer.update_last_triggered_step(global_step)

    def _write_graph(self):
        from ferroflow.framework.graph_io import write_graph

        graph = ops.get_default_graph()
        graph_def = graph.as_graph_def(add_shapes=True)
        write_graph(graph_def, self._checkpoint_dir, "graph.pbtxt")
        saver = self._get_saver()
        meta = MetaGraphDef(graph_def=graph_def)
        if saver is not None and getattr(saver, "saver_def", None) is not None:
            meta.saver_def.CopyFrom(saver.saver_def)
        self._summary_writer.add_graph(graph)
        self._summary_writer.add_meta_graph(meta)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context, run_values):
        stale_global_step = run_values.results
        if self._timer.should_trigger_for_step(stale_global_step + self._steps_per_run):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                self._timer.update_last_triggered_step(global_step)
                if self._save(run_context.session, global_step):
                    run_context.request_stop()

    def end(self, session):
        last_step = int(session.run(self._global_step_tensor))
        if last_step != self._timer.last_triggered_step():
            self._save(session, last_step)
        for listener in self._listeners:
            listener.end(session, last_step)

    def _save(self, session, step):
        """Saves at ``step``; returns True if a listener asked to stop."""
        _log.info("Calling checkpoint listeners before saving checkpoint %d...", step)
        for listener in self._listeners:
            listener.before_save(session, step)
        _log.info("Saving checkpoints for %d into %s.", step, self._save_path)
        self._get_saver().save(session, self._save_path, global_step=step, write_meta_graph=self._save_graph_def)
        self._summary_writer.add_session_log(
            SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._save_path), step
        )
        _log.info("Calling checkpoint listeners after saving checkpoint %d...", step)
        should_stop = False
        for listener in self._listeners:
            if listener.after_save(session, step):
                _log.info("A CheckpointSaverListener requested that training be stopped. listener: %s", listener)
                should_stop = True
        return should_stop

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = ops.get_collection(ops.GraphKeys.SAVERS)
        if not savers:
            raise RuntimeError(
                f"No items in collection {ops.GraphKeys.SAVERS}. Please add a saver to the collection or provide "
                "a saver or scaffold."
            )
        if len(savers) > 1:
            raise RuntimeError(
                f"More than one item in collection {ops.GraphKeys.SAVERS}. Please indicate which one to use by "
                "passing it to the constructor."
            )
        self._saver = savers[0]
        return self._saver


class StepCounterHook(SessionRunHook):
    """Measures global steps per second every ``every_n_steps`` steps or ``every_n_secs`` seconds; logs it
    and writes it as the scalar summary ``<global step name>/sec`` (to ``summary_writer``, or the shared
    writer of ``output_dir``)."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None, summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._last_global_step = None
        self._steps_per_run = 1
        self._warned = 0

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = _summary_writer(self._output_dir)
        self._global_step_tensor = _get_or_create_global_step_read()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use StepCounterHook.")
        self._summary_tag = training_util.get_global_step().op.name + "/sec"

    def after_create_session(self, session, coord):
        # A recreated session starts a fresh measurement.
        self._timer.reset()

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step_tensor)

    def _log_and_record(self, elapsed_steps, elapsed_time, global_step):
        steps_per_sec = elapsed_steps / elapsed_time if elapsed_time > 0 else float("inf")
        if self._summary_writer is not None:
            summary = Summary(value=[Summary.Value(tag=self._summary_tag, simple_value=steps_per_sec)])
            self._summary_writer.add_summary(summary, global_step)
        _log.info("%s: %g", self._summary_tag, steps_per_sec)

    def after_run(self, run_context, run_values):
        stale_global_step = run_values.results
        if self._timer.should_trigger_for_step(stale_global_step + self._steps_per_run):
            global_step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(global_step):
                elapsed_time, elapsed_steps = self._timer.update_last_triggered_step(global_step)
                if elapsed_time is not None:
                    self._log_and_record(elapsed_steps, elapsed_time, global_step)
        if stale_global_step == self._last_global_step and self._warned < 5:
            self._warned += 1
            _log.warning(
                "It seems that global step (tf.train.get_global_step) has not been increased. Current value "
                "(could be stable): %s vs previous value: %s. You could increase the global step by passing "
                "tf.train.get_global_step() to Optimizer.apply_gradients or Optimizer.minimize.",
                stale_global_step, self._last_global_step,
            )
        self._last_global_step = stale_global_step


class NanLossDuringTrainingError(RuntimeError):
    """Raised by ``NanTensorHook`` when the loss is NaN."""

    def __str__(self):
        return "NaN loss during training."


class NanTensorHook(SessionRunHook):
    """Checks ``loss_tensor`` after every run: on NaN, raises ``NanLossDuringTrainingError`` (or, with
    ``fail_on_nan_loss=False``, logs a warning and requests a stop)."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss_tensor = loss_tensor
        self._fail_on_nan_loss = fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results).any():
            message = "Model diverged with loss = NaN."
            if self._fail_on_nan_loss:
                _log.error("%s", message)
                raise NanLossDuringTrainingError
            _log.warning("%s", message)
            run_context.request_stop()


class SummarySaverHook(SessionRunHook):
    """Runs ``summary_op`` (or ``scaffold.summary_op``; exactly one of the two) every ``save_steps`` steps
    or ``save_secs`` seconds and writes the result, at the global step, to ``summary_writer`` (or the
    shared writer of ``output_dir``). The first run also logs ``SessionLog.START``."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None, scaffold=None,
                 summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op = summary_op
        self._summary_writer = summary_writer
        self._output_dir = output_dir
        self._scaffold = scaffold
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = _summary_writer(self._output_dir)
        self._next_step = None
        self._global_step_tensor = _get_or_create_global_step_read()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use SummarySaverHook.")

    def before_run(self, run_context):
        self._request_summary = self._next_step is None or self._timer.should_trigger_for_step(self._next_step)
        requests = {"global_step": self._global_step_tensor}
        if self._request_summary:
            summary_op = self._get_summary_op()
            if summary_op is not None:
                requests["summary"] = summary_op
        return SessionRunArgs(requests)

    def after_run(self, run_context, run_values):
        if not self._summary_writer:
            return
        global_step = run_values.results["global_step"] + 1
        if self._next_step is None or self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
        if self._next_step is None:
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START), global_step)
        if self._request_summary:
            self._timer.update_last_triggered_step(global_step)
            for summary in run_values.results.get("summary", ()):
                self._summary_writer.add_summary(summary, global_step)
        self._next_step = global_step + 1

    def end(self, session=None):
        if self._summary_writer:
            self._summary_writer.flush()

    def _get_summary_op(self):
        summary_op = self._summary_op if self._summary_op is not None else self._scaffold.summary_op
        if summary_op is None:
            return None
        return summary_op if isinstance(summary_op, list) else [summary_op]


class GlobalStepWaiterHook(SessionRunHook):
    """Holds the first run back until the global step reaches ``wait_until_step`` (for workers that should
    start after the chief has trained a while)."""

    def __init__(self, wait_until_step):
        self._wait_until_step = wait_until_step

    def begin(self):
        self._worker_is_started = False
        self._global_step_tensor = _get_or_create_global_step_read()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use _GlobalStepWaiterHook.")

    def before_run(self, run_context):
        if self._worker_is_started:
            return None
        if self._wait_until_step <= 0:
            self._worker_is_started = True
            return None
        _log.info("Waiting for global step %d before starting training.", self._wait_until_step)
        last_logged_step = 0
        while True:
            current_step = int(run_context.session.run(self._global_step_tensor))
            if current_step >= self._wait_until_step:
                self._worker_is_started = True
                return None
            if current_step - last_logged_step > 1000:
                _log.info(
                    "Waiting for global step %d before starting training. Current step is %d.",
                    self._wait_until_step, current_step,
                )
                last_logged_step = current_step
            time.sleep(0.5)


class FinalOpsHook(SessionRunHook):
    """Runs ``final_ops`` (any fetch structure, fed ``final_ops_feed_dict``) when the session ends; the
    values are then in ``final_ops_values``."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops = final_ops
        self._final_ops_feed_dict = final_ops_feed_dict
        self._final_ops_values = None

    @property
    def final_ops_values(self):
        return self._final_ops_values

    def end(self, session):
        if self._final_ops is None:
            return
        try:
            self._final_ops_values = session.run(self._final_ops, feed_dict=self._final_ops_feed_dict)
        except (errors.OutOfRangeError, StopIteration):
            _log.warning(
                "An OutOfRangeError or StopIteration exception is raised by the code in FinalOpsHook. This "
                "typically means the Ops running by the FinalOpsHook have a dependency back to some input "
                "source, which should not happen: final ops should only read variables."
            )
            raise


class FeedFnHook(SessionRunHook):
    """Adds ``feed_fn()`` (a feed dict) to the feeds of every run."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class ProfilerHook(SessionRunHook):
    """Traces one run every ``save_steps`` steps or ``save_secs`` seconds and writes its per-op timings as a
    Chrome trace, ``output_dir/timeline-<global step>.json`` (open it in chrome://tracing or Perfetto); the
    run metadata also goes to ``output_dir``'s event file for TensorBoard.

    ``show_dataflow`` draws arrows from each op's producers; ``show_memory`` is accepted (ferroflow records
    no allocations).
    """

    def __init__(self, save_steps=None, save_secs=None, output_dir="", show_dataflow=True, show_memory=False):
        self._output_file = os.path.join(output_dir, "timeline-{}.json")
        self._output_dir = output_dir
        self._file_writer = None
        self._show_dataflow = show_dataflow
        self._show_memory = show_memory
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        self._next_step = None
        self._file_writer = _summary_writer(self._output_dir)
        self._global_step_tensor = _get_or_create_global_step_read()
        if self._global_step_tensor is None:
            raise RuntimeError("Global step should be created to use ProfilerHook.")

    def before_run(self, run_context):
        self._request_summary = self._next_step is not None and self._timer.should_trigger_for_step(self._next_step)
        options = RunOptions(trace_level=RunOptions.FULL_TRACE) if self._request_summary else None
        return SessionRunArgs({"global_step": self._global_step_tensor}, options=options)

    def after_run(self, run_context, run_values):
        stale_global_step = run_values.results["global_step"]
        if self._next_step is None:
            # Start the timer, so the first trace comes N steps or seconds from now.
            self._timer.update_last_triggered_step(stale_global_step)
        global_step = stale_global_step + 1
        if self._request_summary:
            global_step = int(run_context.session.run(self._global_step_tensor))
            self._timer.update_last_triggered_step(global_step)
            self._save(global_step, self._output_file.format(global_step), run_values.run_metadata.step_stats)
            self._file_writer.add_run_metadata(run_values.run_metadata, f"step_{global_step}")
        self._next_step = global_step + 1

    def _save(self, step, save_path, step_stats):
        from ferroflow.client.timeline import Timeline

        _log.info("Saving timeline for %d into '%s'.", step, save_path)
        if self._output_dir:
            os.makedirs(self._output_dir, exist_ok=True)
        trace = Timeline(step_stats).generate_chrome_trace_format(
            show_dataflow=self._show_dataflow, show_memory=self._show_memory
        )
        with open(save_path, "w") as f:
            f.write(trace)
