"""``tf.layers`` convolutions: Conv1D/2D/3D, Conv2DTranspose/Conv3DTranspose, SeparableConv1D/2D.

Variables as TensorFlow names them: ``<layer>/kernel`` (``kernel_size + (in, filters)``;
``kernel_size + (filters, in)`` for the transposed forms) and ``<layer>/bias``;
``<layer>/depthwise_kernel``, ``<layer>/pointwise_kernel`` for the separable ones.
"""

from __future__ import annotations

from ferroflow.framework.tensor_shape import TensorShape, dimension_value
from ferroflow.layers import _conv_util as cu
from ferroflow.layers.base import InputSpec, Layer
from ferroflow.layers.core import _activation
from ferroflow.ops import array_ops, init_ops, math_ops, nn_conv, nn_ops

__all__ = [
    "Conv1D", "Conv2D", "Conv2DTranspose", "Conv3D", "Conv3DTranspose", "SeparableConv1D", "SeparableConv2D",
    "conv1d", "conv2d", "conv2d_transpose", "conv3d", "conv3d_transpose", "separable_conv1d", "separable_conv2d",
]

_zeros = init_ops.zeros_initializer


class _Conv(Layer):
    """An N-D convolution layer (N = ``rank``): ``activation(conv(inputs, kernel) + bias)``."""

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid", data_format="channels_last",
                 dilation_rate=1, activation=None, use_bias=True, kernel_initializer=None,
                 bias_initializer=_zeros(), kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                 **kwargs):
        super().__init__(trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        self.rank = rank
        self.filters = int(filters)
        if self.filters <= 0:
            raise ValueError(f"Invalid value for argument `filters`. Expected a strictly positive value. Received "
                             f"filters={filters}.")
        self.kernel_size = cu.normalize_tuple(kernel_size, rank, "kernel_size")
        self.strides = cu.normalize_tuple(strides, rank, "strides")
        self.padding = cu.normalize_padding(padding, allow_causal=rank == 1)
        self.data_format = cu.normalize_data_format(data_format)
        self.dilation_rate = cu.normalize_tuple(dilation_rate, rank, "dilation_rate")
        self.activation = _activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel_constraint = kernel_constraint
        self.bias_constraint = bias_constraint
        self.input_spec = InputSpec(min_ndim=rank + 2)

    @property
    def _channels_first(self):
        return self.data_format == "channels_first"

    def _input_channels(self, input_shape):
        input_shape = TensorShape(input_shape)
        if input_shape.rank is None:
            raise ValueError(f"The rank of the inputs to {type(self).__name__} should be defined.")
        axis = 1 if self._channels_first else -1
        channels = dimension_value(input_shape[axis])
        if channels is None:
            raise ValueError(f"The channel dimension of the inputs should be defined. The input_shape received is "
                             f"{input_shape}, where axis {axis} (0-based) is the channel dimension, which found to "
                             "be `None`.")
        self.input_spec = InputSpec(min_ndim=self.rank + 2, axes={axis: channels})
        return channels

    def _kernel_shape(self, channels):
        return self.kernel_size + (channels, self.filters)

    def build(self, input_shape):
        channels = self._input_channels(input_shape)
        self.kernel = self.add_weight("kernel", shape=self._kernel_shape(channels),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint, trainable=True, dtype=self.dtype)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=(self.filters,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint,
                                        trainable=True, dtype=self.dtype)
        self.built = True

    def _convolve(self, inputs):
        cf = self._channels_first
        if self.rank == 1:
            return cu.conv1d(inputs, self.kernel, self.strides[0], self.padding, self.dilation_rate[0], cf)
        if self.rank == 2:
            return nn_conv.conv2d(inputs, self.kernel, strides=list(self.strides), padding=self.padding.upper(),
                                  dilations=list(self.dilation_rate), data_format="NCHW" if cf else "NHWC",
                                  name=type(self).__name__)
        return cu.conv3d(inputs, self.kernel, self.strides, self.padding, self.dilation_rate, cf)

    def _add_bias(self, outputs):
        if not self.use_bias:
            return outputs
        if self._channels_first and outputs.shape.rank != 4:
            bias = array_ops.reshape(self.bias, [1, self.filters] + [1] * self.rank)
            return math_ops.add(outputs, bias)
        return nn_ops.bias_add(outputs, self.bias, data_format="NCHW" if self._channels_first else "NHWC")

    def call(self, inputs):
        outputs = self._add_bias(self._convolve(inputs))
        if self.activation is not None:
            outputs = self.activation(outputs)
        return outputs

    def compute_output_shape(self, input_shape):
        dims = TensorShape(input_shape).as_list()
        space = dims[2:] if self._channels_first else dims[1:-1]
        out = [cu.conv_output_length(d, k, self.padding, s, r)
               for d, k, s, r in zip(space, self.kernel_size, self.strides, self.dilation_rate)]
        if self._channels_first:
            return TensorShape([dims[0], self.filters] + out)
        return TensorShape([dims[0]] + out + [self.filters])


def _conv_class(rank, cls_name, default_stride):
    class Conv(_Conv):
        def __init__(self, filters, kernel_size, strides=default_stride, padding="valid",
                     data_format="channels_last", dilation_rate=default_stride, activation=None, use_bias=True,
                     kernel_initializer=None, bias_initializer=_zeros(), kernel_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                     trainable=True, name=None, **kwargs):
            super().__init__(rank, filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                             dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
                             kernel_initializer=kernel_initializer, bias_initializer=bias_initializer,
                             kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                             activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                             bias_constraint=bias_constraint, trainable=trainable, name=name, **kwargs)

    Conv.__name__ = Conv.__qualname__ = cls_name
    Conv.__doc__ = f"{rank}-D convolution layer (variables ``<name>/kernel``, ``<name>/bias``)."
    return Conv


Conv1D = _conv_class(1, "Conv1D", 1)
Conv2D = _conv_class(2, "Conv2D", (1, 1))
Conv3D = _conv_class(3, "Conv3D", (1, 1, 1))


def conv1d(inputs, filters, kernel_size, strides=1, padding="valid", data_format="channels_last", dilation_rate=1,
           activation=None, use_bias=True, kernel_initializer=None, bias_initializer=_zeros(),
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
           bias_constraint=None, trainable=True, name=None, reuse=None):
    """1-D convolution of ``[batch, width, channels]`` inputs (padding ``valid``, ``same`` or ``causal``)."""
    return Conv1D(filters, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                  kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer,
                  kernel_constraint, bias_constraint, trainable, name=name, _scope=name, _reuse=reuse)(inputs)


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
           dilation_rate=(1, 1), activation=None, use_bias=True, kernel_initializer=None,
           bias_initializer=_zeros(), kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None, reuse=None):
    """2-D convolution of ``[batch, height, width, channels]`` inputs."""
    return Conv2D(filters, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                  kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer,
                  kernel_constraint, bias_constraint, trainable, name=name, _scope=name, _reuse=reuse)(inputs)


