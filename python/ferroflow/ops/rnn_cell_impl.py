"""TensorFlow 1's RNN cells (``tf.nn.rnn_cell``), as compositions of existing ops.

A cell maps ``(inputs, state)`` to ``(output, new_state)`` for one time step.
Variable names, shapes, default initializers and the gate layout are
TensorFlow 1's, so a TF1 checkpoint restores into these cells:

- ``BasicRNNCell``: ``<scope>/basic_rnn_cell/{kernel,bias}``, kernel
  ``[input_depth + num_units, num_units]``.
- ``BasicLSTMCell``: ``<scope>/basic_lstm_cell/{kernel,bias}``, one matmul of
  ``concat([inputs, h], 1)`` against a ``[input_depth + num_units,
  4 * num_units]`` kernel, split into the gates i, j, f, o.
- ``LSTMCell``: ``<scope>/lstm_cell/{kernel,bias}`` (same layout, with
  ``h`` of width ``num_proj`` when projecting), peepholes ``w_f_diag``,
  ``w_i_diag``, ``w_o_diag`` and ``projection/kernel``.
- ``GRUCell``: ``<scope>/gru_cell/gates/{kernel,bias}`` (r then u) and
  ``<scope>/gru_cell/candidate/{kernel,bias}``; gate bias initialised to 1.
- ``MultiRNNCell``: the ``i``-th cell under ``<scope>/multi_rnn_cell/cell_<i>``.

Kernels default to the variable scope's initializer (glorot-uniform unless a
scope sets one), biases to zeros. A cell opens its variable scope (its name,
uniquified like any ``variable_scope(None, default_name=...)``) on its first
call and re-enters it with ``reuse=True`` on every later call.
"""

from __future__ import annotations

import collections
import hashlib
import logging
import numbers
import re

from ferroflow.framework import constant_op, dtypes, ops, tensor_util
from ferroflow.framework.tensor_shape import TensorShape, as_shape, dimension_value
from ferroflow.ops import _nest as nest
from ferroflow.ops import array_ops, init_ops, math_ops, nn_ops, partitioned_variables, random_ops
from ferroflow.ops import variable_scope as vs

_logger = logging.getLogger(__name__)

_BIAS_VARIABLE_NAME = "bias"
_WEIGHTS_VARIABLE_NAME = "kernel"

__all__ = [
    "BasicLSTMCell",
    "BasicRNNCell",
    "DeviceWrapper",
    "DropoutWrapper",
    "GRUCell",
    "LSTMCell",
    "LSTMStateTuple",
    "LayerRNNCell",
    "MultiRNNCell",
    "RNNCell",
    "ResidualWrapper",
]


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """An LSTM state: the cell state ``c`` and the output ``h`` (in that order)."""

    __slots__ = ()

    @property
    def dtype(self):
        c, h = self
        if c.dtype != h.dtype:
            raise TypeError(f"Inconsistent internal state: {c.dtype} vs {h.dtype}")
        return c.dtype


def _snake_case(name):
    """``BasicLSTMCell`` -> ``basic_lstm_cell`` (how TensorFlow names a layer after its class)."""
    s = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    s = re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()
    return "private" + s if s.startswith("_") else s


_ACTIVATIONS = {
    "tanh": math_ops.tanh,
    "sigmoid": math_ops.sigmoid,
    "relu": nn_ops.relu,
    "relu6": nn_ops.relu6,
    "elu": nn_ops.elu,
    "selu": nn_ops.selu,
    "softplus": nn_ops.softplus,
    "softsign": nn_ops.softsign,
    "linear": lambda x: x,
}


def _activation(activation):
    """The activation function: ``tanh`` by default; callables as given; Keras's names as strings."""
    if activation is None:
        return math_ops.tanh
    if isinstance(activation, str):
        try:
            return _ACTIVATIONS[activation]
        except KeyError:
            raise ValueError(f"Unknown activation function: {activation}") from None
    if not callable(activation):
        raise TypeError(f"activation must be callable or a name, got {activation!r}")
    return activation


