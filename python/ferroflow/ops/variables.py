"""``tf.Variable`` (TF1 reference variables) and the variable collections."""

from __future__ import annotations

import enum
import functools
import inspect

from ferroflow.core.framework import variable_pb2
from ferroflow.framework import constant_op, dtypes, ops
from ferroflow.framework.tensor_shape import as_shape, unknown_shape
from ferroflow.ops import array_ops, control_flow_ops, data_flow_ops, segment_ops, state_ops


class VariableSynchronization(enum.Enum):
    """When a distributed variable's copies are synchronized (TensorFlow's enum and values)."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregation(enum.Enum):
    """How a distributed variable's updates are combined (TensorFlow's enum and values;
    ``ONLY_FIRST_TOWER`` is TF1's alias of ``ONLY_FIRST_REPLICA``)."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3
    ONLY_FIRST_TOWER = 3


class _VariableMeta(type):
    """Routes ``tf.Variable(...)`` through the creators of ``tf.variable_creator_scope`` (innermost
    first); each gets the next creator and every constructor argument as keywords."""

    def __call__(cls, *args, **kwargs):
        stack = getattr(ops.get_default_graph(), "_variable_creator_stack", None)
        if cls is not Variable or not stack:
            return super().__call__(*args, **kwargs)
        bound = inspect.signature(cls.__init__).bind(None, *args, **kwargs)
        bound.apply_defaults()
        params = {k: v for k, v in bound.arguments.items() if k != "self"}

        def create(**kw):
            return type.__call__(cls, **kw)

        for creator in stack:
            create = functools.partial(creator, create)
        return create(**params)


