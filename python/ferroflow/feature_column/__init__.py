"""``tf.feature_column`` (TF1's, as ``tf.compat.v1.feature_column``): feature columns that turn parsed
examples into a model's dense input (``input_layer``) or a linear model's prediction (``linear_model``).

The columns follow TensorFlow 1.x's ``feature_column.py``: numeric and bucketized columns, categorical ones
(identity, vocabulary list or file, hash bucket with TensorFlow's FarmHash, crosses with its
``FingerprintCat64``), weighted, indicator and embedding columns, shared embeddings and the ``sequence_*``
columns; variables carry TensorFlow's names, so TF1 checkpoints of such models restore.
"""

from ferroflow.feature_column._categorical import (
    bucketized_column,
    categorical_column_with_hash_bucket,
    categorical_column_with_identity,
    categorical_column_with_vocabulary_file,
    categorical_column_with_vocabulary_list,
    crossed_column,
    indicator_column,
    numeric_column,
    weighted_categorical_column,
)
from ferroflow.feature_column._embedding import embedding_column, shared_embedding_columns
from ferroflow.feature_column._layers import input_layer, linear_model, make_parse_example_spec
from ferroflow.feature_column._sequence import (
    sequence_categorical_column_with_hash_bucket,
    sequence_categorical_column_with_identity,
    sequence_categorical_column_with_vocabulary_file,
    sequence_categorical_column_with_vocabulary_list,
    sequence_numeric_column,
)

__all__ = [
    "bucketized_column",
    "categorical_column_with_hash_bucket",
    "categorical_column_with_identity",
    "categorical_column_with_vocabulary_file",
    "categorical_column_with_vocabulary_list",
    "crossed_column",
    "embedding_column",
    "indicator_column",
    "input_layer",
    "linear_model",
    "make_parse_example_spec",
    "numeric_column",
    "sequence_categorical_column_with_hash_bucket",
    "sequence_categorical_column_with_identity",
    "sequence_categorical_column_with_vocabulary_file",
    "sequence_categorical_column_with_vocabulary_list",
    "sequence_numeric_column",
    "shared_embedding_columns",
    "weighted_categorical_column",
]
