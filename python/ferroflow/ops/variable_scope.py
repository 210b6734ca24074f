"""``tf.variable_scope`` and ``tf.get_variable``: named, shareable variables.

Variable names depend only on the variable scope; op names also get the
(uniquified) name scope a variable scope opens. The store of variables and
the current scope live in the graph's collections, as in TensorFlow.
"""

from __future__ import annotations

import contextlib
import enum
import inspect
import traceback as _traceback

from ferroflow.framework import dtypes, ops
from ferroflow.framework.tensor_shape import as_shape, unknown_shape
from ferroflow.ops import init_ops, variables


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE

_VARSTORE_KEY = "__variable_store"
_VARSCOPESTORE_KEY = "__varscope"


class _VariableScopeStore:
    """The current scope and how often each scope name was opened (for default names)."""

    def __init__(self):
        self.current_scope = VariableScope(False)
        self.variable_scopes_count = {}

    def open_variable_scope(self, scope_name):
        self.variable_scopes_count[scope_name] = self.variable_scopes_count.get(scope_name, 0) + 1

    def close_variable_subscopes(self, scope_name):
        for k in list(self.variable_scopes_count):
            if scope_name is None or k.startswith(scope_name + "/"):
                self.variable_scopes_count[k] = 0

    def variable_scope_count(self, scope_name):
        return self.variable_scopes_count.get(scope_name, 0)


def _get_store(key, factory):
    coll = ops.get_collection_ref(key)
    if not coll:
        coll.append(factory())
    return coll[0]


def _get_default_variable_store():
    return _get_store(_VARSTORE_KEY, _VariableStore)


def get_variable_scope_store():
    return _get_store(_VARSCOPESTORE_KEY, _VariableScopeStore)


def get_variable_scope():
    """The current ``VariableScope``."""
    return get_variable_scope_store().current_scope


class VariableScope:
    """Defaults (initializer, regularizer, dtype, reuse) for variables created under a name."""

    def __init__(self, reuse, name="", initializer=None, regularizer=None, caching_device=None, partitioner=None,
                 custom_getter=None, name_scope="", dtype=dtypes.float32, use_resource=None, constraint=None):
        self._name = name
        self._initializer = initializer
        self._regularizer = regularizer
        self._reuse = reuse
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = dtypes.as_dtype(dtype)
        self._use_resource = use_resource
        self._constraint = constraint

    @property
    def name(self):
        return self._name

    @property
    def original_name_scope(self):
        return self._name_scope

    @property
    def reuse(self):
        return self._reuse

    @property
    def initializer(self):
        return self._initializer

    @property
    def dtype(self):
        return self._dtype

    @property
    def use_resource(self):
        return self._use_resource

    @property
    def regularizer(self):
        return self._regularizer

    @property
    def caching_device(self):
        return self._caching_device

    @property
    def partitioner(self):
        return self._partitioner

    @property
    def custom_getter(self):
        return self._custom_getter

    @property
    def constraint(self):
        return self._constraint

    def reuse_variables(self):
        """Makes later ``get_variable`` calls in this scope reuse existing variables."""
        self._reuse = True

    def set_initializer(self, initializer):
        self._initializer = initializer

    def set_dtype(self, dtype):
        self._dtype = dtypes.as_dtype(dtype)

    def set_use_resource(self, use_resource):
        self._use_resource = use_resource

    def set_regularizer(self, regularizer):
        self._regularizer = regularizer

    def set_caching_device(self, caching_device):
        self._caching_device = caching_device

    def set_partitioner(self, partitioner):
        self._partitioner = partitioner

    def set_custom_getter(self, custom_getter):
        self._custom_getter = custom_getter

    def get_collection(self, name):
        scope = self._name + "/" if self._name else ""
        return ops.get_collection(name, scope)

    def trainable_variables(self):
        return self.get_collection(ops.GraphKeys.TRAINABLE_VARIABLES)

    def global_variables(self):
        return self.get_collection(ops.GraphKeys.GLOBAL_VARIABLES)

    def local_variables(self):
        return self.get_collection(ops.GraphKeys.LOCAL_VARIABLES)

    def get_variable(self, var_store, name, shape=None, dtype=None, initializer=None, regularizer=None, reuse=None,
                     trainable=None, collections=None, caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, custom_getter=None, constraint=None,
                     synchronization=variables.VariableSynchronization.AUTO,
                     aggregation=variables.VariableAggregation.NONE):
        """Gets or creates ``<scope>/<name>`` with this scope's defaults."""
        if regularizer is None:
            regularizer = self._regularizer
        if caching_device is None:
            caching_device = self._caching_device
        if partitioner is None:
            partitioner = self._partitioner
        if custom_getter is None:
            custom_getter = self._custom_getter
        if constraint is None:
            constraint = self._constraint
        if reuse is None:
            reuse = self._reuse
        full_name = self._name + "/" + name if self._name else name
        # Variable names depend only on the variable scope: build outside any name scope.
        with ops.name_scope(None):
            if dtype is None:
                dtype = self._dtype
            if initializer is None:
                initializer = self._initializer
            return var_store.get_variable(
                full_name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer, reuse=reuse,
                trainable=trainable, collections=collections, caching_device=caching_device, partitioner=partitioner,
                validate_shape=validate_shape, use_resource=use_resource, custom_getter=custom_getter,
                constraint=constraint, synchronization=synchronization, aggregation=aggregation,
            )


