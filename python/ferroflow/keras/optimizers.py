"""``tf.keras.optimizers`` on TF1 graphs: SGD, Adam, RMSprop, Adagrad, Adadelta, Adamax, Nadam with Keras's
arguments and defaults (``lr`` or ``learning_rate``, ``decay``, ``clipnorm``, ``clipvalue``), as TF 1.15's Keras
(tf_keras's ``optimizers.legacy``) defines them.

Each is a ``tf.train.Optimizer`` (so ``minimize`` works in TF1 code too) running the same fused update as its
``tf.train`` counterpart where the formulas agree: Keras's SGD momentum (``v = m*v - lr*g; w += v``) is
``MomentumOptimizer``'s (``a = m*a + g; w -= lr*a``) for a constant learning rate; Adam is ``AdamOptimizer``
with Keras's epsilon (1e-7). The others differ from ``tf.train``'s and are built from ops here: Keras's RMSprop
(its mean square starts at zero, not one, and without momentum the epsilon is added after the square root),
Adagrad (``w -= lr*g / (sqrt(accum) + epsilon)``, TensorFlow's ``ApplyAdagradV2``), Adamax (``ApplyAdaMax``)
and Nadam (Dozat's schedule of the momentum, ``momentum_cache``). Sparse gradients (embeddings) update only
their rows where Keras's sparse update does (Adamax, Nadam's variable), after summing duplicate indices.

``optimizer.lr`` (``learning_rate``) is a variable, so ``K.set_value(model.optimizer.lr, x)`` and the
learning-rate callbacks work; ``optimizer.iterations`` counts the applied steps (``decay`` divides the rate by
``1 + decay * iterations``).
"""

from __future__ import annotations

import inspect
import weakref

import numpy as np

from ferroflow.framework import dtypes, ops
from ferroflow.framework.indexed_slices import IndexedSlices
from ferroflow.keras import backend as K
from ferroflow.ops import array_ops, clip_ops, control_flow_ops, math_ops, segment_ops, state_ops
from ferroflow.ops import variables as variables_mod
from ferroflow.training import optimizers as tf_opt

__all__ = ["Adadelta", "Adagrad", "Adam", "Adamax", "Nadam", "Optimizer", "RMSprop", "SGD", "deserialize", "get",
           "serialize"]

Optimizer = tf_opt.Optimizer


