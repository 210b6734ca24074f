"""``tf.Module`` as a TensorFlow 1 graph-mode program sees it (TensorFlow's ``python/module/module.py``).

A module is a named container for variables, other modules and the functions that
use them. Its name scope is chosen once, when it is built: ``Dense()`` built twice
in one graph gets ``dense/`` and ``dense_1/``, nested under whatever name scope
was open, and every later ``with module.name_scope:`` (or method decorated with
``Module.with_name_scope``) re-enters that same absolute scope, so ops made by
two calls land in ``dense/add`` and ``dense/add_1``. Variables made inside are
ordinary graph variables (``tf.global_variables()``, initializers, savers);
``variables`` / ``trainable_variables`` / ``non_trainable_variables`` /
``submodules`` find what the module's attributes hold by walking them: the
module's own attributes in name order (into lists, tuples and dicts), then each
submodule's in turn, each object once.

A module is also an ``AutoTrackable``: ``tf.train.Checkpoint(model=module)``
saves what its attributes hold.
"""

from __future__ import annotations

import functools
import re

from ferroflow.framework import ops
from ferroflow.ops import variables
from ferroflow.training.tracking import AutoTrackable

__all__ = ["Module"]

_IDENTIFIER = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
# A capital that starts a new word: after a lower-case letter or digit, or before a
# lower-case letter (so "HTTPServer" -> "http_server", "MLP2Layer" -> "mlp2_layer").
_WORD_START = re.compile(r"((?<=[a-z0-9])[A-Z]|(?!^)[A-Z](?=[a-z]))")


def camel_to_snake(value):
    """``"MyModule"`` -> ``"my_module"``: the default name of a module of class ``value``."""
    return _WORD_START.sub(r"_\1", value).lower()


def valid_identifier(name):
    return bool(_IDENTIFIER.match(name))


class Module(AutoTrackable):
    """Base class of named containers of variables, submodules and the functions applying them.

    ``name`` defaults to the class name in snake case and must be a Python identifier.
    """

    # Attributes the walk skips (subclasses may add their own bookkeeping).
    _TF_MODULE_IGNORED_PROPERTIES = frozenset()

    def __init__(self, name=None):
        if name is None:
            name = camel_to_snake(type(self).__name__)
        elif not valid_identifier(name):
            raise ValueError(f"{name!r} is not a valid module name. Module names must be valid Python identifiers "
                             "(e.g. a valid class name).")
        self._name = name
        with ops.name_scope(name) as scope_name:
            self._scope_name = scope_name

    @property
    def name(self):
        """The name given to (or derived for) this module; ``name_scope.name`` adds the enclosing scopes."""
        return self._name

    @property
    def name_scope(self):
        """A fresh context manager re-entering this module's absolute name scope (``.name`` is that scope)."""
        return ops.name_scope(self._scope_name)

    @property
    def variables(self):
        """This module's variables (its attributes in name order), then its submodules' (breadth first)."""
        return tuple(self._flatten(predicate=_is_variable))

    @property
    def trainable_variables(self):
        """``variables`` that are trainable."""
        return tuple(self._flatten(predicate=_is_trainable_variable))

    @property
    def non_trainable_variables(self):
        """``variables`` that are not trainable."""
        return tuple(self._flatten(predicate=_is_non_trainable_variable))

    @property
    def submodules(self):
        """Every module reachable from this one's attributes (not this one), breadth first."""
        return tuple(self._flatten(predicate=_is_module))

    def _flatten(self, recursive=True, predicate=None, attribute_traversal_key=None, with_path=False,
                 expand_composites=False):
        """The leaves of this module's attributes (and, with ``recursive``, its submodules') that pass
        ``predicate``; with ``with_path``, ``(path, leaf)`` pairs, a leaf reachable twice yielded twice."""
        del expand_composites  # ferroflow's composite values are leaves here
        return _walk(self, recursive, predicate or (lambda _: True), attribute_traversal_key, with_path, (),
                     {id(self)}, [])

    @classmethod
    def with_name_scope(cls, method):
        """Decorator: ``method`` runs inside its module's ``name_scope``."""

        @functools.wraps(method)
        def method_with_name_scope(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)

        return method_with_name_scope


def _is_variable(obj):
    return isinstance(obj, variables.Variable)


def _is_trainable_variable(obj):
    return _is_variable(obj) and bool(getattr(obj, "trainable", False))


def _is_non_trainable_variable(obj):
    return _is_variable(obj) and not getattr(obj, "trainable", False)


def _is_module(obj):
    return isinstance(obj, Module)


def _leaves(value, path=()):
    """``(path, leaf)`` for a value held in lists, tuples and dicts (dict keys in sorted order)."""
    if isinstance(value, dict):
        try:
            keys = sorted(value)
        except TypeError:
            keys = list(value)
        for k in keys:
            yield from _leaves(value[k], path + (k,))
    elif isinstance(value, (list, tuple)) and not _is_variable(value):
        for i, item in enumerate(value):
            yield from _leaves(item, path + (i,))
    else:
        yield path, value


def _walk(module, recursive, predicate, traversal_key, with_path, module_path, seen, stack):
    # A module met again while walking its own attributes (a cycle) is not descended into twice.
    recursive = recursive and id(module) not in stack
    found_modules = []
    ignored = module._TF_MODULE_IGNORED_PROPERTIES
    attrs = vars(module)
    for key in sorted(attrs, key=traversal_key):
        if key in ignored:
            continue
        try:
            leaves = list(_leaves(attrs[key]))
        except Exception as cause:  # an attribute the walk cannot take apart
            raise ValueError(f"Error processing property {key!r} of {attrs[key]!r}") from cause
        for leaf_path, leaf in leaves:
            path = (key,) + leaf_path
            if not with_path:
                if id(leaf) in seen:
                    continue
                seen.add(id(leaf))
            if predicate(leaf):
                yield (module_path + path, leaf) if with_path else leaf
            if recursive and _is_module(leaf):
                found_modules.append((module_path + path, leaf))
    stack.append(id(module))
    for path, sub in found_modules:
        yield from _walk(sub, recursive, predicate, traversal_key, with_path, path, seen, stack)
    stack.pop()
