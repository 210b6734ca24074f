"""``tf.estimator.train_and_evaluate`` for a local run (no ``TF_CONFIG`` cluster): trains to
``train_spec.max_steps`` and evaluates after checkpoints at most every ``eval_spec.throttle_secs`` seconds and
once more at the end, as TensorFlow's local executor does."""

from __future__ import annotations

import collections
import time

from ferroflow.estimator.estimator import Estimator
from ferroflow.training import basic_session_run_hooks


class TrainSpec(collections.namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks", "saving_listeners"])):
    """The training half of ``train_and_evaluate``."""

    def __new__(cls, input_fn, max_steps=None, hooks=None, saving_listeners=None):
        if not callable(input_fn):
            raise TypeError(f"`input_fn` must be callable, given: {input_fn}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        return super().__new__(cls, input_fn, max_steps, tuple(hooks or ()), tuple(saving_listeners or ()))


class EvalSpec(
    collections.namedtuple(
        "EvalSpec", ["input_fn", "steps", "name", "hooks", "exporters", "start_delay_secs", "throttle_secs"]
    )
):
    """The evaluation half of ``train_and_evaluate``."""

    def __new__(
        cls,
        input_fn,
        steps=100,
        name=None,
        hooks=None,
        exporters=None,
        start_delay_secs=120,
        throttle_secs=600,
    ):
        if not callable(input_fn):
            raise TypeError(f"`input_fn` must be callable, given: {input_fn}")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if throttle_secs < 0:
            raise ValueError(f"Must specify throttle_secs >= 0, given: {throttle_secs}")
        if exporters:
            raise ValueError("Exporters are not supported by ferroflow's Estimator (no SavedModel export).")
        return super().__new__(
            cls, input_fn, steps, name, tuple(hooks or ()), (), start_delay_secs, throttle_secs
        )


class _EvaluateAfterSave(basic_session_run_hooks.CheckpointSaverListener):
    def __init__(self, estimator, eval_spec):
        self._estimator = estimator
        self._spec = eval_spec
        self._first = True
        self._last_time = None
        self._last_step = None
        self.result = None

    def _evaluate(self, step):
        self.result = self._estimator.evaluate(
            self._spec.input_fn, steps=self._spec.steps, name=self._spec.name, hooks=self._spec.hooks
        )
        self._last_time, self._last_step = time.time(), step

    def after_save(self, session, global_step_value):
        if self._first:  # the model is not trained yet
            self._first = False
            return
        if self._last_time is None or time.time() - self._last_time >= self._spec.throttle_secs:
            self._evaluate(global_step_value)

    def end(self, session, global_step_value):
        if global_step_value != self._last_step:
            self._evaluate(global_step_value)


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains ``estimator`` with ``train_spec`` and evaluates it with ``eval_spec``; returns ``(the last
    evaluation's metrics, [])`` (no exporters)."""
    if not isinstance(estimator, Estimator):
        raise TypeError(f"`estimator` must have type `tf.estimator.Estimator`. Got: {type(estimator)}")
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(f"`train_spec` must have type `tf.estimator.TrainSpec`. Got: {type(train_spec)}")
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"`eval_spec` must have type `tf.estimator.EvalSpec`. Got: {type(eval_spec)}")
    if estimator.config.cluster_spec and estimator.config.cluster_spec.jobs:
        raise NotImplementedError("train_and_evaluate runs locally in ferroflow; TF_CONFIG names a cluster.")
    listener = _EvaluateAfterSave(estimator, eval_spec)
    estimator.train(
        train_spec.input_fn,
        hooks=list(train_spec.hooks),
        max_steps=train_spec.max_steps,
        saving_listeners=[listener] + list(train_spec.saving_listeners),
    )
    if listener.result is None:  # training was skipped: max_steps already reached
        listener._evaluate(None)
    return listener.result, []
