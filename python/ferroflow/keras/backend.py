"""``tf.keras.backend`` for graph mode, as Keras ran on TensorFlow 1.x.

One session per process: ``get_session()`` returns the default session if one is installed
(``with sess.as_default()``), else the session ``set_session`` gave, else one it creates for the default
graph; either way it first initializes the variables Keras made (layers, optimizers, ``variable``) that are
not initialized yet, so ``model.fit`` works without ``global_variables_initializer``.

The learning phase is a per-graph ``PlaceholderWithDefault(False)`` named ``keras_learning_phase``:
``fit`` feeds True, ``evaluate``/``predict`` leave it False, and ``Dropout``/``BatchNormalization`` pick
their branch from it. ``set_learning_phase(0|1)`` fixes it to a Python value instead.
"""

from __future__ import annotations

import weakref

import numpy as np

from ferroflow.framework import constant_op, dtypes, ops
from ferroflow.framework.tensor_shape import TensorShape
from ferroflow.ops import array_ops, clip_ops, math_ops, nn_ops, random_ops, state_ops
from ferroflow.ops import variables as variables_mod

__all__ = [
    "abs", "argmax", "batch_get_value", "batch_set_value", "cast", "cast_to_floatx", "categorical_crossentropy",
    "clear_session", "clip", "concatenate", "constant", "dot", "dtype", "epsilon", "eval", "exp", "expand_dims",
    "flatten", "floatx", "function", "get_session", "get_uid", "get_value", "gradients", "image_data_format",
    "int_shape", "is_placeholder", "learning_phase", "log", "manual_variable_initialization", "max", "maximum",
    "mean", "min", "minimum", "ndim", "ones", "ones_like", "placeholder", "pow", "relu", "reset_uids", "reshape",
    "set_epsilon", "set_floatx", "set_image_data_format", "set_learning_phase", "set_session", "set_value",
    "shape", "sigmoid", "softmax", "softplus", "sparse_categorical_crossentropy", "sqrt", "square", "squeeze",
    "stack", "std", "stop_gradient", "sum", "tanh", "transpose", "variable", "var", "zeros", "zeros_like",
    "binary_crossentropy", "hard_sigmoid", "elu", "l2_normalize", "gather", "one_hot", "tile", "update",
    "update_add", "update_sub", "random_uniform", "random_normal", "equal", "not_equal", "greater", "less",
    "repeat_elements", "batch_dot",
    "round", "sign", "count_params", "get_graph", "name_scope", "in_train_phase", "switch",
]

_FLOATX = "float32"
_EPSILON = 1e-7
_IMAGE_DATA_FORMAT = "channels_last"
_MANUAL_VAR_INIT = False


class _GraphState:
    def __init__(self):
        self.uids = {}
        self.learning_phase = None
        self.variables = []
        self.tensor_meta = {}


_STATE = weakref.WeakKeyDictionary()
_SESSION = {"session": None}


def _state(graph=None):
    graph = graph or ops.get_default_graph()
    st = _STATE.get(graph)
    if st is None:
        st = _STATE[graph] = _GraphState()
    return st


def tensor_meta(tensor, key, default=None):
    """What Keras noted about a graph tensor (``history``: the layer call that made it; ``logits``)."""
    if not isinstance(tensor, ops.Tensor):
        return default
    st = _STATE.get(tensor.graph)
    if st is None:
        return default
    return st.tensor_meta.get((tensor.op.name, tensor.value_index), {}).get(key, default)


def set_tensor_meta(tensor, key, value):
    """Notes ``key: value`` about a graph tensor (graph tensors take no attributes of their own)."""
    st = _state(tensor.graph)
    st.tensor_meta.setdefault((tensor.op.name, tensor.value_index), {})[key] = value


def _get_keras_mask(tensor):
    meta = _STATE.get(tensor.graph)
    meta = meta.tensor_meta.get((tensor.op.name, tensor.value_index)) if meta is not None else None
    if meta is None:
        raise AttributeError("'Tensor' object has no attribute '_keras_mask'")
    return meta.get("mask")


def _set_keras_mask(tensor, mask):
    set_tensor_meta(tensor, "mask", mask)


