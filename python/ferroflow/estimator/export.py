"""``tf.estimator.export``: serving input receivers and export outputs, and ``Estimator.export_saved_model``'s
work: the PREDICT graph on the receiver's features, the latest checkpoint restored into it, and a SavedModel
(tag ``serve``) under ``export_dir_base/<timestamp>`` whose signatures come from the ``EstimatorSpec``'s
``export_outputs`` (default: a predict signature of all predictions), as TensorFlow 1.15 writes them.
"""

from __future__ import annotations

import os
import time

from ferroflow.framework import dtypes, ops
from ferroflow.ops import array_ops, parsing_ops

SIGNATURE_KEY = "serving_default"


def _as_dict(value, default_key, what):
    if value is None:
        raise ValueError(f"{what} must be defined.")
    if not isinstance(value, dict):
        value = {default_key: value}
    for k, v in value.items():
        if not isinstance(k, str):
            raise ValueError(f"{what} keys must be strings: {k}.")
        if not isinstance(v, (ops.Tensor,)) and not hasattr(v, "indices"):
            raise ValueError(f"{what} must be a Tensor or SparseTensor: {k}: {v}.")
    return value


class ServingInputReceiver:
    """The features a serving graph feeds the model (``features``) and the tensors a request fills
    (``receiver_tensors``)."""

    def __init__(self, features, receiver_tensors, receiver_tensors_alternatives=None):
        self.features = _as_dict(features, "feature", "features")
        self.receiver_tensors = _as_dict(receiver_tensors, "input", "receiver_tensors")
        self.receiver_tensors_alternatives = dict(receiver_tensors_alternatives or {})


class TensorServingInputReceiver(ServingInputReceiver):
    """A receiver whose ``features`` is one tensor handed to the model as is."""

    def __init__(self, features, receiver_tensors, receiver_tensors_alternatives=None):
        super().__init__({"feature": features}, receiver_tensors, receiver_tensors_alternatives)
        self.features = features


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """A receiver fn of placeholders shaped like ``features`` (batch size ``default_batch_size``), fed as is."""

    def serving_input_receiver_fn():
        receiver = {}
        for name, t in features.items():
            shape = [default_batch_size] + t.shape.as_list()[1:]
            receiver[name] = array_ops.placeholder(dtype=t.dtype, shape=shape, name=t.op.name)
        return ServingInputReceiver(receiver.copy(), receiver)

    return serving_input_receiver_fn


def build_parsing_serving_input_receiver_fn(feature_spec, default_batch_size=None):
    """A receiver fn parsing serialized ``tf.train.Example`` protos (``examples``) with ``feature_spec``."""

    def serving_input_receiver_fn():
        serialized = array_ops.placeholder(
            dtype=dtypes.string, shape=[default_batch_size], name="input_example_tensor"
        )
        features = parsing_ops.parse_example(serialized, feature_spec)
        return ServingInputReceiver(features, {"examples": serialized})

    return serving_input_receiver_fn


class ExportOutput:
    """How one signature reads the model's outputs."""

    def as_signature_def(self, receiver_tensors):
        raise NotImplementedError


class PredictOutput(ExportOutput):
    """A predict signature over ``outputs`` (a tensor or a dict of them)."""

    def __init__(self, outputs):
        self.outputs = _as_dict(outputs, "output", "Prediction output")

    def as_signature_def(self, receiver_tensors):
        from ferroflow.saved_model import signature_def_utils

        return signature_def_utils.predict_signature_def(receiver_tensors, self.outputs)


class ClassificationOutput(ExportOutput):
    """A classify signature of ``scores`` and/or ``classes`` (valid only for one serialized-Example input)."""

    def __init__(self, scores=None, classes=None):
        if scores is None and classes is None:
            raise ValueError("At least one of scores and classes must be set.")
        if classes is not None and classes.dtype != dtypes.string:
            raise ValueError(f"Classification classes must be a string Tensor; got {classes}")
        self.scores, self.classes = scores, classes

    def as_signature_def(self, receiver_tensors):
        from ferroflow.saved_model import signature_def_utils

        if len(receiver_tensors) != 1:
            raise ValueError(f"Classification input must be a single string Tensor; got {receiver_tensors}")
        ((_, examples),) = receiver_tensors.items()
        if examples.dtype != dtypes.string:
            raise ValueError(f"Classification input must be a single string Tensor; got {receiver_tensors}")
        return signature_def_utils.classification_signature_def(examples, self.classes, self.scores)


class RegressionOutput(ExportOutput):
    """A regress signature of ``value`` (valid only for one serialized-Example input)."""

    def __init__(self, value):
        if value.dtype != dtypes.float32:
            raise ValueError(f"Regression output value must be a float32 Tensor; got {value}")
        self.value = value

    def as_signature_def(self, receiver_tensors):
        from ferroflow.saved_model import signature_def_utils

        if len(receiver_tensors) != 1:
            raise ValueError(f"Regression input must be a single string Tensor; got {receiver_tensors}")
        ((_, examples),) = receiver_tensors.items()
        if examples.dtype != dtypes.string:
            raise ValueError(f"Regression input must be a single string Tensor; got {receiver_tensors}")
        return signature_def_utils.regression_signature_def(examples, self.value)


def signature_defs(receiver, export_outputs, predictions):
    """TF's build_all_signature_defs: one signature per export output (default: predict on ``predictions``) and
    per alternative receiver; the ones an output cannot serve are left out."""
    if not export_outputs:
        export_outputs = {SIGNATURE_KEY: PredictOutput(predictions)}
    receivers = {None: receiver.receiver_tensors}
    for name, alt in receiver.receiver_tensors_alternatives.items():
        receivers[name] = alt if isinstance(alt, dict) else {"input": alt}
    defs = {}
    for receiver_name, tensors in receivers.items():
        for output_key, output in export_outputs.items():
            key = output_key if receiver_name is None else f"{receiver_name}:{output_key}"
            try:
                defs[key] = output.as_signature_def(tensors)
            except ValueError:
                continue
    return defs


def timestamped_dir(export_dir_base):
    """``export_dir_base/<seconds since the epoch>``, a second later if that one exists (bytes, as TF)."""
    for _ in range(10):
        path = os.path.join(os.fsencode(export_dir_base), str(int(time.time())).encode())
        if not os.path.exists(path):
            return path
        time.sleep(1)
    raise RuntimeError("Failed to obtain a unique export directory name after 10 attempts.")
