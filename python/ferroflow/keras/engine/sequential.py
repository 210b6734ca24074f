"""``tf.keras.Sequential``: a linear stack of layers.

With ``input_shape`` on the first layer the model is built at once (an ``InputLayer`` named
``<first layer>_input`` feeds it); otherwise it is built on its first call or the first ``fit``/``predict``,
from the data's shape.
"""

from __future__ import annotations

import numpy as np

from ferroflow.keras import backend as K
from ferroflow.keras.engine.base_layer import Layer
from ferroflow.keras.engine.input_layer import InputLayer
from ferroflow.keras.engine.training import Model

__all__ = ["Sequential"]


class Sequential(Model):
    """``Sequential([layer, ...])`` or ``Sequential()`` then ``add(layer)``."""

    def __init__(self, layers=None, name=None):
        super().__init__(name=name)
        self._seq_layers = []
        self._input_layer = None
        for layer in layers or []:
            self.add(layer)

    @property
    def layers(self):
        return list(self._seq_layers)

    def add(self, layer):
        """Appends ``layer`` (connecting it at once when the model has inputs)."""
        if isinstance(layer, InputLayer) or (
                K.tensor_meta(layer, "history") is not None and isinstance(K.tensor_meta(layer, "history")[0], InputLayer)):
            if self._seq_layers or self._input_layer is not None:
                raise ValueError("An InputLayer can only be the first layer of a Sequential model")
            self._input_layer = layer if isinstance(layer, InputLayer) else K.tensor_meta(layer, "history")[0]
            self._connect(self._input_layer.output)
            return
        if not isinstance(layer, Layer):
            raise TypeError(f"The added layer must be an instance of class Layer. Found: {layer!r}")
        if any(layer is lay for lay in self._seq_layers):
            raise ValueError(f"The layer {layer.name} is already in the model")
        self._seq_layers.append(layer)
        if self.outputs:
            out = layer(self.outputs[0])
            self._init_graph_network(self.inputs[0], out)
            self._graph_layers = list(self._seq_layers)
            self._retrain_graph()
        elif len(self._seq_layers) == 1 and self._input_layer is None and layer._batch_input_shape is not None:
            dtype = layer._dtype.name if layer._dtype is not None else None
            self._input_layer = InputLayer(batch_input_shape=layer._batch_input_shape, dtype=dtype,
                                           name=f"{layer.name}_input")
            self._connect(self._input_layer.output)
        elif self._input_layer is not None and len(self._seq_layers) == 1:
            self._connect(self._input_layer.output)

    def _connect(self, inputs):
        out = inputs
        for layer in self._seq_layers:
            out = layer(out)
        self._init_graph_network(inputs, out)
        self._graph_layers = list(self._seq_layers)
        self._retrain_graph()

    def _retrain_graph(self):
        if self._compile_args is not None:
            self._build_training_graph()
            self._train_op = None

    def pop(self):
        """Removes the last layer."""
        if not self._seq_layers:
            raise TypeError("There are no layers in the model.")
        self._seq_layers.pop()
        if self.inputs:
            if self._seq_layers:
                self._connect(self.inputs[0])
            else:
                self.outputs = []

    def build(self, input_shape=None):
        """Builds the model for inputs of ``input_shape`` (batch dimension included)."""
        if self.outputs:
            return
        if input_shape is None:
            raise ValueError("You must provide an `input_shape` argument.")
        shape = tuple(input_shape)
        self._input_layer = InputLayer(batch_input_shape=shape, name=f"{self._seq_layers[0].name}_input"
                                       if self._seq_layers else None)
        self._connect(self._input_layer.output)

    def _ensure_built(self, x_list):
        if self.outputs:
            return
        if not self._seq_layers:
            raise ValueError("The Sequential model has no layers")
        x = np.asarray(x_list[0])
        dtype = None if x.dtype.kind == "f" else x.dtype.name
        self._input_layer = InputLayer(batch_input_shape=(None,) + x.shape[1:], dtype=dtype,
                                       name=f"{self._seq_layers[0].name}_input")
        self._connect(self._input_layer.output)

    def call(self, inputs, training=None, mask=None):
        out = inputs
        for layer in self._seq_layers:
            kwargs = {}
            if training is not None and layer._expects_training_arg:
                kwargs["training"] = training
            out = layer(out, **kwargs)
        return out

    def get_config(self):
        """The model's name and its layers' configs (an ``InputLayer`` first when the model has inputs)."""
        layers = []
        if self._input_layer is not None:
            layers.append({"class_name": "InputLayer", "config": self._input_layer.get_config()})
        for layer in self._seq_layers:
            layers.append({"class_name": type(layer).__name__, "config": layer.get_config()})
        return {"name": self.name, "layers": layers}

    @classmethod
    def from_config(cls, config, custom_objects=None):
        from ferroflow.keras import saving

        return saving.model_from_config({"class_name": "Sequential", "config": config}, custom_objects)

    def predict_classes(self, x, batch_size=32, verbose=0):
        """The class indices: argmax of the prediction (or ``> 0.5`` for one output unit)."""
        proba = self.predict(x, batch_size=batch_size, verbose=verbose)
        if proba.shape[-1] > 1:
            return proba.argmax(axis=-1)
        return (proba > 0.5).astype("int32")

    def predict_proba(self, x, batch_size=32, verbose=0):
        return self.predict(x, batch_size=batch_size, verbose=verbose)
