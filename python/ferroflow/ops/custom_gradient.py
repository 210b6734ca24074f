"""``tf.custom_gradient`` and ``tf.grad_pass_through``: functions with gradients of their own.

As TensorFlow does in graph mode: the function's results, its inputs and
the variables it reads pass through one ``IdentityN`` op whose gradient is
overridden (``gradient_override_map``) with a Python gradient registered
under a fresh name, which calls the user's gradient function.
"""

from __future__ import annotations

import functools
import inspect
import itertools

from ferroflow.framework import gradient_registry, ops
from ferroflow.ops import _nest as nest
from ferroflow.ops import array_ops, gradients_impl
from ferroflow.ops import variable_scope as vs
from ferroflow.ops._op_util import make_op

_NAMES = itertools.count()
_VARIABLE_OPS = ("VariableV2", "Variable", "VarHandleOp")


def _identity_n(tensors):
    op = make_op("IdentityN", tensors, {"T": ("list_type", [t.dtype.base_dtype.as_datatype_enum for t in tensors])},
                 name="IdentityN")
    return list(op.outputs)


def _variables_read(outputs, inputs):
    """The global variables ``outputs`` depend on without going through ``inputs`` (TF's rule), by name."""
    stop = {t.op._id for t in inputs}
    seen, stack, var_ops = set(), [t.op for t in outputs], set()
    while stack:
        op = stack.pop()
        if op._id in seen or op._id in stop:
            continue
        seen.add(op._id)
        if op.type in _VARIABLE_OPS:
            var_ops.add(op.name)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    found = [v for v in ops.get_collection(ops.GraphKeys.GLOBAL_VARIABLES) if v.op.name in var_ops]
    return sorted(found, key=lambda v: v.name)


def _accepts_variables(fn):
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True
    return "variables" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _graph_mode_call(f, args, kwargs):
    args = nest.map_structure(ops.convert_to_tensor, args)
    result, grad_fn = f(*args, **kwargs)
    flat_args = nest.flatten(args)
    flat_result = [ops.convert_to_tensor(r) for r in nest.flatten(result)]
    variables = _variables_read(flat_result, flat_args)
    if variables and not _accepts_variables(grad_fn):
        raise TypeError("If using @custom_gradient with a function that uses variables, then grad_fn must "
                        "accept a keyword argument 'variables'.")
    name = f"CustomGradient-{next(_NAMES)}"

    @gradient_registry.RegisterGradient(name)
    def _gradient(unused_op, *result_grads):
        result_grads = result_grads[: len(flat_result)]
        if variables:
            input_grads, variable_grads = grad_fn(*result_grads, variables=variables)
            if len(variable_grads) != len(variables):
                raise ValueError("Must return gradient for each variable from @custom_gradient grad_fn.")
        else:
            input_grads = grad_fn(*result_grads)
            variable_grads = []
        flat_grads = nest.flatten(input_grads)
        if len(flat_grads) != len(flat_args):
            raise ValueError(f"custom_gradient function expected to return {len(flat_args)} gradients, but "
                             f"returned {len(flat_grads)} instead.")
        return [None] * len(flat_result) + flat_grads + list(variable_grads)

    variable_values = [ops.convert_to_tensor(v) for v in variables]
    with ops.get_default_graph().gradient_override_map({"IdentityN": name}):
        passed = _identity_n(flat_result + flat_args + variable_values)
    return nest.pack_sequence_as(result, passed[: len(flat_result)])


def custom_gradient(f=None):
    """Decorator: ``f(*x)`` returns ``(y, grad_fn)`` and ``grad_fn(*dy)`` gives the gradients of ``x``.

    ``grad_fn`` returns one gradient per input of ``f`` (in the nesting of
    the inputs). When ``f`` reads variables (``tf.get_variable``), ``grad_fn``
    takes a ``variables`` keyword argument and returns
    ``(input_grads, variable_grads)``.
    """
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        return _graph_mode_call(f, args, kwargs)

    return decorated


def grad_pass_through(f):
    """``f`` with the identity as its gradient (a straight-through estimator): ``f(x)`` forward, ``dy`` back."""

    @custom_gradient
    def _pass_through(*args, **kwargs):
        def grad(*dys, variables=None):
            if variables is not None:  # the wrapped op's variables get no gradient
                return dys, [None] * len(variables)
            return dys

        return f(*args, **kwargs), grad

    return functools.wraps(f)(_pass_through)


def recompute_grad(f):
    """``f`` whose intermediate results are recomputed for the gradient instead of kept (saves memory).

    The gradient runs ``f`` again (reusing its variables through the
    variable scope it was first called in) and differentiates the copy.
    """

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        scope = vs.get_variable_scope()

        @custom_gradient
        def inner(*inputs):
            result = f(*inputs, **kwargs)

            def grad(*dresult, variables=None):
                with ops.control_dependencies(dresult), vs.variable_scope(scope, reuse=True):
                    again = f(*[array_ops.identity(x) for x in inputs], **kwargs)
                xs = list(inputs) + list(variables or [])
                grads = gradients_impl.gradients(nest.flatten(again), xs, grad_ys=list(dresult))
                n = len(inputs)
                return (grads[:n], grads[n:]) if variables else grads[:n]

            return result, grad

        return inner(*args)

    return wrapped