def _like_rnncell(cell):
    return (hasattr(cell, "output_size") and hasattr(cell, "state_size")
            and (hasattr(cell, "get_initial_state") or hasattr(cell, "zero_state")) and callable(cell))


def assert_like_rnncell(cell_name, cell):
    """TypeError unless ``cell`` has ``output_size``, ``state_size``, ``zero_state`` and is callable."""
    if _like_rnncell(cell):
        return
    problems = []
    if not hasattr(cell, "output_size"):
        problems.append("'output_size' property is missing")
    if not hasattr(cell, "state_size"):
        problems.append("'state_size' property is missing")
    if not (hasattr(cell, "get_initial_state") or hasattr(cell, "zero_state")):
        problems.append("either 'zero_state' or 'get_initial_state' method is required")
    if not callable(cell):
        problems.append("is not callable")
    raise TypeError(f"The argument {cell_name!r} ({cell}) is not an RNNCell: {', '.join(problems)}.")


def _shape_part(part, what):
    """One side of ``_concat``: ``(int32 vector tensor or None, static dims list or None)``."""
    if isinstance(part, ops.Tensor):
        static = tensor_util.constant_value(part)
        if static is None and part.shape.ndims == 0:
            static = [None]
        elif static is not None:
            static = [int(d) for d in static.reshape(-1)]
        if part.shape.ndims == 0:
            part = array_ops.expand_dims(part, 0)
        elif part.shape.ndims != 1:
            raise ValueError(f"{what} tensor must be either a scalar or vector, but saw tensor: {part}")
        return part, static
    shape = as_shape(part)
    static = shape.as_list() if shape.ndims is not None else None
    tensor = constant_op.constant(shape.as_list(), dtype=dtypes.int32) if shape.is_fully_defined() else None
    return tensor, static


def _concat(prefix, suffix, static=False):
    """``[prefix] + suffix`` as a shape: a list when ``static`` (None for unknown parts), else an int32 tensor."""
    p, p_static = _shape_part(prefix, "prefix")
    s, s_static = _shape_part(suffix, "suffix")
    if static:
        shape = as_shape(p_static).concatenate(s_static)
        return shape.as_list() if shape.ndims is not None else None
    if p is None or s is None:
        raise ValueError(f"Provided a prefix or suffix of None: {prefix} and {suffix}")
    return array_ops.concat((p, s), 0)


def _zero_state_tensors(state_size, batch_size, dtype):
    """Zeros of shape ``[batch_size] + size`` for every size in the (nested) ``state_size``."""

    def zeros(s):
        static = _concat(batch_size, s, static=True)
        if static is not None and all(d is not None for d in static):
            z = array_ops.zeros(static, dtype=dtype)
        else:
            z = array_ops.zeros(_concat(batch_size, s), dtype=dtype)
            if static is not None:
                z.set_shape(static)
        return z

    return nest.map_structure(zeros, state_size)