ops._keras_mask_access = (_get_keras_mask, _set_keras_mask)  # ``tensor._keras_mask``


# -- configuration --------------------------------------------------------------------------
def floatx():
    """The default float type (``'float32'``)."""
    return _FLOATX


def set_floatx(value):
    global _FLOATX
    if value not in ("float16", "float32", "float64"):
        raise ValueError(f"Unknown floatx type: {value}")
    _FLOATX = str(value)


def epsilon():
    """The fuzz factor used in numeric expressions (1e-7)."""
    return _EPSILON


def set_epsilon(value):
    global _EPSILON
    _EPSILON = float(value)


def image_data_format():
    return _IMAGE_DATA_FORMAT


def set_image_data_format(data_format):
    global _IMAGE_DATA_FORMAT
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"Unknown data_format: {data_format}")
    _IMAGE_DATA_FORMAT = str(data_format)


def cast_to_floatx(x):
    return np.asarray(x, dtype=_FLOATX)


def get_graph():
    return ops.get_default_graph()


name_scope = ops.name_scope


# -- uids, learning phase, session ------------------------------------------------------
def get_uid(prefix=""):
    """1, 2, 3, ... for each ``prefix`` in the default graph (Keras's layer-name counter)."""
    uids = _state().uids
    uids[prefix] = uids.get(prefix, 0) + 1
    return uids[prefix]


def reset_uids():
    _state().uids.clear()


def unique_object_name(base):
    """``base``, then ``base_1``, ``base_2``, ... per graph (Keras's layer names)."""
    uid = get_uid(base)
    return base if uid == 1 else f"{base}_{uid - 1}"


def learning_phase():
    """The learning phase: a fixed 0/1 from ``set_learning_phase``, else this graph's bool placeholder."""
    st = _state()
    if st.learning_phase is None:
        with ops.init_scope(), ops.name_scope(""):
            st.learning_phase = array_ops.placeholder_with_default(False, shape=(), name="keras_learning_phase")
    return st.learning_phase


def _learning_phase_is_fixed():
    return isinstance(_state().learning_phase, int)


def set_learning_phase(value):
    """Fixes the learning phase to 0 (test) or 1 (train) for layers built from now on in this graph."""
    if value not in (0, 1):
        raise ValueError("Expected learning phase to be 0 or 1.")
    _state().learning_phase = int(value)


def in_train_phase(x, alt, training=None):
    """``x`` in the training phase, else ``alt`` (callables are called in their branch)."""
    from ferroflow.layers.base import smart_cond

    if training is None:
        training = learning_phase()
    fx = x if callable(x) else (lambda: x)
    falt = alt if callable(alt) else (lambda: alt)
    if isinstance(training, int) and not isinstance(training, bool):
        training = bool(training)
    return smart_cond(training, fx, falt)


def in_test_phase(x, alt, training=None):
    return in_train_phase(alt, x, training=training)


def _track_variable(v):
    _state(v.graph).variables.append(v)


def manual_variable_initialization(value):
    """With True, ``get_session`` no longer initializes Keras's variables."""
    global _MANUAL_VAR_INIT
    _MANUAL_VAR_INIT = bool(value)


def _initialize_variables(session):
    st = _state(session.graph)
    pending = [v for v in st.variables if not getattr(v, "_keras_initialized", False)]
    if not pending:
        return
    with session.graph.as_default():
        flags = session.run([variables_mod.is_variable_initialized(v) for v in pending])
    todo = [v for v, ok in zip(pending, flags) if not ok]
    for v in pending:
        v._keras_initialized = True
    if todo:
        session.run([v.initializer for v in todo])


def get_session():
    """The session Keras runs in (see the module docstring); Keras's uninitialized variables get initialized."""
    from ferroflow.client.session import Session

    session = ops.get_default_session()
    if session is None:
        session = _SESSION["session"]
        graph = ops.get_default_graph()
        if session is None or getattr(session, "_closed", False) or session.graph is not graph:
            session = _SESSION["session"] = Session(graph=graph)
    if not _MANUAL_VAR_INIT:
        _initialize_variables(session)
    return session


def set_session(session):
    """Makes ``session`` the one Keras uses (when no default session is installed)."""
    _SESSION["session"] = session


