"""Graphs, operations and symbolic tensors (``tf.Graph``, ``tf.Operation``, ``tf.Tensor``).

A Python ``Graph`` owns a native graph (the Rust core does naming, shape
inference and execution) plus what is naturally Python: the name-scope,
control-dependency and device stacks, and collections of arbitrary Python
objects.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import threading
import traceback as _traceback

import numpy as np

from ferroflow import _native
from ferroflow.framework import check_numerics, dtypes
from ferroflow.framework.device_spec import merge_device_strings
from ferroflow.framework.tensor_shape import TensorShape, as_shape, unknown_shape

_TID_SHIFT = _native.TID_SHIFT
_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\\/>-]*$")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\\/>-]*$")

# Files under this directory are ferroflow's own: creation stack traces leave them out.
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# How many user frames an op's creation stack trace keeps (the innermost ones), as TensorFlow's debug info.
_TRACEBACK_FRAMES = 10


def _creation_stack():
    """The user's frames calling into ferroflow now, innermost first, as ``(code object, line)`` pairs.

    Frames in ferroflow's own files are skipped and at most the innermost
    ``_TRACEBACK_FRAMES`` user frames are kept: a short walk up the stack
    (about 2 µs per op); file and function names are read from the code
    objects only when a trace is asked for.
    """
    frames = []
    left = _TRACEBACK_FRAMES
    f = sys._getframe(1)
    while f is not None:
        code = f.f_code
        if not code.co_filename.startswith(_PACKAGE_DIR):
            frames.append((code, f.f_lineno))
            left -= 1
            if not left:
                break
        f = f.f_back
    return frames


class GraphKeys:
    """Standard collection names."""

    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    METRIC_VARIABLES = "metric_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    SUMMARIES = "summaries"
    QUEUE_RUNNERS = "queue_runners"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    CONCATENATED_VARIABLES = "concatenated_variables"
    SAVERS = "savers"
    WEIGHTS = "weights"
    BIASES = "biases"
    ACTIVATIONS = "activations"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    SAVEABLE_OBJECTS = "saveable_objects"
    RESOURCES = "resources"
    LOCAL_RESOURCES = "local_resources"
    TRAINABLE_RESOURCE_VARIABLES = "trainable_resource_variables"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    GLOBAL_STEP = "global_step"
    EVAL_STEP = "eval_step"
    TRAIN_OP = "train_op"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"
    VARIABLES = GLOBAL_VARIABLES
    _VARIABLE_COLLECTIONS = [
        GLOBAL_VARIABLES,
        LOCAL_VARIABLES,
        METRIC_VARIABLES,
        MODEL_VARIABLES,
        TRAINABLE_VARIABLES,
        MOVING_AVERAGE_VARIABLES,
        CONCATENATED_VARIABLES,
        TRAINABLE_RESOURCE_VARIABLES,
    ]


def _decode_shape(dims):
    return unknown_shape() if dims is None else TensorShape(dims)


def _decode_attr(value):
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "type":
        return dtypes.as_dtype(value[1])
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "shape":
        return _decode_shape(value[1])
    return value


# Keras notes a mask on the tensors its masking layers output (``tensor._keras_mask``) in its own per-graph state;
# it installs (get, set) functions here so that the framework does not import Keras.
_keras_mask_access = None


class Tensor:
    """A symbolic handle to one output of an ``Operation``."""

    __slots__ = ("_op", "_value_index", "_dtype", "_shape", "_tid", "__weakref__")

    # Make NumPy defer to our reflected operators (`np_array + tensor`).
    __array_priority__ = 100

    # Built in __new__, as TensorFlow's symbolic tensors are: ``Tensor.__init__`` stays object's, so the
    # class shows TensorFlow's ``(*args, **kwargs)`` signature.
    def __new__(cls, op, value_index, dtype, shape=None):
        self = object.__new__(cls)
        self._op = op
        self._value_index = value_index
        self._dtype = dtypes.as_dtype(dtype)
        self._shape = shape if shape is not None else unknown_shape()
        self._tid = (op._id << _TID_SHIFT) | value_index
        return self

    @property
    def op(self):
        return self._op

    @property
    def value_index(self):
        return self._value_index

    @property
    def dtype(self):
        return self._dtype

    @property
    def graph(self):
        return self._op._graph

    @property
    def name(self):
        return f"{self._op._name}:{self._value_index}"

    @property
    def _keras_mask(self):
        """The mask a Keras layer gave this output (None where it gave none); an AttributeError for a tensor no
        Keras layer made, as TensorFlow's."""
        if _keras_mask_access is None:
            raise AttributeError("'Tensor' object has no attribute '_keras_mask'")
        return _keras_mask_access[0](self)

    @_keras_mask.setter
    def _keras_mask(self, mask):
        if _keras_mask_access is None:
            raise AttributeError("'Tensor' object has no attribute '_keras_mask' (import tf.keras first)")
        _keras_mask_access[1](self, mask)

    @property
    def device(self):
        return self._op.device

    @property
    def shape(self):
        return self._shape

    @property
    def ndim(self):
        return self._shape.ndims

    def get_shape(self):
        return self._shape

    def set_shape(self, shape):
        """Narrows the static shape; ValueError if incompatible."""
        shape = as_shape(shape)
        if not self._shape.is_compatible_with(shape):
            raise ValueError(f"Tensor's shape {self._shape} is not compatible with supplied shape {shape}")
        dims = self.graph._native.set_shape(self._tid, shape._as_native())
        self._shape = _decode_shape(dims)

    def consumers(self):
        """Operations that take this tensor as an input."""
        return [op for op in self.graph._ops if any(t is self for t in op._inputs)]

    def eval(self, feed_dict=None, session=None):
        """Runs the default (or given) session and returns this tensor's value."""
        return _eval_using_default_session(self, feed_dict, self.graph, session)

    def experimental_ref(self):
        return _Reference(self)

    ref = experimental_ref

    def _as_node_def_input(self):
        return self._op._name if self._value_index == 0 else self.name

    def __repr__(self):
        return f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>"

    def __str__(self):
        return f'Tensor("{self.name}", shape={self._shape}, dtype={self._dtype.name})'

    def __hash__(self):
        return id(self)

    def __bool__(self):
        raise TypeError(
            "Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is not None:` instead of "
            "`if t:` to test if a tensor is defined, and use TensorFlow ops such as tf.cond to execute "
            "subgraphs conditioned on the value of a tensor."
        )

    def __iter__(self):
        n = self._shape[0].value if self._shape.ndims else None
        if self._shape.ndims == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        if n is None:
            raise TypeError(
                "Cannot iterate over a tensor with unknown first dimension; use tf.unstack with num= instead."
            )
        for i in range(n):
            yield self[i]

    def __len__(self):
        raise TypeError(
            f"len is not well defined for symbolic Tensors. ({self.name}) Please call `x.shape` rather than "
            "`len(x)` for shape information."
        )

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(
            f"Cannot convert a symbolic Tensor ({self.name}) to a numpy array. Run it in a Session instead."
        )

    OVERLOADABLE_OPERATORS = frozenset(
        {
            "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__div__", "__rdiv__",
            "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__",
            "__lt__", "__le__", "__gt__", "__ge__", "__ne__", "__eq__", "__and__", "__rand__", "__or__",
            "__ror__", "__xor__", "__rxor__", "__getitem__", "__pow__", "__rpow__", "__invert__",
            "__neg__", "__abs__", "__matmul__", "__rmatmul__",
        }
    )


