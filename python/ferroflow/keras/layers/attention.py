"""Keras's attention layers: ``Attention`` (dot-product, Luong style, or ``score_mode='concat'``),
``AdditiveAttention`` (Bahdanau style) and ``MultiHeadAttention`` (Vaswani et al.'s, with TF's weight layout).

``Attention``/``AdditiveAttention`` take ``[query, value]`` or ``[query, value, key]`` (``[batch, Tq, dim]``,
``[batch, Tv, dim]``): scores ``[batch, Tq, Tv]``, a softmax over the value steps (steps the value's mask drops
and, with ``use_causal_mask``, later steps get ``-1e9`` added first), dropout in training, then the weighted
sum of the values; query steps the query's mask drops give zeros, and the output keeps the query's mask.
"""

from __future__ import annotations

import math

from ferroflow.framework import dtypes, ops
from ferroflow.keras import backend as K
from ferroflow.keras import constraints, initializers, regularizers
from ferroflow.keras.engine.base_layer import Layer
from ferroflow.ops import array_ops, linalg_ops, math_ops, nn_ops

__all__ = ["AdditiveAttention", "Attention", "MultiHeadAttention"]

_MASKED = 1e9  # what masked scores lose before the softmax (Keras's)


def _lower_triangular(shape):
    """True at ``[..., i, j]`` where ``j <= i`` (a step sees itself and the steps before it)."""
    rows = math_ops.cumsum(array_ops.ones(shape, dtype=dtypes.int32), axis=-2)
    cols = math_ops.cumsum(array_ops.ones(shape, dtype=dtypes.int32), axis=-1)
    return math_ops.greater_equal(rows, cols)