class RNNCell:
    """The abstract RNN cell: ``output, new_state = cell(inputs, state)``.

    Subclasses define ``state_size``, ``output_size`` and ``call``; a cell with
    variables creates them in ``build(inputs_shape)`` with ``add_variable``.
    """

    # Defaults for subclasses that never call ``RNNCell.__init__`` (pre-1.2 TF1 code did not need to).
    _reuse = None
    _scope = None
    _trainable = True
    _dtype = None
    _name = None
    built = False

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        reuse = kwargs.pop("_reuse", None)
        scope = kwargs.pop("_scope", None)
        kwargs.pop("autocast", None)
        if kwargs:
            raise TypeError(f"Keyword argument not understood: {sorted(kwargs)[0]}")
        if isinstance(name, vs.VariableScope):
            scope, name = name, None
        self._reuse = reuse
        self._scope = scope
        self._trainable = trainable
        self._name = name
        self._dtype = None if dtype is None else dtypes.as_dtype(dtype)
        self._weight_lists()
        self.built = False

    # -- what a cell is -------------------------------------------------------
    @property
    def state_size(self):
        """An int, a TensorShape, or a (nested) tuple of them: the shape(s) of the state without batch."""
        raise NotImplementedError("Abstract method")

    @property
    def output_size(self):
        """An int or TensorShape: the shape of the output without batch."""
        raise NotImplementedError("Abstract method")

    def build(self, inputs_shape):
        """Creates the cell's variables (called once, on the first call)."""

    def call(self, inputs, state):
        raise NotImplementedError("Abstract method")

    # -- layer bookkeeping ----------------------------------------------------
    @property
    def _base_name(self):
        return self._name or _snake_case(type(self).__name__)

    @property
    def name(self):
        return self._base_name

    def _weight_lists(self):
        if "_trainable_weights" not in self.__dict__:
            self._trainable_weights = []
            self._non_trainable_weights = []
        return self._trainable_weights, self._non_trainable_weights

    @property
    def dtype(self):
        return self._dtype

    @property
    def trainable(self):
        return self._trainable

    @property
    def scope_name(self):
        if self._scope is None:
            raise ValueError("No name available for layer scope because the layer has not been used yet.")
        return self._scope.name

    def _sub_cells(self):
        return []

    @property
    def trainable_weights(self):
        own, _ = self._weight_lists()
        out = list(own) if self._trainable else []
        for cell in self._sub_cells():
            out.extend(v for v in getattr(cell, "trainable_weights", []) if all(v is not w for w in out))
        return out

    @property
    def non_trainable_weights(self):
        own, non = self._weight_lists()
        out = list(non) + ([] if self._trainable else list(own))
        for cell in self._sub_cells():
            out.extend(v for v in getattr(cell, "non_trainable_weights", []) if all(v is not w for w in out))
        return out

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    def add_variable(self, name, shape, dtype=None, initializer=None, regularizer=None, trainable=True,
                     constraint=None, partitioner=None):
        """``get_variable(name, ...)`` in the cell's variable scope, created outside any control flow."""
        dtype = dtypes.as_dtype(dtype or self._dtype or dtypes.float32)
        scope = vs.get_variable_scope()
        # init_scope lifts creation out of a loop body; re-entering the cell's scope keeps the name.
        with ops.init_scope():
            with vs.variable_scope(scope, auxiliary_name_scope=False):
                v = vs.get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                                    regularizer=regularizer, trainable=trainable and self._trainable,
                                    constraint=constraint, partitioner=partitioner)
        parts = v._get_variable_list() if hasattr(v, "_get_variable_list") else [v]
        own, non = self._weight_lists()
        target = own if trainable else non
        for p in parts:
            if all(p is not w for w in target):
                target.append(p)
        return v

    add_weight = add_variable

    def _set_scope(self, scope=None):
        if self._scope is not None:
            return
        if self._reuse:
            with vs.variable_scope(scope if scope is not None else self._base_name) as captured:
                self._scope = captured
        else:
            with vs.variable_scope(scope, default_name=self._base_name) as captured:
                self._scope = captured

    def __call__(self, inputs, state, scope=None, *args, **kwargs):
        """Runs one step: builds the variables on the first call, reuses them afterwards."""
        if self._scope is None and not isinstance(self, LayerRNNCell):
            # As in TF, a plain RNNCell first re-enters the caller's scope (or ``scope``), which
            # nests the name scope of its ops once more (``rnn/rnn/multi_rnn_cell/...``).
            with vs.variable_scope(scope if scope is not None else vs.get_variable_scope()) as outer:
                self._set_scope(outer if scope is not None else None)
        self._set_scope(scope)
        inputs = nest.map_structure(lambda x: x if isinstance(x, ops.Tensor) else ops.convert_to_tensor(x), inputs)
        reuse = True if self.built else self._reuse
        with vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as vscope:
            with ops.name_scope(vscope.original_name_scope):
                if not self.built:
                    flat = nest.flatten(inputs)
                    if self._dtype is None and flat and hasattr(flat[0], "dtype"):
                        self._dtype = flat[0].dtype.base_dtype
                    shapes = nest.map_structure(lambda x: x.shape, inputs)
                    self.build(shapes)
                    self.built = True
                return self.call(inputs, state, *args, **kwargs)

    # -- initial states ---------------------------------------------------------
    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        """The zero state, for ``inputs`` (batch and dtype from it) or an explicit ``batch_size``/``dtype``."""
        if inputs is not None:
            inputs = ops.convert_to_tensor(inputs)
            static_batch = dimension_value(inputs.shape[0]) if inputs.shape.ndims else None
            if batch_size is not None and static_batch is not None and not isinstance(batch_size, ops.Tensor):
                if static_batch != batch_size:
                    raise ValueError(
                        f"batch size from input tensor is different from the input param. Input tensor batch: "
                        f"{static_batch}, batch_size: {batch_size}"
                    )
            if dtype is not None and inputs.dtype != dtypes.as_dtype(dtype):
                raise ValueError(f"dtype from input tensor is different from the input param. Input tensor dtype: "
                                 f"{inputs.dtype}, dtype: {dtype}")
            batch_size = static_batch if static_batch is not None else array_ops.shape(inputs)[0]
            dtype = inputs.dtype
        if batch_size is None or dtype is None:
            raise ValueError(
                f"batch_size and dtype cannot be None while constructing initial state: batch_size={batch_size}, "
                f"dtype={dtype}"
            )
        return self.zero_state(batch_size, dtype)

    def zero_state(self, batch_size, dtype):
        """Zero-filled state tensor(s) of shape ``[batch_size, size]`` for each size in ``state_size``."""
        with ops.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            return _zero_state_tensors(self.state_size, batch_size, dtype)


