"""``tf.keras.optimizers`` on TF1 graphs: SGD, Adam, RMSprop, Adagrad, Adadelta with Keras's arguments and
defaults (``lr`` or ``learning_rate``, ``decay``, ``clipnorm``, ``clipvalue``).

Each is a ``tf.train.Optimizer`` (so ``minimize`` works in TF1 code too) running the same fused update as its
``tf.train`` counterpart where the formulas agree: Keras's SGD momentum (``v = m*v - lr*g; w += v``) is
``MomentumOptimizer``'s (``a = m*a + g; w -= lr*a``) for a constant learning rate; Adam is ``AdamOptimizer``
with Keras's epsilon (1e-7). Keras's RMSprop differs from ``RMSPropOptimizer`` (its mean square starts at
zero, not one, and without momentum the epsilon is added after the square root), so it is built from ops
here. Adagrad omits Keras's 1e-7 in the denominator (``sqrt(accum)`` is at least ``sqrt(0.1)``).

``optimizer.lr`` (``learning_rate``) is a variable, so ``K.set_value(model.optimizer.lr, x)`` and the
learning-rate callbacks work; ``optimizer.iterations`` counts the applied steps (``decay`` divides the rate by
``1 + decay * iterations``).
"""

from __future__ import annotations

import weakref

from ferroflow.framework import dtypes, ops
from ferroflow.framework.indexed_slices import IndexedSlices
from ferroflow.keras import backend as K
from ferroflow.ops import clip_ops, math_ops, segment_ops, state_ops
from ferroflow.ops import variables as variables_mod
from ferroflow.training import optimizers as tf_opt

__all__ = ["Adadelta", "Adagrad", "Adam", "Optimizer", "RMSprop", "SGD", "deserialize", "get", "serialize"]

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

    def _keras_var(self, key, make):
        graph = ops.get_default_graph()
        per_graph = self._keras_vars.setdefault(graph, {})
        if key not in per_graph:
            with ops.init_scope(), ops.name_scope(""), ops.name_scope(self._name):
                per_graph[key] = make()
            K._track_variable(per_graph[key])
        return per_graph[key]

    @property
    def lr(self):
        """The learning rate (a variable of the default graph)."""
        value = self._keras_lr
        if callable(value) or isinstance(value, (ops.Tensor, variables_mod.Variable)):
            return value
        return self._keras_var("lr", lambda: variables_mod.Variable(float(value), name="learning_rate",
                                                                    trainable=False, dtype=dtypes.float32))

    learning_rate = lr

    @property
    def iterations(self):
        return self._keras_var("iterations", lambda: variables_mod.Variable(0, name="iter", trainable=False,
                                                                            dtype=dtypes.int64))

    @property
    def decay(self):
        return self._keras_decay

    def _lr_tensor(self):
        lr = self.lr
        if callable(lr) and not isinstance(lr, (ops.Tensor, variables_mod.Variable)):
            lr = lr()
        lr = ops.convert_to_tensor(lr, dtype=dtypes.float32)
        if self._keras_decay:
            it = math_ops.cast(ops.convert_to_tensor(self.iterations), dtypes.float32)
            lr = lr / (1.0 + self._keras_decay * it)
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

    def get_updates(self, loss, params):
        return [self.minimize(loss, var_list=params)]

    def get_config(self):
        value = self._keras_lr
        return {"name": self._name, "learning_rate": value if isinstance(value, (int, float)) else None,
                "decay": self._keras_decay}

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
        self.nesterov = nesterov
        if self._plain:
            self._rule = "sgd"

    def _create_slots(self, var_list):
        if not self._plain:
            super()._create_slots(var_list)

    def _rule_attrs(self):
        return {} if self._plain else super()._rule_attrs()

    def _hyper_values(self, dtype, sparse):
        if self._plain:
            return {"lr": self._cast(self._learning_rate_tensor, dtype)}
        return super()._hyper_values(dtype, sparse)


class Adam(_KerasOptimizer, tf_opt.AdamOptimizer):
    """Adam (Keras's epsilon default, 1e-7)."""

    def __init__(self, lr=None, beta_1=0.9, beta_2=0.999, epsilon=None, decay=0.0, amsgrad=False,
                 learning_rate=0.001, name="Adam", **kwargs):
        if amsgrad:
            raise NotImplementedError("Adam(amsgrad=True) is not supported by ferroflow yet")
        self._keras_init(lr, learning_rate, decay, kwargs)
        tf_opt.AdamOptimizer.__init__(self, self._lr_tensor, beta_1, beta_2, K.epsilon() if epsilon is None
                                      else epsilon, name=name)


