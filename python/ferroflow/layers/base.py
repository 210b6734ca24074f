"""The TF1 layer base class (``tf.layers.Layer``) and ``InputSpec``.

A layer owns a variable scope, opened on its first call: its ``name`` (or the
snake-cased class name, uniquified like ``variable_scope(None,
default_name=...)``: ``dense``, ``dense_1``, ...), or, for the functional
forms (``tf.layers.dense(..., name="fc")``), exactly ``name``, re-opened with
``reuse``. ``build(input_shape)`` creates the variables there on the first
call; later calls reuse them. Ops go under the scope's name scope
(``dense/MatMul``, ``dense/BiasAdd``), as in TensorFlow, so variable and op
names, and hence checkpoints, match TensorFlow's.

Regularizer losses join ``GraphKeys.REGULARIZATION_LOSSES`` (named
``<layer>/<weight>/Regularizer/...``); the updates a layer makes
(batch normalization's moving averages) join ``GraphKeys.UPDATE_OPS``.
"""

from __future__ import annotations

import re

from ferroflow.framework import dtypes, ops, tensor_util
from ferroflow.framework.tensor_shape import TensorShape
from ferroflow.ops import _nest as nest
from ferroflow.ops import variable_scope as vs

__all__ = ["InputSpec", "Layer"]

_NAME_UIDS_KEY = "__layer_name_uids"


def _to_snake_case(name):
    s = re.sub(r"(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    s = re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()
    return "private" + s if s.startswith("_") else s


def _unique_layer_name(base):
    """Keras's per-graph object names: ``dense_1``, ``dense_2``, ... (the layer's ``name`` only)."""
    coll = ops.get_collection_ref(_NAME_UIDS_KEY)
    if not coll:
        coll.append({})
    uids = coll[0]
    uids[base] = uids.get(base, 0) + 1
    return f"{base}_{uids[base]}"


def _add_to_collection_once(name, values):
    coll = ops.get_collection_ref(name)
    for v in values:
        if all(v is not c for c in coll):
            coll.append(v)


def constant_value(pred):
    """``True``/``False`` if ``pred`` (a bool or a bool tensor) is known when building, else None."""
    if isinstance(pred, (bool, int)):
        return bool(pred)
    if isinstance(pred, ops.Tensor):
        value = tensor_util.constant_value(pred)
        return None if value is None else bool(value)
    if hasattr(pred, "value") and isinstance(getattr(pred, "dtype", None), dtypes.DType):  # a Variable
        return None
    raise TypeError(f"`training` must be a bool or a bool Tensor, got {pred!r}")


def smart_cond(pred, true_fn, false_fn, name=None):
    """``true_fn()`` or ``false_fn()`` when ``pred`` is known now, else ``tf.cond``."""
    value = constant_value(pred)
    if value is True:
        return true_fn()
    if value is False:
        return false_fn()
    from ferroflow.ops.cond import cond

    return cond(pred, true_fn, false_fn, name=name)


class InputSpec:
    """The rank, dtype and axis sizes a layer accepts (checked before each call)."""

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None, axes=None,
                 allow_last_axis_squeeze=False, name=None, optional=False):
        self.dtype = dtypes.as_dtype(dtype).name if dtype is not None else None
        shape = TensorShape(shape)
        if shape.rank is None:
            shape = None
        else:
            shape = tuple(shape.as_list())
        if shape is not None:
            self.ndim = len(shape)
            self.shape = shape
        else:
            self.ndim = ndim
            self.shape = None
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.name = name
        self.optional = optional
        self.allow_last_axis_squeeze = allow_last_axis_squeeze
        try:
            axes = axes or {}
            self.axes = {int(k): axes[k] for k in axes}
        except (ValueError, TypeError) as e:
            raise TypeError(f"Argument `axes` must be a dict with integer keys. Received: axes={axes}") from e
        if self.axes and (self.ndim is not None or self.max_ndim is not None):
            max_dim = (self.ndim if self.ndim else self.max_ndim) - 1
            max_axis = max(self.axes)
            if max_axis > max_dim:
                raise ValueError(f"Axis {max_axis} is greater than the maximum allowed value: {max_dim}")

    def __repr__(self):
        spec = [
            ("dtype=" + str(self.dtype)) if self.dtype else "",
            ("shape=" + str(self.shape)) if self.shape else "",
            ("ndim=" + str(self.ndim)) if self.ndim else "",
            ("max_ndim=" + str(self.max_ndim)) if self.max_ndim else "",
            ("min_ndim=" + str(self.min_ndim)) if self.min_ndim else "",
            ("axes=" + str(self.axes)) if self.axes else "",
        ]
        return f"InputSpec({', '.join(x for x in spec if x)})"

    def get_config(self):
        return {"dtype": self.dtype, "shape": self.shape, "ndim": self.ndim, "max_ndim": self.max_ndim,
                "min_ndim": self.min_ndim, "axes": self.axes}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _check_input_spec(specs, inputs, layer_name):
    if specs is None:
        return
    flat_specs = nest.flatten(specs)
    flat_inputs = nest.flatten(inputs)
    if len(flat_inputs) != len(flat_specs):
        raise ValueError(f"Layer {layer_name} expects {len(flat_specs)} input(s), but it received "
                         f"{len(flat_inputs)} input tensors.")
    for i, (spec, x) in enumerate(zip(flat_specs, flat_inputs)):
        if spec is None:
            continue
        shape = x.shape
        rank = shape.rank
        if spec.ndim is not None and not spec.allow_last_axis_squeeze and rank != spec.ndim:
            raise ValueError(f"Input {i} of layer \"{layer_name}\" is incompatible with the layer: expected "
                             f"ndim={spec.ndim}, found ndim={rank}. Full shape received: {shape}")
        if spec.max_ndim is not None and rank is not None and rank > spec.max_ndim:
            raise ValueError(f"Input {i} of layer \"{layer_name}\" is incompatible with the layer: expected "
                             f"max_ndim={spec.max_ndim}, found ndim={rank}")
        if spec.min_ndim is not None and (rank is None or rank < spec.min_ndim):
            raise ValueError(f"Input {i} of layer \"{layer_name}\" is incompatible with the layer: expected "
                             f"min_ndim={spec.min_ndim}, found ndim={rank}. Full shape received: {shape}")
        if spec.dtype is not None and x.dtype.base_dtype.name != spec.dtype:
            raise ValueError(f"Input {i} of layer \"{layer_name}\" is incompatible with the layer: expected "
                             f"dtype={spec.dtype}, found dtype={x.dtype.name}")
        if spec.axes and rank is not None:
            dims = shape.as_list()
            for axis, value in spec.axes.items():
                if value is not None and dims[axis] not in (value, None):
                    raise ValueError(f"Input {i} of layer \"{layer_name}\" is incompatible with the layer: expected "
                                     f"axis {axis} of input shape to have value {value}, but received input with "
                                     f"shape {shape}")