def clear_session():
    """Resets Keras's state: closes its session, clears the default graph and the layer-name counters."""
    session = _SESSION["session"]
    _SESSION["session"] = None
    if session is not None:
        try:
            session.close()
        except Exception:  # noqa: BLE001 - a session already closed or broken is dropped all the same
            pass
    ops.reset_default_graph()


# -- variables and values --------------------------------------------------------------------
def variable(value, dtype=None, name=None, constraint=None):
    """A variable holding ``value`` (initialized by ``get_session``)."""
    dtype = dtypes.as_dtype(dtype or floatx())
    v = variables_mod.Variable(np.asarray(value, dtype=dtype.as_numpy_dtype), dtype=dtype, name=name,
                               constraint=constraint)
    v._keras_shape = tuple(np.shape(value))
    _track_variable(v)
    return v


def constant(value, dtype=None, shape=None, name=None):
    return constant_op.constant(value, dtype=dtype or floatx(), shape=shape, name=name)


def is_placeholder(x):
    return isinstance(x, ops.Tensor) and x.op.type == "Placeholder"


def placeholder(shape=None, ndim=None, dtype=None, sparse=False, name=None):
    """A placeholder of ``shape`` (or ``ndim`` unknown dimensions)."""
    if sparse:
        raise NotImplementedError("K.placeholder(sparse=True) is not supported by ferroflow")
    if shape is None and ndim is not None:
        shape = (None,) * ndim
    return array_ops.placeholder(dtype or floatx(), shape=shape, name=name)


def get_value(x):
    """The value of a variable or tensor, as numpy (through ``get_session``)."""
    if isinstance(x, np.ndarray):
        return x
    return get_session().run(x)


def batch_get_value(tensors):
    return get_session().run(list(tensors)) if tensors else []


def set_value(x, value):
    batch_set_value([(x, value)])


def batch_set_value(tuples):
    """Assigns numpy values to variables (one placeholder-fed assign per variable, made once)."""
    if not tuples:
        return
    feed, assigns = {}, []
    for x, value in tuples:
        value = np.asarray(value, dtype=x.dtype.base_dtype.as_numpy_dtype)
        op, ph = getattr(x, "_keras_assign", (None, None))
        if op is None or op.graph is not ops.get_default_graph():
            with x.graph.as_default(), ops.init_scope():
                ph = array_ops.placeholder(x.dtype.base_dtype, shape=value.shape)
                op = state_ops.assign(x, ph)
            x._keras_assign = (op, ph)
        feed[ph] = value
        assigns.append(op)
    get_session().run(assigns, feed_dict=feed)


def eval(x):  # noqa: A001 - Keras's name
    return get_value(x)


def count_params(x):
    return int(np.prod(int_shape(x)))


def update(x, new_x):
    return state_ops.assign(x, new_x)


def update_add(x, increment):
    return state_ops.assign_add(x, increment)


def update_sub(x, decrement):
    return state_ops.assign_sub(x, decrement)


class _Function:
    """``K.function(inputs, outputs, updates)``: feeds ``inputs`` (a list of values) and runs ``outputs``."""

    def __init__(self, inputs, outputs, updates=None, name=None, feed_dict=None):
        self.inputs = list(inputs)
        self._single = not isinstance(outputs, (list, tuple))
        self.outputs = [outputs] if self._single else list(outputs)
        self.feed_dict = dict(feed_dict or {})
        updates = list(updates or [])
        if updates:
            with ops.control_dependencies(self.outputs):
                ups = []
                for u in updates:
                    if isinstance(u, tuple):
                        u = state_ops.assign(u[0], u[1])
                    ups.append(u)
                from ferroflow.ops import control_flow_ops

                self.updates_op = control_flow_ops.group(*ups)
        else:
            self.updates_op = None

    def __call__(self, inputs):
        if not isinstance(inputs, (list, tuple)):
            inputs = [inputs]
        if len(inputs) != len(self.inputs):
            raise ValueError(f"K.function expected {len(self.inputs)} input value(s), got {len(inputs)}")
        feed = dict(self.feed_dict)
        for t, v in zip(self.inputs, inputs):
            if isinstance(t, int) or v is None:
                continue
            feed[t] = v
        fetches = list(self.outputs) + ([self.updates_op] if self.updates_op is not None else [])
        out = get_session().run(fetches, feed_dict=feed)[: len(self.outputs)]
        return out


