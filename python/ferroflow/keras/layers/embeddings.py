"""Keras's ``Embedding``: integer ids to rows of an ``embeddings`` matrix."""

from __future__ import annotations

from ferroflow.framework import dtypes
from ferroflow.keras import constraints, initializers, regularizers
from ferroflow.keras.engine.base_layer import Layer
from ferroflow.ops import math_ops, nn_ops

__all__ = ["Embedding"]


class Embedding(Layer):
    """``embeddings[ids]``: weight ``<name>/embeddings`` of shape ``[input_dim, output_dim]``; with
    ``mask_zero=True`` the output carries a mask that leaves out the ids 0."""

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform", embeddings_regularizer=None,
                 activity_regularizer=None, embeddings_constraint=None, mask_zero=False, input_length=None,
                 **kwargs):
        if input_length is not None and "input_shape" not in kwargs and "batch_input_shape" not in kwargs:
            kwargs["input_shape"] = tuple(input_length) if isinstance(input_length, (list, tuple)) \
                else (input_length,)
        kwargs.setdefault("dtype", dtypes.float32)
        super().__init__(activity_regularizer=regularizers.get(activity_regularizer), **kwargs)
        self.input_dim = int(input_dim)
        self.output_dim = int(output_dim)
        self.embeddings_initializer = initializers.get(embeddings_initializer)
        self.embeddings_regularizer = regularizers.get(embeddings_regularizer)
        self.embeddings_constraint = constraints.get(embeddings_constraint)
        self.mask_zero = mask_zero
        self.input_length = input_length

    def build(self, input_shape):
        self.embeddings = self.add_weight("embeddings", shape=(self.input_dim, self.output_dim),
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer,
                                          constraint=self.embeddings_constraint)
        self.built = True

    def compute_mask(self, inputs, mask=None):
        """With ``mask_zero``: True where the id is not 0 (0 is padding, as ``pad_sequences`` writes it)."""
        if not self.mask_zero:
            return None
        return math_ops.not_equal(inputs, 0)

    def call(self, inputs):
        if inputs.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            inputs = math_ops.cast(inputs, dtypes.int32)
        return nn_ops.embedding_lookup(self.embeddings, inputs)
