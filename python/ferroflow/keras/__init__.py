"""``tf.keras`` (``tf.compat.v1.keras``): Keras as it ran on TensorFlow 1.x, in graph mode, on ferroflow's
graphs, sessions, ``tf.layers`` and ``tf.train`` optimizers. See ``engine/training.py`` for what ``fit`` does
and ``backend.py`` for the session and the learning phase."""

from ferroflow.keras import (
    activations,
    backend,
    callbacks,
    constraints,
    datasets,
    experimental,
    initializers,
    layers,
    losses,
    metrics,
    models,
    optimizers,
    preprocessing,
    regularizers,
    utils,
)
from ferroflow.keras.engine.input_layer import Input
from ferroflow.keras.engine.sequential import Sequential
from ferroflow.keras.engine.training import Model

__version__ = "2.2.4-tf"

__all__ = ["Input", "Model", "Sequential", "activations", "backend", "callbacks", "constraints", "datasets",
           "experimental", "initializers", "layers", "losses", "metrics", "models", "optimizers", "preprocessing",
           "regularizers", "utils"]