def function(inputs, outputs, updates=None, name=None, **kwargs):
    return _Function(inputs, outputs, updates=updates, name=name, feed_dict=kwargs.get("feed_dict"))


def gradients(loss, variables):
    from ferroflow.ops import gradients_impl

    return gradients_impl.gradients(loss, variables)


def stop_gradient(variables):
    if isinstance(variables, (list, tuple)):
        return [array_ops.stop_gradient(v) for v in variables]
    return array_ops.stop_gradient(variables)


# -- shapes ----------------------------------------------------------------------------------------
def int_shape(x):
    """The static shape as a tuple of ints and Nones (None for an unknown rank)."""
    if hasattr(x, "_keras_shape"):
        return tuple(x._keras_shape)
    if isinstance(x, np.ndarray):
        return x.shape
    shape = TensorShape(x.shape)
    return None if shape.rank is None else tuple(shape.as_list())


def ndim(x):
    s = int_shape(x)
    return None if s is None else len(s)


def shape(x):
    return array_ops.shape(x)


def dtype(x):
    return x.dtype.base_dtype.name


def reshape(x, shape):
    return array_ops.reshape(x, shape)


def flatten(x):
    return array_ops.reshape(x, [-1])


def transpose(x):
    return array_ops.transpose(x)


def expand_dims(x, axis=-1):
    return array_ops.expand_dims(x, axis)


def squeeze(x, axis):
    return array_ops.squeeze(x, [axis])


def stack(x, axis=0):
    return array_ops.stack(x, axis=axis)


def concatenate(tensors, axis=-1):
    if axis < 0:
        rank = ndim(tensors[0])
        axis = axis % rank if rank else 0
    return array_ops.concat(list(tensors), axis)


def gather(reference, indices):
    return array_ops.gather(reference, indices)


def one_hot(indices, num_classes):
    return array_ops.one_hot(indices, depth=num_classes, axis=-1)


def batch_dot(x, y, axes=None):
    """Per-example dot products of ``x`` and ``y`` over ``axes`` (one axis each; default: ``x``'s last with ``y``'s
    second-to-last); ranks 2 and 3. Two vectors give ``[batch, 1]``."""
    x, y = ops.convert_to_tensor(x), ops.convert_to_tensor(y)
    xr, yr = x.shape.rank, y.shape.rank
    if isinstance(axes, int):
        axes = (axes, axes)
    if axes is None:
        axes = (xr - 1, yr - 2)
    a0, a1 = axes[0] % xr, axes[1] % yr
    if a0 == 0 or a1 == 0:
        raise ValueError(f"Cannot perform batch_dot over axis 0 (the batch). Received axes={axes}")
    if xr == 2 and yr == 2:
        return math_ops.reduce_sum(x * y, axis=1, keepdims=True)
    if xr == 3 and yr == 3:
        return math_ops.matmul(x, y, transpose_a=a0 == 1, transpose_b=a1 == 2)
    if xr == 3 and yr == 2:
        return array_ops.squeeze(math_ops.matmul(x, array_ops.expand_dims(y, -1), transpose_a=a0 == 1), [-1])
    if xr == 2 and yr == 3:
        return array_ops.squeeze(math_ops.matmul(array_ops.expand_dims(x, 1), y, transpose_b=a1 == 2), [1])
    raise NotImplementedError(f"batch_dot of inputs of ranks {xr} and {yr} is not supported by ferroflow")


def repeat_elements(x, rep, axis):
    """Each slice of ``x`` along ``axis`` repeated ``rep`` times (``[a, b]`` -> ``[a, a, b, b]``)."""
    x = ops.convert_to_tensor(x)
    rank = x.shape.rank
    axis = axis % rank
    expanded = array_ops.expand_dims(x, axis + 1)
    multiples = [1] * (rank + 1)
    multiples[axis + 1] = int(rep)
    tiled = array_ops.tile(expanded, multiples)
    shape = array_ops.shape(x)
    new_shape = array_ops.concat([shape[:axis], shape[axis:axis + 1] * int(rep), shape[axis + 1:]], 0)
    out = array_ops.reshape(tiled, new_shape)
    dims = x.shape.as_list()
    if dims[axis] is not None:
        dims[axis] *= int(rep)
    out.set_shape(dims)
    return out