class _Reference:
    """A hashable reference to a tensor or variable (``Tensor.ref()``)."""

    __slots__ = ("_wrapped",)

    def __init__(self, wrapped):
        self._wrapped = wrapped

    def deref(self):
        return self._wrapped

    def __eq__(self, other):
        return isinstance(other, _Reference) and other._wrapped is self._wrapped

    def __hash__(self):
        return id(self._wrapped)


class _NodeDef:
    """A read-only view of a node (TensorFlow's ``NodeDef`` fields)."""

    def __init__(self, op):
        d = op._graph._native.node_def(op._id)
        self.name = d["name"]
        self.op = d["op"]
        self.device = d["device"]
        g = op._graph
        self.input = [g._tensor_from_tid(t)._as_node_def_input() for t in d["inputs"]] + [
            "^" + g._ops[c]._name for c in d["control_inputs"]
        ]
        self.attr = {k: _decode_attr(v) for k, v in d["attrs"].items()}

    def __repr__(self):
        return f"name: {self.name!r}\nop: {self.op!r}\ninput: {self.input!r}\ndevice: {self.device!r}"


class Operation:
    """A node in a graph: an op type applied to input tensors."""

    __slots__ = ("_graph", "_id", "_name", "_type", "_inputs", "_control_inputs", "_outputs", "_device",
                 "_traceback", "__weakref__")

    # Built in __new__ (see Tensor): ``Operation.__init__`` keeps TensorFlow's ``(*args, **kwargs)``.
    def __new__(cls, graph, op_id, name, op_type, inputs, control_inputs, output_specs, device, traceback=()):
        self = object.__new__(cls)
        self._graph = graph
        self._traceback = traceback
        self._id = op_id
        self._name = name
        self._type = op_type
        self._inputs = list(inputs)
        self._control_inputs = list(control_inputs)
        self._device = device
        self._outputs = [
            Tensor(self, i, dt, _decode_shape(dims)) for i, (dt, dims, _is_ref) in enumerate(output_specs)
        ]
        return self

    @property
    def name(self):
        return self._name

    @property
    def type(self):
        return self._type

    @property
    def graph(self):
        return self._graph

    @property
    def inputs(self):
        return tuple(self._inputs)

    @property
    def outputs(self):
        return list(self._outputs)

    @property
    def control_inputs(self):
        return list(self._control_inputs)

    @property
    def device(self):
        return self._device

    @property
    def node_def(self):
        return _NodeDef(self)

    @property
    def op_def(self):
        return None

    @property
    def traceback(self):
        """Where the op was created: the user's stack frames (ferroflow's own left out), outermost first."""
        return _traceback.StackSummary.from_list([(f, line, fn, None) for f, line, fn in self._creation_frames()])

    def _creation_frames(self):
        """``[(file, line, function), ...]`` of the frames that created the op, outermost first."""
        return [(code.co_filename, line, code.co_name) for code, line in reversed(self._traceback)]

    def values(self):
        return tuple(self._outputs)

    def get_attr(self, name):
        d = self._graph._native.node_def(self._id)
        if name not in d["attrs"]:
            raise ValueError(f"Operation '{self._name}' has no attr named '{name}'.")
        return _decode_attr(d["attrs"][name])

    def colocation_groups(self):
        return [b"loc:@" + self._name.encode()]

    def _set_device(self, device):
        self._device = _device_string(device)
        self._graph._native.set_device(self._id, self._device)

    def _add_control_input(self, op):
        if not isinstance(op, Operation):
            raise TypeError(f"op must be an Operation: {op!r}")
        self._graph._native.add_control_input(self._id, op._id)
        if op not in self._control_inputs:
            self._control_inputs.append(op)

    def _add_control_inputs(self, ops):
        for op in ops:
            self._add_control_input(op)

    def run(self, feed_dict=None, session=None):
        """Runs this operation in the default (or given) session."""
        _run_using_default_session(self, feed_dict, self._graph, session)

    def __repr__(self):
        return f"<tf.Operation '{self._name}' type={self._type}>"

    __str__ = __repr__