class _VariableStore:
    """Variables created by ``get_variable``, by full name."""

    def __init__(self):
        self._vars = {}
        self._partitioned_vars = {}

    def get_variable(self, name, shape=None, dtype=dtypes.float32, initializer=None, regularizer=None, reuse=None,
                     trainable=None, collections=None, caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, custom_getter=None, constraint=None,
                     synchronization=variables.VariableSynchronization.AUTO,
                     aggregation=variables.VariableAggregation.NONE):
        dtype = dtypes.as_dtype(dtype)

        def true_getter(name, shape=None, dtype=dtypes.float32, initializer=None, regularizer=None, reuse=None,
                        trainable=None, collections=None, caching_device=None, partitioner=None,
                        validate_shape=True, use_resource=None, constraint=None,
                        synchronization=variables.VariableSynchronization.AUTO,
                        aggregation=variables.VariableAggregation.NONE, **kwargs):
            is_scalar = shape is not None and isinstance(shape, (list, tuple)) and not shape
            if partitioner is not None and not is_scalar:
                return self._get_partitioned_variable(
                    name, partitioner, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                    reuse=reuse, trainable=trainable, collections=collections, caching_device=caching_device,
                    validate_shape=validate_shape, constraint=constraint, synchronization=synchronization,
                )
            return self._get_single_variable(
                name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer, reuse=reuse,
                trainable=trainable, collections=collections, caching_device=caching_device,
                validate_shape=validate_shape, constraint=constraint, synchronization=synchronization,
                use_resource=use_resource,
            )

        kwargs = dict(shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer, reuse=reuse,
                      trainable=trainable, collections=collections, caching_device=caching_device,
                      partitioner=partitioner, validate_shape=validate_shape, use_resource=use_resource,
                      constraint=constraint, synchronization=synchronization, aggregation=aggregation)
        if custom_getter is not None:
            if not callable(custom_getter):
                raise ValueError(f"Passed a custom_getter which is not callable: {custom_getter}")
            return custom_getter(true_getter, name, **kwargs)
        return true_getter(name, **kwargs)

    def _get_partitioned_variable(self, name, partitioner, shape=None, dtype=dtypes.float32, initializer=None,
                                  regularizer=None, reuse=None, trainable=None, collections=None,
                                  caching_device=None, validate_shape=True, constraint=None,
                                  synchronization=variables.VariableSynchronization.AUTO):
        """Gets or creates the ``PartitionedVariable`` ``name`` (parts ``name/part_<i>``)."""
        from ferroflow.ops import partitioned_variables as pv

        if initializer is not None and not callable(initializer):
            raise ValueError(
                f"The initializer for partitioned variable {name} must be an initializer (callable), not a value; "
                "each part is initialized on its own."
            )
        dtype = dtypes.as_dtype(dtype)
        shape = as_shape(shape) if shape is not None else unknown_shape()
        if not shape.is_fully_defined():
            raise ValueError(
                f"Shape of a new partitioned variable ({name}) must be fully defined, but instead was {shape}."
            )
        if shape.ndims < 1:
            raise ValueError(f"A partitioned Variable must have rank at least 1, shape: {shape}")
        partitions = pv._check_partitions(name, shape, partitioner(shape=shape, dtype=dtype.base_dtype))
        if name in self._partitioned_vars:
            if reuse is False or reuse is None:
                raise ValueError(
                    f"Partitioned variable with name {name} already exists. Did you mean to set reuse=True or "
                    "reuse=tf.AUTO_REUSE in VarScope?"
                )
            found = self._partitioned_vars[name]
            if not shape.is_compatible_with(found.get_shape()):
                raise ValueError(
                    f"Trying to reuse partitioned variable {name}, but specified shape {shape} and found shape "
                    f"{found.get_shape()}."
                )
            if not dtype.is_compatible_with(found.dtype):
                raise ValueError(
                    f"Trying to reuse partitioned variable {name}, but specified dtype {dtype.name} and found dtype "
                    f"{found.dtype.name}."
                )
            if partitions != found._get_partitions():
                raise ValueError(
                    f"Trying to reuse partitioned variable {name}, but specified partitions {partitions} and found "
                    f"partitions {found._get_partitions()}."
                )
            return found
        if reuse is True:
            raise ValueError(
                f"PartitionedVariable {name} does not exist, or was not created with tf.get_variable(). Did you mean "
                "to set reuse=False or reuse=tf.AUTO_REUSE in VarScope?"
            )
        if name in self._vars:
            raise ValueError(
                f"A partitioner was provided, but an unpartitioned version of the variable was found: {name}. "
                "Perhaps a variable of the same name was already created without partitioning?"
            )
        if f"{name}/part_0" in self._vars:
            raise ValueError(
                f"A partitioner was provided, but some existing slices of {name} were found ({name}/part_0); "
                "they were not created as one partitioned variable."
            )

        def make_part(part_name, part_shape, info):
            return self._get_single_variable(
                part_name, shape=part_shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                partition_info=info, reuse=False, trainable=trainable, collections=collections,
                caching_device=caching_device, validate_shape=validate_shape, constraint=constraint,
                synchronization=synchronization,
            )

        result = pv._create_partitioned(name, shape, dtype.base_dtype, partitions, make_part)
        self._partitioned_vars[name] = result
        return result

    def _get_single_variable(self, name, shape=None, dtype=dtypes.float32, initializer=None, regularizer=None,
                             partition_info=None, reuse=None, trainable=None, collections=None, caching_device=None,
                             validate_shape=True, constraint=None, synchronization=variables.VariableSynchronization.AUTO,
                             use_resource=None):
        from_value = initializer is not None and not callable(initializer)
        if shape is not None and from_value:
            raise ValueError("If initializer is a constant, do not specify shape.")
        dtype = dtypes.as_dtype(dtype)
        shape = unknown_shape() if shape is None else as_shape(shape)
        if name in self._vars:
            if reuse is False or reuse is None:
                message = (f"Variable {name} already exists, disallowed. Did you mean to set reuse=True or "
                           "reuse=tf.AUTO_REUSE in VarScope?")
                op = getattr(self._vars[name], "op", None)
                if op is not None:
                    # As TensorFlow: where the first one was made, innermost five of the user's frames first,
                    # without their source lines.
                    frames = [(f, line, fn, "") for f, line, fn in op._creation_frames()[::-1][:5]]
                    message += " Originally defined at:\n\n" + "".join(_traceback.format_list(frames))
                raise ValueError(message)
            found = self._vars[name]
            if not shape.is_compatible_with(found.get_shape()):
                raise ValueError(
                    f"Trying to share variable {name}, but specified shape {shape} and found shape {found.get_shape()}."
                )
            if not dtype.is_compatible_with(found.dtype):
                raise ValueError(
                    f"Trying to share variable {name}, but specified dtype {dtype.name} and found dtype {found.dtype.name}."
                )
            return found
        if reuse is True:
            raise ValueError(
                f"Variable {name} does not exist, or was not created with tf.get_variable(). Did you mean to set "
                "reuse=tf.AUTO_REUSE in VarScope?"
            )
        if initializer is None:
            initializer = _default_initializer(name, dtype)
            from_value = False
        with ops.init_scope():
            if from_value:
                init_val = initializer
                variable_dtype = None
            else:
                if inspect.isclass(initializer):
                    initializer = initializer()
                if shape.is_fully_defined():
                    dims = shape.as_list()
                    accepts_partition = _accepts(initializer, "partition_info")

                    def init_val():
                        if accepts_partition:
                            return initializer(dims, dtype=dtype, partition_info=partition_info)
                        return initializer(dims, dtype=dtype)

                    variable_dtype = dtype.base_dtype
                elif _takes_no_arguments(initializer):
                    init_val = initializer
                    variable_dtype = None
                else:
                    raise ValueError(
                        f"The initializer passed is not valid for variable {name}: shape {shape} is not fully "
                        "defined, so the initializer must take no arguments."
                    )
        v = variables.Variable(
            initial_value=init_val, name=name, trainable=trainable, collections=collections,
            caching_device=caching_device, dtype=variable_dtype, validate_shape=validate_shape,
            constraint=constraint, synchronization=synchronization, use_resource=use_resource,
        )
        self._vars[name] = v
        if regularizer:
            # TensorFlow first calls the regularizer where the variable was asked for, only to see whether it
            # returns None (the ops it makes stay in the graph: "mul", "mul_1", ...), then again under
            # "<name>/Regularizer/" for the loss it collects; names made later depend on that first call.
            if regularizer(v) is not None:
                with ops.name_scope(name + "/Regularizer/"):
                    loss = regularizer(v)
                ops.add_to_collection(ops.GraphKeys.REGULARIZATION_LOSSES, loss)
        return v


