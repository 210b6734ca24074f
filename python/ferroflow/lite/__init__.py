"""``tf.lite``: TensorFlow Lite models written and run by ferroflow.

``Interpreter`` runs ``.tflite`` files (TensorFlow's or ferroflow's);
``TFLiteConverter`` turns a session's frozen graph into one.
"""

from ferroflow.lite import constants, experimental
from ferroflow.lite.convert import (
    OpHint,
    OpsSet,
    Optimize,
    RepresentativeDataset,
    TargetSpec,
    TFLiteConverter,
    TocoConverter,
    toco_convert,
)
from ferroflow.lite.interpreter import Interpreter, OpResolverType

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