class LayerRNNCell(RNNCell):
    """An RNN cell whose variables live in its own scope (every cell with weights derives from it)."""


def _input_depth(inputs_shape):
    shape = as_shape(inputs_shape)
    depth = dimension_value(shape[-1]) if shape.ndims else None
    if depth is None:
        raise ValueError(f"Expected inputs.shape[-1] to be known, saw shape: {shape}")
    return depth


class BasicRNNCell(LayerRNNCell):
    """``output = new_state = activation(W [inputs, state] + b)``."""

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._activation = _activation(activation)

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape)
        self._kernel = self.add_variable(_WEIGHTS_VARIABLE_NAME, shape=[depth + self._num_units, self._num_units])
        self._bias = self.add_variable(_BIAS_VARIABLE_NAME, shape=[self._num_units],
                                       initializer=init_ops.zeros_initializer(dtype=self.dtype))
        self.built = True

    def call(self, inputs, state):
        gate_inputs = math_ops.matmul(array_ops.concat([inputs, state], 1), self._kernel)
        output = self._activation(nn_ops.bias_add(gate_inputs, self._bias))
        return output, output


class GRUCell(LayerRNNCell):
    """Gated recurrent unit (Cho et al. 2014): reset gate r, update gate u, then
    ``h' = u * h + (1 - u) * activation(W_c [x, r * h] + b_c)``."""

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None, bias_initializer=None,
                 name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self._num_units = num_units
        self._activation = _activation(activation)
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape)
        n = self._num_units
        self._gate_kernel = self.add_variable(f"gates/{_WEIGHTS_VARIABLE_NAME}", shape=[depth + n, 2 * n],
                                              initializer=self._kernel_initializer)
        self._gate_bias = self.add_variable(
            f"gates/{_BIAS_VARIABLE_NAME}", shape=[2 * n],
            initializer=self._bias_initializer if self._bias_initializer is not None
            else init_ops.constant_initializer(1.0, dtype=self.dtype))
        self._candidate_kernel = self.add_variable(f"candidate/{_WEIGHTS_VARIABLE_NAME}", shape=[depth + n, n],
                                                   initializer=self._kernel_initializer)
        self._candidate_bias = self.add_variable(
            f"candidate/{_BIAS_VARIABLE_NAME}", shape=[n],
            initializer=self._bias_initializer if self._bias_initializer is not None
            else init_ops.zeros_initializer(dtype=self.dtype))
        self.built = True

    def call(self, inputs, state):
        gates = math_ops.matmul(array_ops.concat([inputs, state], 1), self._gate_kernel)
        gates = math_ops.sigmoid(nn_ops.bias_add(gates, self._gate_bias))
        r, u = array_ops.split(value=gates, num_or_size_splits=2, axis=1)
        candidate = math_ops.matmul(array_ops.concat([inputs, r * state], 1), self._candidate_kernel)
        c = self._activation(nn_ops.bias_add(candidate, self._candidate_bias))
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class BasicLSTMCell(LayerRNNCell):
    """LSTM without peepholes or projection (Zaremba et al. 2014); ``forget_bias`` is added to the
    forget gate's pre-activation."""

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        if not state_is_tuple:
            _logger.warning("%s: Using a concatenated state is slower and will soon be deprecated. "
                            "Use state_is_tuple=True.", self)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _activation(activation)

    @property
    def state_size(self):
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape)
        n = self._num_units
        self._kernel = self.add_variable(_WEIGHTS_VARIABLE_NAME, shape=[depth + n, 4 * n])
        self._bias = self.add_variable(_BIAS_VARIABLE_NAME, shape=[4 * n],
                                       initializer=init_ops.zeros_initializer(dtype=self.dtype))
        self.built = True

    def call(self, inputs, state):
        one = constant_op.constant(1, dtype=dtypes.int32)
        if self._state_is_tuple:
            c, h = state
        else:
            c, h = array_ops.split(value=state, num_or_size_splits=2, axis=one)
        gate_inputs = math_ops.matmul(array_ops.concat([inputs, h], 1), self._kernel)
        gate_inputs = nn_ops.bias_add(gate_inputs, self._bias)
        i, j, f, o = array_ops.split(value=gate_inputs, num_or_size_splits=4, axis=one)
        forget_bias = constant_op.constant(self._forget_bias, dtype=f.dtype)
        new_c = math_ops.add(math_ops.multiply(c, math_ops.sigmoid(math_ops.add(f, forget_bias))),
                             math_ops.multiply(math_ops.sigmoid(i), self._activation(j)))
        new_h = math_ops.multiply(self._activation(new_c), math_ops.sigmoid(o))
        new_state = LSTMStateTuple(new_c, new_h) if self._state_is_tuple else array_ops.concat([new_c, new_h], 1)
        return new_h, new_state


