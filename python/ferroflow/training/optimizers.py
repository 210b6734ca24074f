"""``tf.train`` optimizers: TensorFlow 1's Optimizer API over fused Rust update kernels.

Graph construction follows TensorFlow 1 (slot and non-slot variable names,
collections, name scopes, the errors raised). The updates themselves are
one op per step for all dense variables of a dtype (``ApplyFused``) and one
op per sparsely updated variable (``SparseApplyFused``); their kernels are
single fused passes whose work is pooled across variables.
"""

from __future__ import annotations

from ferroflow import _native
from ferroflow.framework import dtypes, ops
from ferroflow.framework.indexed_slices import IndexedSlices
from ferroflow.ops import array_ops, control_flow_ops, gradients_impl, init_ops, math_ops, state_ops
from ferroflow.ops import variable_scope as vs
from ferroflow.ops import variables as variables_mod
from ferroflow.ops._op_util import make_op

__all__ = [
    "Optimizer",
    "GradientDescentOptimizer",
    "MomentumOptimizer",
    "AdagradOptimizer",
    "AdagradDAOptimizer",
    "AdadeltaOptimizer",
    "AdamOptimizer",
    "FtrlOptimizer",
    "ProximalGradientDescentOptimizer",
    "ProximalAdagradOptimizer",
    "RMSPropOptimizer",
]

_FLOATS = (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64)

# Slot and hyper-parameter inputs of each fused rule, in input order; Rust's rule table is the one source.
_RULES = _native.optimizer_rules()


def _var_key(var):
    return (id(var.op.graph), var.op.name)


def _create_slot(primary, initializer, shape, dtype, op_name):
    """A slot variable named ``<primary op name>/<op_name>`` (uniquified in creation order)."""
    # Colocated with the primary (TF's colocate_vars_with): under replica_device_setter a slot lives
    # on its variable's ps task, not wherever the device function would send a new variable.
    with ops.init_scope(), ops.colocate_with(primary):
        with vs.variable_scope(None, primary.op.name + "/" + op_name):
            scope = vs.get_variable_scope()
            saved = scope.partitioner
            scope.set_partitioner(None)
            try:
                slot = vs.get_variable(
                    "", shape=shape, dtype=dtype, initializer=initializer, trainable=False,
                    validate_shape=shape.is_fully_defined(),
                )
            finally:
                scope.set_partitioner(saved)
    _inherit_slice_info(primary, slot)
    return slot


def _inherit_slice_info(primary, slot):
    """A slot of one part of a partitioned variable is the same part of a partitioned slot.

    As in TensorFlow, the slot of ``emb/part_1`` named ``emb/part_1/Adam``
    is saved as the slice of ``emb/Adam`` the primary covers (a slot of
    lower rank keeps the leading dimensions; a scalar slot is not sliced).
    """
    get = getattr(primary, "_get_save_slice_info", None)
    info = get() if get is not None else None
    if info is None:
        return
    suffix = slot.op.name[len(primary.op.name) + 1:]
    rank = slot.get_shape().ndims
    if rank == 0:
        return
    n = len(info.full_shape) if rank is None else rank
    slot._set_save_slice_info(variables_mod.Variable.SaveSliceInfo(
        f"{info.full_name}/{suffix}", list(info.full_shape[:n]), list(info.var_offset[:n]), list(info.var_shape[:n])
    ))


def _restore_on_create(optimizer, var=None, slot_name=None, slot=None):
    """Lets a pending ``tf.train.Checkpoint`` restore a slot or non-slot variable created after ``restore()``."""
    from ferroflow.training import tracking

    if not tracking._PENDING:
        return
    if slot is None:
        tracking._dependency_added(optimizer)
    else:
        tracking._slot_created(optimizer, var, slot_name, slot)


