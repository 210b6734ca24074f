"""``tf.ragged`` (TensorFlow 1.x's ``tf.compat.v1.ragged``): ragged tensors from nested lists and
placeholders, ``range``, crosses, segment ids and row splits, masking, stacking and ``map_flat_values``."""

from ferroflow.ops.ragged import RaggedTensorValue  # noqa: F401
from ferroflow.ops.ragged_ops import (  # noqa: F401
    boolean_mask,
    constant,
    constant_value,
    cross,
    cross_hashed,
    map_flat_values,
    placeholder,
    range,
    row_splits_to_segment_ids,
    segment_ids_to_row_splits,
    stack,
    stack_dynamic_partitions,
)
