"""``tf.function`` in a TF1 graph: a Python function traced into graph functions, called by op.

TensorFlow 2.21 with ``disable_v2_behavior()`` behaves the same way: calling a
``tf.function`` while a graph is being built traces the Python function (once
per graph and input signature) into a function of that graph's library and
adds a ``PartitionedCall`` op (``StatefulPartitionedCall`` when the body has
stateful ops) whose outputs it returns; ``tf.gradients`` differentiates
through the call. A trace is chosen by

* each Tensor argument's dtype and shape (a trace whose shapes are less
  specific also serves: one made for ``[None, 3]`` takes a ``[2, 3]`` tensor),
  numpy arrays counting as tensors;
* each other argument by value (Python numbers, strings, ...; every new value
  traces again, as in TensorFlow), a ``tf.Variable`` by identity (the body
  uses the variable itself).

With ``input_signature`` (a list of ``tf.TensorSpec``) there is one trace per
graph, and arguments that do not fit raise TypeError. ``reduce_retracing``
(``experimental_relax_shapes``) makes a second shape for the same dtypes trace
once more with the dimensions that differ left unknown.

Differences from TensorFlow, all from there being no eager mode and no
AutoGraph here: ``autograph`` is accepted and has no effect, so Python
``if``/``while`` on a Tensor raises ``tf.errors.OperatorNotAllowedInGraphError``
(what TensorFlow raises with ``autograph=False``) -- use ``tf.cond`` and
``tf.while_loop``; ``jit_compile``/``experimental_compile`` and
``experimental_implements``/``experimental_attributes`` are accepted and not
acted on. Variables may be created on a graph's first trace only (TensorFlow's
rule): a function that makes a new ``tf.Variable`` on every call raises
ValueError, as TensorFlow does.
"""

from __future__ import annotations

import functools
import inspect
import types
import weakref

import numpy as np

from ferroflow.eager.concrete_function import trace
from ferroflow.framework import ops
from ferroflow.framework.type_spec import TensorSpec
from ferroflow.ops import _nest as nest

__all__ = ["Function", "function"]

_VARIABLES_ON_EVERY_CALL = (
    "tf.function only supports singleton tf.Variables created on the first call. Make sure the tf.Variable is "
    "only created once or created outside tf.function."
)


def _is_variable(x):
    from ferroflow.ops.variables import Variable

    return isinstance(x, Variable)


def _leaf_key(leaf):
    """What of an argument selects a trace: a TensorSpec for tensors, the value (or identity) otherwise."""
    if isinstance(leaf, ops.Tensor):
        return TensorSpec(leaf.shape, leaf.dtype)
    if isinstance(leaf, TensorSpec):
        return TensorSpec(leaf.shape, leaf.dtype)
    if isinstance(leaf, (np.ndarray, np.generic)):
        return TensorSpec(np.shape(leaf), leaf.dtype)
    if _is_variable(leaf):
        return ("variable", id(leaf))
    try:
        hash(leaf)
    except TypeError:
        return ("object", id(leaf))
    return ("value", type(leaf), leaf)


def _serves(traced, wanted):
    """Whether a trace for spec ``traced`` takes arguments of spec ``wanted`` (same dtype, ``traced``'s
    shape equal to or less specific than ``wanted``'s)."""
    if traced.dtype != wanted.dtype:
        return False
    ts, ws = traced.shape, wanted.shape
    if ts.rank is None:
        return True
    if ws.rank != ts.rank:
        return False
    return all(t is None or t == w for t, w in zip(ts.as_list(), ws.as_list()))


def _same_kind(a, b):
    if isinstance(a, TensorSpec) and isinstance(b, TensorSpec):
        return a.dtype == b.dtype and a.shape.rank == b.shape.rank
    return a == b


