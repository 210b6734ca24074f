"""Gradient functions written in Python: ``tf.RegisterGradient``, ``tf.NotDifferentiable``.

The built-in ops' gradients live in the Rust core (``crates/autodiff``).
A Python gradient is registered here under a name: an op type the core has
no gradient for (a ``py_func``'s ``PyFunc``, a user's op), or a name that
``Graph.gradient_override_map`` gives individual nodes (TF's
``_gradient_op_type`` attr). ``tf.gradients`` stops at such ops and calls
the function ``(op, *output_grads) -> input grads``, as TensorFlow does.
"""

from __future__ import annotations

import traceback

from ferroflow import _native

# name -> gradient function, or None for "no gradient" (NotDifferentiable).
_GRADIENTS: dict = {}
# name -> where it was registered, for the duplicate-registration message.
_LOCATIONS: dict = {}


def _core_has_gradient(name):
    return _native.has_gradient(name)


def _register(name, fn):
    if not isinstance(name, str):
        raise TypeError("op_type must be a string")
    if name in _GRADIENTS or _core_has_gradient(name):
        where = _LOCATIONS.get(name, "ferroflow's built-in gradients")
        raise KeyError(f"Registering two gradient with name '{name}'! (Previous registration was in {where})")
    _GRADIENTS[name] = fn
    caller = traceback.extract_stack(limit=4)[0]
    _LOCATIONS[name] = f"{caller.name} {caller.filename}:{caller.lineno}"


class RegisterGradient:
    """Decorator registering a Python gradient function under ``op_type``.

    The function takes the forward ``Operation`` and one gradient per output
    (zeros where nothing flowed back) and returns one gradient per input
    (a Tensor, an IndexedSlices, or None).
    """

    def __init__(self, op_type):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, f):
        _register(self._op_type, f)
        return f


def no_gradient(op_type):
    """Declares that ops of ``op_type`` (or nodes overridden to it) pass no gradient to their inputs."""
    _register(op_type, None)


NotDifferentiable = no_gradient
NoGradient = no_gradient


def python_gradient_names():
    """The names whose gradients Python computes (for the core's gradient run)."""
    return list(_GRADIENTS)


def get_gradient_function(name):
    """The registered Python gradient of ``name`` (None for NotDifferentiable); KeyError if none."""
    return _GRADIENTS[name]