class _KerasOptimizer:
    """Keras's learning-rate variable, iteration counter, decay and gradient clipping."""

    def _keras_init(self, lr, learning_rate, decay, kwargs):
        unknown = sorted(set(kwargs) - {"clipnorm", "clipvalue", "global_clipnorm"})
        if unknown:
            raise TypeError(f"Unexpected keyword argument passed to optimizer: {unknown[0]}")
        self._keras_lr = learning_rate if lr is None else lr
        self._keras_decay = float(decay)
        self._clipnorm = kwargs.get("clipnorm")
        self._clipvalue = kwargs.get("clipvalue")
        self._keras_vars = weakref.WeakKeyDictionary()

    # -- variables, named as Keras names them ----------------------------------------------------------------
    # Keras's hyper-parameters that are variables (besides ``decay`` and ``learning_rate``), sorted by name.
    _HYPERS = ()

    def _hyper_python_value(self, name):
        if name == "learning_rate":
            return self._keras_lr
        if name == "decay":
            return self._keras_decay
        return getattr(self, name)

    def _keras_base(self):
        """This graph's scope for the optimizer's variables: ``<name scope where they were first needed>/<name>``
        (``training/Adam`` when ``fit`` builds the training, as in TensorFlow's Keras)."""
        graph = ops.get_default_graph()
        per_graph = self._keras_vars.setdefault(graph, {})
        if "__base__" not in per_graph:
            outer = graph.get_name_scope()
            per_graph["__base__"] = f"{outer}/{self._name}" if outer else self._name
        return per_graph["__base__"]

    def _keras_var(self, key, make):
        """The variable ``key`` of this graph, made by ``make()`` in the optimizer's scope on first use; the
        iteration counter and the hyper-parameters are made first, together, in Keras's order."""
        graph = ops.get_default_graph()
        per_graph = self._keras_vars.setdefault(graph, {})
        if "iter" not in per_graph:
            per_graph["iter"] = None  # re-entry guard
            base = self._keras_base()
            made = [("iter", lambda: variables_mod.Variable(0, name="iter", trainable=False, dtype=dtypes.int64))]
            for name in sorted(("decay", "learning_rate") + tuple(self._HYPERS)):
                value = self._hyper_python_value(name)
                if callable(value) or isinstance(value, (ops.Tensor, variables_mod.Variable)):
                    continue
                made.append((name, lambda n=name, v=value: variables_mod.Variable(
                    float(v), name=n, trainable=False, dtype=dtypes.float32)))
            with ops.init_scope(), ops.name_scope(base + "/"):
                for name, maker in made:
                    per_graph[name] = maker()
                    K._track_variable(per_graph[name])
        if key not in per_graph:
            with ops.init_scope(), ops.name_scope(self._keras_base() + "/"):
                per_graph[key] = make()
            K._track_variable(per_graph[key])
        return per_graph[key]

    def _hyper_tensor(self, name, dtype):
        """A hyper-parameter (its variable's value, or the tensor/callable given) as a ``dtype`` tensor."""
        value = self._hyper_python_value(name)
        if callable(value) and not isinstance(value, (ops.Tensor, variables_mod.Variable)):
            value = value()
        if not isinstance(value, (ops.Tensor, variables_mod.Variable)):
            value = self._keras_var(name, None)
        return math_ops.cast(ops.convert_to_tensor(value), dtype)

    @property
    def lr(self):
        """The learning rate (a variable of the default graph)."""
        value = self._keras_lr
        if callable(value) or isinstance(value, (ops.Tensor, variables_mod.Variable)):
            return value
        return self._keras_var("learning_rate", None)

    learning_rate = lr

    @property
    def iterations(self):
        return self._keras_var("iter", None)

    # Keras's slot names where tf.train's differ (the fused update rules know tf.train's).
    _KERAS_SLOT_NAMES = {}

    def _get_or_make_slot_with_initializer(self, var, initializer, shape, dtype, slot_name, op_name):
        """Slots named as Keras names them: ``<optimizer scope>/<variable>/<slot>`` (``training/Adam/dense/kernel/m``)."""
        named = self._slot_dict(slot_name)
        key = tf_opt._var_key(var)
        if key not in named:
            keras_name = self._KERAS_SLOT_NAMES.get(slot_name, slot_name)
            base = self._keras_base()
            with ops.init_scope(), ops.colocate_with(var), ops.name_scope(f"{base}/{var.op.name}/"):
                slot = variables_mod.Variable(lambda: initializer(shape.as_list(), dtype=dtype), name=keras_name,
                                              trainable=False, dtype=dtype)
            named[key] = slot
            tf_opt._restore_on_create(self, var, slot_name, slot)
        return named[key]

    @property
    def decay(self):
        return self._keras_decay

    def _lr_tensor(self):
        lr = self._hyper_tensor("learning_rate", dtypes.float32)
        if self._keras_decay:
            it = math_ops.cast(ops.convert_to_tensor(self.iterations), dtypes.float32)
            lr = lr / (1.0 + self._hyper_tensor("decay", dtypes.float32) * it)
        return lr

    def compute_gradients(self, loss, var_list=None, **kwargs):
        pairs = super().compute_gradients(loss, var_list=var_list, **kwargs)
        if self._clipnorm is None and self._clipvalue is None:
            return pairs
        out = []
        for g, v in pairs:
            if g is not None:
                if isinstance(g, IndexedSlices):
                    g = _dense(g)
                if self._clipnorm is not None:
                    g = clip_ops.clip_by_norm(g, self._clipnorm)
                if self._clipvalue is not None:
                    g = clip_ops.clip_by_value(g, -self._clipvalue, self._clipvalue)
            out.append((g, v))
        return out

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Applies the gradients and counts the step in ``iterations`` (or in ``global_step``, if given)."""
        return super().apply_gradients(grads_and_vars, global_step=global_step if global_step is not None
                                       else self.iterations, name=name)

    # -- state in Keras's order (HDF5 files' optimizer_weights) ------------------------------------------------
    _KERAS_SLOTS = ()  # (Keras's slot name, this optimizer's slot name), in the order Keras creates them

    def _keras_slots(self):
        return self._KERAS_SLOTS

    def _keras_extra_weights(self):
        return []

    def keras_weights(self, var_list):
        """``[(Keras's name, variable)]`` of the state Keras's ``optimizer.weights`` lists, in its order:
        ``iter``, extra weights, then each slot for every variable (the slots exist once training is built)."""
        prefix = f"training/{self._name}"
        out = [(f"{prefix}/iter:0", self.iterations)]
        out += [(f"{prefix}/{v.op.name.rsplit('/', 1)[-1]}:0", v) for v in self._keras_extra_weights()]
        for keras_name, slot_name in self._keras_slots():
            for var in var_list:
                slot = self.get_slot(var, slot_name)
                if slot is None:
                    raise ValueError(f"The optimizer has no {slot_name!r} slot for {var.name} yet (train or build "
                                     "the model's training first)")
                out.append((f"{prefix}/{var.op.name}/{keras_name}:0", slot))
        return out

    def _to_keras(self, slot_name, value):
        return value

    def _from_keras(self, slot_name, value):
        return value

    # -- TensorFlow's object-based checkpoints (save_weights): ``optimizer/<hyper>``, slots by Keras's names ----
    def _checkpoint_children(self):
        """The iteration counter and hyper-parameter variables of the default graph, by Keras's names."""
        per_graph = self._keras_vars.get(ops.get_default_graph(), {})
        return sorted((k, v) for k, v in per_graph.items() if not k.startswith("__") and v is not None)

    def _checkpoint_slot_names(self):
        """``[(Keras's slot name, this optimizer's)]``: the slots a TensorFlow checkpoint holds as Keras's."""
        if not self._checkpoint_slots_as_keras():
            return []
        return [(self._KERAS_SLOT_NAMES.get(name, name), name) for name in self.get_slot_names()]

    def _checkpoint_slots_as_keras(self):
        """Whether this optimizer's slot values are Keras's (they are written to checkpoints only then)."""
        return True

    def get_keras_weights(self, var_list):
        """The values of ``keras_weights`` (``[(name, numpy value)]``), as Keras's optimizer holds them."""
        pairs = self.keras_weights(var_list)
        values = K.batch_get_value([v for _, v in pairs])
        names = [None] * (len(pairs) - len(var_list) * len(self._keras_slots())) + \
            [s for _, s in self._keras_slots() for _ in var_list]
        return [(n, self._to_keras(s, v)) for (n, _), s, v in zip(pairs, names, values)]

    def set_keras_weights(self, var_list, values):
        """Assigns Keras-ordered optimizer state (``get_keras_weights``'s values, or TensorFlow's)."""
        pairs = self.keras_weights(var_list)
        if len(pairs) != len(values):
            raise ValueError(f"The optimizer expects {len(pairs)} weights, got {len(values)}")
        names = [None] * (len(pairs) - len(var_list) * len(self._keras_slots())) + \
            [s for _, s in self._keras_slots() for _ in var_list]
        assignments = []
        for (_, variable), slot, value in zip(pairs, names, values):
            value = np.asarray(self._from_keras(slot, np.asarray(value)))
            if tuple(variable.shape.as_list()) != value.shape:
                raise ValueError(f"Optimizer weight shape {tuple(variable.shape.as_list())} of {variable.name} not "
                                 f"compatible with provided weight shape {value.shape}")
            assignments.append((variable, value))
        K.batch_set_value(assignments)

    def get_updates(self, loss, params):
        return [self.minimize(loss, var_list=params)]

    _CONFIG_ATTRS = {"beta_1": "_beta1", "beta_2": "_beta2", "epsilon": "_epsilon", "momentum": "_momentum",
                     "nesterov": "nesterov", "rho": "_rho", "centered": "centered",
                     "initial_accumulator_value": "_initial_accumulator_value"}

    def get_config(self):
        """The name, learning rate, decay and the optimizer's own hyper-parameters (Keras's names)."""
        value = self._keras_lr
        config = {"name": self._name, "learning_rate": value if isinstance(value, (int, float)) else None,
                  "decay": self._keras_decay}
        params = inspect.signature(type(self).__init__).parameters
        for key in params:
            if key in config or key in ("self", "lr", "kwargs", "learning_rate", "decay"):
                continue
            for attr in (key, self._CONFIG_ATTRS.get(key)):
                if attr and hasattr(self, attr) and isinstance(getattr(self, attr), (int, float, bool)):
                    config[key] = getattr(self, attr)
                    break
        if isinstance(self, Nadam):
            config["decay"] = config.pop("schedule_decay", 0.004)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("name", None)
        return cls(**config)


def _dense(g):
    return segment_ops.unsorted_segment_sum(g.values, g.indices, g.dense_shape[0])


class SGD(_KerasOptimizer, tf_opt.MomentumOptimizer):
    """Gradient descent, with (Nesterov) momentum when ``momentum > 0``."""

    def __init__(self, lr=None, momentum=0.0, decay=0.0, nesterov=False, learning_rate=0.01, name="SGD", **kwargs):
        self._keras_init(lr, learning_rate, decay, kwargs)
        if isinstance(momentum, (int, float)) and not 0 <= momentum <= 1:
            raise ValueError(f"`momentum` must be between [0, 1]. Received: momentum={momentum}")
        tf_opt.MomentumOptimizer.__init__(self, self._lr_tensor, momentum, name=name, use_nesterov=nesterov)
        self._plain = isinstance(momentum, (int, float)) and momentum == 0
        self.momentum = momentum
        self.nesterov = nesterov
        if self._plain:
            self._rule = "sgd"

    def _create_slots(self, var_list):
        if not self._plain:
            super()._create_slots(var_list)

    def _keras_slots(self):
        return () if self._plain else (("momentum", "momentum"),)

    def _checkpoint_slots_as_keras(self):
        # The accumulator is not Keras's velocity (below): TF-format checkpoints leave it out.
        return False

    def _to_keras(self, slot_name, value):
        # Keras's velocity is -lr times tf.train's accumulator (v = m*v - lr*g; a = m*a + g).
        return value if slot_name is None else -float(K.get_value(self.lr)) * value

    def _from_keras(self, slot_name, value):
        return value if slot_name is None else value / -float(K.get_value(self.lr))

    def _rule_attrs(self):
        return {} if self._plain else super()._rule_attrs()

    _HYPERS = ("momentum",)

    def _hyper_values(self, dtype, sparse):
        lr = self._cast(self._learning_rate_tensor, dtype)
        if self._plain:
            return {"lr": lr}
        return {"lr": lr, "momentum": self._hyper_tensor("momentum", dtype)}


class Adam(_KerasOptimizer, tf_opt.AdamOptimizer):
    """Adam (Keras's epsilon default, 1e-7)."""

    def __init__(self, lr=None, beta_1=0.9, beta_2=0.999, epsilon=None, decay=0.0, amsgrad=False,
                 learning_rate=0.001, name="Adam", **kwargs):
        if amsgrad:
            raise NotImplementedError("Adam(amsgrad=True) is not supported by ferroflow yet")
        self._keras_init(lr, learning_rate, decay, kwargs)
        tf_opt.AdamOptimizer.__init__(self, self._lr_tensor, beta_1, beta_2, K.epsilon() if epsilon is None
                                      else epsilon, name=name)
        self.beta_1 = beta_1
        self.beta_2 = beta_2

    _HYPERS = ("beta_1", "beta_2")
    _KERAS_SLOTS = (("m", "m"), ("v", "v"))

    def _create_slots(self, var_list):
        # Keras's order (every m, then every v); the powers of beta come from the step count, not variables.
        for slot in ("m", "v"):
            for v in var_list:
                self._zeros_slot(v, slot, self._name)

    def _hyper_values(self, dtype, sparse):
        b1, b2 = self._hyper_tensor("beta_1", dtype), self._hyper_tensor("beta_2", dtype)
        step = math_ops.cast(self.iterations + 1, dtype)
        return {"beta1_power": math_ops.pow(b1, step), "beta2_power": math_ops.pow(b2, step),
                "lr": self._cast(self._lr_t, dtype), "beta1": b1, "beta2": b2,
                "epsilon": self._cast(self._epsilon_t, dtype)}

    def _finish(self, update_ops, name_scope):
        return control_flow_ops.group(*update_ops, name=name_scope)


class Adadelta(_KerasOptimizer, tf_opt.AdadeltaOptimizer):
    """Adadelta (Keras's epsilon default, 1e-7)."""

    def __init__(self, lr=None, rho=0.95, epsilon=None, decay=0.0, learning_rate=0.001, name="Adadelta",
                 **kwargs):
        self._keras_init(lr, learning_rate, decay, kwargs)
        tf_opt.AdadeltaOptimizer.__init__(self, self._lr_tensor, rho, K.epsilon() if epsilon is None else epsilon,
                                          name=name)
        self.rho = rho

    _HYPERS = ("rho",)
    _KERAS_SLOTS = (("accum_grad", "accum"), ("accum_var", "accum_update"))
    _KERAS_SLOT_NAMES = {"accum": "accum_grad", "accum_update": "accum_var"}

    def _create_slots(self, var_list):
        for slot in ("accum", "accum_update"):
            for v in var_list:
                self._zeros_slot(v, slot, self._name)

    def _hyper_values(self, dtype, sparse):
        return {"lr": self._cast(self._lr_t, dtype), "rho": self._hyper_tensor("rho", dtype),
                "epsilon": self._cast(self._epsilon_t, dtype)}


class _OpsOptimizer(_KerasOptimizer, tf_opt.Optimizer):
    """A Keras optimizer whose update is built from graph ops (``_apply_dense``; sparse gradients are summed
    per row, then given to ``_apply_rows`` or, by default, made dense)."""

    def _keras_ops_init(self, lr, learning_rate, decay, epsilon, name, kwargs):
        self._keras_init(lr, learning_rate, decay, kwargs)
        tf_opt.Optimizer.__init__(self, False, name)
        self.epsilon = K.epsilon() if epsilon is None else float(epsilon)

    def _prepare(self):
        self._lr_t = self._lr_tensor()

    def _consts(self, dtype, **values):
        return {k: ops.convert_to_tensor(v, dtype=dtype) for k, v in values.items()}

    def _apply_sparse(self, grad, var):
        indices, inverse = array_ops.unique(grad.indices)
        rows = math_ops.unsorted_segment_sum(grad.values, inverse, array_ops.shape(indices)[0])
        return self._apply_rows(rows, indices, var)

    def _apply_rows(self, rows, indices, var):
        dense = segment_ops.unsorted_segment_sum(rows, indices, array_ops.shape(var)[0])
        return self._apply_dense(dense, var)


class RMSprop(_OpsOptimizer):
    """Keras's RMSprop: ``rms = rho*rms + (1-rho)*g**2`` from zero; ``w -= lr*g / (sqrt(rms) + eps)``, or with
    ``momentum``: ``mom = momentum*mom + lr*g / sqrt(rms + eps); w -= mom`` (``centered`` subtracts the mean
    gradient's square from ``rms``)."""

    def __init__(self, lr=None, rho=0.9, momentum=0.0, epsilon=None, decay=0.0, centered=False,
                 learning_rate=0.001, name="RMSprop", **kwargs):
        self._keras_ops_init(lr, learning_rate, decay, epsilon, name, kwargs)
        self.rho = rho
        self.momentum = momentum
        self.centered = centered

    _HYPERS = ("momentum", "rho")

    def _keras_slots(self):
        return tuple((name, name) for name in self._slot_kinds())

    def _slot_kinds(self):
        return ("rms",) + (("momentum",) if self.momentum else ()) + (("mg",) if self.centered else ())

    def _create_slots(self, var_list):
        for slot in self._slot_kinds():
            for v in var_list:
                self._zeros_slot(v, slot, self._name)

    def _apply_dense(self, grad, var):
        dtype = var.dtype.base_dtype
        lr = math_ops.cast(self._lr_t, dtype)
        c = self._consts(dtype, eps=self.epsilon, one=1.0)
        rho, eps, one = self._hyper_tensor("rho", dtype), c["eps"], c["one"]
        rms = self.get_slot(var, "rms")
        rms_t = state_ops.assign(rms, rho * rms + (one - rho) * math_ops.square(grad))
        denom = rms_t
        if self.centered:
            mg = self.get_slot(var, "mg")
            mg_t = state_ops.assign(mg, rho * mg + (one - rho) * grad)
            denom = rms_t - math_ops.square(mg_t)
        if self.momentum:
            mom = self.get_slot(var, "momentum")
            mom_t = state_ops.assign(mom, self._hyper_tensor("momentum", dtype) * mom +
                                     lr * grad / math_ops.sqrt(denom + eps))
            return state_ops.assign_sub(var, mom_t).op
        return state_ops.assign_sub(var, lr * grad / (math_ops.sqrt(denom) + eps)).op


class Adagrad(_OpsOptimizer):
    """Keras's Adagrad (TensorFlow's ``ApplyAdagradV2``): ``accum += g**2; w -= lr*g / (sqrt(accum) + epsilon)``,
    the accumulators starting at ``initial_accumulator_value`` (which may be zero)."""

    def __init__(self, lr=None, epsilon=None, decay=0.0, initial_accumulator_value=0.1, learning_rate=0.001,
                 name="Adagrad", **kwargs):
        if initial_accumulator_value < 0.0:
            raise ValueError(f"initial_accumulator_value must be non-negative: {initial_accumulator_value}")
        self._keras_ops_init(lr, learning_rate, decay, epsilon, name, kwargs)
        self._initial_accumulator_value = float(initial_accumulator_value)

    _KERAS_SLOTS = (("accumulator", "accumulator"),)

    def _create_slots(self, var_list):
        from ferroflow.ops import init_ops

        for v in var_list:
            dtype = v.dtype.base_dtype
            init = init_ops.constant_initializer(self._initial_accumulator_value, dtype=dtype)
            self._get_or_make_slot_with_initializer(v, init, v.get_shape(), dtype, "accumulator", self._name)

    def _apply_dense(self, grad, var):
        dtype = var.dtype.base_dtype
        lr = math_ops.cast(self._lr_t, dtype)
        eps = ops.convert_to_tensor(self.epsilon, dtype=dtype)
        acc = self.get_slot(var, "accumulator")
        acc_t = state_ops.assign_add(acc, math_ops.square(grad))
        return state_ops.assign_sub(var, grad * lr / (math_ops.sqrt(acc_t) + eps)).op

    def _apply_rows(self, rows, indices, var):
        dtype = var.dtype.base_dtype
        lr = math_ops.cast(self._lr_t, dtype)
        eps = ops.convert_to_tensor(self.epsilon, dtype=dtype)
        acc = self.get_slot(var, "accumulator")
        acc_t = state_ops.scatter_add(acc, indices, math_ops.square(rows))
        acc_rows = array_ops.gather(acc_t, indices)
        return state_ops.scatter_sub(var, indices, rows * lr / (math_ops.sqrt(acc_rows) + eps)).op


class Adamax(_OpsOptimizer):
    """Adamax (TensorFlow's ``ApplyAdaMax``): ``m += (g - m)*(1 - beta_1); v = max(beta_2*v, |g|);
    w -= lr / (1 - beta_1**t) * m / (v + epsilon)``."""

    def __init__(self, lr=None, beta_1=0.9, beta_2=0.999, epsilon=None, decay=0.0, learning_rate=0.001,
                 name="Adamax", **kwargs):
        self._keras_ops_init(lr, learning_rate, decay, epsilon, name, kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2

    _HYPERS = ("beta_1", "beta_2")
    _KERAS_SLOTS = (("m", "m"), ("v", "v"))

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
        for v in var_list:
            self._zeros_slot(v, "v", self._name)

    def _coefficients(self, dtype):
        c = self._consts(dtype, eps=self.epsilon, one=1.0)
        c["b1"], c["b2"] = self._hyper_tensor("beta_1", dtype), self._hyper_tensor("beta_2", dtype)
        step = math_ops.cast(self.iterations + 1, dtype)
        c["lr"] = math_ops.cast(self._lr_t, dtype)
        c["b1_power"] = math_ops.pow(c["b1"], step)
        return c

    def _apply_dense(self, grad, var):
        c = self._coefficients(var.dtype.base_dtype)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_t = state_ops.assign_add(m, (grad - m) * (c["one"] - c["b1"]))
        v_t = state_ops.assign(v, math_ops.maximum(c["b2"] * v, math_ops.abs(grad)))
        return state_ops.assign_sub(var, c["lr"] / (c["one"] - c["b1_power"]) * (m_t / (v_t + c["eps"]))).op

    def _apply_rows(self, rows, indices, var):
        c = self._coefficients(var.dtype.base_dtype)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_rows = array_ops.gather(m, indices) * c["b1"] + rows * (c["one"] - c["b1"])
        v_rows = math_ops.maximum(array_ops.gather(v, indices) * c["b2"], math_ops.abs(rows))
        step = -c["lr"] / (c["one"] - c["b1_power"]) * (m_rows / (v_rows + c["eps"]))
        with ops.control_dependencies([m_rows, v_rows, step]):
            return control_flow_ops.group(state_ops.scatter_add(var, indices, step),
                                          state_ops.scatter_update(m, indices, m_rows),
                                          state_ops.scatter_update(v, indices, v_rows))


class Nadam(_OpsOptimizer):
    """Nesterov Adam with Dozat's momentum schedule: ``mu_t = beta_1 * (1 - 0.5 * 0.96**(0.004*t))``, their
    running product kept in the ``momentum_cache`` variable (``schedule_decay`` sets the 0.004)."""

    def __init__(self, lr=None, beta_1=0.9, beta_2=0.999, epsilon=None, schedule_decay=0.004, learning_rate=0.001,
                 name="Nadam", **kwargs):
        # Keras's Nadam keeps schedule_decay as its "decay" (its config's name); it does not decay the rate.
        schedule_decay = kwargs.pop("decay", schedule_decay)
        self._keras_ops_init(lr, learning_rate, 0.0, epsilon, name, kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.schedule_decay = float(schedule_decay)

    _HYPERS = ("beta_1", "beta_2")
    _KERAS_SLOTS = (("m", "m"), ("v", "v"))

    def _keras_extra_weights(self):
        return [self._momentum_cache(dtypes.float32)]

    def _hyper_python_value(self, name):
        return self.schedule_decay if name == "decay" else super()._hyper_python_value(name)

    def _momentum_cache(self, dtype):
        return self._keras_var("momentum_cache", lambda: variables_mod.Variable(
            1.0, name="momentum_cache", dtype=dtype, trainable=False))

    def _create_slots(self, var_list):
        self._momentum_cache(var_list[0].dtype.base_dtype)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
        for v in var_list:
            self._zeros_slot(v, "v", self._name)

    def _prepare(self):
        super()._prepare()
        self._coeffs = {}

    def _coefficients(self, dtype):
        if dtype in self._coeffs:
            return self._coeffs[dtype]
        c = self._consts(dtype, eps=self.epsilon, one=1.0, base=0.96)
        c["b1"], c["b2"] = self._hyper_tensor("beta_1", dtype), self._hyper_tensor("beta_2", dtype)
        step = math_ops.cast(self.iterations + 1, dtype)
        next_step = math_ops.cast(self.iterations + 2, dtype)
        c["lr"] = math_ops.cast(self._lr_t, dtype)
        c["m_t"] = c["b1"] * (1.0 - 0.5 * math_ops.pow(c["base"], self.schedule_decay * step))
        c["m_t_1"] = c["b1"] * (1.0 - 0.5 * math_ops.pow(c["base"], self.schedule_decay * next_step))
        cache = self._momentum_cache(dtype)
        schedule_new = math_ops.cast(cache, dtype) * c["m_t"]
        if dtype == cache.dtype.base_dtype:
            schedule_new = array_ops.identity(state_ops.assign(cache, schedule_new))
        c["one_minus_schedule_new"] = 1.0 - schedule_new
        c["one_minus_schedule_next"] = 1.0 - schedule_new * c["m_t_1"]
        c["v_denominator"] = 1.0 - math_ops.pow(c["b2"], step)
        self._coeffs[dtype] = c
        return c

    def _apply_dense(self, grad, var):
        c = self._coefficients(var.dtype.base_dtype)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        g_prime = grad / c["one_minus_schedule_new"]
        m_t = state_ops.assign(m, c["b1"] * m + (c["one"] - c["b1"]) * grad)
        v_t = state_ops.assign(v, c["b2"] * v + (c["one"] - c["b2"]) * math_ops.square(grad))
        m_bar = (1.0 - c["m_t"]) * g_prime + c["m_t_1"] * (m_t / c["one_minus_schedule_next"])
        v_prime = v_t / c["v_denominator"]
        return state_ops.assign(var, var - c["lr"] * m_bar / (math_ops.sqrt(v_prime) + c["eps"])).op

    def _apply_rows(self, rows, indices, var):
        c = self._coefficients(var.dtype.base_dtype)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        g_prime = rows / c["one_minus_schedule_new"]
        m_decayed = state_ops.assign(m, m * c["b1"])
        with ops.control_dependencies([m_decayed]):
            m_rows = array_ops.gather(state_ops.scatter_add(m, indices, rows * (c["one"] - c["b1"])), indices)
        m_bar = (1.0 - c["m_t"]) * g_prime + c["m_t_1"] * (m_rows / c["one_minus_schedule_next"])
        v_decayed = state_ops.assign(v, v * c["b2"])
        with ops.control_dependencies([v_decayed]):
            v_rows = array_ops.gather(state_ops.scatter_add(v, indices, (rows * rows) * (c["one"] - c["b2"])),
                                      indices)
        denom = math_ops.sqrt(v_rows / c["v_denominator"]) + c["eps"]
        return state_ops.scatter_add(var, indices, -c["lr"] * m_bar / denom).op


_BY_NAME = {"sgd": SGD, "adam": Adam, "rmsprop": RMSprop, "adagrad": Adagrad, "adadelta": Adadelta, "adamax": Adamax,
            "nadam": Nadam}


def serialize(optimizer):
    return {"class_name": type(optimizer).__name__, "config": optimizer.get_config()}


def deserialize(config, custom_objects=None):
    name = config["class_name"]
    cls = (custom_objects or {}).get(name) or _BY_NAME.get(name.lower())
    if cls is None:
        raise ValueError(f"Unknown optimizer: {name}")
    return cls.from_config(config.get("config", {}))


def get(identifier):
    """An optimizer from a name (``'adam'``, ``'sgd'``, ``'rmsprop'``, ``'adagrad'``, ``'adadelta'``, ``'adamax'``,
    ``'nadam'``) or an instance
    (Keras's or any ``tf.train`` optimizer)."""
    if isinstance(identifier, tf_opt.Optimizer):
        return identifier
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier.lower())
        if cls is None:
            raise ValueError(f"Unknown optimizer: {identifier!r} (ferroflow's Keras knows {sorted(_BY_NAME)})")
        return cls()
    if isinstance(identifier, dict):
        return deserialize(identifier)
    raise ValueError(f"Could not interpret optimizer identifier: {identifier!r}")