class Function:
    """A Python function that ``tf.function`` made: calling it adds a call of a traced graph function."""

    def __init__(self, python_function, name, input_signature=None, autograph=True, reduce_retracing=False,
                 jit_compile=None, experimental_implements=None, experimental_attributes=None):
        self._python_function = python_function
        self._name = name
        self._input_signature = None if input_signature is None else tuple(input_signature)
        if self._input_signature is not None:
            for spec in nest.flatten(list(self._input_signature)):
                if not isinstance(spec, TensorSpec):
                    raise TypeError(f"input_signature must be a possibly nested sequence of TensorSpec objects, "
                                    f"got {spec!r}")
        self._autograph = autograph
        self._reduce_retracing = bool(reduce_retracing)
        self._jit_compile = jit_compile
        self._implements = experimental_implements
        self._attributes = experimental_attributes
        try:
            self._signature = inspect.signature(python_function)
        except (TypeError, ValueError):
            self._signature = None
        self._traces = weakref.WeakKeyDictionary()  # graph -> [(keys, ConcreteFunction)]
        self._tracing_count = 0
        self._bound = weakref.WeakKeyDictionary()
        functools.update_wrapper(self, python_function)

    @property
    def python_function(self):
        """The Python function this wraps."""
        return self._python_function

    @property
    def input_signature(self):
        return self._input_signature

    def experimental_get_tracing_count(self):
        """How many times the Python function has been traced."""
        return self._tracing_count

    def __get__(self, instance, owner):
        """As a method: a Function of the bound method, one per instance (each with its own traces)."""
        if instance is None:
            return self
        try:
            bound = self._bound.get(instance)
        except TypeError:  # instances that take no weak reference get a fresh one each time
            bound = None
        if bound is None:
            bound = Function(types.MethodType(self._python_function, instance), self._name, self._input_signature,
                             self._autograph, self._reduce_retracing, self._jit_compile, self._implements,
                             self._attributes)
            try:
                self._bound[instance] = bound
            except TypeError:
                pass
        return bound

    def __call__(self, *args, **kwargs):
        concrete, leaves, keys = self._concrete(args, kwargs)
        tensors = [x if isinstance(x, ops.Tensor) else ops.convert_to_tensor(x, dtype=k.dtype)
                   for x, k in zip(leaves, keys) if isinstance(k, TensorSpec)]
        return concrete._call_flat(tensors)

    def get_concrete_function(self, *args, **kwargs):
        """The trace for these arguments (tensors or ``tf.TensorSpec``s) in the default graph, made if
        needed; with an ``input_signature``, no arguments are needed."""
        if self._input_signature is not None and not args and not kwargs:
            args = self._input_signature
        return self._concrete(args, kwargs)[0]

    # -- tracing ---------------------------------------------------------------
    def _bind(self, args, kwargs):
        if self._signature is None:
            return list(args), dict(kwargs), []
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self._name}: {e}") from None
        bound.apply_defaults()
        names = [p.name for p in self._signature.parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        return list(bound.args), dict(bound.kwargs), names

    def _apply_input_signature(self, args, kwargs):
        n = len(self._input_signature)
        if len(args) < n:
            raise TypeError(f"{self._name}: the input_signature has {n} entries, got {len(args)} positional "
                            "arguments")
        if len(args) > n or kwargs:
            raise TypeError(f"{self._name}: takes only the {n} arguments of its input_signature")
        out = []
        for i, (value, spec) in enumerate(zip(args, self._input_signature)):
            try:
                nest.assert_same_structure(spec, value, check_types=False)
            except (TypeError, ValueError) as e:
                raise TypeError(f"{self._name}: argument {i} does not match its input_signature entry: {e}") from None
            out.append(nest.map_structure(lambda v, s: _fit(v, s, self._name), value, spec))
        return out

    def _concrete(self, args, kwargs):
        graph = ops.get_default_graph()
        args, kwargs, names = self._bind(args, kwargs)
        if self._input_signature is not None:
            args = self._apply_input_signature(args, kwargs)
            kwargs = {}
        leaves = [leaf for a in args for leaf in nest.flatten(a)]
        leaves += [leaf for k in sorted(kwargs) for leaf in nest.flatten(kwargs[k])]
        keys = [_leaf_key(x) for x in leaves]
        structure = nest.map_structure(lambda _: 0, (args, kwargs))
        traces = self._traces.setdefault(graph, [])
        if self._input_signature is not None:
            concrete = traces[0][2] if traces else None
        else:
            concrete = self._lookup(traces, structure, keys)
        if concrete is None:
            specs = list(keys)
            if self._input_signature is not None:
                specs = nest.flatten(list(self._input_signature))
            elif self._reduce_retracing:
                specs = self._relaxed(traces, structure, keys)
            spec_iter = iter(specs)

            def as_spec(leaf):
                key = next(spec_iter)
                return key if isinstance(key, TensorSpec) else leaf

            trace_args = [nest.map_structure(as_spec, a) for a in args]
            trace_kwargs = {k: nest.map_structure(as_spec, kwargs[k]) for k in sorted(kwargs)}
            concrete = self._trace(graph, traces, trace_args, trace_kwargs, names)
            traces.append((structure, specs, concrete))
        return concrete, leaves, keys

    def _lookup(self, traces, structure, keys):
        exact = [c for s, k, c in traces if s == structure and k == keys]
        if exact:
            return exact[0]
        for s, traced, c in traces:
            if s != structure or len(traced) != len(keys):
                continue
            if all(_serves(t, w) if isinstance(t, TensorSpec) and isinstance(w, TensorSpec) else t == w
                   for t, w in zip(traced, keys)):
                return c
        return None

    def _relaxed(self, traces, structure, keys):
        for s, traced, _ in traces:
            if s == structure and len(traced) == len(keys) and all(_same_kind(t, w) for t, w in zip(traced, keys)):
                return [TensorSpec(t.shape.most_specific_compatible_shape(w.shape), w.dtype)
                        if isinstance(w, TensorSpec) else w for t, w in zip(traced, keys)]
        return keys

    def _trace(self, graph, traces, args, kwargs, names):
        self._tracing_count += 1
        concrete = trace(self._python_function, args, kwargs, self._name, names)
        if concrete.variables:
            if traces:
                _forget(concrete.variables)
                raise ValueError(_VARIABLES_ON_EVERY_CALL)
            # As TensorFlow: trace once more to check the function does not make variables on every call.
            self._tracing_count += 1
            again = trace(self._python_function, args, kwargs, self._name, names)
            if again.variables:
                _forget(concrete.variables + again.variables)
                raise ValueError(_VARIABLES_ON_EVERY_CALL)
            again.variables = concrete.variables
            again.trainable_variables = concrete.trainable_variables
            concrete = again
        return concrete


def _forget(variables):
    """Takes variables a failed trace made out of the graph's variable collections (their ops stay, unused)."""
    for v in variables:
        graph = v.graph
        for key in (ops.GraphKeys.GLOBAL_VARIABLES, ops.GraphKeys.LOCAL_VARIABLES, ops.GraphKeys.TRAINABLE_VARIABLES):
            members = graph.get_collection_ref(key)
            if v in members:
                members.remove(v)


def _fit(value, spec, fname):
    """``value`` as a tensor fitting ``spec`` (TypeError as TensorFlow's binding error otherwise); a
    TensorSpec (``get_concrete_function``) stays one."""
    if isinstance(value, TensorSpec):
        if value.dtype != spec.dtype or not spec.shape.is_compatible_with(value.shape):
            raise TypeError(f"Binding inputs to tf.function {fname} failed due to `Can not cast "
                            f"{TensorSpec(value.shape, value.dtype)} to {TensorSpec(spec.shape, spec.dtype)}`.")
        return value
    if _is_variable(value):
        value = value._as_tensor()
    tensor = value if isinstance(value, ops.Tensor) else ops.convert_to_tensor(value, dtype=spec.dtype)
    if tensor.dtype.base_dtype != spec.dtype or not spec.shape.is_compatible_with(tensor.shape):
        raise TypeError(f"Binding inputs to tf.function {fname} failed due to `Can not cast "
                        f"{TensorSpec(tensor.shape, tensor.dtype)} to {TensorSpec(spec.shape, spec.dtype)}`.")
    return tensor


def function(func=None, input_signature=None, autograph=True, jit_compile=None, reduce_retracing=False,
             experimental_implements=None, experimental_autograph_options=None, experimental_attributes=None,
             experimental_relax_shapes=None, experimental_compile=None, experimental_follow_type_hints=None):
    """Makes ``func`` a ``Function``: calling it in a graph adds a call of its trace (see the module
    docstring). As a decorator with arguments, ``@tf.function(input_signature=[...])``."""
    del experimental_autograph_options, experimental_follow_type_hints
    if experimental_relax_shapes is not None:
        reduce_retracing = reduce_retracing or experimental_relax_shapes
    if experimental_compile is not None:
        jit_compile = experimental_compile

    def decorate(fn):
        if not callable(fn):
            raise TypeError(f"tf.function expects a callable, got {fn!r}")
        name = getattr(fn, "__name__", None) or type(fn).__name__
        return Function(fn, name, input_signature, autograph, reduce_retracing, jit_compile,
                        experimental_implements, experimental_attributes)

    return decorate if func is None else decorate(func)
