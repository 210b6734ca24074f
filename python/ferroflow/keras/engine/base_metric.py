"""Keras's ``Metric`` base class: a stateful metric over variables of its own (``tf.keras.metrics.Metric``;
the metric classes are in ``keras/metrics.py`` and ``keras/confusion_metrics.py``)."""

from __future__ import annotations

import numpy as np

from ferroflow.framework import dtypes, ops
from ferroflow.keras import backend as K
from ferroflow.ops import array_ops

__all__ = ["Metric"]


class Metric:
    """A stateful metric: ``update_state(...)`` adds a batch (an op), ``result()`` is the value so far,
    ``reset_states()`` starts again; calling it updates and returns the result. Its variables are in no collection
    (Keras's), initialized by the Keras session. Without a ``name`` it is named after its class, uniquified per
    graph (``auc``, ``auc_1``)."""

    def __init__(self, name=None, dtype=None):
        from ferroflow.layers.base import _to_snake_case

        # a metric named after its class is uniquified per graph as layers are (``precision``, ``precision_1``)
        self.name = name if name is not None else K.unique_object_name(_to_snake_case(type(self).__name__))
        self._dtype = dtypes.as_dtype(dtype or K.floatx())
        self._variables = {}

    @property
    def dtype(self):
        return self._dtype

    def add_weight(self, name, shape=(), initializer="zeros", dtype=None):
        """A metric variable ``<metric name>/<name>`` (zeros), in no variable collection."""
        from ferroflow.keras import initializers
        from ferroflow.ops import variables as variables_mod

        init = initializers.get(initializer)
        dtype = dtypes.as_dtype(dtype or self._dtype)
        with ops.init_scope(), ops.name_scope(getattr(self, "_scope", None) or self.name) as scope:
            self._scope = scope  # the same scope for every variable of the metric
            v = variables_mod.Variable(lambda: init(list(shape), dtype=dtype), name=name, trainable=False,
                                       collections=[], dtype=dtype)
        K._track_variable(v)
        self._variables[name] = v
        return v

    @property
    def variables(self):
        return list(self._variables.values())

    weights = variables

    def update_state(self, *args, **kwargs):
        raise NotImplementedError("Metric subclasses implement update_state")

    def result(self):
        raise NotImplementedError("Metric subclasses implement result")

    def reset_states(self):
        """Sets every state variable back to zero."""
        K.batch_set_value([(v, np.zeros(v.shape.as_list(), v.dtype.base_dtype.as_numpy_dtype))
                           for v in self.variables])

    def __call__(self, *args, **kwargs):
        update = self.update_state(*args, **kwargs)
        with ops.control_dependencies([update]):
            return array_ops.identity(self.result())

    def get_config(self):
        return {"name": self.name, "dtype": self._dtype.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)