def _device_string(dev):
    if dev is None:
        return ""
    if hasattr(dev, "to_string"):
        return dev.to_string()
    return str(dev)


def merge_device(outer, inner):
    """Inner device spec fields override the outer ones (TensorFlow's merge), canonical form."""
    return merge_device_strings(outer or "", inner or "")


class _ControlDependenciesController:
    def __init__(self, graph, control_inputs):
        self._graph = graph
        self._control_inputs = [] if control_inputs is None else control_inputs
        self._new_stack = control_inputs is None
        self._seen = set()
        self._old_stack = None

    @property
    def control_inputs(self):
        return self._control_inputs

    def __enter__(self):
        if self._new_stack:
            self._old_stack = self._graph._control_dependencies_stack
            self._graph._control_dependencies_stack = []
        self._graph._control_dependencies_stack.append(self)
        return self

    def __exit__(self, *exc):
        self._graph._control_dependencies_stack.pop()
        if self._new_stack:
            self._graph._control_dependencies_stack = self._old_stack
        return False

    def add_op(self, op):
        self._seen.add(op._id)

    def op_in_group(self, op):
        return op._id in self._seen


class Graph:
    """A TensorFlow computation: operations and the tensors between them."""

    def __init__(self):
        self._native = _native.Graph()
        self._ops = []
        self._collections = {}
        self._name_stack = ""
        self._control_dependencies_stack = []
        self._device_stack = []
        self._colocation_stack = []
        self._container = ""
        self._seed = None
        self._unfeedable = set()
        self._unfetchable = set()
        self._gradient_override_map = {}
        self._lock = threading.RLock()
        self._building_function = False
        self._attr_scope_map = {}

    # -- default graph -------------------------------------------------------
    def as_default(self):
        """Makes this the default graph inside a ``with`` block."""
        return _default_graph_stack.get_controller(self)

    # -- naming --------------------------------------------------------------
    def unique_name(self, name, mark_as_used=True):
        """Prefixes the current name scope and makes the name unique (``x``, ``x_1``, ...)."""
        if self._name_stack:
            name = self._name_stack + "/" + name
        return self._native.unique_name(name, mark_as_used)

    def get_name_scope(self):
        return self._name_stack

    @contextlib.contextmanager
    def name_scope(self, name):
        """Opens a (uniquified) name scope; yields its name with a trailing slash."""
        if name:
            if isinstance(name, bytes):
                name = name.decode()
            regex = _VALID_SCOPE_NAME if self._name_stack else _VALID_OP_NAME
            if not regex.match(name):
                raise ValueError(f"'{name}' is not a valid scope name")
        old = self._name_stack
        if not name:
            new_stack, returned = "", ""
        elif name[-1] == "/":
            new_stack, returned = name[:-1], name
        else:
            new_stack = self.unique_name(name)
            returned = new_stack + "/"
        self._name_stack = new_stack
        try:
            yield returned
        finally:
            self._name_stack = old

    # -- control dependencies and devices -----------------------------------
    def control_dependencies(self, control_inputs):
        """Ops created in the block run after ``control_inputs`` (None clears)."""
        if control_inputs is None:
            return _ControlDependenciesController(self, None)
        current = set()
        for c in self._control_dependencies_stack:
            current.update(x._id for x in c.control_inputs)
        ops = []
        for c in control_inputs:
            if hasattr(c, "_as_graph_element") and not isinstance(c, (Tensor, Operation)):
                c = c._as_graph_element()
            if hasattr(c, "op") and type(c).__name__ == "IndexedSlices":
                c = c.op
            if isinstance(c, Tensor):
                c = c.op
            elif not isinstance(c, Operation):
                raise TypeError(f"Control input must be Operation or Tensor: {c}")
            if c._graph is not self:
                raise ValueError(f"Control input {c} must be from the same graph as the ops it controls.")
            if c._id not in current:
                ops.append(c)
                current.add(c._id)
        return _ControlDependenciesController(self, ops)

    def _control_dependencies_for_inputs(self, input_ops):
        ret = []
        for controller in self._control_dependencies_stack:
            if any(controller.op_in_group(op) for op in input_ops):
                continue
            ret.extend(c for c in controller.control_inputs if c not in input_ops and c not in ret)
        return ret

    @contextlib.contextmanager
    def device(self, device_name_or_function):
        """Sets the device of ops created in the block: a device name, a ``DeviceSpec``, a device
        function (called with each new op, returning its device) or None (ignore outer scopes).

        As in TensorFlow, the innermost scope applies first and outer ones fill in only the
        fields it left unset; a device function sees the op with the device the inner scopes gave.
        """
        self._device_stack.append(device_name_or_function)
        try:
            yield
        finally:
            self._device_stack.pop()

    def _string_device(self):
        """The device the scopes give before the first device function (innermost first).

        Returns ``(device, index)``: ``index`` is the stack position of the first device
        function still to be applied to the created op, or None.
        """
        device = ""
        stack = self._device_stack
        for i in range(len(stack) - 1, -1, -1):
            d = stack[i]
            if d is None:
                break
            if callable(d) and not isinstance(d, str):
                return device, i
            spec = _device_string(d)
            if spec:
                device = merge_device_strings(spec, device)
        return device, None

    def _apply_device_functions(self, op, start):
        """Applies ``self._device_stack[start::-1]`` to ``op`` (TensorFlow's order and merging)."""
        stack = self._device_stack
        device = op._device
        for i in range(start, -1, -1):
            d = stack[i]
            if d is None:
                break
            if callable(d) and not isinstance(d, str):
                op._device = device
                device = _device_string(d(op))
            else:
                spec = _device_string(d)
                if spec:
                    device = merge_device_strings(spec, device)
        return device

    def _current_device(self, op_type=None):
        """The device scopes' device for an op of ``op_type`` (device functions see a stand-in op)."""
        device, start = self._string_device()
        if start is None:
            return device
        return self._apply_device_functions(_PendingOp(op_type or "", device), start)

    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing=False):
        """Ops created in the block take ``op``'s device (device scopes outside are set aside,
        as in TensorFlow); ``ignore_existing`` drops the colocations of enclosing blocks."""
        if op is None and not ignore_existing:
            raise ValueError("Trying to reset colocation (op is None) but ignore_existing is not True")
        if op is not None:
            op = _colocation_target(op)
        saved_colocation, saved_devices = self._colocation_stack, self._device_stack
        if ignore_existing:
            self._colocation_stack = []
        if op is not None:
            self._colocation_stack = self._colocation_stack + [op]
        self._device_stack = []
        try:
            yield
        finally:
            self._colocation_stack, self._device_stack = saved_colocation, saved_devices

    @contextlib.contextmanager
    def container(self, container_name):
        old, self._container = self._container, container_name
        try:
            yield self._container
        finally:
            self._container = old

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map):
        """Ops of the mapped types created in the block use the gradient registered under the mapped name."""
        if not isinstance(op_type_map, dict):
            raise TypeError("op_type_map must be a dictionary mapping strings to strings")
        for op_type, mapped in op_type_map.items():
            if not (isinstance(op_type, str) and isinstance(mapped, str)):
                raise TypeError("op_type_map must be a dictionary mapping strings to strings")
        saved = dict(self._gradient_override_map)
        self._gradient_override_map.update(op_type_map)
        try:
            yield
        finally:
            self._gradient_override_map = saved

    # -- building ------------------------------------------------------------
    def create_op(self, op_type, inputs, dtypes=None, input_types=None, name=None, attrs=None, op_def=None,
                  compute_shapes=True, compute_device=True):
        """Adds an op of type ``op_type`` (TensorFlow's low-level API)."""
        return self._create_op(op_type, list(inputs), attrs or {}, name=name)

    def _create_op(self, op_type, inputs, attrs, name=None, control_inputs=()):
        if self._native.finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        for t in inputs:
            if t.graph is not self:
                raise ValueError(f"Tensor {t!r} must be from the same graph as the op being created ({op_type}).")
        if name is None:
            name = op_type
        if name.endswith("/"):
            name = name[:-1]
        else:
            if not _VALID_OP_NAME.match(name) and not (self._name_stack and _VALID_SCOPE_NAME.match(name)):
                raise ValueError(f"'{name}' is not a valid node name")
            name = self.unique_name(name)
        override = self._gradient_override_map.get(op_type)
        if override is not None:  # read by tf.gradients (TF's attr name)
            attrs = {**attrs, "_gradient_op_type": override}
        if check_numerics.enabled():
            attrs = {**attrs, check_numerics.CHECK_NUMERICS_ATTR: True}
        input_ops = list({t._op._id: t._op for t in inputs}.values())
        controls = self._control_dependencies_for_inputs(input_ops)
        controls.extend(c for c in control_inputs if c not in controls)
        colocation = self._colocation_stack
        ref_inputs = _ref_input_ops(op_type, inputs) if (self._device_stack or any(
            t._op._device for t in inputs)) else ()
        if ref_inputs:  # TensorFlow colocates an op with its ref inputs (Assign with its variable)
            colocation = colocation + ref_inputs
            device, start = "", None
        else:
            device, start = self._string_device()
        colocated = next((c._device for c in reversed(colocation) if c._device), None) if colocation else None
        if start is None and colocated is not None:
            device = colocated
        op_id, specs = self._native.add_op(
            op_type, name, [t._tid for t in inputs], [c._id for c in controls], attrs, device
        )
        if op_id != len(self._ops):
            self._sync_native(op_id)
        op = Operation(self, op_id, name, op_type, inputs, controls, specs, device, _creation_stack())
        if start is not None:  # device functions see the op itself, as in TensorFlow
            placed = self._apply_device_functions(op, start)
            if colocated is not None:
                placed = colocated
            op._device = device
            if placed != device:
                op._set_device(placed)
        self._ops.append(op)
        for controller in self._control_dependencies_stack:
            controller.add_op(op)
        return op

    def _sync_native(self, until=None):
        """Mirrors nodes the core added on its own (e.g. gradients) as Operations."""
        stack = None
        for op_id, name, op_type, inputs, controls, device, specs in self._native.node_summaries(len(self._ops)):
            if until is not None and op_id >= until:
                break
            if stack is None:
                stack = _creation_stack()
            op = Operation(
                self, op_id, name, op_type, [self._tensor_from_tid(t) for t in inputs],
                [self._ops[c] for c in controls], specs, device, stack,
            )
            self._ops.append(op)
            for controller in self._control_dependencies_stack:
                controller.add_op(op)

    def _tensor_from_tid(self, tid):
        return self._ops[tid >> _TID_SHIFT]._outputs[tid & ((1 << _TID_SHIFT) - 1)]

    # -- lookup --------------------------------------------------------------
    def get_operations(self):
        return list(self._ops)

    @property
    def operations(self):
        return list(self._ops)

    def get_operation_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings (or similar), not {type(name).__name__}.")
        return self.as_graph_element(name, allow_tensor=False, allow_operation=True)

    def _get_operation_by_name_unsafe(self, name):
        op_id = self._native.op_by_name(name)
        return None if op_id is None else self._ops[op_id]

    def get_tensor_by_name(self, name):
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings (or similar), not {type(name).__name__}.")
        return self.as_graph_element(name, allow_tensor=True, allow_operation=False)

    def as_graph_element(self, obj, allow_tensor=True, allow_operation=True):
        """Resolves a Tensor, Operation, name or convertible object to a graph element."""
        if allow_tensor and allow_operation:
            types_str = "Tensor or Operation"
        elif allow_tensor:
            types_str = "Tensor"
        else:
            types_str = "Operation"
        conv = getattr(obj, "_as_graph_element", None)
        if conv is not None and not isinstance(obj, (Tensor, Operation)):
            obj = conv()
        if isinstance(obj, str):
            name = obj
            if ":" in name and allow_tensor:
                op_name, _, idx = name.rpartition(":")
                try:
                    out_n = int(idx)
                except ValueError:
                    raise ValueError(
                        f"The name {name!r} looks a like a Tensor name, but is not a valid one. Tensor names "
                        'must be of the form "<op_name>:<output_index>".'
                    ) from None
                op = self._get_operation_by_name_unsafe(op_name)
                if op is None:
                    raise KeyError(
                        f"The name {name!r} refers to a Tensor which does not exist. The operation, "
                        f"{op_name!r}, does not exist in the graph."
                    )
                if out_n >= len(op._outputs):
                    raise KeyError(
                        f"The name {name!r} refers to a Tensor which does not exist. The operation, "
                        f"{op_name!r}, exists but only has {len(op._outputs)} outputs."
                    )
                return op._outputs[out_n]
            if ":" in name and not allow_tensor:
                raise ValueError(f"Name {name!r} appears to refer to a Tensor, not a {types_str}.")
            op = self._get_operation_by_name_unsafe(name)
            if op is None:
                raise KeyError(f"The name {name!r} refers to an Operation not in the graph.")
            if not allow_operation:
                raise ValueError(
                    f"The name {name!r} refers to an Operation, not a {types_str}. Tensor names must be of "
                    'the form "<op_name>:<output_index>".'
                )
            return op
        if isinstance(obj, Tensor) and allow_tensor:
            if obj.graph is not self:
                raise ValueError(f"Tensor {obj} is not an element of this graph.")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj._graph is not self:
                raise ValueError(f"Operation {obj} is not an element of this graph.")
            return obj
        raise TypeError(f"Can not convert a {type(obj).__name__} into a {types_str}.")

    # -- collections ---------------------------------------------------------
    def add_to_collection(self, name, value):
        self._check_not_finalized()
        with self._lock:
            self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        if isinstance(names, str):
            names = [names]
        for name in set(names):
            self.add_to_collection(name, value)

    def get_collection_ref(self, name):
        with self._lock:
            return self._collections.setdefault(name, [])

    def get_collection(self, name, scope=None):
        """A copy of the collection, filtered to items whose name matches ``scope`` (a regex)."""
        with self._lock:
            items = list(self._collections.get(name, []))
        if scope is None:
            return items
        regex = re.compile(scope)
        return [x for x in items if hasattr(x, "name") and regex.match(x.name)]

    def get_all_collection_keys(self):
        with self._lock:
            return [k for k, v in self._collections.items() if isinstance(v, list)]

    def clear_collection(self, name):
        self._check_not_finalized()
        with self._lock:
            self._collections.pop(name, None)

    @property
    def collections(self):
        return self.get_all_collection_keys()

    # -- state ---------------------------------------------------------------
    def finalize(self):
        """Makes the graph read-only: later attempts to add ops raise RuntimeError."""
        self._native.finalize()

    @property
    def finalized(self):
        return self._native.finalized

    def _check_not_finalized(self):
        if self._native.finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")

    def _unsafe_unfinalize(self):
        """Makes a finalized graph editable again (``MonitoredSession.close`` hands the graph back)."""
        self._native.unfinalize()

    @property
    def seed(self):
        return self._seed

    @seed.setter
    def seed(self, seed):
        self._seed = seed

    @property
    def _last_id(self):
        return len(self._ops)

    @property
    def version(self):
        return len(self._ops)

    @property
    def building_function(self):
        return self._building_function

    @property
    def graph_def_versions(self):
        return _Versions()

    def as_graph_def(self, from_version=None, add_shapes=False):
        """The graph as a ``tf.GraphDef`` (nodes added since version ``from_version`` only, if given)."""
        from ferroflow.framework.graph_def_util import as_graph_def

        return as_graph_def(self, from_version, add_shapes)

    def is_feedable(self, tensor):
        return tensor not in self._unfeedable

    def prevent_feeding(self, tensor):
        self._unfeedable.add(tensor)

    def is_fetchable(self, tensor_or_op):
        op = tensor_or_op.op if isinstance(tensor_or_op, Tensor) else tensor_or_op
        return tensor_or_op not in self._unfetchable and op not in self._unfetchable

    def prevent_fetching(self, op):
        self._unfetchable.add(op)

    def switch_to_thread_local(self):
        pass

    def __enter__(self):
        self._default_ctx = self.as_default()
        return self._default_ctx.__enter__()

    def __exit__(self, *exc):
        return self._default_ctx.__exit__(*exc)