class Variable(metaclass=_VariableMeta):
    """A mutable tensor that lives in a session across ``run`` calls.

    Built as TensorFlow 1 builds it: a ``VariableV2`` op named ``name``, an
    ``Assign`` initializer (``name/Assign``) and a ``name/read`` snapshot.
    """

    def __init__(self, initial_value=None, trainable=None, collections=None, validate_shape=True,
                 caching_device=None, name=None, variable_def=None, dtype=None, expected_shape=None,
                 import_scope=None, constraint=None, use_resource=None,
                 synchronization=VariableSynchronization.AUTO, aggregation=VariableAggregation.NONE, shape=None):
        if variable_def is not None:
            if initial_value is not None:
                raise ValueError("variable_def and initial_value are mutually exclusive.")
            self._init_from_proto(variable_def, import_scope)
            return
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if trainable is None:
            trainable = synchronization != VariableSynchronization.ON_READ
        if collections is None:
            collections = [ops.GraphKeys.GLOBAL_VARIABLES]
        if not isinstance(collections, (list, tuple, set)):
            raise ValueError(f"collections argument to Variable constructor must be a list, tuple, or set. Got {collections!r}")
        collections = list(collections)
        if trainable and ops.GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(ops.GraphKeys.TRAINABLE_VARIABLES)
        self._trainable = bool(trainable)
        self._constraint = constraint
        self._save_slice_info = None
        self._caching_device = caching_device
        # Asked for as a resource variable: the same ops here, but TF's ResourceVariable reports its element type.
        self._is_resource = bool(use_resource)
        init_from_fn = callable(initial_value)
        dtype = None if dtype is None else dtypes.as_dtype(dtype)
        with ops.init_scope():
            with ops.name_scope(name, "Variable", [] if init_from_fn else [initial_value]) as scope:
                if init_from_fn:
                    with ops.name_scope("Initializer"), ops.device(None):
                        value = initial_value()
                        self._initial_value = ops.convert_to_tensor(value, name="initial_value", dtype=dtype)
                else:
                    self._initial_value = ops.convert_to_tensor(initial_value, name="initial_value", dtype=dtype)
                if shape is not None:
                    var_shape = as_shape(shape)
                elif validate_shape:
                    var_shape = self._initial_value.shape
                    if not var_shape.is_fully_defined():
                        raise ValueError(f"initial_value must have a shape specified: {self._initial_value}")
                else:
                    var_shape = unknown_shape()
                self._variable = state_ops.variable_op_v2(var_shape, self._initial_value.dtype.base_dtype, name=scope)
                self._initializer_op = state_ops.assign(
                    self._variable, self._initial_value, validate_shape=validate_shape, name="Assign"
                ).op
                if caching_device is not None:
                    with ops.device(caching_device):
                        self._snapshot = array_ops.identity(self._variable, name="read")
                else:
                    with ops.colocate_with(self._variable.op):
                        self._snapshot = array_ops.identity(self._variable, name="read")
        self._graph = self._variable.graph
        ops.get_default_graph().add_to_collections(collections, self)

    def _init_from_proto(self, variable_def, import_scope=None):
        """Wraps the ops a ``VariableDef`` names, already in the default graph
        (as ``import_meta_graph`` leaves them), under ``import_scope``."""
        from ferroflow.core.framework import variable_pb2

        if not isinstance(variable_def, variable_pb2.VariableDef):
            raise TypeError(f"variable_def must be a VariableDef protocol buffer, got {type(variable_def).__name__}")
        graph = ops.get_default_graph()

        def element(name):
            return graph.as_graph_element(ops.prepend_name_scope(name, import_scope))

        self._variable = element(variable_def.variable_name)
        self._initializer_op = element(variable_def.initializer_name)
        self._snapshot = element(variable_def.snapshot_name)
        self._initial_value = element(variable_def.initial_value_name) if variable_def.initial_value_name else None
        self._trainable = bool(variable_def.trainable)
        self._is_resource = bool(variable_def.is_resource)
        self._constraint = None
        self._caching_device = None
        self._save_slice_info = None
        if variable_def.HasField("save_slice_info_def"):
            self._save_slice_info = Variable.SaveSliceInfo(
                save_slice_info_def=variable_def.save_slice_info_def, import_scope=import_scope
            )
        self._graph = graph

    def to_proto(self, export_scope=None):
        """This variable as a ``VariableDef`` with names relative to
        ``export_scope`` (None if the variable lies outside it)."""
        if not ops.is_in_name_scope(self.name, export_scope):
            return None
        d = variable_pb2.VariableDef()
        d.variable_name = ops.strip_name_scope(self.name, export_scope)
        d.initializer_name = ops.strip_name_scope(self.initializer.name, export_scope)
        d.snapshot_name = ops.strip_name_scope(self.value().name, export_scope)
        if self._initial_value is not None:
            d.initial_value_name = ops.strip_name_scope(self._initial_value.name, export_scope)
        d.trainable = bool(self.trainable)
        d.is_resource = False
        info = self._get_save_slice_info()
        info_def = info.to_proto(export_scope) if info is not None else None
        if info_def is not None:
            d.save_slice_info_def.CopyFrom(info_def)
        return d

    @staticmethod
    def from_proto(variable_def, import_scope=None):
        """The Variable over the existing ops ``variable_def`` names."""
        return Variable(variable_def=variable_def, import_scope=import_scope)

    # -- identity --------------------------------------------------------------
    @property
    def name(self):
        return self._variable.name

    @property
    def op(self):
        return self._variable.op

    @property
    def graph(self):
        return self._graph

    @property
    def device(self):
        return self._variable.device

    @property
    def dtype(self):
        """The reference type, as TF1 reports it for a ``RefVariable`` (``float32_ref``), the element type
        for one made with ``use_resource=True``; ``dtype.base_dtype`` is the element type."""
        base = self._variable.dtype.base_dtype
        return base if self._is_resource else base._as_ref()

    @property
    def shape(self):
        return self._variable.shape

    def get_shape(self):
        return self._variable.shape

    def set_shape(self, shape):
        self._variable.set_shape(shape)

    @property
    def trainable(self):
        return self._trainable

    @property
    def constraint(self):
        return self._constraint

    @property
    def synchronization(self):
        return VariableSynchronization.AUTO

    @property
    def aggregation(self):
        return VariableAggregation.NONE

    @property
    def initializer(self):
        """The op that assigns the initial value."""
        return self._initializer_op

    @property
    def initial_value(self):
        return self._initial_value

    @property
    def _shared_name(self):
        return self._variable.op.name

    # -- reading -------------------------------------------------------------
    def value(self):
        """The ``name/read`` snapshot of the current value."""
        return self._snapshot

    def read_value(self):
        """A fresh read of the current value."""
        return array_ops.identity(self._variable, name="read")

    def _ref(self):
        """The reference tensor that update ops take."""
        return self._variable

    def _as_graph_element(self):
        return self._variable

    def _as_tensor(self, dtype=None, name=None):
        # Inside a control-dependency block, read afresh so the read is ordered
        # after the dependencies (the `with control_dependencies([update]):
        # tf.identity(v)` idiom); elsewhere reuse the `name/read` snapshot.
        default = ops.get_default_graph()
        if self._graph._control_dependencies_stack and self._graph is default:
            return array_ops.identity(self._variable, name="read")
        # In a function body (a loop, a branch), read on every call.
        if default is not self._graph and ops._encloses(self._graph, default):
            return array_ops.identity(self._variable, name="read")
        return self._snapshot

    def initialized_value(self):
        """The initial value (TF reads the variable if already initialized; here the initializer is rerun first)."""
        return control_flow_ops.with_dependencies([self._initializer_op], self._variable)

    def eval(self, session=None):
        """The current value in the default (or given) session."""
        return ops._eval_using_default_session(self._variable, None, self._graph, session)

    def load(self, value, session=None):
        """Writes ``value`` into the variable through its initializer."""
        session = ops._default_session_for(self._graph, session)
        session.run(self._initializer_op, {self._initializer_op.inputs[1]: value})

    # -- updating ------------------------------------------------------------
    def assign(self, value, use_locking=False, name=None, read_value=True):
        t = state_ops.assign(self._variable, value, use_locking=use_locking, name=name)
        return t if read_value else t.op

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        t = state_ops.assign_add(self._variable, delta, use_locking=use_locking, name=name)
        return t if read_value else t.op

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        t = state_ops.assign_sub(self._variable, delta, use_locking=use_locking, name=name)
        return t if read_value else t.op

    def _strided_slice_assign(self, begin, end, strides, value, name, begin_mask=0, end_mask=0, ellipsis_mask=0,
                              new_axis_mask=0, shrink_axis_mask=0):
        """What ``v[...].assign(value)`` runs: a ``StridedSliceAssign`` on this variable."""
        return state_ops.strided_slice_assign(
            self._variable, begin, end, strides, value, begin_mask=begin_mask, end_mask=end_mask,
            ellipsis_mask=ellipsis_mask, new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask, name=name,
        )

    def __getitem__(self, slice_spec):
        """``v[...]``: a strided slice of the ``name/read`` value that also has ``assign`` (as in TF1)."""
        return array_ops._slice_helper(self._as_tensor(), slice_spec, var=self)

    def _sparse(self, fn, sparse_delta, use_locking, name):
        return fn(self._variable, sparse_delta.indices, sparse_delta.values, use_locking=use_locking, name=name)

    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        return self._sparse(state_ops.scatter_update, sparse_delta, use_locking, name)

    def scatter_add(self, sparse_delta, use_locking=False, name=None):
        return self._sparse(state_ops.scatter_add, sparse_delta, use_locking, name)

    def scatter_sub(self, sparse_delta, use_locking=False, name=None):
        return self._sparse(state_ops.scatter_sub, sparse_delta, use_locking, name)

    def scatter_mul(self, sparse_delta, use_locking=False, name=None):
        return self._sparse(segment_ops.scatter_mul, sparse_delta, use_locking, name)

    def scatter_div(self, sparse_delta, use_locking=False, name=None):
        return self._sparse(segment_ops.scatter_div, sparse_delta, use_locking, name)

    def scatter_max(self, sparse_delta, use_locking=False, name=None):
        return self._sparse(segment_ops.scatter_max, sparse_delta, use_locking, name)

    def scatter_min(self, sparse_delta, use_locking=False, name=None):
        return self._sparse(segment_ops.scatter_min, sparse_delta, use_locking, name)

    def batch_scatter_update(self, sparse_delta, use_locking=False, name=None):
        """``tf.batch_scatter_update`` of this variable with an IndexedSlices' indices and values."""
        return self._sparse(segment_ops.batch_scatter_update, sparse_delta, use_locking, name)

    # TF1's reference variables run the N-d scatters with use_locking=True.
    def scatter_nd_update(self, indices, updates, name=None):
        return segment_ops.scatter_nd_update(self._variable, indices, updates, use_locking=True, name=name)

    def scatter_nd_add(self, indices, updates, name=None):
        return segment_ops.scatter_nd_add(self._variable, indices, updates, use_locking=True, name=name)

    def scatter_nd_sub(self, indices, updates, name=None):
        return segment_ops.scatter_nd_sub(self._variable, indices, updates, use_locking=True, name=name)

    def count_up_to(self, limit):
        """Increments this (integer) variable until it reaches ``limit``; then OutOfRangeError."""
        return data_flow_ops.count_up_to(self._variable, limit)

    def sparse_read(self, indices, name=None):
        return array_ops.gather(self._snapshot, indices, name=name)

    def gather_nd(self, indices, name=None):
        return array_ops.gather_nd(self._snapshot, indices, name=name)

    def experimental_ref(self):
        return ops._Reference(self)

    ref = experimental_ref

    def __hash__(self):
        return id(self)

    def __repr__(self):
        return f"<tf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}>"

    def __iter__(self):
        return iter(self._snapshot)

    def __bool__(self):
        return self._snapshot.__bool__()

    def __array__(self, dtype=None, copy=None):
        return self._snapshot.__array__(dtype)

    class SaveSliceInfo:
        """Where a partition sits in its full variable (used by checkpoints)."""

        def __init__(self, full_name=None, full_shape=None, var_offset=None, var_shape=None, save_slice_info_def=None,
                     import_scope=None):
            if save_slice_info_def is not None:
                full_name = ops.prepend_name_scope(save_slice_info_def.full_name, import_scope)
                full_shape = list(save_slice_info_def.full_shape)
                var_offset = list(save_slice_info_def.var_offset)
                var_shape = list(save_slice_info_def.var_shape)
            self.full_name = full_name
            self.full_shape = full_shape
            self.var_offset = var_offset
            self.var_shape = var_shape

        def to_proto(self, export_scope=None):
            """This slice's place as a ``SaveSliceInfoDef`` (None outside
            ``export_scope``)."""
            from ferroflow.core.framework import variable_pb2

            if export_scope is not None and not self.full_name.startswith(export_scope.rstrip("/") + "/"):
                return None
            d = variable_pb2.SaveSliceInfoDef()
            d.full_name = ops.strip_name_scope(self.full_name, export_scope)
            d.full_shape.extend(int(x) for x in self.full_shape)
            d.var_offset.extend(int(x) for x in self.var_offset)
            d.var_shape.extend(int(x) for x in self.var_shape)
            return d

        @property
        def spec(self):
            full = " ".join(str(d) for d in self.full_shape) + " "
            sl = ":".join(f"{o},{s}" for o, s in zip(self.var_offset, self.var_shape))
            return full + sl

    def _set_save_slice_info(self, save_slice_info):
        self._save_slice_info = save_slice_info

    def _get_save_slice_info(self):
        return self._save_slice_info


