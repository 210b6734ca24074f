"""Keras's recurrent layers: ``SimpleRNN``, ``GRU``, ``LSTM`` (and their cells, and ``RNN`` over a cell).

As on TensorFlow 1.x: the layer's weights are ``<layer>/kernel``, ``<layer>/recurrent_kernel`` and
``<layer>/bias`` (gates side by side: LSTM ``i, f, c, o``; GRU ``z, r, h``), ``recurrent_activation``
defaults to ``'hard_sigmoid'``, the LSTM's forget-gate bias starts at one (``unit_forget_bias``) and the GRU
applies its reset gate before the recurrent product (``reset_after=False``). The steps run in
``tf.nn.dynamic_rnn``'s ``while_loop``. ``dropout``/``recurrent_dropout`` draw one mask per sequence (per
gate) in the training phase.
"""

from __future__ import annotations

from ferroflow.framework import ops
from ferroflow.keras import activations, constraints, initializers, regularizers
from ferroflow.keras import backend as K
from ferroflow.keras.engine.base_layer import Layer
from ferroflow.ops import _nest as nest
from ferroflow.ops import array_ops, math_ops, nn_ops
from ferroflow.ops import rnn as rnn_ops
from ferroflow.ops.rnn_cell_impl import _zero_state_tensors

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "SimpleRNN", "SimpleRNNCell"]