class LSTMCell(LayerRNNCell):
    """LSTM with optional peepholes (Gers & Schmidhuber 2000), cell clipping and an output projection
    (Sak et al. 2014)."""

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None, num_proj=None,
                 proj_clip=None, num_unit_shards=None, num_proj_shards=None, forget_bias=1.0, state_is_tuple=True,
                 activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        if not state_is_tuple:
            _logger.warning("%s: Using a concatenated state is slower and will soon be deprecated. "
                            "Use state_is_tuple=True.", self)
        if num_unit_shards is not None or num_proj_shards is not None:
            _logger.warning("%s: The num_unit_shards and proj_unit_shards parameters are deprecated and will be "
                            "removed in Jan 2017. Use a variable scope with a partitioner instead.", self)
        self._num_units = num_units
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._num_unit_shards = num_unit_shards
        self._num_proj_shards = num_proj_shards
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = _activation(activation)
        if num_proj:
            self._state_size = LSTMStateTuple(num_units, num_proj) if state_is_tuple else num_units + num_proj
            self._output_size = num_proj
        else:
            self._state_size = LSTMStateTuple(num_units, num_units) if state_is_tuple else 2 * num_units
            self._output_size = num_units

    @property
    def state_size(self):
        return self._state_size

    @property
    def output_size(self):
        return self._output_size

    def build(self, inputs_shape):
        depth = _input_depth(inputs_shape)
        n = self._num_units
        h_depth = self._num_proj if self._num_proj is not None else n
        unit_partitioner = (partitioned_variables.fixed_size_partitioner(self._num_unit_shards)
                            if self._num_unit_shards is not None else None)
        self._kernel = self.add_variable(_WEIGHTS_VARIABLE_NAME, shape=[depth + h_depth, 4 * n],
                                         initializer=self._initializer, partitioner=unit_partitioner)
        self._bias = self.add_variable(_BIAS_VARIABLE_NAME, shape=[4 * n],
                                       initializer=init_ops.zeros_initializer(dtype=self.dtype))
        if self._use_peepholes:
            self._w_f_diag = self.add_variable("w_f_diag", shape=[n], initializer=self._initializer)
            self._w_i_diag = self.add_variable("w_i_diag", shape=[n], initializer=self._initializer)
            self._w_o_diag = self.add_variable("w_o_diag", shape=[n], initializer=self._initializer)
        if self._num_proj is not None:
            proj_partitioner = (partitioned_variables.fixed_size_partitioner(self._num_proj_shards)
                                if self._num_proj_shards is not None else None)
            self._proj_kernel = self.add_variable(f"projection/{_WEIGHTS_VARIABLE_NAME}", shape=[n, self._num_proj],
                                                  initializer=self._initializer, partitioner=proj_partitioner)
        self.built = True

    def call(self, inputs, state):
        n = self._num_units
        num_proj = n if self._num_proj is None else self._num_proj
        sigmoid = math_ops.sigmoid
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev = array_ops.slice(state, [0, 0], [-1, n])
            m_prev = array_ops.slice(state, [0, n], [-1, num_proj])
        input_size = dimension_value(inputs.shape.with_rank(2)[1])
        if input_size is None:
            raise ValueError("Could not infer input size from inputs.get_shape()[-1]")
        lstm_matrix = math_ops.matmul(array_ops.concat([inputs, m_prev], 1), self._kernel)
        lstm_matrix = nn_ops.bias_add(lstm_matrix, self._bias)
        i, j, f, o = array_ops.split(value=lstm_matrix, num_or_size_splits=4, axis=1)
        if self._use_peepholes:
            c = (sigmoid(f + self._forget_bias + self._w_f_diag * c_prev) * c_prev
                 + sigmoid(i + self._w_i_diag * c_prev) * self._activation(j))
        else:
            c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * self._activation(j)
        if self._cell_clip is not None:
            c = math_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            m = sigmoid(o + self._w_o_diag * c) * self._activation(c)
        else:
            m = sigmoid(o) * self._activation(c)
        if self._num_proj is not None:
            m = math_ops.matmul(m, self._proj_kernel)
            if self._proj_clip is not None:
                m = math_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else array_ops.concat([c, m], 1)
        return m, new_state


