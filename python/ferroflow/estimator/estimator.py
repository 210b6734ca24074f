"""``tf.estimator.Estimator`` for a custom ``model_fn`` (TensorFlow 1.15's "Creating Custom Estimators"):
``train`` builds the TRAIN graph in a fresh ``tf.Graph`` and runs its ``train_op`` in a MonitoredTrainingSession
with TensorFlow's hooks (NaN check, loss logging, checkpoints in ``model_dir``, a ``loss`` summary), so a later
call resumes from the latest checkpoint; ``evaluate`` restores it into the EVAL graph, runs the metrics' update
ops until the input ends (or ``steps``) and writes the values under ``model_dir/eval``; ``predict`` yields the
PREDICT graph's predictions example by example.

``export_saved_model`` writes the PREDICT graph on a serving input receiver's features as a SavedModel. The
premade DNN/linear estimators are in ``canned.py``. Not provided: distribution strategies.
"""

from __future__ import annotations

import collections
import inspect
import logging
import os
import tempfile

import numpy as np

from ferroflow.data.dataset_ops import Dataset
from ferroflow.estimator import model_fn as model_fn_lib
from ferroflow.estimator.run_config import RunConfig
from ferroflow.framework import ops, random_seed
from ferroflow.ops import control_flow_ops, metrics_impl
from ferroflow.summary import summary_ops
from ferroflow.summary.writer import FileWriter
from ferroflow.training import (
    basic_session_run_hooks,
    checkpoint_management,
    checkpoint_utils,
    monitored_session,
    saver,
    session_run_hook,
    training_util,
    warm_starting_util,
)

_log = logging.getLogger("ferroflow.estimator")


class WarmStartSettings(
    collections.namedtuple(
        "WarmStartSettings",
        [
            "ckpt_to_initialize_from",
            "vars_to_warm_start",
            "var_name_to_vocab_info",
            "var_name_to_prev_var_name",
        ],
    )
):
    """Which variables an Estimator's training graph takes from a checkpoint (``tf.train.warm_start``'s
    arguments)."""

    def __new__(
        cls,
        ckpt_to_initialize_from,
        vars_to_warm_start=".*",
        var_name_to_vocab_info=None,
        var_name_to_prev_var_name=None,
    ):
        if not ckpt_to_initialize_from:
            raise ValueError("`ckpt_to_initialize_from` MUST be set in WarmStartSettings")
        return super().__new__(
            cls,
            ckpt_to_initialize_from,
            vars_to_warm_start,
            var_name_to_vocab_info or {},
            var_name_to_prev_var_name or {},
        )


def _fn_args(fn):
    if hasattr(fn, "func") and hasattr(fn, "keywords"):  # functools.partial
        return tuple(a for a in _fn_args(fn.func)[len(fn.args) :] if a not in (fn.keywords or {}))
    return tuple(inspect.signature(fn).parameters)


class _DatasetInitializerHook(session_run_hook.SessionRunHook):
    """Initializes an input_fn's Dataset iterator once the session exists."""

    def __init__(self, iterator):
        self._iterator = iterator

    def begin(self):
        self._initializer = self._iterator.initializer

    def after_create_session(self, session, coord):
        session.run(self._initializer)


class _StopAfterNEvalsHook(session_run_hook.SessionRunHook):
    """Requests a stop after ``num_evals`` runs of the evaluation ops."""

    def __init__(self, num_evals):
        self._num_evals = num_evals
        self._evals = 0

    def after_run(self, run_context, run_values):
        self._evals += 1
        if self._evals >= self._num_evals:
            run_context.request_stop()


