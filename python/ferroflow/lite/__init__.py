"""``tf.lite``: TensorFlow Lite models written and run by ferroflow.

``Interpreter`` runs ``.tflite`` files (TensorFlow's or ferroflow's);
``TFLiteConverter`` turns a session's frozen graph into one.
"""

from ferroflow.lite import constants, experimental
from ferroflow.lite.convert import (
    OpsSet,
    Optimize,
    RepresentativeDataset,
    TargetSpec,
    TFLiteConverter,
    TocoConverter,
    toco_convert,
)
from ferroflow.lite.interpreter import Interpreter, OpResolverType


class OpHint:
    """TF1's op-hint annotation for fusing composite ops. ferroflow's converter
    does not read hints: constructing one raises NotImplementedError."""

    def __init__(self, function_name, level=1, children_inputs_mappings=None, **kwargs):
        raise NotImplementedError(
            "tf.lite.OpHint is not supported by ferroflow's converter (TF deprecated it too)"
        )


__all__ = [
    "Interpreter",
    "OpHint",
    "OpResolverType",
    "OpsSet",
    "Optimize",
    "RepresentativeDataset",
    "TFLiteConverter",
    "TargetSpec",
    "TocoConverter",
    "constants",
    "experimental",
    "toco_convert",
]
