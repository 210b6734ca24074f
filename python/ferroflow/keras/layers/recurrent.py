"""Keras's recurrent layers: ``SimpleRNN``, ``GRU``, ``LSTM`` (and their cells, and ``RNN`` over a cell).

As on TensorFlow 1.x: the layer's weights are ``<layer>/kernel``, ``<layer>/recurrent_kernel`` and
``<layer>/bias`` (gates side by side: LSTM ``i, f, c, o``; GRU ``z, r, h``), ``recurrent_activation``
defaults to ``'hard_sigmoid'``, the LSTM's forget-gate bias starts at one (``unit_forget_bias``) and the GRU
applies its reset gate before the recurrent product (``reset_after=False``). The steps run in
``tf.nn.dynamic_rnn``'s ``while_loop``. ``dropout``/``recurrent_dropout`` draw one mask per sequence (per
gate) in the training phase.

With an input mask (``Masking``, ``Embedding(mask_zero=True)``) a masked step leaves the state as it was and
outputs the previous step's output (zeros before the first kept step), as Keras's ``K.rnn`` does; the mask
goes on to the outputs when ``return_sequences`` (so losses and metrics leave those steps out).

``stateful=True`` (with a fixed batch size) keeps each sequence's last states in variables (``layer.states``)
that start the next batch; ``reset_states()`` zeroes them.
"""

from __future__ import annotations

import inspect

import numpy as np

from ferroflow.framework import ops
from ferroflow.keras import activations, constraints, initializers, regularizers
from ferroflow.keras import backend as K
from ferroflow.keras.engine.base_layer import Layer
from ferroflow.ops import _nest as nest
from ferroflow.ops import array_ops, math_ops, nn_ops, state_ops
from ferroflow.ops import rnn as rnn_ops
from ferroflow.ops import variables as variables_mod
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

    def __init__(self, units, reset_after=False, implementation=1, **kwargs):
        super().__init__(units, **kwargs)
        self.reset_after = reset_after
        self.implementation = implementation  # Keras's choice of kernel layout; the result is the same

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
    """What ``dynamic_rnn`` calls: the Keras cell's ``step`` with a tuple state.

    Masked (``masked=True``): each step's input has one more feature at the end, 1.0 where the step is kept
    (one input, so that the loop's gradient has one sequence to scatter), and the state starts with the last
    output, which masked steps repeat."""

    def __init__(self, cell, masked=False, zero_output=False):
        self._cell = cell
        self._masked = masked
        self._zero_output = zero_output
        size = cell.state_size
        self.state_size = tuple(size) if isinstance(size, (list, tuple)) else (size,)
        if masked:
            self.state_size = (cell.output_size,) + self.state_size
        self.output_size = cell.output_size

    def zero_state(self, batch_size, dtype):
        return _zero_state_tensors(self.state_size, batch_size, dtype)

    def __call__(self, inputs, state):
        if not self._masked:
            return self._cell.step(inputs, tuple(state))
        x, keep = inputs[:, :-1], math_ops.greater(inputs[:, -1:], 0)
        previous, old = state[0], tuple(state[1:])
        out, new = self._cell.step(x, old)
        out = array_ops.where_v2(keep, out, array_ops.zeros_like(out) if self._zero_output else previous)
        new = tuple(array_ops.where_v2(keep, n, o) for n, o in zip(nest.flatten(new), old))
        return out, (out,) + new