class Estimator:
    """Trains, evaluates and predicts with the graph ``model_fn(features, labels, mode, params, config)`` builds
    (it may take any subset of those arguments but ``features``) and returns an ``EstimatorSpec`` for."""

    def __init__(self, model_fn, model_dir=None, config=None, params=None, warm_start_from=None):
        if config is None:
            config = RunConfig()
        elif not isinstance(config, RunConfig):
            raise ValueError(f"config must be an instance of `RunConfig`, but provided {config}.")
        if model_dir is not None and config.model_dir is not None and model_dir != config.model_dir:
            raise ValueError(
                "`model_dir` are set both in constructor and `RunConfig`, but with different values. In "
                f"constructor: '{model_dir}', in `RunConfig`: '{config.model_dir}' "
            )
        model_dir = model_dir or config.model_dir
        if model_dir is None:
            model_dir = tempfile.mkdtemp()
            _log.warning("Using temporary folder as model directory: %s", model_dir)
        self._model_dir = os.fspath(model_dir)
        self._config = (
            config.replace(model_dir=self._model_dir) if config.model_dir != self._model_dir else config
        )
        args = _fn_args(model_fn)
        if "features" not in args:
            raise ValueError(f"model_fn ({model_fn}) must include features argument.")
        if params is not None and "params" not in args:
            raise ValueError(
                f"model_fn ({model_fn}) does not include params argument, but params ({params}) is "
                "passed to Estimator."
            )
        self._model_fn = model_fn
        self._params = dict(params or {})
        if isinstance(warm_start_from, str):
            warm_start_from = WarmStartSettings(ckpt_to_initialize_from=warm_start_from)
        self._warm_start_settings = warm_start_from

    model_dir = property(lambda self: self._model_dir)
    config = property(lambda self: self._config)
    params = property(lambda self: dict(self._params))
    model_fn = property(lambda self: self._model_fn)

    # Checkpoint access.
    def latest_checkpoint(self):
        return checkpoint_management.latest_checkpoint(self._model_dir)

    def _checkpoint(self):
        path = self.latest_checkpoint()
        if not path:
            raise ValueError(f"Could not find trained model in model_dir: {self._model_dir}.")
        return path

    def get_variable_names(self):
        return [name for name, _ in checkpoint_utils.list_variables(self._checkpoint())]

    def get_variable_value(self, name):
        return checkpoint_utils.load_variable(self._checkpoint(), name)

    # Building a mode's graph.
    def _call_input_fn(self, input_fn, mode):
        args = _fn_args(input_fn)
        kwargs = {}
        if "mode" in args:
            kwargs["mode"] = mode
        if "params" in args:
            kwargs["params"] = self.params
        if "config" in args:
            kwargs["config"] = self._config
        with ops.device("/cpu:0"):
            result = input_fn(**kwargs)
        hooks = []
        if isinstance(result, Dataset):
            iterator = result.make_initializable_iterator()
            hooks.append(_DatasetInitializerHook(iterator))
            result = iterator.get_next()
        if isinstance(result, (list, tuple)):
            if len(result) != 2:
                raise ValueError("input_fn should return (features, labels) as a len 2 tuple.")
            return result[0], result[1], hooks
        return result, None, hooks

    def _call_model_fn(self, features, labels, mode):
        args = _fn_args(self._model_fn)
        kwargs = {}
        if "labels" in args:
            kwargs["labels"] = labels
        elif labels is not None:
            raise ValueError("model_fn does not take labels, but input_fn returns labels.")
        if "mode" in args:
            kwargs["mode"] = mode
        if "params" in args:
            kwargs["params"] = self.params
        if "config" in args:
            kwargs["config"] = self._config
        spec = self._model_fn(features=features, **kwargs)
        if not isinstance(spec, model_fn_lib.EstimatorSpec):
            raise ValueError("model_fn should return an EstimatorSpec.")
        return spec

    def _new_graph(self):
        g = ops.Graph()
        ctx = g.as_default()
        ctx.__enter__()
        if self._config.tf_random_seed is not None:
            random_seed.set_random_seed(self._config.tf_random_seed)
        training_util.get_or_create_global_step(g)
        return g, ctx

    # Exporting.
    def export_saved_model(
        self,
        export_dir_base,
        serving_input_receiver_fn,
        assets_extra=None,
        as_text=False,
        checkpoint_path=None,
    ):
        """Writes a SavedModel (tag ``serve``) of the PREDICT graph fed by ``serving_input_receiver_fn`` with the
        latest (or given) checkpoint's values under ``export_dir_base/<timestamp>``; returns that path (bytes)."""
        return _export_saved_model(
            self, export_dir_base, serving_input_receiver_fn, assets_extra, as_text, checkpoint_path
        )

    def export_savedmodel(
        self,
        export_dir_base,
        serving_input_receiver_fn,
        assets_extra=None,
        as_text=False,
        checkpoint_path=None,
        strip_default_attrs=False,
    ):
        """TF1's older name of ``export_saved_model``."""
        return self.export_saved_model(
            export_dir_base, serving_input_receiver_fn, assets_extra, as_text, checkpoint_path
        )

    # Training.
    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Trains ``steps`` more steps, or up to global step ``max_steps``, or until the input ends."""
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        if max_steps is not None:
            path = self.latest_checkpoint()
            start = int(checkpoint_utils.load_variable(path, "global_step")) if path else 0
            if max_steps <= start:
                _log.info("Skipping training since max_steps has already saved.")
                return self
        hooks = list(_check_hooks(hooks))
        if steps is not None or max_steps is not None:
            hooks.append(basic_session_run_hooks.StopAtStepHook(steps, max_steps))
        g, ctx = self._new_graph()
        try:
            features, labels, input_hooks = self._call_input_fn(input_fn, model_fn_lib.ModeKeys.TRAIN)
            spec = self._call_model_fn(features, labels, model_fn_lib.ModeKeys.TRAIN)
            loss = self._train_with_spec(g, spec, input_hooks + hooks, saving_listeners)
        finally:
            ctx.__exit__(None, None, None)
        _log.info("Loss for final step: %s.", loss)
        return self

    def _train_with_spec(self, g, spec, hooks, saving_listeners):
        global_step = training_util.get_global_step(g)
        if self._warm_start_settings is not None:
            warm_starting_util.warm_start(*self._warm_start_settings)
        if not any(x.op.name == "loss" for x in g.get_collection(ops.GraphKeys.SUMMARIES)):
            summary_ops.scalar("loss", spec.loss)
        ops.add_to_collection(ops.GraphKeys.LOSSES, spec.loss)
        worker_hooks = list(hooks)
        worker_hooks.append(basic_session_run_hooks.NanTensorHook(spec.loss))
        if self._config.log_step_count_steps:
            worker_hooks.append(
                basic_session_run_hooks.LoggingTensorHook(
                    {"loss": spec.loss, "step": global_step}, every_n_iter=self._config.log_step_count_steps
                )
            )
        worker_hooks.extend(spec.training_hooks)
        if not (spec.scaffold.saver or g.get_collection(ops.GraphKeys.SAVERS)):
            g.add_to_collection(
                ops.GraphKeys.SAVERS,
                saver.Saver(
                    sharded=True,
                    max_to_keep=self._config.keep_checkpoint_max,
                    keep_checkpoint_every_n_hours=self._config.keep_checkpoint_every_n_hours,
                    defer_build=True,
                    save_relative_paths=True,
                ),
            )
        all_hooks = worker_hooks + list(spec.training_chief_hooks)
        saver_hooks = [h for h in all_hooks if isinstance(h, basic_session_run_hooks.CheckpointSaverHook)]
        chief_hooks = []
        if (self._config.save_checkpoints_secs or self._config.save_checkpoints_steps) and not saver_hooks:
            chief_hooks = [
                basic_session_run_hooks.CheckpointSaverHook(
                    self._model_dir,
                    save_secs=self._config.save_checkpoints_secs,
                    save_steps=self._config.save_checkpoints_steps,
                    scaffold=spec.scaffold,
                )
            ]
            saver_hooks = chief_hooks[:1]
        if saving_listeners:
            if not saver_hooks:
                raise ValueError(
                    "There should be a CheckpointSaverHook to use saving_listeners. Please set one of "
                    "the RunConfig.save_checkpoints_steps or RunConfig.save_checkpoints_secs."
                )
            saver_hooks[0]._listeners.extend(saving_listeners)
        loss = None
        with monitored_session.MonitoredTrainingSession(
            master=self._config.master,
            is_chief=self._config.is_chief,
            checkpoint_dir=self._model_dir,
            scaffold=spec.scaffold,
            hooks=worker_hooks,
            chief_only_hooks=tuple(chief_hooks) + tuple(spec.training_chief_hooks),
            save_checkpoint_secs=0,
            save_summaries_steps=self._config.save_summary_steps,
            config=self._config.session_config,
            log_step_count_steps=self._config.log_step_count_steps,
        ) as sess:
            while not sess.should_stop():
                _, loss = sess.run([spec.train_op, spec.loss])
        return loss

    # Evaluation.
    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """The metrics (and ``loss``, ``global_step``) over the input, from the latest or given checkpoint."""
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        hooks = list(_check_hooks(hooks))
        path = checkpoint_path or self.latest_checkpoint()
        if not path:
            _log.info(
                "Could not find trained model in model_dir: %s, running initialization to evaluate.",
                self._model_dir,
            )
        g, ctx = self._new_graph()
        try:
            features, labels, input_hooks = self._call_input_fn(input_fn, model_fn_lib.ModeKeys.EVAL)
            spec = self._call_model_fn(features, labels, model_fn_lib.ModeKeys.EVAL)
            if model_fn_lib.LOSS_METRIC_KEY in spec.eval_metric_ops:
                raise ValueError(
                    f'Metric with name "{model_fn_lib.LOSS_METRIC_KEY}" is not allowed, because '
                    "Estimator already defines a default metric with the same name."
                )
            metrics = {model_fn_lib.LOSS_METRIC_KEY: metrics_impl.mean(spec.loss)}
            metrics.update(spec.eval_metric_ops)
            update_op = control_flow_ops.group(*[m[1] for m in metrics.values()])
            final = {k: m[0] for k, m in metrics.items()}
            final[ops.GraphKeys.GLOBAL_STEP] = training_util.get_global_step(g)
            final_hook = basic_session_run_hooks.FinalOpsHook(final)
            all_hooks = input_hooks + hooks + list(spec.evaluation_hooks) + [final_hook]
            if steps is not None:
                all_hooks.append(_StopAfterNEvalsHook(steps))
            creator = monitored_session.ChiefSessionCreator(
                scaffold=spec.scaffold,
                checkpoint_filename_with_path=path,
                master=self._config.evaluation_master,
                config=self._config.session_config,
            )
            with monitored_session.MonitoredSession(session_creator=creator, hooks=all_hooks) as sess:
                while not sess.should_stop():
                    sess.run(update_op)
            result = final_hook.final_ops_values
        finally:
            ctx.__exit__(None, None, None)
        self._write_eval_summary(result, name)
        return result

    def eval_dir(self, name=None):
        return os.path.join(self._model_dir, "eval" if not name else "eval_" + name)

    def _write_eval_summary(self, result, name):
        from ferroflow.core.framework import summary_pb2

        summary = summary_pb2.Summary()
        for key, value in result.items():
            if key == ops.GraphKeys.GLOBAL_STEP:
                continue
            arr = np.asarray(value)
            if arr.size == 1 and arr.dtype.kind in "biuf":
                summary.value.add(tag=key, simple_value=float(arr))
        writer = FileWriter(self.eval_dir(name))
        writer.add_summary(summary, int(result[ops.GraphKeys.GLOBAL_STEP]))
        writer.close()

    # Prediction.
    def predict(
        self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None, yield_single_examples=True
    ):
        """Yields the predictions for the input: one example at a time (a dict per example for dict predictions),
        or whole batches with ``yield_single_examples=False``."""
        hooks = list(_check_hooks(hooks))
        path = checkpoint_path or self.latest_checkpoint()
        if not path:
            _log.info(
                "Could not find trained model in model_dir: %s, running initialization to predict.",
                self._model_dir,
            )
        g, ctx = self._new_graph()
        try:
            features, _, input_hooks = self._call_input_fn(input_fn, model_fn_lib.ModeKeys.PREDICT)
            spec = self._call_model_fn(features, None, model_fn_lib.ModeKeys.PREDICT)
            predictions = spec.predictions
            if predict_keys is not None:
                if not isinstance(predictions, dict):
                    raise ValueError("predict_keys argument is not valid in case of non-dict predictions.")
                missing = [k for k in predict_keys if k not in predictions]
                if missing:
                    raise ValueError(
                        f"Expected to run at least one output from {list(predictions)}, provided "
                        f"{predict_keys}."
                    )
                predictions = {k: predictions[k] for k in predict_keys}
            creator = monitored_session.ChiefSessionCreator(
                scaffold=spec.scaffold,
                checkpoint_filename_with_path=path,
                master=self._config.master,
                config=self._config.session_config,
            )
            with monitored_session.MonitoredSession(
                session_creator=creator, hooks=input_hooks + hooks + list(spec.prediction_hooks)
            ) as sess:
                while not sess.should_stop():
                    values = sess.run(predictions)
                    if not yield_single_examples:
                        yield values
                    elif not isinstance(values, dict):
                        yield from values
                    else:
                        lengths = {len(v) for v in values.values()}
                        if len(lengths) != 1:
                            raise ValueError(
                                "Batch length of predictions should be same. "
                                f"{ {k: len(v) for k, v in values.items()} }"
                            )
                        for i in range(lengths.pop()):
                            yield {k: v[i] for k, v in values.items()}
        finally:
            ctx.__exit__(None, None, None)


def _export_saved_model(
    est, export_dir_base, serving_input_receiver_fn, assets_extra, as_text, checkpoint_path
):
    import shutil

    from ferroflow.estimator import export as export_lib
    from ferroflow.ops import control_flow_ops as cf
    from ferroflow.ops import lookup_ops, variables
    from ferroflow.saved_model import builder as builder_lib
    from ferroflow.saved_model import tag_constants

    if serving_input_receiver_fn is None:
        raise ValueError("An input_receiver_fn must be defined.")
    path = checkpoint_path or est.latest_checkpoint()
    if not path:
        raise ValueError(f"Couldn't find trained model at {est.model_dir}.")
    export_dir = export_lib.timestamped_dir(export_dir_base)
    temp_dir = os.path.join(os.fsencode(export_dir_base), b"temp-" + os.path.basename(export_dir))
    g, ctx = est._new_graph()
    try:
        receiver = serving_input_receiver_fn()
        spec = est._call_model_fn(receiver.features, None, model_fn_lib.ModeKeys.PREDICT)
        defs = export_lib.signature_defs(receiver, spec.export_outputs, spec.predictions)
        if not defs:
            raise ValueError(
                "None of the export_outputs could be served by the serving input receiver's tensors."
            )
        restorer = spec.scaffold.saver or saver.Saver(sharded=True)
        from ferroflow.client.session import Session

        with Session(config=est.config.session_config) as sess:
            restorer.restore(sess, path)
            local_init = spec.scaffold.local_init_op or cf.group(
                variables.local_variables_initializer(), lookup_ops.tables_initializer()
            )
            builder = builder_lib.SavedModelBuilder(os.fsdecode(temp_dir))
            builder.add_meta_graph_and_variables(
                sess,
                [tag_constants.SERVING],
                signature_def_map=defs,
                assets_collection=g.get_collection(ops.GraphKeys.ASSET_FILEPATHS),
                main_op=local_init,
                strip_default_attrs=True,
                saver=restorer,
            )
            builder.save(as_text)
    finally:
        ctx.__exit__(None, None, None)
    if assets_extra:
        extra_dir = os.path.join(os.fsdecode(temp_dir), "assets.extra")
        for dest, source in assets_extra.items():
            target = os.path.join(extra_dir, dest)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(source, target)
    os.rename(temp_dir, export_dir)
    return export_dir


def _check_hooks(hooks):
    hooks = list(hooks or [])
    for h in hooks:
        if not isinstance(h, session_run_hook.SessionRunHook):
            raise TypeError(f"Hooks must be a SessionRunHook, given: {h}")
    return hooks