def _forward_operator(name):
    def f(self, *args):
        return getattr(ops.Tensor, name)(self._as_tensor(), *args)

    f.__name__ = name
    return f


for _op_name in ops.Tensor.OVERLOADABLE_OPERATORS - {"__eq__", "__ne__", "__getitem__"}:
    if hasattr(ops.Tensor, _op_name):
        setattr(Variable, _op_name, _forward_operator(_op_name))


RefVariable = Variable


def global_variables(scope=None):
    """Variables in the GLOBAL_VARIABLES collection (optionally filtered by name regex)."""
    return ops.get_collection(ops.GraphKeys.GLOBAL_VARIABLES, scope)


def all_variables():
    return global_variables()


def trainable_variables(scope=None):
    return ops.get_collection(ops.GraphKeys.TRAINABLE_VARIABLES, scope)


def local_variables(scope=None):
    return ops.get_collection(ops.GraphKeys.LOCAL_VARIABLES, scope)


def model_variables(scope=None):
    return ops.get_collection(ops.GraphKeys.MODEL_VARIABLES, scope)


def moving_average_variables(scope=None):
    return ops.get_collection(ops.GraphKeys.MOVING_AVERAGE_VARIABLES, scope)


def variables_initializer(var_list, name="init"):
    """One op running every variable's initializer."""
    if var_list:
        return control_flow_ops.group(*[v.initializer for v in var_list], name=name)
    return control_flow_ops.no_op(name=name)


