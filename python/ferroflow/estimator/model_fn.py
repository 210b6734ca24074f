"""``tf.estimator.ModeKeys`` and ``tf.estimator.EstimatorSpec``: what a ``model_fn`` returns, checked as
TensorFlow 1.15's estimator checks it."""

from __future__ import annotations

import collections

from ferroflow.framework import ops
from ferroflow.training import monitored_session, session_run_hook


class ModeKeys:
    """The three modes a ``model_fn`` is called in."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


LOSS_METRIC_KEY = "loss"
AVERAGE_LOSS_METRIC_KEY = "average_loss"
_MODES = (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT)


def _check_tensor(x, what):
    if not isinstance(x, (ops.Tensor, ops.Operation)) and not hasattr(x, "_as_graph_element"):
        raise TypeError(f"{what} must be Tensor or Operation, given: {x!r}")
    return x


def _check_hooks(hooks, what):
    hooks = tuple(hooks or [])
    for h in hooks:
        if not isinstance(h, session_run_hook.SessionRunHook):
            raise TypeError(f"All hooks must be SessionRunHook instances, given: {h!r} in {what}")
    return hooks


_SPEC_FIELDS = [
    "mode",
    "predictions",
    "loss",
    "train_op",
    "eval_metric_ops",
    "export_outputs",
    "training_chief_hooks",
    "training_hooks",
    "scaffold",
    "evaluation_hooks",
    "prediction_hooks",
]


class EstimatorSpec(collections.namedtuple("EstimatorSpec", _SPEC_FIELDS)):
    """The ops and objects a ``model_fn`` returns for one mode: ``loss`` and ``train_op`` to train, ``loss`` and
    ``eval_metric_ops`` (name -> (value, update_op)) to evaluate, ``predictions`` (a tensor or a dict of them)
    to predict."""

    def __new__(
        cls,
        mode,
        predictions=None,
        loss=None,
        train_op=None,
        eval_metric_ops=None,
        export_outputs=None,
        training_chief_hooks=None,
        training_hooks=None,
        scaffold=None,
        evaluation_hooks=None,
        prediction_hooks=None,
    ):
        if mode not in _MODES:
            raise ValueError(f"mode={mode!r} unrecognized.")
        if train_op is None and mode == ModeKeys.TRAIN:
            raise ValueError("Missing train_op.")
        if train_op is not None:
            train_op = _check_tensor(train_op, "train_op")
        if loss is None:
            if mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
                raise ValueError("Missing loss.")
        else:
            loss = _check_tensor(loss, "loss")
            if isinstance(loss, ops.Tensor):
                shape = loss.shape
                if shape.ndims is not None and shape.num_elements() != 1:
                    raise ValueError(f"Loss must be scalar, given: {loss}")
                if shape.ndims not in (None, 0):
                    from ferroflow.ops import array_ops

                    loss = array_ops.reshape(loss, [])
        if predictions is None:
            if mode == ModeKeys.PREDICT:
                raise ValueError("Missing predictions.")
            predictions = {}
        elif isinstance(predictions, dict):
            predictions = {k: _check_tensor(v, f"predictions[{k}]") for k, v in predictions.items()}
        else:
            predictions = _check_tensor(predictions, "predictions")
        eval_metric_ops = dict(eval_metric_ops or {})
        for key, metric in eval_metric_ops.items():
            if not (isinstance(metric, tuple) and len(metric) == 2):
                raise TypeError(
                    f"Values of eval_metric_ops must be (metric_value, update_op) tuples, given: {metric!r} "
                    f"for key: {key}"
                )
        if scaffold is None:
            scaffold = monitored_session.Scaffold()
        elif not isinstance(scaffold, monitored_session.Scaffold):
            raise TypeError(f"scaffold must be tf.train.Scaffold. Given: {scaffold!r}")
        return super().__new__(
            cls,
            mode=mode,
            predictions=predictions,
            loss=loss,
            train_op=train_op,
            eval_metric_ops=eval_metric_ops,
            export_outputs=export_outputs,
            training_chief_hooks=_check_hooks(training_chief_hooks, "training_chief_hooks"),
            training_hooks=_check_hooks(training_hooks, "training_hooks"),
            scaffold=scaffold,
            evaluation_hooks=_check_hooks(evaluation_hooks, "evaluation_hooks"),
            prediction_hooks=_check_hooks(prediction_hooks, "prediction_hooks"),
        )

    def _replace(self, **kwds):
        if "mode" in kwds and self.mode != kwds["mode"]:
            raise ValueError("mode of EstimatorSpec cannot be changed.")
        return EstimatorSpec(**dict(self._asdict(), **kwds))