class Layer:
    """A TF1 layer: variables in its own variable scope, built on the first call.

    Subclasses implement ``build(input_shape)`` (create weights with ``add_weight``)
    and ``call(inputs, ...)``.
    """

    _ACCEPTED_KWARGS = frozenset({"_scope", "_reuse", "activity_regularizer", "input_shape", "batch_input_shape",
                                  "batch_size", "autocast", "dynamic", "experimental_autocast", "weights"})

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        unknown = sorted(set(kwargs) - self._ACCEPTED_KWARGS)
        if unknown:
            raise TypeError(f"Keyword argument not understood: {unknown[0]}")
        self._reuse = kwargs.pop("_reuse", None)
        self._scope = kwargs.pop("_scope", None)
        self._activity_regularizer = kwargs.pop("activity_regularizer", None)
        self._trainable = bool(trainable)
        self._dtype = None if dtype is None else dtypes.as_dtype(dtype).base_dtype
        self._trainable_weights = []
        self._non_trainable_weights = []
        self._updates = []
        self._losses = []
        self._current_scope = None
        self.built = False
        self.input_spec = None
        self.supports_masking = False
        if isinstance(name, vs.VariableScope):
            self._base_name = name.name
            self._name = _unique_layer_name(_to_snake_case(type(self).__name__))
            self._scope = name
        elif name:
            self._base_name = name
            self._name = name
        else:
            self._base_name = _to_snake_case(type(self).__name__)
            self._name = _unique_layer_name(self._base_name)
        self._graph = ops.get_default_graph()

    # -- what a layer is --------------------------------------------------------
    def build(self, input_shape):
        """Creates the layer's variables (called once, before the first ``call``)."""
        self.built = True

    def call(self, inputs, **kwargs):
        """The layer's computation; the identity unless a subclass says otherwise."""
        return inputs

    def compute_output_shape(self, input_shape):
        raise NotImplementedError(f"Please run in eager mode or implement the compute_output_shape method on "
                                  f"your layer ({type(self).__name__}).")

    # -- names and scopes -----------------------------------------------------------
    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def graph(self):
        return self._graph

    @property
    def trainable(self):
        return self._trainable

    @trainable.setter
    def trainable(self, value):
        self._trainable = bool(value)

    @property
    def scope_name(self):
        if self._scope is None:
            raise ValueError("No name available for layer scope because the layer \"" + self._name +
                             "\" has not been used yet. The scope name  is determined the first time the layer "
                             "instance is called. You must therefore call the layer before querying `scope_name`.")
        return self._scope.name

    @property
    def activity_regularizer(self):
        return self._activity_regularizer

    def _set_scope(self, scope=None):
        if isinstance(self._scope, vs.VariableScope):
            return
        if isinstance(self._scope, str):
            # The functional forms: exactly this scope, opened with a fresh name scope.
            with vs.variable_scope(self._scope, reuse=self._reuse or None) as captured:
                self._scope = captured
        elif self._reuse:
            with vs.variable_scope(scope if scope is not None else self._base_name) as captured:
                self._scope = captured
        else:
            with vs.variable_scope(scope, default_name=self._base_name) as captured:
                self._scope = captured

    # -- weights --------------------------------------------------------------------
    @property
    def trainable_weights(self):
        return list(self._trainable_weights) if self._trainable else []

    @property
    def non_trainable_weights(self):
        if self._trainable:
            return list(self._non_trainable_weights)
        return list(self._trainable_weights) + list(self._non_trainable_weights)

    @property
    def weights(self):
        return self.trainable_weights + self.non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    def count_params(self):
        if not self.built:
            raise ValueError(f"You tried to call `count_params` on layer {self.name}, but the layer isn't built.")
        total = 0
        for w in self.weights:
            n = 1
            for d in w.shape.as_list():
                n *= d
            total += n
        return total

    def add_weight(self, name=None, shape=None, dtype=None, initializer=None, regularizer=None, trainable=None,
                   constraint=None, use_resource=None, synchronization=None, aggregation=None, partitioner=None,
                   **kwargs):
        """``get_variable(name, ...)`` in the layer's variable scope (created once, outside control flow).

        A new variable's ``regularizer`` loss joins ``losses`` and ``REGULARIZATION_LOSSES``.
        """
        kwargs.pop("experimental_autocast", None)
        kwargs.pop("getter", None)
        if kwargs:
            raise TypeError(f"Unknown keyword argument(s) {sorted(kwargs)} passed to add_weight")
        on_read = synchronization is not None and getattr(synchronization, "name", "") == "ON_READ"
        if on_read:
            if trainable:
                raise ValueError("Synchronization value can be set to VariableSynchronization.ON_READ only for "
                                 "non-trainable variables. You have specified trainable=True and "
                                 "synchronization=VariableSynchronization.ON_READ.")
            trainable = False
        elif trainable is None:
            trainable = True
        dtype = dtypes.as_dtype(dtype or self._dtype or dtypes.float32)
        self._set_scope(None)
        reuse = True if self.built else self._reuse
        graph = ops.get_default_graph()
        existing = {id(v) for v in graph.get_collection(ops.GraphKeys.GLOBAL_VARIABLES)}
        extra = {}
        if synchronization is not None:
            extra["synchronization"] = synchronization
        if aggregation is not None:
            extra["aggregation"] = aggregation
        with ops.init_scope():
            with vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as scope:
                self._current_scope = scope
                with ops.name_scope(scope.original_name_scope):
                    if initializer is None:
                        initializer = scope.initializer
                    variable = vs.get_variable(name, shape=shape, dtype=dtype, initializer=initializer,
                                               trainable=trainable and self._trainable, constraint=constraint,
                                               partitioner=partitioner, use_resource=use_resource, **extra)
                    if regularizer is not None and id(variable) not in existing:
                        parts = variable._get_variable_list() if hasattr(variable, "_get_variable_list") \
                            else [variable]
                        for part in parts:
                            with ops.name_scope(name + "/Regularizer"):
                                loss = regularizer(part)
                            if loss is not None:
                                self.add_loss(loss)
        parts = variable._get_variable_list() if hasattr(variable, "_get_variable_list") else [variable]
        target = self._trainable_weights if trainable else self._non_trainable_weights
        for p in parts:
            if all(p is not w for w in target):
                target.append(p)
        return variable

    add_variable = add_weight

    # -- losses and updates -----------------------------------------------------------
    @property
    def losses(self):
        return list(self._losses)

    def add_loss(self, losses, inputs=None):
        """Adds loss tensors (or zero-argument callables making them) to the layer and REGULARIZATION_LOSSES."""
        new = []
        for loss in nest.flatten(losses):
            if callable(loss):
                loss = loss()
            if loss is None:
                continue
            if not isinstance(loss, ops.Tensor):
                loss = ops.convert_to_tensor(loss, dtype=dtypes.float32)
            new.append(loss)
        self._losses.extend(new)
        _add_to_collection_once(ops.GraphKeys.REGULARIZATION_LOSSES, new)

    def get_losses_for(self, inputs):
        return self.losses if inputs is None else []

    @property
    def updates(self):
        return list(self._updates) if self._trainable else []

    def add_update(self, updates, inputs=None):
        """Records update ops (or callables making them); they join UPDATE_OPS after the call."""
        for u in nest.flatten(updates):
            if callable(u) and not isinstance(u, (ops.Tensor, ops.Operation)):
                u = u()
            if isinstance(u, ops.Tensor):
                u = u.op
            if all(u is not x for x in self._updates):
                self._updates.append(u)

    def get_updates_for(self, inputs):
        return self.updates if inputs is None else []

    # -- calling ------------------------------------------------------------------------
    def apply(self, inputs, *args, **kwargs):
        """``layer(inputs, ...)`` (TensorFlow's older spelling)."""
        return self.__call__(inputs, *args, **kwargs)

    def __call__(self, inputs, *args, **kwargs):
        """Builds the layer on its first call (variables in its scope), then runs ``call``."""
        scope = kwargs.pop("scope", None)
        self._set_scope(scope)
        inputs = nest.map_structure(
            lambda x: x if isinstance(x, ops.Tensor) else ops.convert_to_tensor(x, dtype=self._dtype), inputs)
        reuse = True if self.built else self._reuse
        with vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False) as vscope:
            self._current_scope = vscope
            with ops.name_scope(vscope.original_name_scope):
                _check_input_spec(self.input_spec, inputs, self._name)
                if not self.built:
                    flat = nest.flatten(inputs)
                    if self._dtype is None and flat and hasattr(flat[0], "dtype"):
                        first = flat[0].dtype.base_dtype
                        self._dtype = first if first.is_floating else dtypes.float32
                    shapes = nest.map_structure(lambda x: x.shape, inputs)
                    if isinstance(shapes, (list, tuple)) and len(shapes) == 1:
                        shapes = shapes[0]
                    self.build(shapes)
                    self.built = True
                    _check_input_spec(self.input_spec, inputs, self._name)
                outputs = self.call(inputs, *args, **kwargs)
                if self._activity_regularizer is not None:
                    with ops.name_scope("ActivityRegularizer"):
                        for out in nest.flatten(outputs):
                            from ferroflow.ops import array_ops, math_ops

                            loss = self._activity_regularizer(out)
                            batch = math_ops.cast(array_ops.shape(out)[0], loss.dtype)
                            self.add_loss(math_ops.truediv(loss, batch))
        _add_to_collection_once(ops.GraphKeys.UPDATE_OPS, self.updates)
        return outputs

    def get_config(self):
        config = {"name": self._name, "trainable": self._trainable}
        if self._dtype is not None:
            config["dtype"] = self._dtype.name
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)