class Optimizer:
    """Base class: computes gradients and builds update ops (``minimize`` does both)."""

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    #: The fused update rule of subclasses ferroflow implements natively
    #: (None: the subclass's ``_apply_dense`` / ``_apply_sparse`` build updates).
    _rule = None

    def __init__(self, use_locking, name, use_own_namescope_for_non_slot_vars=False):
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        # With the flag, non-slot variables (e.g. Adam's beta powers) live in a variable scope of
        # their own, uniquified from the optimizer's name when it is constructed.
        self._use_own_namescope_for_non_slot_vars = use_own_namescope_for_non_slot_vars
        if use_own_namescope_for_non_slot_vars:
            with vs.variable_scope(None, default_name=name) as scope:
                self._non_slot_variable_scope = scope
        self._slots = {}
        self._non_slot_dict = {}

    def get_name(self):
        return self._name

    # -- gradients -----------------------------------------------------------
    def minimize(self, loss, global_step=None, var_list=None, gate_gradients=GATE_OP, aggregation_method=None,
                 colocate_gradients_with_ops=False, name=None, grad_loss=None):
        """Adds ops computing gradients of ``loss`` and applying them; returns the train op."""
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients, aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss,
        )
        vars_with_grad = [v for g, v in grads_and_vars if g is not None]
        if not vars_with_grad:
            raise ValueError(
                "No gradients provided for any variable, check your graph for ops that do not support "
                f"gradients, between variables {[str(v) for _, v in grads_and_vars]} and loss {loss}."
            )
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss, var_list=None, gate_gradients=GATE_OP, aggregation_method=None,
                          colocate_gradients_with_ops=False, grad_loss=None):
        """``[(gradient or None, variable)]`` for every variable in ``var_list`` (default: trainable)."""
        if callable(loss):
            loss = loss()
        if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP, Optimizer.GATE_GRAPH):
            raise ValueError(
                "gate_gradients must be one of: Optimizer.GATE_NONE, Optimizer.GATE_OP, Optimizer.GATE_GRAPH.  "
                f"Not {gate_gradients}"
            )
        loss = ops.convert_to_tensor(loss)
        self._assert_valid_dtypes([loss])
        if grad_loss is not None:
            self._assert_valid_dtypes([ops.convert_to_tensor(grad_loss)])
        if var_list is None:
            var_list = variables_mod.trainable_variables() + ops.get_collection(
                ops.GraphKeys.TRAINABLE_RESOURCE_VARIABLES
            )
        else:
            var_list = list(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        for v in var_list:
            if not isinstance(v, variables_mod.Variable):
                raise TypeError(f"Argument is not a tf.Variable: {v}")
        grads = gradients_impl.gradients(
            loss, var_list, grad_ys=grad_loss, gate_gradients=(gate_gradients == Optimizer.GATE_OP),
            aggregation_method=aggregation_method, colocate_gradients_with_ops=colocate_gradients_with_ops,
        )
        if gate_gradients == Optimizer.GATE_GRAPH:
            grads = _tuple_of_grads(grads)
        grads_and_vars = list(zip(grads, var_list))
        self._assert_valid_dtypes([v for g, v in grads_and_vars if g is not None])
        return grads_and_vars

    def _assert_valid_dtypes(self, tensors):
        valid = self._valid_dtypes()
        for t in tensors:
            dtype = t.dtype.base_dtype
            if dtype not in valid:
                raise ValueError(
                    f"Invalid type {dtype!r} for {t.name}, expected: {[v for v in valid]}."
                )

    def _valid_dtypes(self):
        return set(_FLOATS)

    # -- applying ------------------------------------------------------------
    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Adds ops applying ``grads_and_vars``; increments ``global_step`` afterwards if given."""
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        converted = []
        for g, v in grads_and_vars:
            if g is not None:
                try:
                    g = g if isinstance(g, IndexedSlices) else ops.convert_to_tensor(g)
                except TypeError:
                    raise TypeError(f"Gradient must be convertible to a Tensor or IndexedSlices, or None: {g}") from None
                if not isinstance(g, (ops.Tensor, IndexedSlices)):
                    raise TypeError(f"Gradient must be a Tensor, IndexedSlices, or None: {g}")
            if not isinstance(v, variables_mod.Variable):
                raise TypeError(f"Variable must be a tf.Variable: {v}")
            converted.append((g, v))
        var_list = [v for g, v in converted if g is not None]
        if not var_list:
            raise ValueError(f"No gradients provided for any variable: {[str(v) for _, v in converted]}.")
        seen = set()
        for v in var_list:
            if _var_key(v) in seen:
                raise ValueError(f"Variable {v.name} appears more than once in grads_and_vars.")
            seen.add(_var_key(v))
        with ops.init_scope():
            self._create_slots(var_list)
        with ops.name_scope(name, self._name) as scope:
            self._prepare()
            update_ops = self._build_updates([(g, v) for g, v in converted if g is not None])
            if global_step is None:
                apply_updates = self._finish(update_ops, scope)
            else:
                with ops.control_dependencies([self._finish(update_ops, "update")]):
                    gs = global_step
                    one = ops.convert_to_tensor(1, dtype=gs.dtype.base_dtype)
                    # TF1 hands back the increment's Operation, so running the
                    # train op fetches None rather than the new step.
                    apply_updates = state_ops.assign_add(gs, one, name=scope)
                    if isinstance(apply_updates, ops.Tensor):
                        apply_updates = apply_updates.op
            train_ops = ops.get_collection_ref(ops.GraphKeys.TRAIN_OP)
            if apply_updates not in train_ops:
                train_ops.append(apply_updates)
            return apply_updates

    def _build_updates(self, pairs):
        updates = []
        dense = [(g, v) for g, v in pairs if not isinstance(g, IndexedSlices)]
        sparse = [(g, v) for g, v in pairs if isinstance(g, IndexedSlices)]
        if self._rule is None:
            for g, v in pairs:
                with ops.name_scope("update_" + v.op.name):
                    if isinstance(g, IndexedSlices):
                        if v.constraint is not None:
                            raise RuntimeError("Cannot use a constraint function on a sparse variable.")
                        updates.append(self._apply_sparse_duplicate_indices(g, v))
                    else:
                        updates.append(self._constrained(self._apply_dense(g, v), v))
            return updates
        # One fused op per dtype and device: under replica_device_setter each ps task updates its own
        # variables (the op is colocated with the refs it takes).
        by_dtype = {}
        for g, v in dense:
            by_dtype.setdefault((v.dtype.base_dtype, v.device), []).append((g, v))
        for (dtype, _), group in by_dtype.items():
            op = self._fused_dense(group, dtype)
            updates.append(op)
            constrained = [v for _, v in group if v.constraint is not None]
            for v in constrained:
                with ops.control_dependencies([op]):
                    updates.append(v.assign(v.constraint(v)).op)
        for g, v in sparse:
            if v.constraint is not None:
                raise RuntimeError("Cannot use a constraint function on a sparse variable.")
            with ops.name_scope("update_" + v.op.name):
                updates.append(self._fused_sparse(g, v))
        return updates

    def _constrained(self, update_op, var):
        if var.constraint is None:
            return update_op
        with ops.control_dependencies([update_op]):
            return var.assign(var.constraint(var)).op

    def _fused_dense(self, pairs, dtype):
        slot_names = self._slot_order()
        refs = [v._ref() for _, v in pairs]
        for _, v in pairs:
            refs.extend(self.get_slot(v, s)._ref() for s in slot_names)
        grads = [g if g.dtype == dtype else math_ops.cast(g, dtype) for g, _ in pairs]
        hypers = self._hyper_tensors(dtype, sparse=False)
        attrs = dict(self._rule_attrs(), rule=self._rule, N=len(pairs))
        return make_op("ApplyFused", refs + grads + hypers, attrs, "update")

    def _fused_sparse(self, grad, var):
        dtype = var.dtype.base_dtype
        refs = [var._ref()] + [self.get_slot(var, s)._ref() for s in self._slot_order()]
        values = grad.values if grad.values.dtype == dtype else math_ops.cast(grad.values, dtype)
        hypers = self._hyper_tensors(dtype, sparse=True)
        attrs = dict(self._rule_attrs(), rule=self._rule)
        return make_op("SparseApplyFused", refs + [values, grad.indices] + hypers, attrs, "update")

    def _apply_sparse_duplicate_indices(self, grad, var):
        return self._apply_sparse(grad, var)

    def _cast(self, t, dtype):
        return t if t.dtype == dtype else math_ops.cast(t, dtype)

    def _hyper_tensors(self, dtype, sparse):
        """The rule's hyper-parameter inputs, in the order the Rust rule table gives."""
        values = self._hyper_values(dtype, sparse)
        names = _RULES[self._rule]["hypers"]
        if sorted(values) != sorted(names):
            raise AssertionError(f"{type(self).__name__} gives hyper-parameters {sorted(values)}, "
                                 f"rule {self._rule!r} takes {names}")
        return [values[n] for n in names]

    def _hyper_values(self, dtype, sparse):
        """``{hyper-parameter name: tensor}`` under the names of the rule's ``hypers``."""
        raise NotImplementedError

    def _rule_attrs(self):
        return {}

    def _slot_order(self):
        """Slot names in the order the update op takes them (the Rust rule table's)."""
        if self._rule is None:
            return []
        rule = _RULES[self._rule]
        return rule["centered_slots"] if self._rule_attrs().get("centered") else rule["slots"]

    # -- subclass hooks ------------------------------------------------------
    def _create_slots(self, var_list):
        pass

    def _prepare(self):
        pass

    def _apply_dense(self, grad, var):
        raise NotImplementedError()

    def _apply_sparse(self, grad, var):
        raise NotImplementedError()

    def _finish(self, update_ops, name_scope):
        return control_flow_ops.group(*update_ops, name=name_scope)

    # -- slots ---------------------------------------------------------------
    def _slot_dict(self, slot_name):
        return self._slots.setdefault(slot_name, {})

    def _get_or_make_slot_with_initializer(self, var, initializer, shape, dtype, slot_name, op_name):
        named = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named:
            named[key] = _create_slot(var, initializer, shape, dtype, op_name)
            _restore_on_create(self, var, slot_name, named[key])
        return named[key]

    def _zeros_slot(self, var, slot_name, op_name):
        return self._get_or_make_slot_with_initializer(
            var, init_ops.zeros_initializer(), var.get_shape(), var.dtype.base_dtype, slot_name, op_name
        )

    def _get_or_make_slot(self, var, val, slot_name, op_name):
        named = self._slot_dict(slot_name)
        key = _var_key(var)
        if key not in named:
            val = ops.convert_to_tensor(val)
            named[key] = _create_slot(var, val, None, None, op_name)
            _restore_on_create(self, var, slot_name, named[key])
        return named[key]

    def get_slot(self, var, name):
        """The slot variable ``name`` created for ``var`` (None if there is none)."""
        named = self._slots.get(name)
        if not named:
            return None
        return named.get(_var_key(var))

    def get_slot_names(self):
        return sorted(self._slots.keys())

    def _create_non_slot_variable(self, initial_value, name, colocate_with):
        graph = colocate_with.graph
        key = (name, id(graph))
        v = self._non_slot_dict.get(key)
        if v is None:
            with graph.as_default(), ops.colocate_with(colocate_with):
                if self._use_own_namescope_for_non_slot_vars:
                    with ops.name_scope(""), vs.variable_scope(self._non_slot_variable_scope):
                        v = vs.get_variable(name, initializer=initial_value, trainable=False)
                else:
                    v = variables_mod.Variable(initial_value, name=name, trainable=False)
            self._non_slot_dict[key] = v
            _restore_on_create(self)
        return v

    def _get_non_slot_variable(self, name, graph=None):
        graph = ops.get_default_graph() if graph is None else graph
        # Inside a cond/while body (a FuncGraph) the variables are the enclosing graph's, as TF's
        # FuncGraph shares its outer graph's key.
        while getattr(graph, "outer_graph", None) is not None:
            graph = graph.outer_graph
        return self._non_slot_dict.get((name, id(graph)))

    def _non_slot_variables(self):
        return list(self._non_slot_dict.values())

    def variables(self):
        """Slots and non-slot variables of the current graph, sorted by name."""
        graph = ops.get_default_graph()
        out = [v for v in self._non_slot_variables() if v.graph is graph]
        for named in self._slots.values():
            out.extend(v for v in named.values() if v.graph is graph)
        return sorted(out, key=lambda v: v.name)


def _tuple_of_grads(grads):
    present = [g for g in grads if g is not None]
    tensors = [g.values if isinstance(g, IndexedSlices) else g for g in present]
    gated = control_flow_ops.tuple(tensors)
    out, it = [], iter(gated)
    for g in grads:
        if g is None:
            out.append(None)
        else:
            t = next(it)
            out.append(IndexedSlices(t, g.indices, g.dense_shape) if isinstance(g, IndexedSlices) else t)
    return out


def _hyper(value, name):
    """A hyper-parameter as TensorFlow's ``_prepare`` makes it (Python float -> float32 tensor)."""
    if callable(value):
        value = value()
    return ops.convert_to_tensor(value, name=name)


class GradientDescentOptimizer(Optimizer):
    """``var -= learning_rate * grad``."""

    _rule = "sgd"

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._learning_rate_tensor = None

    def _prepare(self):
        self._learning_rate_tensor = _hyper(self._learning_rate, "learning_rate")

    def _hyper_values(self, dtype, sparse):
        return {"lr": self._cast(self._learning_rate_tensor, dtype)}


class MomentumOptimizer(Optimizer):
    """Momentum (optionally Nesterov): ``accum = accum*momentum + grad``."""

    _rule = "momentum"

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum", use_nesterov=False):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._learning_rate_tensor = _hyper(self._learning_rate, "learning_rate")
        self._momentum_tensor = _hyper(self._momentum, "momentum")


    def _rule_attrs(self):
        return {"use_nesterov": bool(self._use_nesterov)}

    def _hyper_values(self, dtype, sparse):
        return {"lr": self._cast(self._learning_rate_tensor, dtype), "momentum": self._cast(self._momentum_tensor, dtype)}


class AdagradOptimizer(Optimizer):
    """Adagrad: ``accum += grad**2; var -= lr * grad / sqrt(accum)``."""

    _rule = "adagrad"

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False, name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: {initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list):
        for v in var_list:
            dtype = v.dtype.base_dtype
            init = init_ops.constant_initializer(self._initial_accumulator_value, dtype=dtype)
            self._get_or_make_slot_with_initializer(v, init, v.get_shape(), dtype, "accumulator", self._name)

    def _prepare(self):
        self._learning_rate_tensor = _hyper(self._learning_rate, "learning_rate")


    def _hyper_values(self, dtype, sparse):
        return {"lr": self._cast(self._learning_rate_tensor, dtype)}


class AdagradDAOptimizer(Optimizer):
    """Adagrad dual averaging, with l1/l2 regularization; needs an int64 ``global_step``."""

    _rule = "adagrad_da"

    def __init__(self, learning_rate, global_step, initial_gradient_squared_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0, use_locking=False,
                 name="AdagradDA"):
        if initial_gradient_squared_accumulator_value <= 0.0:
            raise ValueError(
                "initial_gradient_squared_accumulator_value must be positive: "
                f"{initial_gradient_squared_accumulator_value}"
            )
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_gradient_squared_accumulator_value = initial_gradient_squared_accumulator_value
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength
        self._global_step = global_step

    def _create_slots(self, var_list):
        for v in var_list:
            dtype = v.dtype.base_dtype
            self._zeros_slot(v, "gradient_accumulator", self._name)
            init = init_ops.constant_initializer(self._initial_gradient_squared_accumulator_value, dtype=dtype)
            self._get_or_make_slot_with_initializer(
                v, init, v.get_shape(), dtype, "gradient_squared_accumulator", self._name
            )

    def _prepare(self):
        self._learning_rate_tensor = _hyper(self._learning_rate, "learning_rate")
        if self._global_step is None:
            raise ValueError("None values not supported.")
        gs = ops.convert_to_tensor(self._global_step)
        if gs.dtype.base_dtype != dtypes.int64:
            raise TypeError(
                f"Input 'global_step' of 'ApplyAdagradDA' Op has type {gs.dtype.base_dtype.name} that does not "
                "match expected type of int64."
            )
        self._global_step_tensor = gs


    def _hyper_values(self, dtype, sparse):
        return {
            "lr": self._cast(self._learning_rate_tensor, dtype),
            "l1": self._cast(ops.convert_to_tensor(self._l1_regularization_strength), dtype),
            "l2": self._cast(ops.convert_to_tensor(self._l2_regularization_strength), dtype),
            "global_step": self._global_step_tensor,
        }


class AdadeltaOptimizer(Optimizer):
    """Adadelta: per-coordinate step sizes from running averages of gradients and updates."""

    _rule = "adadelta"

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-8, use_locking=False, name="Adadelta"):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._rho = rho
        self._epsilon = epsilon

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _prepare(self):
        self._lr_t = _hyper(self._lr, "lr")
        self._rho_t = _hyper(self._rho, "rho")
        self._epsilon_t = _hyper(self._epsilon, "epsilon")


    def _hyper_values(self, dtype, sparse):
        return {"lr": self._cast(self._lr_t, dtype), "rho": self._cast(self._rho_t, dtype),
                "epsilon": self._cast(self._epsilon_t, dtype)}