class MultiRNNCell(RNNCell):
    """Cells stacked in layers: the output of cell ``i`` is the input of cell ``i + 1``."""

    def __init__(self, cells, state_is_tuple=True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not nest.is_sequence(cells):
            raise TypeError(f"cells must be a list or tuple, but saw: {cells}.")
        if len({id(c) for c in cells}) < len(cells):
            _logger.warning("At least two cells provided to MultiRNNCell are the same object and will share "
                            "weights.")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(nest.is_sequence(c.state_size) for c in self._cells):
            raise ValueError("Some cells return tuples of states, but the flag state_is_tuple is not set. "
                             f"State sizes are: {[c.state_size for c in self._cells]}")

    def _sub_cells(self):
        return self._cells

    @property
    def state_size(self):
        if self._state_is_tuple:
            return tuple(c.state_size for c in self._cells)
        return sum(c.state_size for c in self._cells)

    @property
    def output_size(self):
        return self._cells[-1].output_size

    def zero_state(self, batch_size, dtype):
        with ops.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            if self._state_is_tuple:
                return tuple(c.zero_state(batch_size, dtype) for c in self._cells)
            return super().zero_state(batch_size, dtype)

    def build(self, inputs_shape):
        self.built = True

    def call(self, inputs, state):
        cur_inp = inputs
        pos = 0
        new_states = []
        for i, cell in enumerate(self._cells):
            with vs.variable_scope(f"cell_{i}"):
                if self._state_is_tuple:
                    if not nest.is_sequence(state):
                        raise ValueError(f"Expected state to be a tuple of length {len(self.state_size)}, but "
                                         f"received: {state}")
                    cur_state = state[i]
                else:
                    cur_state = array_ops.slice(state, [0, pos], [-1, cell.state_size])
                    pos += cell.state_size
                cur_inp, new_state = cell(cur_inp, cur_state)
                new_states.append(new_state)
        new_states = tuple(new_states) if self._state_is_tuple else array_ops.concat(new_states, 1)
        return cur_inp, new_states


class _RNNCellWrapper(RNNCell):
    """A cell around another cell: no scope of its own, so the wrapped cell's variables keep their names."""

    def __init__(self, cell):
        super().__init__()
        assert_like_rnncell("cell", cell)
        self._cell = cell

    @property
    def wrapped_cell(self):
        return self._cell

    cell = wrapped_cell

    def _sub_cells(self):
        return [self._cell]

    @property
    def state_size(self):
        return self._cell.state_size

    @property
    def output_size(self):
        return self._cell.output_size

    def zero_state(self, batch_size, dtype):
        with ops.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            return self._cell.zero_state(batch_size, dtype)

    def __call__(self, inputs, state, scope=None):
        self.built = True
        return self._call_wrapped_cell(inputs, state, scope)

    def _call_wrapped_cell(self, inputs, state, scope):
        raise NotImplementedError


def _default_dropout_state_filter_visitor(substate):
    if isinstance(substate, LSTMStateTuple):
        # Dropout on the memory state c would disturb it for every later step.
        return LSTMStateTuple(c=False, h=True)
    return True


def _enumerated_map_structure_up_to(shallow_structure, fn, *args):
    ix = [0]

    def enumerated(*inner):
        r = fn(ix[0], *inner)
        ix[0] += 1
        return r

    return nest.map_structure_up_to(shallow_structure, enumerated, *args)


class DropoutWrapper(_RNNCellWrapper):
    """Dropout on a cell's inputs, outputs and (new) state.

    With ``variational_recurrent=True`` one mask per run (Gal & Ghahramani 2016) is drawn at
    construction and used at every step; ``input_size`` (for input dropout) and ``dtype`` are then
    required. Per-component seeds derive from ``seed`` as in TensorFlow (md5 of seed and salt).
    """

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None, **kwargs):
        super().__init__(cell)
        if kwargs:
            raise TypeError(f"Keyword argument not understood: {sorted(kwargs)[0]}")
        if dropout_state_filter_visitor is not None and not callable(dropout_state_filter_visitor):
            raise TypeError(f"dropout_state_filter_visitor must be callable. Received: {dropout_state_filter_visitor}")
        self._dropout_state_filter = dropout_state_filter_visitor or _default_dropout_state_filter_visitor
        with ops.name_scope("DropoutWrapperInit"):
            for prob, attr in ((input_keep_prob, "input_keep_prob"), (state_keep_prob, "state_keep_prob"),
                               (output_keep_prob, "output_keep_prob")):
                tensor_prob = ops.convert_to_tensor(prob)
                const_prob = tensor_util.constant_value(tensor_prob)
                if const_prob is not None:
                    if const_prob < 0 or const_prob > 1:
                        raise ValueError(f"Parameter {attr} must be between 0 and 1: {const_prob:g}")
                    setattr(self, f"_{attr}", float(const_prob))
                else:
                    setattr(self, f"_{attr}", tensor_prob)
        self._variational_recurrent = variational_recurrent
        self._input_size = input_size
        self._seed = seed
        self._recurrent_input_noise = None
        self._recurrent_state_noise = None
        self._recurrent_output_noise = None
        if variational_recurrent:
            if dtype is None:
                raise ValueError("When variational_recurrent=True, dtype must be provided")

            def batch_noise(s, inner_seed):
                shape = array_ops.concat(([1], TensorShape(s).as_list()), 0)
                return random_ops.random_uniform(shape, seed=inner_seed, dtype=dtype)

            if not isinstance(self._input_keep_prob, numbers.Real) or self._input_keep_prob < 1.0:
                if input_size is None:
                    raise ValueError("When variational_recurrent=True and input_keep_prob < 1.0 or is unknown, "
                                     "input_size must be provided")
                self._recurrent_input_noise = _enumerated_map_structure_up_to(
                    input_size, lambda i, s: batch_noise(s, self._gen_seed("input", i)), input_size)
            self._recurrent_state_noise = _enumerated_map_structure_up_to(
                cell.state_size, lambda i, s: batch_noise(s, self._gen_seed("state", i)), cell.state_size)
            self._recurrent_output_noise = _enumerated_map_structure_up_to(
                cell.output_size, lambda i, s: batch_noise(s, self._gen_seed("output", i)), cell.output_size)

    def _gen_seed(self, salt_prefix, index):
        if self._seed is None:
            return None
        digest = hashlib.md5(f"{self._seed}{salt_prefix}_{index}".encode()).hexdigest()
        return int(digest[:8], 16) & 0x7FFFFFFF

    @staticmethod
    def _variational_dropout_value(value, noise, keep_prob):
        binary = math_ops.floor(keep_prob + noise)
        ret = math_ops.div(value, keep_prob) * binary
        ret.set_shape(value.shape)
        return ret

    def _dropout(self, values, salt_prefix, recurrent_noise, keep_prob, shallow=None):
        if shallow is None:
            shallow = values
        if not self._variational_recurrent:
            def dropout(i, do_dropout, v):
                if not isinstance(do_dropout, bool) or do_dropout:
                    return nn_ops.dropout(v, keep_prob=keep_prob, seed=self._gen_seed(salt_prefix, i))
                return v

            return _enumerated_map_structure_up_to(shallow, dropout, shallow, values)

        def variational(i, do_dropout, v, n):
            if not isinstance(do_dropout, bool) or do_dropout:
                return self._variational_dropout_value(v, n, keep_prob)
            return v

        return _enumerated_map_structure_up_to(shallow, variational, shallow, values, recurrent_noise)

    def _call_wrapped_cell(self, inputs, state, scope):
        def should_dropout(p):
            return not isinstance(p, float) or p < 1

        if should_dropout(self._input_keep_prob):
            inputs = self._dropout(inputs, "input", self._recurrent_input_noise, self._input_keep_prob)
        output, new_state = self._cell(inputs, state, scope=scope)
        if should_dropout(self._state_keep_prob):
            shallow = nest.get_traverse_shallow_structure(self._dropout_state_filter, new_state)
            new_state = self._dropout(new_state, "state", self._recurrent_state_noise, self._state_keep_prob, shallow)
        if should_dropout(self._output_keep_prob):
            output = self._dropout(output, "output", self._recurrent_output_noise, self._output_keep_prob)
        return output, new_state


