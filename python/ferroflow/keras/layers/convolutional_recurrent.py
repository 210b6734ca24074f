"""Keras's ``ConvLSTM2D``: an LSTM whose input and recurrent transformations are 2-D convolutions, over
``[batch, time, rows, cols, channels]`` sequences (channels last).

Per step, with gates ``i, f, c, o`` side by side in the last axis of ``kernel`` ``[kh, kw, channels,
4 * filters]``, ``recurrent_kernel`` ``[kh, kw, filters, 4 * filters]`` and ``bias``: ``x_k = conv(x, kernel_k,
strides, padding, dilation) + bias_k`` and ``h_k = conv(h, recurrent_kernel_k, 'same')``; ``i, f, o`` through
``recurrent_activation`` (``'hard_sigmoid'``), ``c = f * c + i * activation(x_c + h_c)``, ``h = o *
activation(c)``. The states start at zeros of the output's shape; the steps run in ``tf.scan``.
"""

from __future__ import annotations

from ferroflow.keras import activations, constraints, initializers, regularizers
from ferroflow.keras import backend as K
from ferroflow.keras.engine.base_layer import Layer
from ferroflow.keras.layers.recurrent import _ForgetBiasInit
from ferroflow.ops import array_ops, functional_ops, nn_more, nn_ops

__all__ = ["ConvLSTM2D"]


def _pair(value):
    return (int(value), int(value)) if isinstance(value, int) else tuple(int(v) for v in value)


class ConvLSTM2D(Layer):
    """Convolutional LSTM over image sequences (see the module's docstring)."""

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), activation="tanh", recurrent_activation="hard_sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, recurrent_constraint=None, bias_constraint=None,
                 return_sequences=False, return_state=False, go_backwards=False, stateful=False, dropout=0.0,
                 recurrent_dropout=0.0, **kwargs):
        super().__init__(activity_regularizer=regularizers.get(activity_regularizer), **kwargs)
        data_format = data_format or K.image_data_format()
        if data_format != "channels_last":
            raise NotImplementedError("ConvLSTM2D(data_format='channels_first') is not supported by ferroflow's "
                                      "Keras (CPU convolutions are channels last)")
        if stateful or dropout or recurrent_dropout:
            raise NotImplementedError("ConvLSTM2D with stateful=True or dropout is not supported by ferroflow's "
                                      "Keras yet")
        if padding not in ("valid", "same"):
            raise ValueError(f"The `padding` argument must be one of 'valid', 'same'. Received: {padding}")
        self.filters = int(filters)
        self.kernel_size = _pair(kernel_size)
        self.strides = _pair(strides)
        self.padding = padding
        self.data_format = data_format
        self.dilation_rate = _pair(dilation_rate)
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.unit_forget_bias = unit_forget_bias
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.return_sequences = return_sequences
        self.return_state = return_state
        self.go_backwards = go_backwards
        self.stateful = stateful
        self.dropout = dropout
        self.recurrent_dropout = recurrent_dropout
        self.supports_masking = True

    def build(self, input_shape):
        shape = input_shape.as_list()
        if len(shape) != 5 or shape[-1] is None:
            raise ValueError(f"Input to ConvLSTM2D should be 5-D [batch, time, rows, cols, channels] with known "
                             f"channels; got {input_shape}")
        kh, kw = self.kernel_size
        n = 4 * self.filters
        self.kernel = self.add_weight("kernel", shape=(kh, kw, shape[-1], n), initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", shape=(kh, kw, self.filters, n),
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        self.bias = None
        if self.use_bias:
            init = _ForgetBiasInit(self.filters, self.bias_initializer) if self.unit_forget_bias \
                else self.bias_initializer
            self.bias = self.add_weight("bias", shape=(n,), initializer=init, regularizer=self.bias_regularizer,
                                        constraint=self.bias_constraint)

    def _conv(self, x, w, strides, padding, dilation):
        return nn_more.convolution(x, w, padding=padding.upper(), strides=list(strides),
                                  dilation_rate=list(dilation))

    def _gates(self, w):
        f = self.filters
        return [w[..., k * f:(k + 1) * f] for k in range(4)]

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        return [output_mask, None, None] if self.return_state else output_mask

    def call(self, inputs, mask=None, training=None, initial_state=None):
        kernels = self._gates(self.kernel)
        recurrent = self._gates(self.recurrent_kernel)
        biases = self._gates(self.bias) if self.bias is not None else [None] * 4
        steps = array_ops.transpose(inputs, [1, 0, 2, 3, 4])  # time first, for scan
        if self.go_backwards:
            steps = array_ops.reverse(steps, [0])
        if initial_state is None:
            # zeros with the output's shape: a convolution of zeros, whatever the padding and strides
            first = steps[0]
            zero_kernel = array_ops.zeros(self.kernel_size + (first.shape.as_list()[-1], self.filters),
                                          dtype=inputs.dtype)
            zeros = self._conv(array_ops.zeros_like(first), zero_kernel, self.strides, self.padding,
                               self.dilation_rate)
            initial_state = (zeros, zeros)
        else:
            initial_state = tuple(initial_state)

        def step(state, x):
            h, c = state
            xs = []
            for k in range(4):
                z = self._conv(x, kernels[k], self.strides, self.padding, self.dilation_rate)
                xs.append(nn_ops.bias_add(z, biases[k]) if biases[k] is not None else z)
            hs = [self._conv(h, recurrent[k], (1, 1), "same", (1, 1)) for k in range(4)]
            i = self.recurrent_activation(xs[0] + hs[0])
            f = self.recurrent_activation(xs[1] + hs[1])
            c = f * c + i * self.activation(xs[2] + hs[2])
            o = self.recurrent_activation(xs[3] + hs[3])
            return o * self.activation(c), c

        hs, cs = functional_ops.scan(step, steps, initializer=initial_state)
        last_h, last_c = hs[-1], cs[-1]
        output = array_ops.transpose(hs, [1, 0, 2, 3, 4]) if self.return_sequences else last_h
        return [output, last_h, last_c] if self.return_state else output