class AdamOptimizer(Optimizer):
    """Adam, with TensorFlow 1's epsilon-hat and float32 beta power accumulators."""

    _rule = "adam"

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False, name="Adam",
                 use_own_namescope_for_non_slot_vars=False):
        super().__init__(use_locking, name, use_own_namescope_for_non_slot_vars)
        self._lr = learning_rate
        self._beta1 = beta1
        self._beta2 = beta2
        self._epsilon = epsilon

    def _get_beta_accumulators(self, graph=None):
        return (self._get_non_slot_variable("beta1_power", graph), self._get_non_slot_variable("beta2_power", graph))

    def _create_slots(self, var_list):
        first = min(var_list, key=lambda x: x.name)
        self._create_non_slot_variable(self._beta1, "beta1_power", first)
        self._create_non_slot_variable(self._beta2, "beta2_power", first)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _prepare(self):
        self._lr_t = _hyper(self._lr, "learning_rate")
        self._beta1_t = _hyper(self._beta1, "beta1")
        self._beta2_t = _hyper(self._beta2, "beta2")
        self._epsilon_t = _hyper(self._epsilon, "epsilon")


    def _hyper_values(self, dtype, sparse):
        p1, p2 = self._get_beta_accumulators()
        return {
            "beta1_power": self._cast(ops.convert_to_tensor(p1), dtype),
            "beta2_power": self._cast(ops.convert_to_tensor(p2), dtype),
            "lr": self._cast(self._lr_t, dtype),
            "beta1": self._cast(self._beta1_t, dtype),
            "beta2": self._cast(self._beta2_t, dtype),
            "epsilon": self._cast(self._epsilon_t, dtype),
        }

    def _finish(self, update_ops, name_scope):
        with ops.control_dependencies(update_ops):
            p1, p2 = self._get_beta_accumulators()
            # Computed where the powers live, as TF does (on a cluster: on their ps task).
            with ops.colocate_with(p1):
                update_beta1 = p1.assign(p1 * self._beta1_t, use_locking=self._use_locking)
                update_beta2 = p2.assign(p2 * self._beta2_t, use_locking=self._use_locking)
        return control_flow_ops.group(*update_ops + [update_beta1, update_beta2], name=name_scope)


