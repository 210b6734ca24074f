"""``tf.py_func``, ``tf.numpy_function`` and ``tf.py_function``: Python functions as graph ops.

Each call registers the function under a token (``pyfunc_<n>``, TF's
naming) and adds a ``PyFunc`` / ``PyFuncStateless`` / ``EagerPyFunc`` node
naming it. The node's kernel (Rust, ``crates/python/src/py_func.rs``) takes
the GIL only to call ``_call`` below, which hands the function NumPy values
and checks what it returns against ``Tout`` with TensorFlow's messages.
Functions are forgotten when their graph is.
"""

from __future__ import annotations

import itertools
import weakref

import numpy as np

from ferroflow.framework import dtypes, ops, tensor_util
from ferroflow.ops._op_util import make_op

_FUNCS: dict = {}
_TOKENS = itertools.count()

# TensorFlow's DataTypeString names where they differ from ferroflow's dtype names.
_TF_TYPE_NAMES = {"float32": "float", "float64": "double", "float16": "half"}

# Set by ferroflow.client.session: runs graph tensors a py_function's function
# built (TF runs them eagerly) and returns their values.
_evaluate_tensors = None


def _forget(tokens):
    for t in tokens:
        _FUNCS.pop(t, None)


def _register(func, graph):
    token = f"pyfunc_{next(_TOKENS)}"
    _FUNCS[token] = func
    # A function body's graph (a Dataset.map function, a defun) is dropped once traced: the callback lives as
    # long as the outermost graph that runs it, as in TensorFlow.
    while getattr(graph, "outer_graph", None) is not None:
        graph = graph.outer_graph
    tokens = graph.__dict__.get("_py_func_tokens")
    if tokens is None:
        tokens = graph._py_func_tokens = []
        weakref.finalize(graph, _forget, tokens)
    tokens.append(token)
    return token


class EagerArray(np.ndarray):
    """What a ``py_function``'s function receives: a NumPy array that also has EagerTensor's ``numpy()``."""

    def numpy(self):
        value = np.asarray(self)
        if value.ndim == 0:
            return value[()]
        return value


def _as_argument(value, eager):
    """A tensor's value as TF hands it to the function: arrays, NumPy scalars, bytes for scalar strings."""
    arr = np.asarray(value)
    if eager:
        return arr.view(EagerArray)
    if arr.ndim == 0:
        return arr[()]
    return arr


def _type_name(np_dtype):
    name = dtypes.as_dtype(np_dtype).name
    return _TF_TYPE_NAMES.get(name, name)


def _as_bytes(x):
    return x.encode("utf-8") if isinstance(x, str) else bytes(x)


def _string_result(value):
    arr = np.asarray(value, dtype=object)
    if arr.ndim == 0:
        return np.asarray(_as_bytes(arr[()]), dtype=object)
    return np.vectorize(_as_bytes, otypes=[object])(arr) if arr.size else arr


def _numpy_result(value, dtype, token, i):
    """py_func's rule: the value's own dtype must be the declared one (no casting)."""
    if dtype == dtypes.string:
        return _string_result(value)
    arr = np.asarray(value)
    if arr.dtype.kind in "SUO":
        raise ValueError(f"{i}-th value returned by {token} is string, but expects {_type_name(dtype.as_numpy_dtype)}")
    if arr.dtype != dtype.as_numpy_dtype:
        raise ValueError(f"{i}-th value returned by {token} is {_type_name(arr.dtype)}, but expects "
                         f"{_type_name(dtype.as_numpy_dtype)}")
    return arr


def _eager_result(value, dtype):
    """py_function's rule: converted to the declared dtype when no precision kind is lost."""
    if dtype == dtypes.string:
        return _string_result(value)
    arr = np.asarray(value)
    target = np.dtype(dtype.as_numpy_dtype)
    if arr.dtype != target and not np.can_cast(arr.dtype, target, "same_kind"):
        raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtype.name}")
    return arr.astype(target, copy=False)