class ResidualWrapper(_RNNCellWrapper):
    """Adds the cell's inputs to its outputs (or combines them with ``residual_fn(inputs, outputs)``)."""

    def __init__(self, cell, residual_fn=None, **kwargs):
        super().__init__(cell)
        if kwargs:
            raise TypeError(f"Keyword argument not understood: {sorted(kwargs)[0]}")
        self._residual_fn = residual_fn

    def _call_wrapped_cell(self, inputs, state, scope):
        outputs, new_state = self._cell(inputs, state, scope=scope)

        def default_residual_fn(inputs, outputs):
            nest.assert_same_structure(inputs, outputs)

            def add(inp, out):
                inp = ops.convert_to_tensor(inp)
                inp.shape.assert_is_compatible_with(out.shape)
                return inp + out

            return nest.map_structure(add, inputs, outputs)

        return (self._residual_fn or default_residual_fn)(inputs, outputs), new_state


class DeviceWrapper(_RNNCellWrapper):
    """Builds the cell's ops (and zero state) on ``device``."""

    def __init__(self, cell, device, **kwargs):
        super().__init__(cell)
        if kwargs:
            raise TypeError(f"Keyword argument not understood: {sorted(kwargs)[0]}")
        self._device = device

    def zero_state(self, batch_size, dtype):
        with ops.name_scope(type(self).__name__ + "ZeroState", values=[batch_size]):
            with ops.device(self._device):
                return self._cell.zero_state(batch_size, dtype)

    def _call_wrapped_cell(self, inputs, state, scope):
        with ops.device(self._device):
            return self._cell(inputs, state, scope=scope)
