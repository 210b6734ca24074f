"""``tf.lite``: TensorFlow Lite models written and run by ferroflow.

``Interpreter`` runs ``.tflite`` files (TensorFlow's or ferroflow's);
``TFLiteConverter`` turns a session's frozen graph into one.
"""

from ferroflow.lite.interpreter import Interpreter, OpResolverType

__all__ = ["Interpreter", "OpResolverType"]