class _Versions:
    producer = 1994
    min_consumer = 12


class _PendingOp:
    """What a device function sees when asked outside op creation: the op type and current device."""

    def __init__(self, op_type, device=""):
        self.type = op_type
        self.node_def = self
        self.op = op_type
        self.name = ""
        self._device = device

    @property
    def device(self):
        return self._device


def _colocation_target(obj):
    """The Operation that ``colocate_with(obj)`` means (an op, a tensor's op, a variable's op)."""
    if isinstance(obj, Operation):
        return obj
    if isinstance(obj, Tensor):
        return obj.op
    inner = getattr(obj, "_as_graph_element", None)
    if inner is not None:
        element = inner()
        if isinstance(element, Tensor):
            return element.op
        if isinstance(element, Operation):
            return element
    op = getattr(obj, "op", None)
    if isinstance(op, Operation):
        return op
    raise TypeError(f"colocate_with expects an Operation, a Tensor or a Variable, got {type(obj).__name__}")


def _ref_input_ops(op_type, inputs):
    """The ops of ``inputs`` that ``op_type`` takes by reference (TensorFlow's ``is_ref`` inputs).

    Only the leading single-tensor args are mapped to inputs; every TensorFlow op with a
    ref input declares it before any list-valued arg.
    """
    if not inputs:
        return ()
    from ferroflow.framework.op_signatures import op_signature

    signature = op_signature(op_type)
    if signature is None:
        return ()
    found = []
    for arg, tensor in zip(signature["inputs"], inputs):
        if "number_attr" in arg or "type_list_attr" in arg:
            break
        if arg.get("is_ref") and tensor._op not in found:
            found.append(tensor._op)
    return found