def tile(x, n):
    return array_ops.tile(x, n)


def zeros(shape, dtype=None, name=None):
    return variable(np.zeros(shape), dtype=dtype, name=name)


def ones(shape, dtype=None, name=None):
    return variable(np.ones(shape), dtype=dtype, name=name)


def zeros_like(x, dtype=None, name=None):
    return array_ops.zeros_like(x, dtype=dtype, name=name)


def ones_like(x, dtype=None, name=None):
    return array_ops.ones_like(x, dtype=dtype, name=name)


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    return random_ops.random_uniform(shape, minval=minval, maxval=maxval, dtype=dtype or floatx(), seed=seed)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return random_ops.random_normal(shape, mean=mean, stddev=stddev, dtype=dtype or floatx(), seed=seed)


# -- math ----------------------------------------------------------------------------------------
def cast(x, dtype):
    return math_ops.cast(x, dtype)


def dot(x, y):
    """Matrix product; for higher ranks, the last axis of ``x`` with the second-to-last of ``y``."""
    xr, yr = ndim(x), ndim(y)
    if xr is not None and yr is not None and (xr > 2 or yr > 2):
        return math_ops.tensordot(x, y, [[xr - 1], [yr - 2 if yr >= 2 else 0]])
    return math_ops.matmul(x, y)


def _reduce(fn):
    def reduce(x, axis=None, keepdims=False):
        return fn(x, axis=axis, keepdims=keepdims)

    return reduce


sum = _reduce(math_ops.reduce_sum)  # noqa: A001 - Keras's name
mean = _reduce(math_ops.reduce_mean)
max = _reduce(math_ops.reduce_max)  # noqa: A001
min = _reduce(math_ops.reduce_min)  # noqa: A001


def var(x, axis=None, keepdims=False):
    m = math_ops.reduce_mean(x, axis=axis, keepdims=True)
    return math_ops.reduce_mean(math_ops.square(x - m), axis=axis, keepdims=keepdims)


def std(x, axis=None, keepdims=False):
    return math_ops.sqrt(var(x, axis=axis, keepdims=keepdims))


def argmax(x, axis=-1):
    return math_ops.argmax(x, axis)


def square(x):
    return math_ops.square(x)


def abs(x):  # noqa: A001
    return math_ops.abs(x)


def sqrt(x):
    zero = ops.convert_to_tensor(0.0, dtype=x.dtype.base_dtype)
    inf = ops.convert_to_tensor(np.inf, dtype=x.dtype.base_dtype)
    return math_ops.sqrt(clip_ops.clip_by_value(x, zero, inf))


def exp(x):
    return math_ops.exp(x)


def log(x):
    return math_ops.log(x)


def pow(x, a):  # noqa: A001
    return math_ops.pow(x, a)


def round(x):  # noqa: A001
    return math_ops.round(x)


def sign(x):
    return math_ops.sign(x)


def clip(x, min_value, max_value):
    if max_value is not None and min_value is not None and max_value < min_value:
        max_value = min_value
    return clip_ops.clip_by_value(x, min_value, max_value)


def maximum(x, y):
    return math_ops.maximum(x, y)


def minimum(x, y):
    return math_ops.minimum(x, y)


def equal(x, y):
    return math_ops.equal(x, y)


def not_equal(x, y):
    return math_ops.not_equal(x, y)


def greater(x, y):
    return math_ops.greater(x, y)


def less(x, y):
    return math_ops.less(x, y)


def switch(condition, then_expression, else_expression):
    from ferroflow.ops.cond import cond

    t = then_expression if callable(then_expression) else (lambda: then_expression)
    e = else_expression if callable(else_expression) else (lambda: else_expression)
    return cond(condition, t, e)


def l2_normalize(x, axis=None):
    return nn_ops.l2_normalize(x, axis=axis)