def _check_non_negative(value, what, zero_ok=True):
    if isinstance(value, (int, float)) and (value < 0 if zero_ok else value <= 0):
        raise ValueError(f"{what} {value:f} needs to be positive or zero")


class FtrlOptimizer(Optimizer):
    """FTRL-Proximal (with optional l2 shrinkage and learning-rate power)."""

    _rule = "ftrl"

    def __init__(self, learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0, use_locking=False, name="Ftrl",
                 accum_name=None, linear_name=None, l2_shrinkage_regularization_strength=0.0, beta=None):
        super().__init__(use_locking, name)
        if initial_accumulator_value < 0.0:
            raise ValueError(f"initial_accumulator_value {initial_accumulator_value:f} needs to be positive or zero")
        if learning_rate_power > 0.0:
            raise ValueError(f"learning_rate_power {learning_rate_power:f} needs to be negative or zero")
        if l1_regularization_strength < 0.0:
            raise ValueError(
                f"l1_regularization_strength {l1_regularization_strength:f} needs to be positive or zero"
            )
        if l2_regularization_strength < 0.0:
            raise ValueError(
                f"l2_regularization_strength {l2_regularization_strength:f} needs to be positive or zero"
            )
        if l2_shrinkage_regularization_strength < 0.0:
            raise ValueError(
                "l2_shrinkage_regularization_strength "
                f"{l2_shrinkage_regularization_strength:f} needs to be positive or zero"
            )
        self._learning_rate = learning_rate
        self._learning_rate_power = learning_rate_power
        self._initial_accumulator_value = initial_accumulator_value
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength
        self._beta = 0.0 if beta is None else beta
        self._l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self._accum_name = accum_name
        self._linear_name = linear_name

    def _create_slots(self, var_list):
        for v in var_list:
            dtype = v.dtype.base_dtype
            init = init_ops.constant_initializer(self._initial_accumulator_value, dtype=dtype)
            self._get_or_make_slot_with_initializer(v, init, v.get_shape(), dtype, "accum", self._accum_name or self._name)
            self._zeros_slot(v, "linear", self._linear_name or self._name)

    def _prepare(self):
        self._learning_rate_tensor = _hyper(self._learning_rate, "learning_rate")
        self._l1_t = ops.convert_to_tensor(self._l1_regularization_strength, name="l1_regularization_strength")
        # Effective L2 folds beta in: l2 + beta / (2 * lr), in float32 like TF.
        lr = self._learning_rate_tensor
        adjusted = math_ops.add(
            self._l2_regularization_strength,
            math_ops.divide(self._beta, math_ops.multiply(2.0, math_ops.maximum(lr, 1e-36))),
        ) if self._beta else ops.convert_to_tensor(self._l2_regularization_strength, dtype=dtypes.float32)
        self._l2_t = ops.convert_to_tensor(adjusted, name="adjusted_l2_regularization_strength")
        self._l2s_t = ops.convert_to_tensor(
            self._l2_shrinkage_regularization_strength, name="l2_shrinkage_regularization_strength"
        )
        self._power_t = ops.convert_to_tensor(self._learning_rate_power, name="learning_rate_power")


    def _rule_attrs(self):
        return {"shrinkage": bool(self._l2_shrinkage_regularization_strength > 0.0)}

    def _hyper_values(self, dtype, sparse):
        tensors = {"lr": self._learning_rate_tensor, "l1": self._l1_t, "l2": self._l2_t,
                   "l2_shrinkage": self._l2s_t, "lr_power": self._power_t}
        return {name: self._cast(ops.convert_to_tensor(t), dtype) for name, t in tensors.items()}