class _DefaultGraphStack(threading.local):
    """Thread-local stack of default graphs over one process-wide default."""

    _global_default = None

    def __init__(self):
        self.stack = []

    def get_default(self):
        if self.stack:
            return self.stack[-1]
        if _DefaultGraphStack._global_default is None:
            _DefaultGraphStack._global_default = Graph()
        return _DefaultGraphStack._global_default

    @contextlib.contextmanager
    def get_controller(self, graph):
        self.stack.append(graph)
        try:
            yield graph
        finally:
            self.stack.pop()

    def reset(self):
        if self.stack:
            raise AssertionError(
                "Do not use tf.reset_default_graph() to clear nested graphs. If you need a cleared graph, "
                "exit the nesting and create a new graph."
            )
        _DefaultGraphStack._global_default = Graph()


_default_graph_stack = _DefaultGraphStack()


class _DefaultSessionStack(threading.local):
    """Thread-local stack of the sessions installed with ``Session.as_default``."""

    def __init__(self):
        self.stack = []

    def get_default(self):
        return self.stack[-1] if self.stack else None

    def get_controller(self, session):
        stack = self

        class _Ctx:
            def __enter__(self_inner):
                stack.stack.append(session)
                return session

            def __exit__(self_inner, *exc):
                if stack.stack and stack.stack[-1] is session:
                    stack.stack.pop()
                elif session in stack.stack:
                    stack.stack.remove(session)
                return False

        return _Ctx()