def conv3d(inputs, filters, kernel_size, strides=(1, 1, 1), padding="valid", data_format="channels_last",
           dilation_rate=(1, 1, 1), activation=None, use_bias=True, kernel_initializer=None,
           bias_initializer=_zeros(), kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None, reuse=None):
    """3-D convolution of ``[batch, depth, height, width, channels]`` inputs (depth known when building)."""
    return Conv3D(filters, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias,
                  kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, activity_regularizer,
                  kernel_constraint, bias_constraint, trainable, name=name, _scope=name, _reuse=reuse)(inputs)


class Conv2DTranspose(_Conv):
    """Transposed 2-D convolution (``conv2d_transpose``); ``kernel`` is ``kernel_size + (filters, in)``."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                 activation=None, use_bias=True, kernel_initializer=None, bias_initializer=_zeros(),
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(2, filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                         bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint, trainable=trainable,
                         name=name, **kwargs)
        self.input_spec = InputSpec(ndim=4)

    def _kernel_shape(self, channels):
        return self.kernel_size + (self.filters, channels)

    def build(self, input_shape):
        if TensorShape(input_shape).rank != 4:
            raise ValueError(f"Inputs should have rank 4. Received input shape: {input_shape}")
        super().build(input_shape)
        axis = 1 if self._channels_first else -1
        self.input_spec = InputSpec(ndim=4, axes={axis: dimension_value(TensorShape(input_shape)[axis])})

    def _convolve(self, inputs):
        h_axis, w_axis = (2, 3) if self._channels_first else (1, 2)
        batch = cu._dim(inputs, 0)
        out_h = cu.deconv_output_length(cu._dim(inputs, h_axis), self.kernel_size[0], self.padding,
                                        self.strides[0])
        out_w = cu.deconv_output_length(cu._dim(inputs, w_axis), self.kernel_size[1], self.padding,
                                        self.strides[1])
        if self._channels_first:
            parts = [batch, self.filters, out_h, out_w]
        else:
            parts = [batch, out_h, out_w, self.filters]
        output_shape = array_ops.stack(parts)
        outputs = nn_conv.conv2d_transpose(inputs, self.kernel, output_shape, strides=list(self.strides),
                                           padding=self.padding.upper(),
                                           data_format="NCHW" if self._channels_first else "NHWC")
        outputs.set_shape([p if isinstance(p, int) else None for p in parts])
        return outputs

    def compute_output_shape(self, input_shape):
        dims = TensorShape(input_shape).as_list()
        h_axis, w_axis = (2, 3) if self._channels_first else (1, 2)
        out = list(dims)
        for axis, k, s in ((h_axis, self.kernel_size[0], self.strides[0]), (w_axis, self.kernel_size[1],
                                                                             self.strides[1])):
            out[axis] = None if dims[axis] is None else cu.deconv_output_length(dims[axis], k, self.padding, s)
        out[1 if self._channels_first else 3] = self.filters
        return TensorShape(out)


def conv2d_transpose(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                     activation=None, use_bias=True, kernel_initializer=None, bias_initializer=_zeros(),
                     kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                     kernel_constraint=None, bias_constraint=None, trainable=True, name=None, reuse=None):
    """Transposed 2-D convolution ("deconvolution") of ``[batch, height, width, channels]`` inputs."""
    return Conv2DTranspose(filters, kernel_size, strides, padding, data_format, activation, use_bias,
                           kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                           activity_regularizer, kernel_constraint, bias_constraint, trainable, name=name,
                           _scope=name, _reuse=reuse)(inputs)


class _SeparableConv(_Conv):
    """Depthwise then pointwise convolution (``depthwise_kernel``, ``pointwise_kernel``, ``bias``).

    The depthwise step runs as a 2-D convolution with the equivalent block-diagonal kernel (ferroflow has no
    depthwise kernel yet): TensorFlow's values, ``in_channels`` times its arithmetic.
    """

    def __init__(self, rank, filters, kernel_size, strides=1, padding="valid", data_format="channels_last",
                 dilation_rate=1, depth_multiplier=1, activation=None, use_bias=True, depthwise_initializer=None,
                 pointwise_initializer=None, bias_initializer=_zeros(), depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None, trainable=True,
                 name=None, **kwargs):
        super().__init__(rank, filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         dilation_rate=dilation_rate, activation=activation, use_bias=use_bias,
                         bias_initializer=bias_initializer, bias_regularizer=bias_regularizer,
                         activity_regularizer=activity_regularizer, bias_constraint=bias_constraint,
                         trainable=trainable, name=name, **kwargs)
        if self.padding == "causal":
            raise ValueError("Causal padding is not supported by separable convolutions.")
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer = depthwise_initializer
        self.pointwise_initializer = pointwise_initializer
        self.depthwise_regularizer = depthwise_regularizer
        self.pointwise_regularizer = pointwise_regularizer
        self.depthwise_constraint = depthwise_constraint
        self.pointwise_constraint = pointwise_constraint

    def build(self, input_shape):
        channels = self._input_channels(input_shape)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", shape=self.kernel_size + (channels, self.depth_multiplier),
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint, trainable=True, dtype=self.dtype)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", shape=(1,) * self.rank + (self.depth_multiplier * channels, self.filters),
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint, trainable=True, dtype=self.dtype)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=(self.filters,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint,
                                        trainable=True, dtype=self.dtype)
        self.built = True

    def _convolve(self, inputs):
        cf = self._channels_first
        fmt = "NCHW" if cf else "NHWC"
        x = inputs
        depthwise, pointwise = self.depthwise_kernel, self.pointwise_kernel
        strides, dilations = list(self.strides), list(self.dilation_rate)
        axis = 2 if cf else 1
        if self.rank == 1:
            x = array_ops.expand_dims(x, axis)
            depthwise = array_ops.expand_dims(depthwise, 0)
            pointwise = array_ops.expand_dims(pointwise, 0)
            strides, dilations = [1] + strides, [1] + dilations
        dense = cu.depthwise_as_dense_kernel(depthwise)
        y = nn_conv.conv2d(x, dense, strides=strides, padding=self.padding.upper(), dilations=dilations,
                           data_format=fmt)
        y = nn_conv.conv2d(y, pointwise, strides=[1, 1], padding="VALID", data_format=fmt)
        if self.rank == 1:
            y = array_ops.squeeze(y, [axis])
        return y


class SeparableConv1D(_SeparableConv):
    """Depthwise-separable 1-D convolution layer."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format="channels_last",
                 dilation_rate=1, depth_multiplier=1, activation=None, use_bias=True, depthwise_initializer=None,
                 pointwise_initializer=None, bias_initializer=_zeros(), depthwise_regularizer=None,
                 pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None, trainable=True,
                 name=None, **kwargs):
        super().__init__(1, filters, kernel_size, strides, padding, data_format, dilation_rate, depth_multiplier,
                         activation, use_bias, depthwise_initializer, pointwise_initializer, bias_initializer,
                         depthwise_regularizer, pointwise_regularizer, bias_regularizer, activity_regularizer,
                         depthwise_constraint, pointwise_constraint, bias_constraint, trainable, name, **kwargs)


