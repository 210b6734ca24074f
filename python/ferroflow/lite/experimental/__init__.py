"""``tf.lite.experimental``."""

from ferroflow.lite.experimental import nn
from ferroflow.lite.interpreter import OpResolverType


def load_delegate(library, options=None):
    """TFLite delegates are shared libraries for TFLite's own runtime;
    ferroflow's interpreter cannot load them."""
    raise ValueError(
        f"Failed to load delegate from {library}: ferroflow's interpreter does not load "
        "TensorFlow Lite delegates"
    )


__all__ = ["OpResolverType", "load_delegate", "nn"]