_default_session_stack = _DefaultSessionStack()


def get_default_session():
    """The innermost session installed with ``as_default`` (or a ``with Session()`` block).

    The stack lives here, beside the default graph's, so that ``Tensor.eval`` and other framework code
    reach the session without importing the client; ``Session.as_default`` pushes onto it.
    """
    return _default_session_stack.get_default()


def is_in_name_scope(name, scope):
    """Whether ``name`` (a control input's ``^`` ignored) lies under ``scope/``; everything lies under no scope."""
    if not scope:
        return True
    return name.lstrip("^").startswith(scope.rstrip("/") + "/")


def strip_name_scope(name, export_scope):
    """``name`` without a leading ``export_scope/`` (a control input's ``^`` kept), as exported graphs name it."""
    if not export_scope:
        return name
    scope = export_scope.rstrip("/") + "/"
    if name.startswith("^" + scope):
        return "^" + name[len(scope) + 1 :]
    if name.startswith(scope):
        return name[len(scope) :]
    return name


def prepend_name_scope(name, import_scope):
    """``name`` under ``import_scope/`` (after a control input's ``^``), as imported graphs name it."""
    if not import_scope:
        return name
    scope = import_scope.rstrip("/") + "/"
    if name.startswith("^"):
        return "^" + scope + name[1:]
    return scope + name


