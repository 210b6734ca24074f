"""Building and checking SignatureDefs (``tf.saved_model.signature_def_utils``).

A signature names a model's inputs and outputs by key (``"x"``,
``"probabilities"``) and says which of TensorFlow Serving's APIs it serves
(``method_name``: predict, classify or regress). Classify and regress
signatures read serialized ``tf.train.Example`` strings under the key
``"inputs"``.
"""

from __future__ import annotations

import os

from ferroflow.framework import dtypes, ops
from ferroflow.saved_model import constants
from ferroflow.saved_model import signature_constants as sc
from ferroflow.saved_model.utils import build_tensor_info

_DT_STRING = dtypes.string.as_datatype_enum
_DT_FLOAT = dtypes.float32.as_datatype_enum


def _signature_def_class():
    from ferroflow.core.protobuf.meta_graph_pb2 import SignatureDef

    return SignatureDef


def build_signature_def(inputs=None, outputs=None, method_name=None, defaults=None):
    """A ``SignatureDef`` from ``{key: TensorInfo}`` maps and a method name.

    ``defaults`` maps input keys to values (anything ``tf.make_tensor_proto``
    takes) used when the input is not fed.
    """
    signature = _signature_def_class()()
    for key, info in (inputs or {}).items():
        signature.inputs[key].CopyFrom(info)
    for key, info in (outputs or {}).items():
        signature.outputs[key].CopyFrom(info)
    if method_name is not None:
        signature.method_name = method_name
    if defaults:
        from ferroflow.framework import tensor_util

        for key, value in defaults.items():
            signature.defaults[key].CopyFrom(tensor_util.make_tensor_proto(value))
    return signature


def _tensor_infos(what, tensors):
    infos = {}
    for key, tensor in tensors.items():
        if not isinstance(key, str):
            raise ValueError(f"{what} keys must be strings, got {key!r}")
        infos[key] = build_tensor_info(tensor)
    return infos


def predict_signature_def(inputs, outputs):
    """A Predict signature: any named inputs to any named outputs (``{key: Tensor}`` dicts)."""
    if not inputs:
        raise ValueError("Prediction `inputs` cannot be None or empty.")
    if not outputs:
        raise ValueError("Prediction `outputs` cannot be None or empty.")
    return build_signature_def(_tensor_infos("Prediction input", inputs),
                               _tensor_infos("Prediction output", outputs), sc.PREDICT_METHOD_NAME)


def _examples_info(api, examples):
    if examples is None:
        raise ValueError(f"{api} `examples` cannot be None.")
    if not isinstance(examples, ops.Tensor):
        raise ValueError(f"{api} `examples` must be a string Tensor of serialized tf.train.Examples, "
                         f"got {type(examples).__name__}.")
    info = build_tensor_info(examples)
    if info.dtype != _DT_STRING:
        raise ValueError(f"{api} input tensors must be of type string. Found tensors with type "
                         f"{examples.dtype.name} ({examples.name}).")
    return info


def _output_info(api, what, tensor, dtype_enum, dtype_name):
    if not isinstance(tensor, ops.Tensor):
        raise ValueError(f"{api} `{what}` must be a Tensor, got {type(tensor).__name__}.")
    info = build_tensor_info(tensor)
    if info.dtype != dtype_enum:
        raise ValueError(f"{api} {what} tensors must be of type {dtype_name}. Found tensors with type "
                         f"{tensor.dtype.name} ({tensor.name}).")
    return info


def regression_signature_def(examples, predictions):
    """A Regress signature: serialized Examples (string) in, float32 ``predictions`` out."""
    inputs = {sc.REGRESS_INPUTS: _examples_info("Regression", examples)}
    if predictions is None:
        raise ValueError("Regression `predictions` cannot be None.")
    outputs = {sc.REGRESS_OUTPUTS: _output_info("Regression", "output", predictions, _DT_FLOAT, "float")}
    return build_signature_def(inputs, outputs, sc.REGRESS_METHOD_NAME)


def classification_signature_def(examples, classes, scores):
    """A Classify signature: serialized Examples in; string ``classes`` and/or float32 ``scores`` out."""
    inputs = {sc.CLASSIFY_INPUTS: _examples_info("Classification", examples)}
    if classes is None and scores is None:
        raise ValueError("Classification `classes` and `scores` cannot both be None.")
    outputs = {}
    if classes is not None:
        outputs[sc.CLASSIFY_OUTPUT_CLASSES] = _output_info("Classification", "classes", classes, _DT_STRING,
                                                           "string")
    if scores is not None:
        outputs[sc.CLASSIFY_OUTPUT_SCORES] = _output_info("Classification", "scores", scores, _DT_FLOAT, "float")
    return build_signature_def(inputs, outputs, sc.CLASSIFY_METHOD_NAME)