def _call(token, args, eager):
    """Called by the kernel: runs the function registered as ``token``; returns its converted results."""
    func = _FUNCS.get(token)
    if func is None:
        raise ValueError(f"callback {token} is not found")
    tout = func._ferroflow_tout
    args = [_as_argument(a, eager) for a in args]
    if eager:
        # TF runs a py_function's tf ops eagerly: here they go into a scratch graph, run at once.
        with ops.Graph().as_default():
            result = _evaluate_graph_tensors(func(*args))
    else:
        result = func(*args)
    if result is None:
        values = []
    elif isinstance(result, (list, tuple)):
        values = list(result)
    else:
        values = [result]
    if len(values) != len(tout):
        return values  # the kernel reports the count mismatch with TF's message
    if eager:
        arrays = [_eager_result(v, d) for v, d in zip(values, tout)]
    else:
        arrays = [_numpy_result(v, d, token, i) for i, (v, d) in enumerate(zip(values, tout))]
    return [tensor_util.to_native(a, d) for a, d in zip(arrays, tout)]


def _evaluate_graph_tensors(result):
    """Tensors a py_function's function built with tf ops (TF would have run them eagerly), evaluated."""
    flat = result if isinstance(result, (list, tuple)) else [result]
    if _evaluate_tensors is None or not any(isinstance(v, ops.Tensor) for v in flat):
        return result
    values = _evaluate_tensors([ops.convert_to_tensor(v) for v in flat])
    return values if isinstance(result, (list, tuple)) else values[0]


class _Bound:
    """The user's function with its declared output types (what ``_call`` checks)."""

    def __init__(self, func, tout):
        self._func = func
        self._ferroflow_tout = tout

    def __call__(self, *args):
        return self._func(*args)


def _py_func_op(op_type, func, inp, Tout, name):
    if not callable(func):
        raise TypeError(f"Expected func to be callable, got func of type {type(func).__name__}")
    single = not isinstance(Tout, (list, tuple))
    tout = [dtypes.as_dtype(Tout)] if single else [dtypes.as_dtype(t) for t in Tout]
    inputs = [ops.convert_to_tensor(x) for x in (inp or [])]
    graph = ops._get_graph_from_inputs(inputs)
    token = _register(_Bound(func, tout), graph)
    attrs = {
        "token": token,
        "Tin": ("list_type", [t.dtype.base_dtype.as_datatype_enum for t in inputs]),
        "Tout": ("list_type", [d.as_datatype_enum for d in tout]),
    }
    if op_type == "EagerPyFunc":
        attrs["is_async"] = False
    with graph.as_default():
        op = make_op(op_type, inputs, attrs, name=name or op_type)
    if single:
        return op.outputs[0]
    return op.outputs if tout else op


def py_func(func, inp, Tout, stateful=True, name=None):  # noqa: N803  (TF's argument name)
    """An op running ``func`` on NumPy values of ``inp``; its outputs have the dtypes ``Tout``.

    ``func`` gets one argument per input (an array, a NumPy scalar, or bytes
    for a scalar string) and returns one value per ``Tout`` entry (a single
    value when ``Tout`` is one dtype), each of exactly that dtype. The
    outputs' shapes are unknown. ``stateful=False`` lets the graph treat the
    op as a pure function. It has no gradient.
    """
    return _py_func_op("PyFunc" if stateful else "PyFuncStateless", func, inp, Tout, name)


def numpy_function(func=None, inp=None, Tout=None, stateful=True, name=None):  # noqa: N803
    """``py_func`` under its TF 2 name."""
    return py_func(func, inp, Tout, stateful=stateful, name=name)


def py_function(func=None, inp=None, Tout=None, name=None):  # noqa: N803
    """An op running ``func`` on ``inp`` as EagerTensor-like arrays (``.numpy()`` works).

    Results are converted to ``Tout`` where no kind of precision is lost
    (``2.0`` to float32, not to int32). Tensors the function builds with
    ferroflow ops are evaluated before they are returned, as TF's eager
    execution would. Unlike TF's, it has no gradient.
    """
    return _py_func_op("EagerPyFunc", func, inp, Tout, name)
