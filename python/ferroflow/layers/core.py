"""``tf.layers.Dense``, ``Dropout``, ``Flatten`` and their functional forms."""

from __future__ import annotations

import numpy as np

from ferroflow.framework import ops
from ferroflow.framework.tensor_shape import TensorShape, dimension_value
from ferroflow.layers.base import InputSpec, Layer, smart_cond
from ferroflow.ops import array_ops, init_ops, math_ops, nn_ops

__all__ = ["Dense", "Dropout", "Flatten", "dense", "dropout", "flatten"]


def _activation(activation):
    if activation is None or callable(activation):
        return activation
    if isinstance(activation, str):
        fn = getattr(nn_ops, activation, None) or getattr(math_ops, activation, None)
        if activation == "linear":
            return None
        if callable(fn):
            return fn
    raise ValueError(f"Unknown activation function: {activation!r}")


class Dense(Layer):
    """``activation(inputs @ kernel + bias)``; ``kernel`` is ``[in, units]``, ``bias`` ``[units]``."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        super().__init__(trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        self.units = int(units)
        if self.units <= 0:
            raise ValueError(f"Received an invalid value for `units`, expected a positive integer. Received: "
                             f"units={units}")
        self.activation = _activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.input_spec = InputSpec(min_ndim=2)

    def build(self, input_shape):
        input_shape = TensorShape(input_shape)
        last_dim = dimension_value(input_shape[-1])
        if last_dim is None:
            raise ValueError("The last dimension of the inputs to a Dense layer should be defined. Found None. "
                             f"Full input shape received: {input_shape}")
        self.input_spec = InputSpec(min_ndim=2, axes={-1: last_dim})
        self.kernel = self.add_weight("kernel", shape=[last_dim, self.units], initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint,
                                      dtype=self.dtype, trainable=True)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=[self.units], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint,
                                        dtype=self.dtype, trainable=True)
        self.built = True

    def call(self, inputs):
        if inputs.dtype.base_dtype != self.dtype:
            inputs = math_ops.cast(inputs, self.dtype)
        rank = inputs.shape.rank
        if rank == 2 or rank is None:
            outputs = math_ops.matmul(inputs, self.kernel)
        else:
            outputs = math_ops.tensordot(inputs, self.kernel, [[rank - 1], [0]])
            outputs.set_shape(inputs.shape.as_list()[:-1] + [self.units])
        if self.use_bias:
            outputs = nn_ops.bias_add(outputs, self.bias)
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs

    def compute_output_shape(self, input_shape):
        input_shape = TensorShape(input_shape)
        return input_shape[:-1].concatenate(self.units)


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=init_ops.zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
          activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
          reuse=None):
    """A densely connected layer: ``activation(inputs @ kernel + bias)`` (variables ``<name>/kernel``, ``/bias``)."""
    layer = Dense(units, activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
                  bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                  bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                  kernel_constraint=kernel_constraint, bias_constraint=bias_constraint, trainable=trainable,
                  name=name, _scope=name, _reuse=reuse)
    return layer(inputs)


class Dropout(Layer):
    """Zeroes inputs with probability ``rate`` (scaling the rest by ``1/(1-rate)``) when ``training``."""

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        if isinstance(rate, (int, float)) and not 0 <= rate <= 1:
            raise ValueError(f"Invalid value {rate} received for `rate`, expected a value between 0 and 1.")
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed

    def _get_noise_shape(self, inputs):
        if self.noise_shape is None:
            return None
        concrete = array_ops.shape(inputs)
        dims = []
        for i, value in enumerate(self.noise_shape):
            dims.append(concrete[i] if value is None else ops.convert_to_tensor(np.int32(value)))
        return array_ops.stack(dims)

    def call(self, inputs, training=False):
        if isinstance(self.rate, (int, float)) and self.rate == 0:
            return array_ops.identity(inputs)

        def dropped():
            return nn_ops.dropout(inputs, noise_shape=self._get_noise_shape(inputs), seed=self.seed, rate=self.rate)

        return smart_cond(training, dropped, lambda: array_ops.identity(inputs))

    def compute_output_shape(self, input_shape):
        return TensorShape(input_shape)


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """Dropout that applies only when ``training`` (a bool or a bool tensor) is true."""
    layer = Dropout(rate, noise_shape=noise_shape, seed=seed, name=name)
    return layer(inputs, training=training)


class Flatten(Layer):
    """Flattens each example to one dimension: ``[batch, d1, d2, ...]`` to ``[batch, d1 * d2 * ...]``."""

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        data_format = "channels_last" if data_format is None else str(data_format).lower()
        if data_format not in ("channels_last", "channels_first"):
            raise ValueError(f"The `data_format` argument must be one of \"channels_first\", \"channels_last\". "
                             f"Received: {data_format}")
        self.data_format = data_format
        self.input_spec = InputSpec(min_ndim=1)

    def call(self, inputs):
        rank = inputs.shape.rank
        if self.data_format == "channels_first" and rank is not None and rank > 1:
            inputs = array_ops.transpose(inputs, [0] + list(range(2, rank)) + [1])
        if rank == 1:
            return array_ops.expand_dims(inputs, 1)
        dims = inputs.shape.as_list() if rank is not None else None
        if dims is not None and None not in dims[1:]:
            return array_ops.reshape(inputs, [-1, int(np.prod(dims[1:], dtype=np.int64))])
        if dims is not None and dims[0] is not None:
            return array_ops.reshape(inputs, [dims[0], -1])
        return array_ops.reshape(inputs, array_ops.stack([array_ops.shape(inputs)[0], -1]))

    def compute_output_shape(self, input_shape):
        dims = TensorShape(input_shape).as_list()
        rest = dims[1:]
        flat = None if None in rest else int(np.prod(rest, dtype=np.int64))
        return TensorShape([dims[0], flat])


def flatten(inputs, name=None, data_format="channels_last"):
    """``inputs`` reshaped to ``[batch, -1]`` (channels moved last first when ``channels_first``)."""
    return Flatten(name=name, data_format=data_format)(inputs)