class Adagrad(_KerasOptimizer, tf_opt.AdagradOptimizer):
    """Adagrad (accumulators start at ``initial_accumulator_value``)."""

    def __init__(self, lr=None, epsilon=None, decay=0.0, initial_accumulator_value=0.1, learning_rate=0.001,
                 name="Adagrad", **kwargs):
        self._keras_init(lr, learning_rate, decay, kwargs)
        tf_opt.AdagradOptimizer.__init__(self, self._lr_tensor, initial_accumulator_value, name=name)


class Adadelta(_KerasOptimizer, tf_opt.AdadeltaOptimizer):
    """Adadelta (Keras's epsilon default, 1e-7)."""

    def __init__(self, lr=None, rho=0.95, epsilon=None, decay=0.0, learning_rate=0.001, name="Adadelta",
                 **kwargs):
        self._keras_init(lr, learning_rate, decay, kwargs)
        tf_opt.AdadeltaOptimizer.__init__(self, self._lr_tensor, rho, K.epsilon() if epsilon is None else epsilon,
                                          name=name)


class RMSprop(_KerasOptimizer, tf_opt.Optimizer):
    """Keras's RMSprop: ``rms = rho*rms + (1-rho)*g**2`` from zero; ``w -= lr*g / (sqrt(rms) + eps)``, or with
    ``momentum``: ``mom = momentum*mom + lr*g / sqrt(rms + eps); w -= mom`` (``centered`` subtracts the mean
    gradient's square from ``rms``)."""

    def __init__(self, lr=None, rho=0.9, momentum=0.0, epsilon=None, decay=0.0, centered=False,
                 learning_rate=0.001, name="RMSprop", **kwargs):
        self._keras_init(lr, learning_rate, decay, kwargs)
        tf_opt.Optimizer.__init__(self, False, name)
        self.rho = rho
        self.momentum = momentum
        self.epsilon = K.epsilon() if epsilon is None else epsilon
        self.centered = centered

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "rms", self._name)
            if self.momentum:
                self._zeros_slot(v, "momentum", self._name)
            if self.centered:
                self._zeros_slot(v, "mg", self._name)

    def _prepare(self):
        self._lr_t = self._lr_tensor()

    def _apply_dense(self, grad, var):
        dtype = var.dtype.base_dtype
        lr = math_ops.cast(self._lr_t, dtype)
        rho = ops.convert_to_tensor(self.rho, dtype=dtype)
        eps = ops.convert_to_tensor(self.epsilon, dtype=dtype)
        one = ops.convert_to_tensor(1.0, dtype=dtype)
        rms = self.get_slot(var, "rms")
        rms_t = state_ops.assign(rms, rho * rms + (one - rho) * math_ops.square(grad))
        denom = rms_t
        deps = [rms_t]
        if self.centered:
            mg = self.get_slot(var, "mg")
            mg_t = state_ops.assign(mg, rho * mg + (one - rho) * grad)
            denom = rms_t - math_ops.square(mg_t)
            deps.append(mg_t)
        if self.momentum:
            mom = self.get_slot(var, "momentum")
            mom_t = state_ops.assign(mom, ops.convert_to_tensor(self.momentum, dtype=dtype) * mom +
                                     lr * grad / math_ops.sqrt(denom + eps))
            return state_ops.assign_sub(var, mom_t).op
        return state_ops.assign_sub(var, lr * grad / (math_ops.sqrt(denom) + eps)).op

    def _apply_sparse(self, grad, var):
        return self._apply_dense(_dense(grad), var)


_BY_NAME = {"sgd": SGD, "adam": Adam, "rmsprop": RMSprop, "adagrad": Adagrad, "adadelta": Adadelta}


def serialize(optimizer):
    return {"class_name": type(optimizer).__name__, "config": optimizer.get_config()}


def deserialize(config, custom_objects=None):
    name = config["class_name"]
    cls = (custom_objects or {}).get(name) or _BY_NAME.get(name.lower())
    if cls is None:
        raise ValueError(f"Unknown optimizer: {name}")
    return cls.from_config(config.get("config", {}))


def get(identifier):
    """An optimizer from a name (``'adam'``, ``'sgd'``, ``'rmsprop'``, ``'adagrad'``, ``'adadelta'``) or an instance
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


