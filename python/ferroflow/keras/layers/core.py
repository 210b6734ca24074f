"""Keras's core layers: Dense, Dropout, Flatten (the ``tf.layers`` ones, Keras-named), Activation, Reshape,
Permute, RepeatVector, Lambda, ActivityRegularization, Masking. Dense, Dropout, Activation,
ActivityRegularization and Masking pass masks on; Lambda does when given ``mask``."""

from __future__ import annotations

import inspect

import numpy as np

from ferroflow.framework import ops
from ferroflow.framework.tensor_shape import TensorShape
from ferroflow.keras import activations
from ferroflow.keras import regularizers as regularizers_mod
from ferroflow.keras.engine.base_layer import Layer
from ferroflow.keras.layers._wrap import keras_class
from ferroflow.layers import core as tf_core
from ferroflow.ops import array_ops, math_ops

__all__ = ["Activation", "ActivityRegularization", "Dense", "Dropout", "Flatten", "Lambda", "Masking", "Permute",
           "RepeatVector", "Reshape"]

Dense = keras_class(tf_core.Dense, "Dense", {"kernel_initializer": "glorot_uniform", "bias_initializer": "zeros"},
                    "``activation(inputs @ kernel + bias)``: weights ``<name>/kernel`` ``[in, units]`` and "
                    "``<name>/bias``.", masking=True)
Dropout = keras_class(tf_core.Dropout, "Dropout", None,
                      "Drops inputs with probability ``rate`` in the training phase (Keras's learning phase).",
                      masking=True)
Flatten = keras_class(tf_core.Flatten, "Flatten", None, "Flattens each example: ``[batch, -1]``.")


class Activation(Layer):
    """Applies an activation function (a name such as ``'relu'`` or a callable)."""

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)


class Reshape(Layer):
    """Reshapes each example to ``target_shape`` (one entry may be -1)."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(int(d) for d in target_shape)

    def _static_target(self, input_shape):
        dims = TensorShape(input_shape).as_list()
        target = list(self.target_shape)
        if -1 in target and None not in dims[1:]:
            known = int(np.prod([d for d in target if d != -1]))
            total = int(np.prod(dims[1:]))
            if known == 0 or total % known:
                raise ValueError(f"total size of new array must be unchanged, input_shape = {dims[1:]}, "
                                 f"output_shape = {self.target_shape}")
            target[target.index(-1)] = total // known
        return [None if d == -1 else d for d in target]

    def call(self, inputs):
        batch = array_ops.shape(inputs)[0]
        out = array_ops.reshape(inputs, array_ops.stack([batch] + [ops.convert_to_tensor(d) for d in
                                                                     self.target_shape]))
        out.set_shape([inputs.shape.as_list()[0]] + self._static_target(inputs.shape))
        return out

    def compute_output_shape(self, input_shape):
        return TensorShape([TensorShape(input_shape).as_list()[0]] + self._static_target(input_shape))


class Permute(Layer):
    """Permutes the non-batch axes (``dims`` counts them from 1)."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(f"Invalid permutation `dims` for Permute Layer: {dims}. The set of indices in `dims` "
                             "must be consecutive and start from 1.")

    def call(self, inputs):
        return array_ops.transpose(inputs, perm=(0,) + self.dims)


class RepeatVector(Layer):
    """``[batch, features]`` to ``[batch, n, features]``."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        self.n = int(n)

    def call(self, inputs):
        return array_ops.tile(array_ops.expand_dims(inputs, 1), [1, self.n, 1])


class Lambda(Layer):
    """Wraps an arbitrary function of the inputs as a layer (``arguments`` are passed as keywords)."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        super().__init__(**kwargs)
        self.function = function
        self.arguments = dict(arguments or {})
        self._output_shape = output_shape
        self.mask = mask
        self.supports_masking = mask is not None

    def call(self, inputs, mask=None):
        arguments = dict(self.arguments)
        try:
            takes_mask = "mask" in inspect.signature(self.function).parameters
        except (TypeError, ValueError):
            takes_mask = False
        if takes_mask:
            arguments["mask"] = mask
        return self.function(inputs, **arguments)

    def compute_mask(self, inputs, mask=None):
        """``mask(inputs, mask)`` when ``mask`` is a function, else the ``mask`` given (None: no mask)."""
        if callable(self.mask):
            return self.mask(inputs, mask)
        return self.mask


class ActivityRegularization(Layer):
    """The identity, adding ``l1``/``l2`` penalties of its output to the layer's losses."""

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        super().__init__(activity_regularizer=regularizers_mod.L1L2(l1=l1, l2=l2), **kwargs)
        self.supports_masking = True

    def call(self, inputs):
        return inputs


class Masking(Layer):
    """Masks the time steps whose features all equal ``mask_value``: they are zeroed and the output's mask
    (``[batch, time]``, True where a step is kept) makes RNN layers skip them and losses and metrics leave
    them out."""

    def __init__(self, mask_value=0.0, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.mask_value = mask_value

    def _keep(self, inputs, keepdims):
        return math_ops.reduce_any(math_ops.not_equal(inputs, self.mask_value), axis=-1, keepdims=keepdims)

    def compute_mask(self, inputs, mask=None):
        return self._keep(inputs, keepdims=False)

    def call(self, inputs):
        return inputs * math_ops.cast(self._keep(inputs, keepdims=True), inputs.dtype)

    def get_config(self):
        config = super().get_config()
        config["mask_value"] = self.mask_value
        return config
