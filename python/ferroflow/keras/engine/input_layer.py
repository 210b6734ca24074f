"""``tf.keras.Input`` and ``InputLayer``: a placeholder that starts a functional model."""

from __future__ import annotations

from ferroflow.framework import dtypes, ops
from ferroflow.keras import backend as K
from ferroflow.keras.engine.base_layer import Layer, Node
from ferroflow.ops import array_ops

__all__ = ["Input", "InputLayer"]


class InputLayer(Layer):
    """Holds the model's input placeholder (``batch_input_shape``, ``dtype``), or wraps ``input_tensor``."""

    def __init__(self, input_shape=None, batch_size=None, dtype=None, input_tensor=None, sparse=False, name=None,
                 batch_input_shape=None, **kwargs):
        if sparse:
            raise NotImplementedError("Sparse Keras inputs are not supported by ferroflow")
        if name is None:
            name = f"input_{K.get_uid('input')}"
        if batch_input_shape is None and input_shape is not None:
            batch_input_shape = (batch_size,) + tuple(input_shape)
        super().__init__(name=name, dtype=dtype or K.floatx(), batch_input_shape=batch_input_shape, **kwargs)
        self.built = True
        self.is_placeholder = input_tensor is None
        if input_tensor is None:
            shape = self._batch_input_shape
            with ops.init_scope(), ops.name_scope(""):
                input_tensor = array_ops.placeholder(dtypes.as_dtype(dtype or K.floatx()), shape=shape, name=name)
        else:
            self._batch_input_shape = tuple(input_tensor.shape.as_list()) if input_tensor.shape.rank is not None \
                else None
        self._inbound_nodes.append(Node(self, [], [input_tensor], {}))
        K.set_tensor_meta(input_tensor, "history", (self, 0, 0))

    def call(self, inputs):
        return inputs

    @property
    def output(self):
        return self._inbound_nodes[0].outputs[0]

    def get_config(self):
        return {"batch_input_shape": self._batch_input_shape, "dtype": self._dtype.name, "sparse": False,
                "name": self._name}


def Input(shape=None, batch_size=None, name=None, dtype=None, sparse=False, tensor=None, batch_shape=None,  # noqa: N802
          **kwargs):
    """A placeholder for a functional model's input: ``shape`` excludes the batch dimension."""
    if shape is None and batch_shape is None and tensor is None:
        raise ValueError("Please provide to Input either a `shape` or a `tensor` argument. Note that `shape` does not "
                         "include the batch dimension.")
    if batch_shape is None and shape is not None:
        batch_shape = (batch_size,) + tuple(shape)
    layer = InputLayer(batch_input_shape=batch_shape, name=name, dtype=dtype, sparse=sparse, input_tensor=tensor,
                       **kwargs)
    return layer.output