class RNN(Layer):
    """Runs ``cell`` over the time axis of ``[batch, time, features]`` inputs."""

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False, stateful=False,
                 unroll=False, time_major=False, **kwargs):
        if isinstance(cell, (list, tuple)):
            raise NotImplementedError("RNN over a list of cells (stacked cells) is not supported by ferroflow yet")
        super().__init__(**kwargs)
        self.supports_masking = True
        self.cell = cell
        self.return_sequences = return_sequences
        self.return_state = return_state
        self.go_backwards = go_backwards
        self.time_major = time_major
        self.stateful = stateful
        self.states = None
        self.zero_output_for_mask = False  # masked steps repeat the last output (Bidirectional sets True)

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

    def compute_mask(self, inputs, mask=None):
        """The input mask on the output sequence (``return_sequences``), none on the last output and states."""
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        if self.return_state:
            n = len(nest.flatten(self.cell.state_size))
            return [output_mask] + [None] * n
        return output_mask

    def call(self, inputs, training=None, initial_state=None, mask=None):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        if self.time_major:
            inputs = array_ops.transpose(inputs, [1, 0, 2])
            if mask is not None:
                mask = array_ops.transpose(mask, [1, 0])
        if self.go_backwards:
            inputs = array_ops.reverse(inputs, [1])
            if mask is not None:
                mask = array_ops.reverse(mask, [1])
        self.cell._make_masks(inputs, training)
        masked = mask is not None
        adapter = _StepAdapter(self.cell, masked=masked, zero_output=self.zero_output_for_mask)
        if initial_state is not None:
            initial_state = tuple(nest.flatten(initial_state))
            if masked:
                batch = array_ops.shape(inputs)[0]
                zeros = array_ops.zeros(array_ops.stack([batch, self.cell.output_size]), dtype=inputs.dtype)
                initial_state = (zeros,) + initial_state
        if self.stateful:
            if initial_state is not None:
                raise NotImplementedError("initial_state on a stateful RNN layer is not supported by ferroflow")
            initial_state = tuple(self._state_variables(inputs))
            if masked:
                batch = array_ops.shape(inputs)[0]
                zeros = array_ops.zeros(array_ops.stack([batch, self.cell.output_size]), dtype=inputs.dtype)
                initial_state = (zeros,) + initial_state
        rnn_inputs = inputs
        if masked:
            keep = array_ops.expand_dims(math_ops.cast(mask, inputs.dtype), -1)
            rnn_inputs = array_ops.concat([inputs, keep], -1)
        outputs, state = rnn_ops.dynamic_rnn(adapter, rnn_inputs, initial_state=initial_state, dtype=inputs.dtype)
        state = list(nest.flatten(state))
        if masked:
            last = state.pop(0)
        else:
            last = state[0]
        if self.stateful:
            # The next batch starts from this one's last states: fetching the output updates them (fit, evaluate
            # and predict alike, as Keras's state updates run with each of them).
            updates = [state_ops.assign(v, s) for v, s in zip(self.states, state)]
            with ops.control_dependencies(updates):
                outputs = array_ops.identity(outputs)
                last = array_ops.identity(last)
        result = outputs if self.return_sequences else last
        if self.return_sequences and self.time_major:
            result = array_ops.transpose(result, [1, 0, 2])
        if self.return_state:
            return [result] + state
        return result

    @property
    def units(self):
        return self.cell.units

    _STATEFUL_BATCH_HELP = ("If a RNN is stateful, it needs to know its batch size. Specify the batch size of your "
                            "input tensors: \n- If using a Sequential model, specify the batch size by passing a "
                            "`batch_input_shape` argument to your first layer.\n- If using the functional API, "
                            "specify the batch size by passing a `batch_shape` argument to your Input layer.")

    def _state_variables(self, inputs):
        """The stateful layer's state variables (zeros at first; not among the layer's weights)."""
        batch = inputs.shape.as_list()[0] if inputs.shape.rank is not None else None
        if batch is None:
            raise ValueError(self._STATEFUL_BATCH_HELP)
        if self.states is None:
            sizes = nest.flatten(self.cell.state_size)
            with ops.init_scope():
                self.states = [variables_mod.Variable(np.zeros((batch, size), inputs.dtype.as_numpy_dtype),
                                                      trainable=False, name="Variable") for size in sizes]
            for v in self.states:
                K._track_variable(v)
        elif tuple(self.states[0].shape.as_list())[0] != batch:
            raise ValueError(f"Layer {self.name} is stateful with batch size {self.states[0].shape.as_list()[0]}, "
                             f"but got inputs of batch size {batch}")
        return self.states

    def reset_states(self, states=None):
        """Sets the states of a stateful layer to zeros, or to ``states`` (numpy arrays, one per state)."""
        if not self.stateful:
            raise AttributeError("Layer must be stateful.")
        if self.states is None:
            return  # not called yet: the states start at zeros anyway
        if states is None:
            values = [np.zeros(v.shape.as_list(), v.dtype.base_dtype.as_numpy_dtype) for v in self.states]
        else:
            values = [np.asarray(s) for s in nest.flatten(states)]
            if len(values) != len(self.states):
                raise ValueError(f"Layer {self.name} expects {len(self.states)} states, but it received "
                                 f"{len(values)} state values.")
            for i, (v, value) in enumerate(zip(self.states, values)):
                if tuple(v.shape.as_list()) != value.shape:
                    raise ValueError(f"State {i} is incompatible with layer {self.name}: expected shape="
                                     f"{tuple(v.shape.as_list())} but found shape={value.shape}")
        K.batch_set_value(list(zip(self.states, values)))

    def _checkpoint_node(self):
        return {"cell": self.cell._checkpoint_node()}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("cell"), dict):
            from ferroflow.keras import saving

            config["cell"] = saving.deserialize_layer(config["cell"])
        return super().from_config(config)


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

    params = {p for klass in cell_cls.__mro__ if "__init__" in klass.__dict__ and klass not in (Layer, object)
              for p in inspect.signature(klass.__init__).parameters} | \
        set(inspect.signature(__init__).parameters) | {"time_major"}
    return type(name, (RNN,), {"__init__": __init__, "__doc__": doc, "__module__": __name__,
                               "_config_params": tuple(sorted(params - {"self", "kwargs"}))})


SimpleRNN = _rnn_class("SimpleRNN", SimpleRNNCell, (), "A fully connected RNN whose output is fed back.")
GRU = _rnn_class("GRU", GRUCell, (), "Gated recurrent unit (TF 1.x's defaults: ``reset_after=False``, "
                 "``recurrent_activation='hard_sigmoid'``).")
LSTM = _rnn_class("LSTM", LSTMCell, (), "Long short-term memory (TF 1.x's defaults: "
                  "``recurrent_activation='hard_sigmoid'``, ``unit_forget_bias=True``).")