def _and(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return math_ops.logical_and(a, b)


def _dropout(layer, values, rate, training):
    if not rate:
        return values
    return K.in_train_phase(lambda: nn_ops.dropout(values, rate=rate), lambda: array_ops.identity(values),
                            training=training)


class _DenseAttention(Layer):
    """What ``Attention`` and ``AdditiveAttention`` share: masks, the softmax, dropout, the weighted sum."""

    def __init__(self, dropout=0.0, **kwargs):
        self.causal = kwargs.pop("causal", False)
        super().__init__(**kwargs)
        self.dropout = dropout
        self.supports_masking = True

    def _scores(self, query, key):
        raise NotImplementedError

    def __call__(self, inputs, *args, **kwargs):
        self._check(inputs, kwargs.get("mask"))  # before the build reads the shapes
        return super().__call__(inputs, *args, **kwargs)

    def _check(self, inputs, mask):
        name = type(self).__name__
        if not isinstance(inputs, (list, tuple)):
            raise ValueError(f"{name} layer must be called on a list of inputs, namely [query, value] or "
                             f"[query, value, key]. Received: {inputs}.")
        if len(inputs) < 2 or len(inputs) > 3:
            raise ValueError(f"{name} layer accepts inputs list of length 2 or 3, namely [query, value] or "
                             f"[query, value, key]. Received length: {len(inputs)}.")
        if mask is not None and not isinstance(mask, (list, tuple)):
            raise ValueError(f"{name} layer mask must be a list, namely [query_mask, value_mask]. Received: {mask}.")

    def call(self, inputs, mask=None, training=None, return_attention_scores=False, use_causal_mask=False):
        self._check(inputs, mask)
        query, value = inputs[0], inputs[1]
        key = inputs[2] if len(inputs) > 2 else value
        query_mask = mask[0] if mask else None
        value_mask = mask[1] if mask and len(mask) > 1 else None
        scores = self._scores(query, key)
        keep = None if value_mask is None else array_ops.expand_dims(value_mask, -2)
        if self.causal or use_causal_mask:
            shape = array_ops.shape(scores)
            keep = _and(keep, _lower_triangular(array_ops.concat([array_ops.ones_like(shape[:-2]), shape[-2:]], 0)))
        if keep is not None:
            scores -= _MASKED * math_ops.cast(math_ops.logical_not(keep), scores.dtype)
        weights = _dropout(self, nn_ops.softmax(scores), self.dropout, training)
        result = math_ops.matmul(weights, value)
        if query_mask is not None:
            result *= math_ops.cast(array_ops.expand_dims(query_mask, -1), result.dtype)
        return (result, weights) if return_attention_scores else result

    def compute_mask(self, inputs, mask=None):
        if mask and mask[0] is not None:
            return ops.convert_to_tensor(mask[0])
        return None

    def get_config(self):
        config = super().get_config()
        config.pop("causal", None)
        return config


class Attention(_DenseAttention):
    """Dot-product attention: scores ``query @ key^T`` (times a learned ``scale`` with ``use_scale``); with
    ``score_mode='concat'``, ``sum(tanh(query + key))`` times a learned weight."""

    def __init__(self, use_scale=False, score_mode="dot", **kwargs):
        super().__init__(**kwargs)
        if score_mode not in ("dot", "concat"):
            raise ValueError(f'Received: score_mode={score_mode}. Acceptable values are: ["dot", "concat"]')
        self.use_scale = use_scale
        self.score_mode = score_mode

    def build(self, input_shape):
        self.scale = self.add_weight("scale", shape=(), initializer="ones") if self.use_scale else None
        self.concat_score_weight = self.add_weight("concat_score_weight", shape=(), initializer="ones") \
            if self.score_mode == "concat" else None

    def _scores(self, query, key):
        if self.score_mode == "dot":
            scores = math_ops.matmul(query, key, transpose_b=True)
            return scores * self.scale if self.scale is not None else scores
        summed = array_ops.expand_dims(query, -2) + array_ops.expand_dims(key, -3)
        if self.scale is not None:
            summed = self.scale * summed
        return self.concat_score_weight * math_ops.reduce_sum(math_ops.tanh(summed), axis=-1)


class AdditiveAttention(_DenseAttention):
    """Additive attention: scores ``sum(scale * tanh(query + key))`` over the features, ``scale`` a learned
    vector (``use_scale``, Glorot-uniform) or ones."""

    def __init__(self, use_scale=True, **kwargs):
        super().__init__(**kwargs)
        self.use_scale = use_scale

    def build(self, input_shape):
        dim = input_shape[1].as_list()[-1]
        self.scale = self.add_weight("scale", shape=[dim], initializer="glorot_uniform") if self.use_scale \
            else None

    def _scores(self, query, key):
        summed = math_ops.tanh(array_ops.expand_dims(query, -2) + array_ops.expand_dims(key, -3))
        return math_ops.reduce_sum((self.scale if self.scale is not None else 1.0) * summed, axis=-1)


class MultiHeadAttention(Layer):
    """Multi-head attention over ``query`` ``[batch, T, dim]`` and ``value`` (and ``key``) ``[batch, S, dim]``:
    per head, projections to ``key_dim`` (``value_dim``) features, scores scaled by ``1/sqrt(key_dim)``, a
    softmax over ``S`` (``attention_mask`` ``[batch, T, S]``, the inputs' Keras masks and ``use_causal_mask``
    drop pairs), dropout in training, then an output projection to ``output_shape`` (the query's features by
    default). Weights as TF lays them out: ``query/kernel`` ``[dim, heads, key_dim]``, ``query/bias`` ``[heads,
    key_dim]``, likewise ``key``, ``value``, then ``attention_output/kernel`` ``[heads, value_dim, out]``."""

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True, output_shape=None,
                 attention_axes=None, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, **kwargs):
        super().__init__(activity_regularizer=regularizers.get(activity_regularizer), **kwargs)
        if attention_axes is not None and tuple(attention_axes) not in ((1,), (-2,)):
            raise NotImplementedError("MultiHeadAttention(attention_axes=...) over other axes than the sequence "
                                      "axis is not supported by ferroflow's Keras")
        self.supports_masking = True
        self._num_heads = num_heads
        self._key_dim = key_dim
        self._value_dim = value_dim if value_dim else key_dim
        self._dropout = dropout
        self._use_bias = use_bias
        self._output_shape = output_shape
        self._kernel_initializer = initializers.get(kernel_initializer)
        self._bias_initializer = initializers.get(bias_initializer)
        self._kernel_regularizer = regularizers.get(kernel_regularizer)
        self._bias_regularizer = regularizers.get(bias_regularizer)
        self._kernel_constraint = constraints.get(kernel_constraint)
        self._bias_constraint = constraints.get(bias_constraint)

    def _projection(self, name, kernel_shape, bias_shape):
        with ops.name_scope(name):
            kernel = self.add_weight("kernel", shape=kernel_shape, initializer=self._kernel_initializer,
                                     regularizer=self._kernel_regularizer, constraint=self._kernel_constraint)
            bias = self.add_weight("bias", shape=bias_shape, initializer=self._bias_initializer,
                                   regularizer=self._bias_regularizer, constraint=self._bias_constraint) \
                if self._use_bias else None
        return kernel, bias

    def build(self, input_shape):
        shapes = input_shape if isinstance(input_shape, (list, tuple)) else [input_shape]
        query_shape, value_shape = shapes[0].as_list(), shapes[1].as_list()
        key_shape = shapes[2].as_list() if len(shapes) > 2 else value_shape
        heads = self._num_heads
        self._query = self._projection("query", [query_shape[-1], heads, self._key_dim], [heads, self._key_dim])
        self._key = self._projection("key", [key_shape[-1], heads, self._key_dim], [heads, self._key_dim])
        self._value = self._projection("value", [value_shape[-1], heads, self._value_dim], [heads, self._value_dim])
        out = self._output_shape
        out = list(out) if isinstance(out, (list, tuple)) else [out if out else query_shape[-1]]
        self._out_dims = out
        self._output = self._projection("attention_output", [heads, self._value_dim] + out, out)

    @staticmethod
    def _project(x, weights, equation):
        kernel, bias = weights
        y = linalg_ops.einsum(equation, x, kernel)
        return y + bias if bias is not None else y

    def call(self, query, value=None, key=None, attention_mask=None, return_attention_scores=False, training=None,
             use_causal_mask=False, mask=None):
        if isinstance(query, (list, tuple)):  # called on [query, value(, key)] as a functional-model node
            parts = list(query)
            query, value = parts[0], parts[1]
            key = parts[2] if len(parts) > 2 else key
        if value is None:
            raise ValueError("MultiHeadAttention needs a value tensor: call it as layer(query, value)")
        if key is None:
            key = value
        keep = self._attention_mask(query, value, key, attention_mask, use_causal_mask)
        q = self._project(query, self._query, "abc,cde->abde") * (1.0 / math.sqrt(float(self._key_dim)))
        k = self._project(key, self._key, "abc,cde->abde")
        v = self._project(value, self._value, "abc,cde->abde")
        scores = linalg_ops.einsum("aecd,abcd->acbe", k, q)  # [batch, heads, T, S]
        if keep is not None:
            keep = array_ops.expand_dims(keep, 1)  # the same pairs for every head
            scores += (1.0 - math_ops.cast(keep, scores.dtype)) * -_MASKED
        weights = nn_ops.softmax(scores, axis=-1)
        dropped = _dropout(self, weights, self._dropout, training)
        context = linalg_ops.einsum("acbe,aecd->abcd", dropped, v)  # [batch, T, heads, value_dim]
        letters = "fghi"[:len(self._out_dims)]
        output = self._project(context, self._output, f"abcd,cd{letters}->ab{letters}")
        return (output, weights) if return_attention_scores else output

    def __call__(self, query, value=None, key=None, **kwargs):
        # Keras's masks travel with the inputs: the call sees the query's, value's and key's (``_keras_mask``).
        inputs = [query, value] + ([key] if key is not None else []) if value is not None else query
        return super().__call__(inputs, **kwargs)

    @staticmethod
    def _attention_mask(query, value, key, attention_mask, use_causal_mask):
        """Which (query step, value step) pairs attend: ``[batch, T, S]`` bools, or None for all."""
        keep = None
        query_mask = K.tensor_meta(query, "mask")
        value_mask = K.tensor_meta(value, "mask")
        key_mask = K.tensor_meta(key, "mask")
        if query_mask is not None:
            keep = array_ops.expand_dims(math_ops.cast(query_mask, dtypes.bool), -1)
        if value_mask is not None:
            keep = _and(keep, array_ops.expand_dims(math_ops.cast(value_mask, dtypes.bool), -2))
        if key_mask is not None:
            keep = _and(keep, array_ops.expand_dims(math_ops.cast(key_mask, dtypes.bool), -2))
        if use_causal_mask:
            t, s = array_ops.shape(query)[1], array_ops.shape(value)[1]
            keep = _and(keep, array_ops.expand_dims(_lower_triangular(array_ops.stack([t, s])), 0))
        if attention_mask is not None:
            keep = _and(keep, math_ops.cast(attention_mask, dtypes.bool))
        return keep

    def compute_mask(self, inputs, mask=None):
        if isinstance(mask, (list, tuple)):
            return mask[0]
        return mask

    def get_config(self):
        from ferroflow.keras import saving

        config = {"name": self._name, "trainable": self._trainable,
                  "dtype": self._dtype.name if self._dtype is not None else K.floatx(),
                  "num_heads": self._num_heads, "key_dim": self._key_dim, "value_dim": self._value_dim,
                  "dropout": self._dropout, "use_bias": self._use_bias, "output_shape": self._output_shape,
                  "attention_axes": None}
        for key in ("kernel_initializer", "bias_initializer", "kernel_regularizer", "bias_regularizer",
                    "kernel_constraint", "bias_constraint"):
            config[key] = saving.serialize(getattr(self, "_" + key))
        return config