# -- activations and losses ------------------------------------------------------------------
def relu(x, alpha=0.0, max_value=None, threshold=0):
    """``max(x, 0)`` (``alpha * x`` below zero, capped at ``max_value`` when given)."""
    if alpha == 0 and max_value is None and threshold == 0:
        return nn_ops.relu(x)
    negative = nn_ops.relu(-x + threshold) if alpha != 0 else None
    if threshold != 0:
        x = x * math_ops.cast(math_ops.greater(x, threshold), x.dtype.base_dtype)
    else:
        x = nn_ops.relu(x)
    if max_value is not None:
        x = clip_ops.clip_by_value(x, 0.0, float(max_value))
    if negative is not None:
        x = x - alpha * negative
    return x


def elu(x, alpha=1.0):
    res = nn_ops.elu(x)
    if alpha == 1:
        return res
    return array_ops.where(math_ops.greater(x, 0.0), res, alpha * res)


def softmax(x, axis=-1):
    """Softmax along ``axis``; the result remembers its logits for ``categorical_crossentropy``."""
    out = nn_ops.softmax(x, axis=axis)
    set_tensor_meta(out, "logits", x)
    return out


def softplus(x):
    return nn_ops.softplus(x)


def sigmoid(x):
    out = math_ops.sigmoid(x)
    set_tensor_meta(out, "logits", x)
    return out


def hard_sigmoid(x):
    """``clip(0.2 * x + 0.5, 0, 1)``."""
    x = math_ops.add(math_ops.multiply(x, ops.convert_to_tensor(0.2, dtype=x.dtype.base_dtype)),
                     ops.convert_to_tensor(0.5, dtype=x.dtype.base_dtype))
    return clip_ops.clip_by_value(x, 0.0, 1.0)


def tanh(x):
    return math_ops.tanh(x)


def _logits_of(output, op_type):
    logits = tensor_meta(output, "logits")
    if logits is not None:
        return logits
    if isinstance(output, ops.Tensor) and output.op.type == op_type:
        return output.op.inputs[0]
    return None


def _eps(output):
    return ops.convert_to_tensor(epsilon(), dtype=output.dtype.base_dtype)


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy of one-hot ``target`` against probabilities (from a softmax's logits when it can)."""
    target = ops.convert_to_tensor(target)
    output = ops.convert_to_tensor(output)
    if not from_logits:
        logits = _logits_of(output, "Softmax")
        if logits is None:
            output = output / math_ops.reduce_sum(output, axis, keepdims=True)
            e = _eps(output)
            output = clip_ops.clip_by_value(output, e, 1.0 - e)
            return -math_ops.reduce_sum(target * math_ops.log(output), axis)
        output = logits
    return nn_ops.softmax_cross_entropy_with_logits_v2(labels=target, logits=output, axis=axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy of integer ``target`` classes against probabilities (or logits)."""
    output = ops.convert_to_tensor(output)
    if not from_logits:
        logits = _logits_of(output, "Softmax")
        if logits is None:
            e = _eps(output)
            output = math_ops.log(clip_ops.clip_by_value(output, e, 1.0 - e))
        else:
            output = logits
    rank = output.shape.rank
    if axis not in (-1, rank - 1):
        perm = [i for i in range(rank) if i != axis % rank] + [axis % rank]
        output = array_ops.transpose(output, perm)
    target = math_ops.cast(array_ops.reshape(target, [-1]), dtypes.int64)
    classes = output.shape.as_list()[-1]
    logits2d = array_ops.reshape(output, [-1, classes if classes is not None else -1])
    res = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=target, logits=logits2d)
    if rank is not None and rank >= 3:
        return array_ops.reshape(res, array_ops.shape(output)[:-1])
    return res


def binary_crossentropy(target, output, from_logits=False):
    """Element-wise binary cross-entropy (from a sigmoid's logits when it can)."""
    target = ops.convert_to_tensor(target)
    output = ops.convert_to_tensor(output)
    if not from_logits:
        logits = _logits_of(output, "Sigmoid")
        if logits is None:
            e = _eps(output)
            output = clip_ops.clip_by_value(output, e, 1.0 - e)
            bce = target * math_ops.log(output + e)
            bce = bce + (1.0 - target) * math_ops.log(1.0 - output + e)
            return -bce
        output = logits
    return nn_ops.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