class _Cell(Layer):
    """A Keras RNN cell: ``step(inputs, states) -> (output, new_states)`` over weights made in ``build``."""

    _gates = 1

    def __init__(self, units, activation="tanh", recurrent_activation="hard_sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal", bias_initializer="zeros",
                 kernel_regularizer=None, recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.units = int(units)
        self.activation = activations.get(activation)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.use_bias = use_bias
        self.kernel_initializer = initializers.get(kernel_initializer)
        self.recurrent_initializer = initializers.get(recurrent_initializer)
        self.bias_initializer = initializers.get(bias_initializer)
        self.kernel_regularizer = regularizers.get(kernel_regularizer)
        self.recurrent_regularizer = regularizers.get(recurrent_regularizer)
        self.bias_regularizer = regularizers.get(bias_regularizer)
        self.kernel_constraint = constraints.get(kernel_constraint)
        self.recurrent_constraint = constraints.get(recurrent_constraint)
        self.bias_constraint = constraints.get(bias_constraint)
        self.dropout = min(1.0, max(0.0, float(dropout)))
        self.recurrent_dropout = min(1.0, max(0.0, float(recurrent_dropout)))
        self._masks = (None, None)

    @property
    def state_size(self):
        return self.units

    @property
    def output_size(self):
        return self.units

    def _bias_shape(self):
        return (self._gates * self.units,)

    def _bias_initializer(self):
        return self.bias_initializer

    def build(self, input_shape):
        depth = input_shape[-1]
        depth = getattr(depth, "value", depth)
        n = self._gates * self.units
        self.kernel = self.add_weight("kernel", shape=(depth, n), initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight("recurrent_kernel", shape=(self.units, n),
                                                initializer=self.recurrent_initializer,
                                                regularizer=self.recurrent_regularizer,
                                                constraint=self.recurrent_constraint)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=self._bias_shape(), initializer=self._bias_initializer(),
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self.built = True

    def _make_masks(self, inputs, training):
        """Dropout masks for the inputs and the recurrent state (one per gate), fixed over the sequence."""
        def masks(rate, like):
            if not 0 < rate < 1:
                return None
            ones = array_ops.ones_like(like)
            return [K.in_train_phase(lambda: nn_ops.dropout(ones, rate=rate), ones, training=training)
                    for _ in range(self._gates)]

        x0 = inputs[:, 0, :]
        h0 = array_ops.zeros(array_ops.stack([array_ops.shape(x0)[0], self.units]), dtype=x0.dtype)
        self._masks = (masks(self.dropout, x0), masks(self.recurrent_dropout, h0))

    def _split(self, w):
        u = self.units
        return [w[..., i * u:(i + 1) * u] for i in range(self._gates)]

    def _inputs_by_gate(self, x):
        """``x @ kernel_k (+ bias_k)`` for each gate k (dropout masks applied to ``x`` per gate)."""
        in_masks = self._masks[0]
        kernels = self._split(self.kernel)
        biases = self._split(self.bias) if self.bias is not None and self.bias.shape.rank == 1 else None
        out = []
        for k in range(self._gates):
            xk = x * in_masks[k] if in_masks else x
            z = math_ops.matmul(xk, kernels[k])
            if biases is not None:
                z = nn_ops.bias_add(z, biases[k])
            out.append(z)
        return out

    def _state_by_gate(self, h, k):
        rec_masks = self._masks[1]
        return h * rec_masks[k] if rec_masks else h


class SimpleRNNCell(_Cell):
    """``h = activation(x @ kernel + bias + h_prev @ recurrent_kernel)``."""

    def __init__(self, units, activation="tanh", use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros", **kwargs):
        super().__init__(units, activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
                         recurrent_initializer=recurrent_initializer, bias_initializer=bias_initializer, **kwargs)

    def step(self, x, states):
        h = states[0]
        (xz,) = self._inputs_by_gate(x)
        out = self.activation(xz + math_ops.matmul(self._state_by_gate(h, 0), self.recurrent_kernel))
        return out, (out,)


class GRUCell(_Cell):
    """The GRU step (gates ``z, r, h``); ``reset_after`` applies the reset gate after the recurrent product."""

    _gates = 3

    def __init__(self, units, reset_after=False, **kwargs):
        super().__init__(units, **kwargs)
        self.reset_after = reset_after

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def step(self, x, states):
        h = states[0]
        rk = self._split(self.recurrent_kernel)
        xz, xr, xh = self._inputs_by_gate(x)
        if self.reset_after:
            if self.bias is not None:
                b = self.bias[0]
                xz, xr, xh = (nn_ops.bias_add(t, bb) for t, bb in zip((xz, xr, xh), self._split(b)))
                rb = self._split(self.bias[1])
            else:
                rb = [None] * 3
            inner = []
            for k in range(3):
                t = math_ops.matmul(self._state_by_gate(h, k), rk[k])
                inner.append(t if rb[k] is None else nn_ops.bias_add(t, rb[k]))
            z = self.recurrent_activation(xz + inner[0])
            r = self.recurrent_activation(xr + inner[1])
            hh = self.activation(xh + r * inner[2])
        else:
            z = self.recurrent_activation(xz + math_ops.matmul(self._state_by_gate(h, 0), rk[0]))
            r = self.recurrent_activation(xr + math_ops.matmul(self._state_by_gate(h, 1), rk[1]))
            hh = self.activation(xh + math_ops.matmul(r * self._state_by_gate(h, 2), rk[2]))
        out = z * h + (1 - z) * hh
        return out, (out,)


class _ForgetBiasInit:
    def __init__(self, units, base):
        self.units, self.base = units, base

    def __call__(self, shape, dtype=None, partition_info=None):
        u = self.units
        return array_ops.concat([self.base((u,), dtype=dtype), array_ops.ones((u,), dtype=dtype),
                                 self.base((2 * u,), dtype=dtype)], 0)


class LSTMCell(_Cell):
    """The LSTM step (gates ``i, f, c, o``); state ``(h, c)``."""

    _gates = 4

    def __init__(self, units, unit_forget_bias=True, implementation=1, **kwargs):
        super().__init__(units, **kwargs)
        self.unit_forget_bias = unit_forget_bias
        self.implementation = implementation

    @property
    def state_size(self):
        return (self.units, self.units)

    def _bias_initializer(self):
        if self.unit_forget_bias:
            return _ForgetBiasInit(self.units, self.bias_initializer)
        return self.bias_initializer

    def step(self, x, states):
        h, c = states
        rk = self._split(self.recurrent_kernel)
        xi, xf, xc, xo = self._inputs_by_gate(x)
        i = self.recurrent_activation(xi + math_ops.matmul(self._state_by_gate(h, 0), rk[0]))
        f = self.recurrent_activation(xf + math_ops.matmul(self._state_by_gate(h, 1), rk[1]))
        c = f * c + i * self.activation(xc + math_ops.matmul(self._state_by_gate(h, 2), rk[2]))
        o = self.recurrent_activation(xo + math_ops.matmul(self._state_by_gate(h, 3), rk[3]))
        h = o * self.activation(c)
        return h, (h, c)


class _StepAdapter:
    """What ``dynamic_rnn`` calls: the Keras cell's ``step`` with a tuple state."""

    def __init__(self, cell):
        self._cell = cell
        size = cell.state_size
        self.state_size = tuple(size) if isinstance(size, (list, tuple)) else (size,)
        self.output_size = cell.output_size

    def zero_state(self, batch_size, dtype):
        return _zero_state_tensors(self.state_size, batch_size, dtype)

    def __call__(self, inputs, state):
        return self._cell.step(inputs, tuple(state))


class RNN(Layer):
    """Runs ``cell`` over the time axis of ``[batch, time, features]`` inputs."""

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False, stateful=False,
                 unroll=False, time_major=False, **kwargs):
        if stateful:
            raise NotImplementedError("stateful RNN layers are not supported by ferroflow's Keras yet")
        if isinstance(cell, (list, tuple)):
            raise NotImplementedError("RNN over a list of cells (stacked cells) is not supported by ferroflow yet")
        super().__init__(**kwargs)
        self.cell = cell
        self.return_sequences = return_sequences
        self.return_state = return_state
        self.go_backwards = go_backwards
        self.time_major = time_major

    def build(self, input_shape):
        step_shape = input_shape[2:] if not self.time_major else input_shape[2:]
        depth = input_shape[-1]
        if getattr(depth, "value", depth) is None:
            raise ValueError(f"The last dimension of the inputs to {type(self).__name__} should be defined; "
                             f"got {input_shape}")
        del step_shape
        self.cell._dtype = self.cell._dtype or self._dtype
        self.cell.build(input_shape[:1].concatenate(input_shape[2:]) if hasattr(input_shape, "concatenate")
                        else input_shape)
        self.cell.built = True
        self.built = True

    @property
    def trainable_weights(self):
        return self.cell.trainable_weights if self._trainable else []

    @property
    def non_trainable_weights(self):
        if self._trainable:
            return self.cell.non_trainable_weights
        return self.cell.weights

    @property
    def losses(self):
        return self.cell.losses + list(self._losses)

    def call(self, inputs, training=None, initial_state=None, mask=None):
        if mask is not None:
            raise NotImplementedError("masked RNN inputs are not supported by ferroflow's Keras yet")
        if self.time_major:
            inputs = array_ops.transpose(inputs, [1, 0, 2])
        if self.go_backwards:
            inputs = array_ops.reverse(inputs, [1])
        self.cell._make_masks(inputs, training)
        adapter = _StepAdapter(self.cell)
        if initial_state is not None:
            initial_state = tuple(nest.flatten(initial_state))
        outputs, state = rnn_ops.dynamic_rnn(adapter, inputs, initial_state=initial_state, dtype=inputs.dtype)
        state = list(nest.flatten(state))
        last = state[0]
        result = outputs if self.return_sequences else last
        if self.return_sequences and self.time_major:
            result = array_ops.transpose(result, [1, 0, 2])
        if self.return_state:
            return [result] + state
        return result

    @property
    def units(self):
        return self.cell.units


def _rnn_class(name, cell_cls, cell_args, doc):
    def __init__(self, units, return_sequences=False, return_state=False, go_backwards=False, stateful=False,  # noqa: N807
                 unroll=False, **kwargs):
        layer_keys = ("name", "trainable", "dtype", "input_shape", "batch_input_shape", "batch_size", "input_dim",
                      "weights", "activity_regularizer", "time_major")
        layer_kwargs = {k: kwargs.pop(k) for k in layer_keys if k in kwargs}
        for k in cell_args:
            if k in layer_kwargs:
                kwargs[k] = layer_kwargs.pop(k)
        with ops.name_scope(None):
            cell = cell_cls(units, dtype=layer_kwargs.get("dtype"), **kwargs)
        RNN.__init__(self, cell, return_sequences=return_sequences, return_state=return_state,
                     go_backwards=go_backwards, stateful=stateful, unroll=unroll, **layer_kwargs)

    return type(name, (RNN,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


SimpleRNN = _rnn_class("SimpleRNN", SimpleRNNCell, (), "A fully connected RNN whose output is fed back.")
GRU = _rnn_class("GRU", GRUCell, (), "Gated recurrent unit (TF 1.x's defaults: ``reset_after=False``, "
                 "``recurrent_activation='hard_sigmoid'``).")
LSTM = _rnn_class("LSTM", LSTMCell, (), "Long short-term memory (TF 1.x's defaults: "
                  "``recurrent_activation='hard_sigmoid'``, ``unit_forget_bias=True``).")