def get_default_graph():
    """The graph new ops go into."""
    return _default_graph_stack.get_default()


def reset_default_graph():
    """Clears the default graph (not allowed inside a ``with g.as_default()`` block)."""
    _default_graph_stack.reset()


def _get_graph_from_inputs(values):
    """The graph of the first graph element among ``values`` (else the default).

    While a function body is being built (``tf.cond``, ``tf.while_loop``), an
    element of a graph enclosing it belongs to the body: the body captures it.
    """
    default = get_default_graph()
    for v in values or ():
        g = getattr(v, "graph", None)
        if isinstance(g, Graph):
            if g is not default and _encloses(g, default):
                return default
            return g
    return default


def _encloses(outer, graph):
    """Whether ``graph`` is a function body built inside ``outer`` (at any depth)."""
    g = getattr(graph, "outer_graph", None)
    while g is not None:
        if g is outer:
            return True
        g = getattr(g, "outer_graph", None)
    return False


class name_scope:  # noqa: N801 - TensorFlow's name
    """``with tf.name_scope(name, default_name, values) as scope:``."""

    def __init__(self, name, default_name=None, values=None):
        self._name = default_name if name is None else name
        self._default_name = default_name
        self._values = values
        self._ctx = None
        self._graph_ctx = None

    @property
    def name(self):
        return self._name

    def __enter__(self):
        if self._name is None and self._values is not None:
            raise ValueError(f"At least one of name ({self._name}) and default_name ({self._default_name}) must be provided.")
        g = _get_graph_from_inputs(self._values)
        self._graph_ctx = g.as_default()
        self._graph_ctx.__enter__()
        self._ctx = g.name_scope(self._name)
        try:
            return self._ctx.__enter__()
        except BaseException:
            self._graph_ctx.__exit__(None, None, None)
            raise

    def __exit__(self, *exc):
        try:
            return self._ctx.__exit__(*exc)
        finally:
            self._graph_ctx.__exit__(*exc)


def get_name_scope():
    return get_default_graph().get_name_scope()


def control_dependencies(control_inputs):
    return get_default_graph().control_dependencies(control_inputs)


def device(device_name_or_function):
    return get_default_graph().device(device_name_or_function)


def colocate_with(op, ignore_existing=False):
    return get_default_graph().colocate_with(op, ignore_existing)


def container(container_name):
    return get_default_graph().container(container_name)


@contextlib.contextmanager
def init_scope():
    """Lifts ops out of control-dependency contexts and function bodies.

    Variables and their initializers created inside a ``tf.cond`` branch or a
    ``tf.while_loop`` body (an RNN cell's weights, say) go to the outermost
    graph, under the current name scope, as in TensorFlow.
    """
    graph = get_default_graph()
    outer = graph
    while getattr(outer, "outer_graph", None) is not None:
        outer = outer.outer_graph
    if outer is graph:
        with graph.control_dependencies(None):
            yield
        return
    saved = outer._name_stack
    outer._name_stack = graph._name_stack
    try:
        with outer.as_default(), outer.control_dependencies(None):
            yield
    finally:
        outer._name_stack = saved


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    get_default_graph().add_to_collections(names, value)


def get_collection(key, scope=None):
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key):
    return get_default_graph().get_collection_ref(key)


# -- how collections are stored in a MetaGraphDef ----------------------------

_proto_function_registry = {}