def _accepts(fn, arg):
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return arg in params or any(p.kind == p.VAR_KEYWORD for p in params.values())


def _takes_no_arguments(fn):
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)


def _default_initializer(name, dtype):
    if dtype.is_floating:
        return init_ops.glorot_uniform_initializer()
    if dtype.is_integer or dtype.is_bool or dtype == dtypes.string:
        return init_ops.zeros_initializer()
    raise ValueError(f"An initializer for variable {name} of {dtype.base_dtype} is required")


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=None, collections=None,
                 caching_device=None, partitioner=None, validate_shape=True, use_resource=None, custom_getter=None,
                 constraint=None, synchronization=variables.VariableSynchronization.AUTO,
                 aggregation=variables.VariableAggregation.NONE):
    """Gets an existing variable ``<current scope>/<name>`` or creates a new one."""
    return get_variable_scope().get_variable(
        _get_default_variable_store(), name, shape=shape, dtype=dtype, initializer=initializer,
        regularizer=regularizer, trainable=trainable, collections=collections, caching_device=caching_device,
        partitioner=partitioner, validate_shape=validate_shape, use_resource=use_resource,
        custom_getter=custom_getter, constraint=constraint, synchronization=synchronization,
        aggregation=aggregation,
    )


def get_local_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=False,
                       collections=None, caching_device=None, partitioner=None, validate_shape=True,
                       use_resource=None, custom_getter=None, constraint=None,
                       synchronization=variables.VariableSynchronization.AUTO,
                       aggregation=variables.VariableAggregation.NONE):
    """Like ``get_variable`` but in LOCAL_VARIABLES and not trainable."""
    collections = [ops.GraphKeys.LOCAL_VARIABLES] + list(collections or [])
    return get_variable(name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                        trainable=False, collections=collections, caching_device=caching_device,
                        partitioner=partitioner, validate_shape=validate_shape, use_resource=use_resource,
                        custom_getter=custom_getter, constraint=constraint, synchronization=synchronization,
                        aggregation=aggregation)


