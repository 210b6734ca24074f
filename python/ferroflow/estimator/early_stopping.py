"""``tf.estimator.experimental``'s early stopping: hooks that stop training when the evaluations written under
the Estimator's eval directory stop improving (or cross a threshold), checked every ``run_every_secs`` seconds
or ``run_every_steps`` steps, as TensorFlow 1.15's ``early_stopping.py`` does for a single (chief) process.
"""

from __future__ import annotations

import collections
import glob
import operator
import os

from ferroflow.training import basic_session_run_hooks, session_run_hook, training_util


def read_eval_metrics(eval_dir):
    """``{global_step: {metric: value}}`` of the scalar summaries in ``eval_dir``'s event files, by step."""
    from ferroflow.summary.writer import summary_iterator

    by_step = collections.defaultdict(dict)
    for path in sorted(glob.glob(os.path.join(eval_dir, "*.tfevents.*"))):
        for event in summary_iterator(path):
            if not event.HasField("summary"):
                continue
            for value in event.summary.value:
                if value.HasField("simple_value"):
                    by_step[event.step][value.tag] = value.simple_value
    return collections.OrderedDict(sorted(by_step.items()))


class _StopOnPredicateHook(session_run_hook.SessionRunHook):
    """Requests a stop when ``should_stop_fn()`` says so, checked on a timer."""

    def __init__(self, should_stop_fn, run_every_secs=60, run_every_steps=None):
        if not callable(should_stop_fn):
            raise TypeError("`should_stop_fn` must be callable.")
        self._should_stop_fn = should_stop_fn
        self._timer = basic_session_run_hooks.SecondOrStepTimer(
            every_secs=run_every_secs, every_steps=run_every_steps
        )
        self._global_step = None

    def begin(self):
        self._global_step = training_util.get_global_step()

    def before_run(self, run_context):
        return session_run_hook.SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        step = run_values.results
        if self._timer.should_trigger_for_step(step):
            self._timer.update_last_triggered_step(step)
            if self._should_stop_fn():
                run_context.request_stop()


def make_early_stopping_hook(estimator, should_stop_fn, run_every_secs=60, run_every_steps=None):
    """A hook stopping ``estimator``'s training when ``should_stop_fn()`` returns True."""
    if run_every_secs is not None and run_every_steps is not None:
        raise ValueError("Only one of `run_every_secs` and `run_every_steps` can be set.")
    return _StopOnPredicateHook(should_stop_fn, run_every_secs, run_every_steps)


def _threshold_hook(
    estimator, metric_name, threshold, compare, eval_dir, min_steps, run_every_secs, run_every_steps
):
    eval_dir = eval_dir or estimator.eval_dir()

    def stop_if_threshold_crossed():
        for step, metrics in read_eval_metrics(eval_dir).items():
            if step < min_steps:
                continue
            if metric_name not in metrics:
                raise ValueError(f"metric_name {metric_name} not found in eval metrics for step {step}.")
            if compare(metrics[metric_name], threshold):
                return True
        return False

    return make_early_stopping_hook(estimator, stop_if_threshold_crossed, run_every_secs, run_every_steps)


def _no_improvement_hook(
    estimator,
    metric_name,
    max_steps_without_improvement,
    higher_is_better,
    eval_dir,
    min_steps,
    run_every_secs,
    run_every_steps,
):
    eval_dir = eval_dir or estimator.eval_dir()
    is_better = operator.gt if higher_is_better else operator.lt

    def stop_if_no_metric_improvement():
        best_val, best_step = None, None
        for step, metrics in read_eval_metrics(eval_dir).items():
            if step < min_steps:
                continue
            if metric_name not in metrics:
                raise ValueError(f"metric_name {metric_name} not found in eval metrics for step {step}.")
            val = metrics[metric_name]
            if best_val is None or is_better(val, best_val):
                best_val, best_step = val, step
            if step - best_step >= max_steps_without_improvement:
                return True
        return False

    return make_early_stopping_hook(estimator, stop_if_no_metric_improvement, run_every_secs, run_every_steps)


def stop_if_higher_hook(
    estimator, metric_name, threshold, eval_dir=None, min_steps=0, run_every_secs=60, run_every_steps=None
):
    return _threshold_hook(
        estimator, metric_name, threshold, operator.gt, eval_dir, min_steps, run_every_secs, run_every_steps
    )


def stop_if_lower_hook(
    estimator, metric_name, threshold, eval_dir=None, min_steps=0, run_every_secs=60, run_every_steps=None
):
    return _threshold_hook(
        estimator, metric_name, threshold, operator.lt, eval_dir, min_steps, run_every_secs, run_every_steps
    )


def stop_if_no_increase_hook(
    estimator,
    metric_name,
    max_steps_without_increase,
    eval_dir=None,
    min_steps=0,
    run_every_secs=60,
    run_every_steps=None,
):
    return _no_improvement_hook(
        estimator,
        metric_name,
        max_steps_without_increase,
        True,
        eval_dir,
        min_steps,
        run_every_secs,
        run_every_steps,
    )


def stop_if_no_decrease_hook(
    estimator,
    metric_name,
    max_steps_without_decrease,
    eval_dir=None,
    min_steps=0,
    run_every_secs=60,
    run_every_steps=None,
):
    return _no_improvement_hook(
        estimator,
        metric_name,
        max_steps_without_decrease,
        False,
        eval_dir,
        min_steps,
        run_every_secs,
        run_every_steps,
    )