def register_proto_function(collection_name, proto_type=None, to_proto=None, from_proto=None):
    """Says how the items of collection ``collection_name`` are written to and read from a MetaGraphDef.

    ``to_proto(item, export_scope=None)`` returns a ``proto_type`` message (or None to leave the item out);
    ``from_proto(message, import_scope=None)`` rebuilds the item in the default graph. Owners of such items
    register here (variables, queue runners) so that meta-graph export and import need not import them.
    """
    _proto_function_registry[collection_name] = (proto_type, to_proto, from_proto)


def get_collection_proto_type(collection_name):
    """The proto message class registered for ``collection_name``, or None."""
    return _proto_function_registry.get(collection_name, (None, None, None))[0]


def get_to_proto_function(collection_name):
    """The ``to_proto`` function registered for ``collection_name``, or None."""
    return _proto_function_registry.get(collection_name, (None, None, None))[1]


def get_from_proto_function(collection_name):
    """The ``from_proto`` function registered for ``collection_name``, or None."""
    return _proto_function_registry.get(collection_name, (None, None, None))[2]


# -- conversion to tensors -------------------------------------------------

_conversion_registry = []


def register_tensor_conversion_function(base_type, conversion_func, priority=100):
    """Lets ``convert_to_tensor`` accept objects of ``base_type``.

    Functions are tried in increasing ``priority`` (registration order within one priority); one may return
    ``NotImplemented`` to pass the value on to the next. Python and NumPy values reach the constant
    conversion that ``framework/constant_op.py`` registers for ``object`` at priority 200, and lists holding
    tensors the autopacking ``ops/array_ops.py`` registers at 99, as in TensorFlow.
    """
    _conversion_registry.append((priority, base_type, conversion_func))
    _conversion_registry.sort(key=lambda e: e[0])


def _check_converted_dtype(dtype, tensor):
    if dtype is not None and not dtype.is_compatible_with(tensor.dtype):
        raise ValueError(
            f"Tensor conversion requested dtype {dtype.name} for Tensor with dtype {tensor.dtype.name}: {tensor!r}"
        )
    return tensor


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None, dtype_hint=None):
    """Returns ``value`` as a Tensor, creating a constant for Python and NumPy values."""
    if dtype is not None:
        # A reference type (a TF1 variable's ``float32_ref``) asks for its element type.
        dtype = dtypes.as_dtype(dtype).base_dtype
    preferred_dtype = preferred_dtype or dtype_hint
    if isinstance(value, Tensor):
        return _check_converted_dtype(dtype, value)
    conv = getattr(value, "_as_tensor", None)
    if conv is not None:
        return _check_converted_dtype(dtype, conv(dtype=dtype, name=name))
    if isinstance(value, Operation):
        raise TypeError(f"Can't convert Operation '{value.name}' to Tensor (target dtype={dtype}, name={name!r})")
    for _, base, func in _conversion_registry:
        if not isinstance(value, base):
            continue
        if dtype is None and preferred_dtype is not None:
            try:
                converted = func(value, dtype=dtypes.as_dtype(preferred_dtype), name=name, as_ref=False)
            except (TypeError, ValueError):
                converted = NotImplemented
            if converted is not NotImplemented:
                return converted
        converted = func(value, dtype=dtype, name=name, as_ref=False)
        if converted is not NotImplemented:
            return _check_converted_dtype(dtype, converted)
    raise TypeError(f"Failed to convert object of type {type(value)} to Tensor. Contents: {value!r}.")


def convert_n_to_tensor(values, dtype=None, name=None, preferred_dtype=None):
    return [convert_to_tensor(v, dtype=dtype, preferred_dtype=preferred_dtype,
                              name=None if name is None else f"{name}_{i}") for i, v in enumerate(values)]


def is_tensor(x):
    return isinstance(x, Tensor) or hasattr(x, "_as_tensor")


def is_symbolic_tensor(tensor):
    """True for graph tensors (every ferroflow Tensor; TF says False for eager ones)."""
    return isinstance(tensor, Tensor)


@contextlib.contextmanager
def op_scope(values, name, default_name=None):
    """Deprecated TF 0.x spelling of ``name_scope(name, default_name, values)``."""
    with name_scope(name, default_name=default_name, values=values) as scope:
        yield scope


# -- running through the default session ------------------------------------


def _default_session_for(graph, session):
    if session is None:
        session = get_default_session()
        if session is None:
            raise ValueError(
                "Cannot evaluate tensor using `eval()`: No default session is registered. Use `with "
                "sess.as_default()` or pass an explicit session to `eval(session=sess)`"
            )
    if session.graph is not graph:
        raise ValueError(
            "Cannot use the given session to evaluate tensor: the tensor's graph is different from the "
            "session's graph."
        )
    return session


def _eval_using_default_session(tensors, feed_dict, graph, session=None):
    return _default_session_for(graph, session).run(tensors, feed_dict)


def _run_using_default_session(operation, feed_dict, graph, session=None):
    _default_session_for(graph, session).run(operation, feed_dict)


def _as_numpy_for(dtype, value):
    """Converts a fed value as TensorFlow does: ``np.asarray(value, dtype=tensor's dtype)``."""
    return np.asarray(value, dtype=dtype.as_numpy_dtype)