def _is_valid_predict_signature(signature):
    return signature.method_name == sc.PREDICT_METHOD_NAME and bool(signature.inputs) and bool(signature.outputs)


def _is_valid_regression_signature(signature):
    return (signature.method_name == sc.REGRESS_METHOD_NAME
            and set(signature.inputs) == {sc.REGRESS_INPUTS}
            and signature.inputs[sc.REGRESS_INPUTS].dtype == _DT_STRING
            and set(signature.outputs) == {sc.REGRESS_OUTPUTS}
            and signature.outputs[sc.REGRESS_OUTPUTS].dtype == _DT_FLOAT)


def _is_valid_classification_signature(signature):
    if signature.method_name != sc.CLASSIFY_METHOD_NAME:
        return False
    if set(signature.inputs) != {sc.CLASSIFY_INPUTS} or signature.inputs[sc.CLASSIFY_INPUTS].dtype != _DT_STRING:
        return False
    outputs = signature.outputs
    if not outputs or set(outputs) - {sc.CLASSIFY_OUTPUT_CLASSES, sc.CLASSIFY_OUTPUT_SCORES}:
        return False
    if sc.CLASSIFY_OUTPUT_CLASSES in outputs and outputs[sc.CLASSIFY_OUTPUT_CLASSES].dtype != _DT_STRING:
        return False
    return not (sc.CLASSIFY_OUTPUT_SCORES in outputs and outputs[sc.CLASSIFY_OUTPUT_SCORES].dtype != _DT_FLOAT)


def is_valid_signature(signature_def):
    """Whether ``signature_def`` is a well-formed Predict, Classify or Regress signature."""
    if signature_def is None:
        return False
    return (_is_valid_classification_signature(signature_def) or _is_valid_regression_signature(signature_def)
            or _is_valid_predict_signature(signature_def))


class MethodNameUpdater:
    """Changes the ``method_name`` of signatures in a SavedModel already on disk.

    ``replace_method_name(signature_key, method_name, tags=None)`` edits the
    signature in every meta graph (or those whose tag set equals ``tags``);
    ``save(new_export_dir=None)`` writes ``saved_model.pb`` back (or into a
    copy of the directory).
    """

    def __init__(self, export_dir):
        from ferroflow.saved_model import loader

        self._export_dir = os.fspath(export_dir)
        self._saved_model = loader.parse_saved_model(self._export_dir)

    def replace_method_name(self, signature_key, method_name, tags=None):
        if not signature_key:
            raise ValueError("`signature_key` must be defined.")
        if not method_name:
            raise ValueError("`method_name` must be defined.")
        if tags is not None and not isinstance(tags, (list, tuple, set)):
            tags = [tags]
        found = False
        for meta_graph in self._saved_model.meta_graphs:
            if tags is not None and set(meta_graph.meta_info_def.tags) != set(tags):
                continue
            found = True
            if signature_key not in meta_graph.signature_def:
                raise ValueError(f"MetaGraphDef associated with tags {tags} does not have a signature_def with "
                                 f"key: '{signature_key}'. This means either you specified the wrong signature "
                                 "key or forgot to put the signature_def with the corresponding key in your "
                                 "SavedModel.")
            meta_graph.signature_def[signature_key].method_name = method_name
        if tags is not None and not found:
            raise ValueError(f"MetaGraphDef associated with tags {tags} could not be found in SavedModel. This "
                             "means either you specified the invalid tags or your SavedModel does not have a "
                             "MetaGraphDef with the specified tags.")

    def save(self, new_export_dir=None):
        """Writes the edited ``saved_model.pb`` into the directory (or a copy at ``new_export_dir``)."""
        from ferroflow.saved_model import builder

        target = self._export_dir
        if new_export_dir is not None:
            import shutil

            target = os.fspath(new_export_dir)
            shutil.copytree(self._export_dir, target, dirs_exist_ok=True)
        builder.write_saved_model_file(self._saved_model, target, as_text=os.path.exists(
            os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PBTXT))
            and not os.path.exists(os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PB)))