def no_regularizer(_):
    """Use as ``regularizer=tf.no_regularizer`` to turn off a scope's default regularizer."""
    return None


def _get_unique_variable_scope(prefix):
    store = get_variable_scope_store()
    current = get_variable_scope()
    name = current.name + "/" + prefix if current.name else prefix
    if store.variable_scope_count(name) == 0:
        return prefix
    idx = 1
    while store.variable_scope_count(f"{name}_{idx}") > 0:
        idx += 1
    return f"{prefix}_{idx}"


class _pure_variable_scope:  # noqa: N801
    """Enters a variable scope without touching name scopes."""

    def __init__(self, name_or_scope, reuse=None, initializer=None, regularizer=None, caching_device=None,
                 partitioner=None, custom_getter=None, old_name_scope=None, dtype=dtypes.float32,
                 use_resource=None, constraint=None):
        self._name_or_scope = name_or_scope
        self._reuse = reuse
        self._overrides = dict(initializer=initializer, regularizer=regularizer, caching_device=caching_device,
                               partitioner=partitioner, custom_getter=custom_getter, dtype=dtype,
                               use_resource=use_resource, constraint=constraint)
        self._old_name_scope = old_name_scope
        self._store = get_variable_scope_store()
        self._old = None

    def __enter__(self):
        store = self._store
        self._old = store.current_scope
        old = self._old
        o = self._overrides
        if isinstance(self._name_or_scope, VariableScope):
            src = self._name_or_scope
            new_name = src.name
            reuse = src.reuse if not self._reuse else self._reuse
            name_scope = src.original_name_scope if self._old_name_scope is None else self._old_name_scope
            scope = VariableScope(reuse, name=new_name, initializer=src.initializer, regularizer=src.regularizer,
                                  caching_device=src.caching_device, partitioner=src.partitioner,
                                  custom_getter=src.custom_getter, name_scope=name_scope, dtype=src.dtype,
                                  use_resource=src.use_resource, constraint=src.constraint)
        else:
            new_name = old.name + "/" + self._name_or_scope if old.name else self._name_or_scope
            reuse = self._reuse or old.reuse
            name_scope = self._name_or_scope if self._old_name_scope is None else self._old_name_scope
            scope = VariableScope(reuse, name=new_name, initializer=old.initializer, regularizer=old.regularizer,
                                  caching_device=old.caching_device, partitioner=old.partitioner,
                                  custom_getter=old.custom_getter, name_scope=name_scope, dtype=old.dtype,
                                  use_resource=old.use_resource, constraint=old.constraint)
        if o["initializer"] is not None:
            scope.set_initializer(o["initializer"])
        if o["regularizer"] is not None:
            scope.set_regularizer(o["regularizer"])
        if o["caching_device"] is not None:
            scope.set_caching_device(o["caching_device"])
        if o["partitioner"] is not None:
            scope.set_partitioner(o["partitioner"])
        if o["custom_getter"] is not None:
            scope.set_custom_getter(_maybe_wrap_custom_getter(o["custom_getter"], scope.custom_getter))
        if o["dtype"] is not None and o["dtype"] != dtypes.float32:
            scope.set_dtype(o["dtype"])
        if o["use_resource"] is not None:
            scope.set_use_resource(o["use_resource"])
        if o["constraint"] is not None:
            scope._constraint = o["constraint"]
        store.open_variable_scope(new_name)
        store.close_variable_subscopes(new_name)
        store.current_scope = scope
        return scope

    def __exit__(self, *exc):
        self._store.current_scope = self._old
        return False


