"""``tf.make_template``: a function whose variables are created on the first call and shared after."""

from __future__ import annotations

import functools

from ferroflow.framework import ops
from ferroflow.ops import variable_scope as vs
from ferroflow.platform import tf_logging as logging


class Template:
    """Wraps ``func`` so every call runs in one variable scope, reusing the variables of the first call.

    Variables must come from ``tf.get_variable``: a trainable variable created
    by a later call (``tf.Variable`` inside ``func``) is a ValueError, as in
    TensorFlow.
    """

    def __init__(self, name, func, create_scope_now=False, unique_name=None, custom_getter=None,
                 create_graph_function=False):
        if name is None:
            raise ValueError("name cannot be None.")
        if create_graph_function:
            raise NotImplementedError("create_graph_function=True needs TF 2's eager functions; ferroflow "
                                      "builds graphs only")
        self._func = func
        self._name = name
        self._unique_name = unique_name
        self._custom_getter = custom_getter
        self._variables_created = False
        self._variable_scope = None
        if create_scope_now:
            scope_name = unique_name or vs._get_unique_variable_scope(name)
            with vs._pure_variable_scope(scope_name, custom_getter=custom_getter) as scope:
                self._variable_scope = scope

    def _call_func(self, args, kwargs):
        global_at_start = len(ops.get_collection(ops.GraphKeys.GLOBAL_VARIABLES))
        trainable_at_start = len(ops.get_collection(ops.GraphKeys.TRAINABLE_VARIABLES))
        result = self._func(*args, **kwargs)
        if not self._variables_created:
            self._variables_created = True
            return result
        trainable = ops.get_collection(ops.GraphKeys.TRAINABLE_VARIABLES)
        if len(trainable) != trainable_at_start:
            raise ValueError(
                "Trainable variable created when calling a template after the first time, perhaps you used "
                f"tf.Variable when you meant tf.get_variable: {trainable[trainable_at_start:]}"
            )
        created = ops.get_collection(ops.GraphKeys.GLOBAL_VARIABLES)[global_at_start:]
        if created:
            logging.info("New variables created when calling a template after the first time, perhaps you used "
                         "tf.Variable when you meant tf.get_variable: %s", created)
        return result

    def __call__(self, *args, **kwargs):
        if self._variable_scope is not None:
            with vs.variable_scope(self._variable_scope, reuse=self._variables_created):
                return self._call_func(args, kwargs)
        # The scope is made on the first call; later calls reuse it.
        with vs.variable_scope(self._unique_name, self._name, custom_getter=self._custom_getter) as scope:
            self._variable_scope = scope
            return self._call_func(args, kwargs)

    @property
    def name(self):
        """The name given to the template."""
        return self._name

    @property
    def func(self):
        """The wrapped function."""
        return self._func

    @property
    def variable_scope(self):
        """The template's VariableScope (None before the first call unless ``create_scope_now_``)."""
        return self._variable_scope

    @property
    def variable_scope_name(self):
        """The scope's full name (None before it exists)."""
        return None if self._variable_scope is None else self._variable_scope.name

    def _scoped(self, key):
        if self._variable_scope is None:
            return []
        return ops.get_collection(key, scope=self._variable_scope.name + "/")

    @property
    def variables(self):
        """The global variables under the template's scope."""
        return self._scoped(ops.GraphKeys.GLOBAL_VARIABLES)

    @property
    def global_variables(self):
        return self._scoped(ops.GraphKeys.GLOBAL_VARIABLES)

    @property
    def trainable_variables(self):
        return self._scoped(ops.GraphKeys.TRAINABLE_VARIABLES)

    @property
    def non_trainable_variables(self):
        trainable = {id(v) for v in self.trainable_variables}
        return [v for v in self.global_variables if id(v) not in trainable]

    @property
    def local_variables(self):
        return self._scoped(ops.GraphKeys.LOCAL_VARIABLES)

    @property
    def trainable_weights(self):
        return self.trainable_variables

    @property
    def non_trainable_weights(self):
        return self.non_trainable_variables

    @property
    def weights(self):
        return self.variables


def make_template(name_, func_, create_scope_now_=False, unique_name_=None, custom_getter_=None, **kwargs):
    """``func_`` wrapped so all its calls share the variables its first call creates (under ``name_``).

    Extra keyword arguments are bound to ``func_``. With ``create_scope_now_``
    the variable scope is fixed at this call instead of the first call.
    """
    if kwargs:
        func_ = functools.partial(func_, **kwargs)
    return Template(name_, func_, create_scope_now=create_scope_now_, unique_name=unique_name_,
                    custom_getter=custom_getter_)
