"""``tf.estimator.train_and_evaluate`` for a local run (no ``TF_CONFIG`` cluster): trains to
``train_spec.max_steps`` and evaluates after checkpoints at most every ``eval_spec.throttle_secs`` seconds and
once more at the end, as TensorFlow's local executor does."""

from __future__ import annotations

import collections
import os
import shutil
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
        if exporters is None:
            exporters = ()
        elif isinstance(exporters, Exporter):
            exporters = (exporters,)
        exporters = tuple(exporters)
        names = set()
        for e in exporters:
            if not isinstance(e, Exporter):
                raise TypeError(
                    f"`exporters` must be an Exporter, an iterable of Exporter, or `None`, found {e}."
                )
            if not e.name or not e.name.strip():
                raise ValueError("An Exporter cannot have a name that is `None` or empty.")
            if e.name in names:
                raise ValueError(
                    f"`exporters` must have unique names. Such a name cannot be `None`. {e.name} "
                    "is used more than once."
                )
            names.add(e.name)
        return super().__new__(
            cls, input_fn, steps, name, tuple(hooks or ()), exporters, start_delay_secs, throttle_secs
        )


class Exporter:
    """Exports an Estimator's model after an evaluation (``export_path`` is ``model_dir/export/<name>``)."""

    name = None

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        raise NotImplementedError


class _SavedModelExporter(Exporter):
    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False):
        self._name = name
        self._receiver_fn = serving_input_receiver_fn
        self._assets_extra = assets_extra
        self._as_text = as_text

    @property
    def name(self):
        return self._name

    def _export(self, estimator, export_path, checkpoint_path):
        return estimator.export_saved_model(
            export_path,
            self._receiver_fn,
            assets_extra=self._assets_extra,
            as_text=self._as_text,
            checkpoint_path=checkpoint_path,
        )


def _keep_newest(export_path, exports_to_keep):
    if exports_to_keep is None:
        return
    stamps = sorted((int(d) for d in os.listdir(export_path) if d.isdigit()), reverse=True)
    for stamp in stamps[exports_to_keep:]:
        shutil.rmtree(os.path.join(export_path, str(stamp)), ignore_errors=True)


class FinalExporter(_SavedModelExporter):
    """Exports once, after the final evaluation."""

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        if not is_the_final_export:
            return None
        return self._export(estimator, export_path, checkpoint_path)


class LatestExporter(_SavedModelExporter):
    """Exports after every evaluation and keeps the ``exports_to_keep`` newest exports."""

    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False, exports_to_keep=5):
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        if exports_to_keep is not None and exports_to_keep <= 0:
            raise ValueError(
                f"`exports_to_keep`, if provided, must be a positive number. Got {exports_to_keep}"
            )
        self._exports_to_keep = exports_to_keep

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        path = self._export(estimator, export_path, checkpoint_path)
        _keep_newest(export_path, self._exports_to_keep)
        return path


def _loss_smaller(best_eval_result, current_eval_result):
    key = "loss"
    if not best_eval_result or key not in best_eval_result:
        raise ValueError("best_eval_result cannot be empty or no loss is found in it.")
    if not current_eval_result or key not in current_eval_result:
        raise ValueError("current_eval_result cannot be empty or no loss is found in it.")
    return best_eval_result[key] > current_eval_result[key]


class BestExporter(_SavedModelExporter):
    """Exports when an evaluation beats the best one so far (``compare_fn``, default: a smaller ``loss``); the
    best starts from the evaluations already written under ``model_dir/eval``."""

    def __init__(
        self,
        name="best_exporter",
        serving_input_receiver_fn=None,
        event_file_pattern="eval/*.tfevents.*",
        compare_fn=_loss_smaller,
        assets_extra=None,
        as_text=False,
        exports_to_keep=5,
    ):
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        if not callable(compare_fn):
            raise ValueError("`compare_fn` must be callable.")
        self._compare_fn = compare_fn
        self._event_file_pattern = event_file_pattern
        self._exports_to_keep = exports_to_keep
        self._best = None
        self._loaded = False

    def _load_best(self, model_dir):
        import glob

        from ferroflow.summary.writer import summary_iterator

        best = None
        for path in glob.glob(os.path.join(model_dir, self._event_file_pattern)):
            for event in summary_iterator(path):
                if not event.HasField("summary"):
                    continue
                result = {v.tag: v.simple_value for v in event.summary.value}
                if "loss" not in result:
                    continue
                result["global_step"] = event.step
                if best is None or self._compare_fn(best, result):
                    best = result
        return best

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        if not self._loaded:
            self._best = self._load_best(estimator.model_dir)
            self._loaded = True
        if self._best is None or self._compare_fn(self._best, eval_result):
            self._best = eval_result
            path = self._export(estimator, export_path, checkpoint_path)
            _keep_newest(export_path, self._exports_to_keep)
            return path
        return None


class _EvaluateAfterSave(basic_session_run_hooks.CheckpointSaverListener):
    def __init__(self, estimator, eval_spec, max_steps):
        self._estimator = estimator
        self._spec = eval_spec
        self._max_steps = max_steps
        self.export_results = []
        self._first = True
        self._last_time = None
        self._last_step = None
        self.result = None

    def _evaluate(self, step):
        self.result = self._estimator.evaluate(
            self._spec.input_fn, steps=self._spec.steps, name=self._spec.name, hooks=self._spec.hooks
        )
        self._last_time, self._last_step = time.time(), step
        self._export(
            self.result, self._max_steps is not None and self.result["global_step"] >= self._max_steps
        )

    def _export(self, result, final):
        self.export_results = []
        for exporter in self._spec.exporters:
            path = exporter.export(
                self._estimator,
                os.path.join(self._estimator.model_dir, "export", exporter.name),
                self._estimator.latest_checkpoint(),
                result,
                final,
            )
            self.export_results.append(path)

    def after_save(self, session, global_step_value):
        if self._first:  # the model is not trained yet
            self._first = False
            return
        if self._last_time is None or time.time() - self._last_time >= self._spec.throttle_secs:
            self._evaluate(global_step_value)

    def end(self, session, global_step_value):
        if global_step_value != self._last_step:
            self._evaluate(global_step_value)
        elif self._max_steps is not None and global_step_value >= self._max_steps:
            # The last save was evaluated before the end was known: the final exports still run.
            self._export(self.result, True)


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains ``estimator`` with ``train_spec`` and evaluates it with ``eval_spec`` (running its exporters after
    each evaluation); returns ``(the last evaluation's metrics, the last exporters' export paths)``."""
    if not isinstance(estimator, Estimator):
        raise TypeError(f"`estimator` must have type `tf.estimator.Estimator`. Got: {type(estimator)}")
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(f"`train_spec` must have type `tf.estimator.TrainSpec`. Got: {type(train_spec)}")
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"`eval_spec` must have type `tf.estimator.EvalSpec`. Got: {type(eval_spec)}")
    if estimator.config.cluster_spec and estimator.config.cluster_spec.jobs:
        raise NotImplementedError("train_and_evaluate runs locally in ferroflow; TF_CONFIG names a cluster.")
    listener = _EvaluateAfterSave(estimator, eval_spec, train_spec.max_steps)
    estimator.train(
        train_spec.input_fn,
        hooks=list(train_spec.hooks),
        max_steps=train_spec.max_steps,
        saving_listeners=[listener] + list(train_spec.saving_listeners),
    )
    if listener.result is None:  # training was skipped: max_steps already reached
        listener._evaluate(None)
    return listener.result, listener.export_results