initialize_variables = variables_initializer


def global_variables_initializer():
    return variables_initializer(global_variables())


initialize_all_variables = global_variables_initializer


def local_variables_initializer():
    return variables_initializer(local_variables())


initialize_local_variables = local_variables_initializer


def is_variable_initialized(variable):
    return state_ops.is_variable_initialized(variable)


def assert_variables_initialized(var_list=None):
    """A tensor that fails to compute if any of ``var_list`` (default: global and local variables) is
    uninitialized: TensorFlow's stack of the variables' ranks, each read from the variable itself, so the failure
    is the read's FailedPreconditionError ("Attempting to use uninitialized value ...")."""
    if var_list is None:
        var_list = global_variables() + local_variables()
    if not var_list:
        return None
    ranks = []
    for var in var_list:
        with ops.colocate_with(var.op):
            ranks.append(array_ops.rank(ops.convert_to_tensor(var)))
    return ranks[0] if len(ranks) == 1 else array_ops.stack(ranks)


def report_uninitialized_variables(var_list=None, name="report_uninitialized_variables"):
    """A 1-D string tensor of the names of uninitialized variables."""
    from ferroflow.ops import math_ops

    if var_list is None:
        var_list = global_variables() + local_variables()
    with ops.name_scope(name) as scope:
        if not var_list:
            return array_ops.identity(constant_op.constant([], dtype=dtypes.string), name=scope)
        with ops.control_dependencies(None):
            inited = array_ops.stack([state_ops.is_variable_initialized(v) for v in var_list])
            names = constant_op.constant([v.op.name for v in var_list])
            return array_ops.boolean_mask(names, math_ops.logical_not(inited), name=scope)


def _variable_to_proto(variable, export_scope=None):
    if not (hasattr(variable, "_ref") and hasattr(variable, "initializer")):
        raise TypeError(f"{variable!r} is not a Variable")
    return variable.to_proto(export_scope=export_scope)


def _variable_from_proto(variable_def, import_scope=None):
    return Variable(variable_def=variable_def, import_scope=import_scope)


for _key in sorted(set(ops.GraphKeys._VARIABLE_COLLECTIONS) | {ops.GraphKeys.GLOBAL_STEP}):
    ops.register_proto_function(_key, proto_type=variable_pb2.VariableDef, to_proto=_variable_to_proto,
                                from_proto=_variable_from_proto)
