"""Exponential moving averages of variables and tensors (``tf.train.ExponentialMovingAverage``).

Numerics follow TensorFlow 1 (specs/optimizers.md, section 6): the decay is a float32 tensor, ``1 - decay``
is computed in float32 and then cast to the average's dtype, and an update is
``shadow -= (shadow - value) * (1 - decay)``.
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops
from ferroflow.ops import (
    array_ops,
    control_flow_ops,
    init_ops,
    math_ops,
    state_ops,
    variable_scope,
    variables,
)

__all__ = ["ExponentialMovingAverage", "assign_moving_average"]

_FLOAT_TYPES = (dtypes.bfloat16, dtypes.float16, dtypes.float32, dtypes.float64)


def assign_moving_average(variable, value, decay, zero_debias=True, name=None):
    """Updates ``variable`` to ``variable - (variable - value) * (1 - decay)``; returns the update.

    With ``zero_debias`` (the default here, unlike ``ExponentialMovingAverage``), ``variable`` receives the
    bias-corrected average ``biased / (1 - (1 - (1 - decay)) ** step)``, kept in two extra variables
    ``<variable>/biased`` and ``<variable>/local_step`` (created in the current variable scope, in the
    variable's dtype, non-trainable).
    """
    with ops.name_scope(name, "AssignMovingAvg", [variable, value, decay]) as scope:
        decay = ops.convert_to_tensor(1.0 - decay, name="decay")
        if decay.dtype != variable.dtype.base_dtype:
            decay = math_ops.cast(decay, variable.dtype.base_dtype)
        if zero_debias:
            return _zero_debias(variable, value, decay)
        return state_ops.assign_sub(variable, (variable - value) * decay, name=scope)


def _zero_debias(unbiased_var, value, decay):
    """TensorFlow's ``moving_averages._zero_debias``: ``decay`` here is already ``1 - decay``."""
    with variable_scope.variable_scope(unbiased_var.name[:-len(":0")], values=[unbiased_var, value, decay]):
        with ops.init_scope():
            biased_initializer = init_ops.zeros_initializer()
            local_step_initializer = init_ops.zeros_initializer()

        def maybe_get_unique(name):
            scope = variable_scope.get_variable_scope()
            if scope.reuse:
                return name
            taken = [x.op.name for x in scope.global_variables()]
            full_name = scope.name + "/" + name
            if full_name not in taken:
                return name
            idx = 1
            while full_name + f"_{idx}" in taken:
                idx += 1
            return name + f"_{idx}"

        with ops.colocate_with(unbiased_var.op):
            biased_var = variable_scope.get_variable(
                maybe_get_unique("biased"), initializer=biased_initializer, shape=unbiased_var.get_shape(),
                dtype=unbiased_var.dtype.base_dtype, trainable=False)
            local_step = variable_scope.get_variable(
                maybe_get_unique("local_step"), shape=[], dtype=unbiased_var.dtype.base_dtype,
                initializer=local_step_initializer, trainable=False)
    update_biased = state_ops.assign_sub(biased_var, (biased_var - value) * decay)
    update_local_step = local_step.assign_add(1)
    bias_factor = 1 - math_ops.pow(1.0 - decay, update_local_step)
    return state_ops.assign(unbiased_var, update_biased / bias_factor, name=ops.get_name_scope() + "/")


def _create_slot_var(primary, initializer, shape, dtype, validate_shape):
    """The variable of the current (slot) variable scope, initialised like TensorFlow's slot_creator."""
    scope = variable_scope.get_variable_scope()
    partitioner = scope.partitioner
    scope.set_partitioner(None)
    try:
        with ops.colocate_with(primary.op):
            return variable_scope.get_variable(
                "", initializer=initializer, trainable=False, shape=shape, dtype=dtype,
                validate_shape=validate_shape)
    finally:
        scope.set_partitioner(partitioner)


def _slot_prefix(primary):
    return primary._shared_name if isinstance(primary, variables.Variable) else primary.op.name


def _create_slot(primary, value, name):
    """A slot ``<primary op name>/<name>`` (uniquified) initialised from the tensor ``value``."""
    validate_shape = value.get_shape().is_fully_defined()
    with variable_scope.variable_scope(None, _slot_prefix(primary) + "/" + name):
        return _create_slot_var(primary, value, None, None, validate_shape)


def _create_zeros_slot(primary, name):
    """A zeros slot with ``primary``'s dtype and shape."""
    dtype = primary.dtype.base_dtype
    shape = primary.get_shape()
    if shape.is_fully_defined():
        with variable_scope.variable_scope(None, _slot_prefix(primary) + "/" + name):
            return _create_slot_var(primary, init_ops.zeros_initializer(), shape, dtype, True)
    return _create_slot(primary, array_ops.zeros(array_ops.shape(primary), dtype=dtype), name)


def _ref(x):
    return x.experimental_ref()


class ExponentialMovingAverage:
    """Maintains shadow copies ``<var>/<name>`` of variables (or tensors) that track their moving average.

    ``apply(var_list)`` creates the shadows (non-trainable; a variable's shadow starts at the variable's
    initial value, a tensor's at zeros) and returns an op updating all of them with
    ``shadow -= (shadow - value) * (1 - decay)``. With ``num_updates`` the decay used is
    ``min(decay, (1 + num_updates) / (10 + num_updates))``. ``zero_debias`` only affects tensors, as in
    TensorFlow.
    """

    def __init__(self, decay, num_updates=None, zero_debias=False, name="ExponentialMovingAverage"):
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages = {}

    @property
    def name(self):
        """The name of the moving average: the suffix of shadow names and the scope of the update ops."""
        return self._name

    def apply(self, var_list=None):
        """Creates shadows for ``var_list`` (default: trainable variables) and returns the update op.

        Raises TypeError for a dtype other than half, bfloat16, float or double. Calling it again for the
        same variable reuses its shadow.
        """
        if var_list is None:
            var_list = variables.trainable_variables()
        zero_debias_true = set()
        for var in var_list:
            if var.dtype.base_dtype not in _FLOAT_TYPES:
                raise TypeError(f"The variables must be half, float, or double: {var.name}")
            if _ref(var) in self._averages:
                continue
            with ops.init_scope():
                if isinstance(var, variables.Variable):
                    # TensorFlow starts the shadow from the variable's current value when it is already
                    # initialised, else from its initial value; ferroflow has no tf.cond, so the shadow's
                    # initializer always uses the initial value.
                    with ops.device(var.device):
                        initial = var.initial_value
                    avg = _create_slot(var, initial, self.name)
                    ops.add_to_collection(ops.GraphKeys.MOVING_AVERAGE_VARIABLES, var)
                else:
                    avg = _create_zeros_slot(var, self.name)
                    if self._zero_debias:
                        zero_debias_true.add(_ref(avg))
            self._averages[_ref(var)] = avg

        with ops.name_scope(self.name) as scope:
            decay = ops.convert_to_tensor(self._decay, dtype=dtypes.float32, name="decay")
            if self._num_updates is not None:
                num_updates = math_ops.cast(self._num_updates, dtypes.float32, name="num_updates")
                decay = math_ops.minimum(decay, (1.0 + num_updates) / (10.0 + num_updates))
            updates = []
            for var in var_list:
                avg = self._averages[_ref(var)]
                zero_debias = _ref(avg) in zero_debias_true
                updates.append(assign_moving_average(avg, var, decay, zero_debias))
            return control_flow_ops.group(*updates, name=scope)

    def average(self, var):
        """The shadow variable of ``var``, or None."""
        return self._averages.get(_ref(var), None)

    def average_name(self, var):
        """The shadow's op name; before ``apply`` the name the shadow would get (used to restore it)."""
        if _ref(var) in self._averages:
            return self._averages[_ref(var)].name[:-len(":0")]
        return ops.get_default_graph().unique_name(var.name[:-len(":0")] + "/" + self.name, mark_as_used=False)

    def variables_to_restore(self, moving_avg_variables=None):
        """Checkpoint name -> variable, restoring each averaged variable from its shadow.

        Covers ``moving_avg_variables`` (default: trainable variables plus MOVING_AVERAGE_VARIABLES) under
        ``average_name(v)``, and every other global variable under its own op name.
        """
        name_map = {}
        if moving_avg_variables is None:
            moving_avg_variables = variables.trainable_variables()
            moving_avg_variables += variables.moving_average_variables()
        refs = {_ref(v): None for v in moving_avg_variables}
        for r in refs:
            name_map[self.average_name(r.deref())] = r.deref()
        averaged_names = {r.deref().name for r in refs}
        for v in variables.global_variables():
            if v.name not in averaged_names and v.op.name not in name_map:
                name_map[v.op.name] = v
        return name_map