class SeparableConv2D(_SeparableConv):
    """Depthwise-separable 2-D convolution layer."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                 dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer=None, pointwise_initializer=None, bias_initializer=_zeros(),
                 depthwise_regularizer=None, pointwise_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, depthwise_constraint=None, pointwise_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(2, filters, kernel_size, strides, padding, data_format, dilation_rate, depth_multiplier,
                         activation, use_bias, depthwise_initializer, pointwise_initializer, bias_initializer,
                         depthwise_regularizer, pointwise_regularizer, bias_regularizer, activity_regularizer,
                         depthwise_constraint, pointwise_constraint, bias_constraint, trainable, name, **kwargs)


def separable_conv1d(inputs, filters, kernel_size, strides=1, padding="valid", data_format="channels_last",
                     dilation_rate=1, depth_multiplier=1, activation=None, use_bias=True, depthwise_initializer=None,
                     pointwise_initializer=None, bias_initializer=_zeros(), depthwise_regularizer=None,
                     pointwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                     depthwise_constraint=None, pointwise_constraint=None, bias_constraint=None, trainable=True,
                     name=None, reuse=None):
    """Depthwise-separable 1-D convolution."""
    return SeparableConv1D(filters, kernel_size, strides, padding, data_format, dilation_rate, depth_multiplier,
                           activation, use_bias, depthwise_initializer, pointwise_initializer, bias_initializer,
                           depthwise_regularizer, pointwise_regularizer, bias_regularizer, activity_regularizer,
                           depthwise_constraint, pointwise_constraint, bias_constraint, trainable, name=name,
                           _scope=name, _reuse=reuse)(inputs)


def separable_conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid", data_format="channels_last",
                     dilation_rate=(1, 1), depth_multiplier=1, activation=None, use_bias=True,
                     depthwise_initializer=None, pointwise_initializer=None, bias_initializer=_zeros(),
                     depthwise_regularizer=None, pointwise_regularizer=None, bias_regularizer=None,
                     activity_regularizer=None, depthwise_constraint=None, pointwise_constraint=None,
                     bias_constraint=None, trainable=True, name=None, reuse=None):
    """Depthwise-separable 2-D convolution."""
    return SeparableConv2D(filters, kernel_size, strides, padding, data_format, dilation_rate, depth_multiplier,
                           activation, use_bias, depthwise_initializer, pointwise_initializer, bias_initializer,
                           depthwise_regularizer, pointwise_regularizer, bias_regularizer, activity_regularizer,
                           depthwise_constraint, pointwise_constraint, bias_constraint, trainable, name=name,
                           _scope=name, _reuse=reuse)(inputs)


class Conv3DTranspose(_Conv):
    """Transposed 3-D convolution; ``kernel`` is ``kernel_size + (filters, in)``.

    Built as the gradient of the composed 3-D convolution with respect to its input (the depth must be known
    when building).
    """

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid", data_format="channels_last",
                 activation=None, use_bias=True, kernel_initializer=None, bias_initializer=_zeros(),
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, trainable=True, name=None, **kwargs):
        super().__init__(3, filters, kernel_size, strides=strides, padding=padding, data_format=data_format,
                         activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                         bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint, trainable=trainable,
                         name=name, **kwargs)
        self.input_spec = InputSpec(ndim=5)

    def _kernel_shape(self, channels):
        return self.kernel_size + (self.filters, channels)

    def _convolve(self, inputs):
        from ferroflow.ops.gradients_impl import gradients

        cf = self._channels_first
        x = cu._to_last(inputs, cf)
        dims = x.shape.as_list()
        if None in dims[1:4]:
            raise ValueError(f"Conv3DTranspose needs the input's depth, height and width known when building; got "
                             f"input shape {inputs.shape}")
        out = [cu.deconv_output_length(d, k, self.padding, s) for d, k, s in zip(dims[1:4], self.kernel_size,
                                                                                   self.strides)]
        batch = cu._dim(x, 0)
        # The transpose of conv3d(z, kernel^T) with respect to z, for z of the output's shape.
        kernel = self.kernel  # [kd, kh, kw, filters, in]: conv3d's [.., in=filters, out=in]
        z = array_ops.zeros(array_ops.stack([batch] + out + [self.filters]), dtype=x.dtype)
        y = cu.conv3d(z, kernel, self.strides, self.padding, (1, 1, 1), False)
        (outputs,) = gradients(y, [z], grad_ys=[x])
        outputs.set_shape([dims[0]] + out + [self.filters])
        return cu._to_first(outputs, cf)


def conv3d_transpose(inputs, filters, kernel_size, strides=(1, 1, 1), padding="valid", data_format="channels_last",
                     activation=None, use_bias=True, kernel_initializer=None, bias_initializer=_zeros(),
                     kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                     kernel_constraint=None, bias_constraint=None, trainable=True, name=None, reuse=None):
    """Transposed 3-D convolution of ``[batch, depth, height, width, channels]`` inputs."""
    return Conv3DTranspose(filters, kernel_size, strides, padding, data_format, activation, use_bias,
                           kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer,
                           activity_regularizer, kernel_constraint, bias_constraint, trainable, name=name,
                           _scope=name, _reuse=reuse)(inputs)