def _maybe_wrap_custom_getter(custom_getter, old_getter):
    if old_getter is None:
        return custom_getter

    def wrapped(getter, *args, **kwargs):
        return custom_getter(lambda *a, **k: old_getter(getter, *a, **k), *args, **kwargs)

    return wrapped


class variable_scope:  # noqa: N801 - TensorFlow's name
    """``with tf.variable_scope("layer", reuse=...):`` names variables and sets their defaults."""

    def __init__(self, name_or_scope, default_name=None, values=None, initializer=None, regularizer=None,
                 caching_device=None, partitioner=None, custom_getter=None, reuse=None, dtype=None,
                 use_resource=None, constraint=None, auxiliary_name_scope=True):
        if default_name is None and name_or_scope is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        if reuse is False:
            reuse = None
        if not (reuse is True or reuse is None or reuse is AUTO_REUSE):
            raise ValueError("The reuse parameter must be True or False or None.")
        if name_or_scope is not None and not isinstance(name_or_scope, (VariableScope, str)):
            raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
        self._name_or_scope = name_or_scope
        self._default_name = default_name
        self._values = values or []
        self._kwargs = dict(initializer=initializer, regularizer=regularizer, caching_device=caching_device,
                            partitioner=partitioner, custom_getter=custom_getter, dtype=dtype,
                            use_resource=use_resource, constraint=constraint)
        self._reuse = reuse
        self._auxiliary_name_scope = auxiliary_name_scope
        self._graph = ops._get_graph_from_inputs(self._values)
        self._stack = []

    def __enter__(self):
        graph_ctx = self._graph.as_default()
        graph_ctx.__enter__()
        self._stack.append(graph_ctx)
        try:
            return self._enter_scope()
        except BaseException:
            self.__exit__(None, None, None)
            raise

    def _enter_scope(self):
        kw = self._kwargs
        if self._name_or_scope is not None:
            if isinstance(self._name_or_scope, str):
                ns_name = self._name_or_scope
            else:
                ns_name = self._name_or_scope.name.split("/")[-1]
            old_name_scope = None
            if self._auxiliary_name_scope and (ns_name or ops.get_name_scope()):
                ns = ops.name_scope(ns_name)
                old_name_scope = ns.__enter__()
                self._stack.append(ns)
            elif not self._auxiliary_name_scope:
                if isinstance(self._name_or_scope, VariableScope):
                    old_name_scope = self._name_or_scope.original_name_scope
                else:
                    current = ops.get_name_scope()
                    old_name_scope = current + "/" if current else ""
            pure = _pure_variable_scope(self._name_or_scope, reuse=self._reuse, old_name_scope=old_name_scope, **kw)
        else:
            if self._reuse:
                raise ValueError("reuse=True cannot be used without a name_or_scope")
            old_name_scope = None
            if self._auxiliary_name_scope:
                ns = ops.name_scope(self._default_name)
                old_name_scope = ns.__enter__()
                self._stack.append(ns)
            else:
                current = ops.get_name_scope()
                old_name_scope = current + "/" if current else ""
            unique = _get_unique_variable_scope(self._default_name)
            pure = _pure_variable_scope(unique, reuse=None, old_name_scope=old_name_scope, **kw)
        scope = pure.__enter__()
        self._stack.append(pure)
        return scope

    def __exit__(self, *exc):
        while self._stack:
            self._stack.pop().__exit__(*exc)
        return False


def variable_op_scope(values, name_or_scope, default_name=None, initializer=None, regularizer=None,
                      caching_device=None, partitioner=None, custom_getter=None, reuse=None, dtype=None,
                      use_resource=None, constraint=None):
    return variable_scope(name_or_scope, default_name=default_name, values=values, initializer=initializer,
                          regularizer=regularizer, caching_device=caching_device, partitioner=partitioner,
                          custom_getter=custom_getter, reuse=reuse, dtype=dtype, use_resource=use_resource,
                          constraint=constraint)


@contextlib.contextmanager
def variable_creator_scope(variable_creator):
    """Within the scope, ``tf.Variable`` (and so ``tf.get_variable``) in the default graph calls
    ``variable_creator(next_creator, **kwargs)``, which may change the arguments, record or replace
    the variable, and usually returns ``next_creator(**kwargs)``. Scopes nest; the innermost
    creator runs first."""
    g = ops.get_default_graph()
    stack = g.__dict__.setdefault("_variable_creator_stack", [])
    stack.append(variable_creator)
    try:
        yield
    finally:
        stack.remove(variable_creator)