def _proximal_hypers(opt, dtype, sparse, op_name):
    tensors = {"lr": opt._learning_rate_tensor, "l1": opt._l1_t, "l2": opt._l2_t}
    if not sparse:
        # TensorFlow's dense proximal kernels take the hyper-parameters uncast.
        for arg, t in tensors.items():
            if t.dtype.base_dtype != dtype:
                raise TypeError(
                    f"Input '{arg}' of '{op_name}' Op has type {t.dtype.base_dtype.name} that does not match type "
                    f"{dtype.name} of argument 'var'."
                )
        return tensors
    return {arg: opt._cast(t, dtype) for arg, t in tensors.items()}


class ProximalGradientDescentOptimizer(Optimizer):
    """Gradient descent followed by the l1/l2 proximal step."""

    _rule = "proximal_sgd"

    def __init__(self, learning_rate, l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="ProximalGradientDescent"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength

    def _prepare(self):
        self._learning_rate_tensor = _hyper(self._learning_rate, "learning_rate")
        self._l1_t = ops.convert_to_tensor(self._l1_regularization_strength, name="l1_regularization_strength")
        self._l2_t = ops.convert_to_tensor(self._l2_regularization_strength, name="l2_regularization_strength")

    def _hyper_values(self, dtype, sparse):
        return _proximal_hypers(self, dtype, sparse, "ApplyProximalGradientDescent")


class ProximalAdagradOptimizer(Optimizer):
    """Adagrad followed by the l1/l2 proximal step."""

    _rule = "proximal_adagrad"

    def __init__(self, learning_rate, initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking=False, name="ProximalAdagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: {initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength

    def _create_slots(self, var_list):
        for v in var_list:
            dtype = v.dtype.base_dtype
            init = init_ops.constant_initializer(self._initial_accumulator_value, dtype=dtype)
            self._get_or_make_slot_with_initializer(v, init, v.get_shape(), dtype, "accumulator", self._name)

    def _prepare(self):
        self._learning_rate_tensor = _hyper(self._learning_rate, "learning_rate")
        self._l1_t = ops.convert_to_tensor(self._l1_regularization_strength, name="l1_regularization_strength")
        self._l2_t = ops.convert_to_tensor(self._l2_regularization_strength, name="l2_regularization_strength")


    def _hyper_values(self, dtype, sparse):
        return _proximal_hypers(self, dtype, sparse, "ApplyProximalAdagrad")


class RMSPropOptimizer(Optimizer):
    """RMSProp (optionally centered), with momentum."""

    _rule = "rmsprop"

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10, use_locking=False, centered=False,
                 name="RMSProp"):
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon
        self._centered = centered

    def _create_slots(self, var_list):
        for v in var_list:
            dtype = v.dtype.base_dtype
            self._get_or_make_slot_with_initializer(
                v, init_ops.ones_initializer(dtype=dtype), v.get_shape(), dtype, "rms", self._name
            )
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._learning_rate_tensor = _hyper(self._learning_rate, "learning_rate")
        self._decay_tensor = _hyper(self._decay, "decay")
        self._momentum_tensor = _hyper(self._momentum, "momentum")
        self._epsilon_tensor = _hyper(self._epsilon, "epsilon")


    def _rule_attrs(self):
        return {"centered": bool(self._centered)}

    def _hyper_values(self, dtype, sparse):
        tensors = {"lr": self._learning_rate_tensor, "rho": self._decay_tensor, "momentum": self._momentum_tensor,
                   "epsilon": self._epsilon_tensor}
        return {name: self._cast(t, dtype) for name, t in tensors.items()}


_ = array_ops
