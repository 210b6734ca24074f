"""``input_layer`` and ``linear_model`` (TensorFlow 1.x's functions, not Keras layers) and
``make_parse_example_spec``, with TensorFlow's variable scopes and names: ``input_layer/<column>/...``,
``linear_model/<column>/weights``, ``linear_model/bias_weights``."""

from __future__ import annotations

from ferroflow.feature_column._base import (
    _CategoricalColumn,
    _DenseColumn,
    _FeatureColumn,
    _LazyBuilder,
    _normalize_feature_columns,
    _verify_static_batch_size_equality,
    dynamic_shape,
)
from ferroflow.feature_column._embedding import safe_lookup
from ferroflow.framework import ops
from ferroflow.ops import array_ops, init_ops, math_ops, nn_ops, sparse_ops
from ferroflow.ops import variable_scope as vs

__all__ = ["input_layer", "linear_model", "make_parse_example_spec"]


def _weight_collections(weight_collections):
    collections = list(weight_collections or [])
    for key in (ops.GraphKeys.GLOBAL_VARIABLES, ops.GraphKeys.MODEL_VARIABLES):
        if key not in collections:
            collections.append(key)
    return collections


def _scope_prefix():
    name = vs.get_variable_scope().name
    return name + "/" if name else ""


def _internal_input_layer(features, feature_columns, weight_collections=None, trainable=True, cols_to_vars=None,
                          scope=None, cols_to_output_tensors=None):
    feature_columns = _normalize_feature_columns(feature_columns)
    for column in feature_columns:
        if not isinstance(column, _DenseColumn):
            raise ValueError("Items of feature_columns must be a _DenseColumn. You can wrap a categorical column "
                             f"with an embedding_column or indicator_column. Given: {column}")
    weight_collections = _weight_collections(weight_collections)
    with vs.variable_scope(scope, default_name="input_layer", values=list(features.values())):
        builder = _LazyBuilder(features)
        outputs, ordered = [], []
        for column in sorted(feature_columns, key=lambda x: x.name):
            ordered.append(column)
            with vs.variable_scope(None, default_name=column._var_scope_name):
                tensor = column._get_dense_tensor(builder, weight_collections=weight_collections,
                                                  trainable=trainable)
                num_elements = column._variable_shape.num_elements()
                batch_size = array_ops.shape(tensor)[0]
                output = array_ops.reshape(tensor, shape=(batch_size, num_elements))
                outputs.append(output)
                if cols_to_vars is not None:
                    cols_to_vars[column] = ops.get_collection(ops.GraphKeys.GLOBAL_VARIABLES,
                                                              scope=vs.get_variable_scope().name)
                if cols_to_output_tensors is not None:
                    cols_to_output_tensors[column] = output
        _verify_static_batch_size_equality(outputs, ordered)
        return array_ops.concat(outputs, 1)


def input_layer(features, feature_columns, weight_collections=None, trainable=True, cols_to_vars=None,
                cols_to_output_tensors=None):
    """The dense ``[batch, sum of the columns' sizes]`` float32 input of a model: each dense column's tensor
    (columns sorted by name) flattened per example and concatenated. ``weight_collections`` (plus
    GLOBAL_VARIABLES and MODEL_VARIABLES) receive the variables created; ``cols_to_vars`` /
    ``cols_to_output_tensors``, when dicts, are filled per column."""
    return _internal_input_layer(features, feature_columns, weight_collections=weight_collections,
                                 trainable=trainable, cols_to_vars=cols_to_vars,
                                 cols_to_output_tensors=cols_to_output_tensors)


def _add_to_collections(var, weight_collections):
    for key in weight_collections:
        if key == ops.GraphKeys.GLOBAL_VARIABLES:
            continue
        for v in (list(var) if hasattr(var, "_get_variable_list") else [var]):
            if v not in ops.get_collection(key):
                ops.add_to_collection(key, v)


def _expanded(var):
    return list(var._get_variable_list()) if hasattr(var, "_get_variable_list") else [var]


def _weighted_sum(column, builder, units, sparse_combiner, weight_collections, trainable, weight):
    if isinstance(column, _CategoricalColumn):
        pair = column._get_sparse_tensors(builder, weight_collections=weight_collections, trainable=trainable)
        ids, weights = pair.id_tensor, pair.weight_tensor
        # Reshaping to [batch, -1] changes nothing for ids of static rank 2: skipped there.
        if ids.dense_shape.get_shape().as_list() != [2]:
            ids = sparse_ops.sparse_reshape(ids, [dynamic_shape(ids)[0], -1])
            if weights is not None:
                weights = sparse_ops.sparse_reshape(weights, [dynamic_shape(weights)[0], -1])
        return safe_lookup(weight, ids, weights, sparse_combiner, "weighted_sum")
    tensor = column._get_dense_tensor(builder, weight_collections=weight_collections, trainable=trainable)
    num_elements = column._variable_shape.num_elements()
    batch_size = array_ops.shape(tensor)[0]
    tensor = array_ops.reshape(tensor, shape=(batch_size, num_elements))
    return math_ops.matmul(tensor, weight, name="weighted_sum")


def linear_model(features, feature_columns, units=1, sparse_combiner="sum", weight_collections=None,
                 trainable=True, cols_to_vars=None):
    """The ``[batch, units]`` float32 prediction ``sum over columns of x_c @ W_c + b``: categorical columns as
    multi-hot (combined per example by ``sparse_combiner``, sum, mean or sqrtn), dense columns flattened.
    Variables ``linear_model/<column>/weights`` (zeros, ``[num_buckets or size, units]``) and
    ``linear_model/bias_weights``; ``cols_to_vars`` (a dict) receives each column's variables and 'bias'."""
    with vs.variable_scope(None, "linear_model") as scope:
        model_name = scope.name.rsplit("/", 1)[-1]
    feature_columns = _normalize_feature_columns(feature_columns)
    weight_collections = _weight_collections(weight_collections)
    # TensorFlow names each column's layer by opening a unique scope where linear_model is called.
    column_names = {}
    for column in sorted(feature_columns, key=lambda x: x.name):
        with vs.variable_scope(None, default_name=column._var_scope_name) as col_scope:
            column_names[column] = col_scope.name.rsplit("/", 1)[-1]
    for column in feature_columns:
        if not isinstance(column, (_DenseColumn, _CategoricalColumn)):
            raise ValueError("Items of feature_columns must be either a _DenseColumn or _CategoricalColumn. "
                             f"Given: {column}")
    local_vars = {}
    with vs.variable_scope(model_name, values=list(features.values())):
        builder = _LazyBuilder(features)
        sums, ordered = [], []
        for column in sorted(feature_columns, key=lambda c: column_names[c]):
            ordered.append(column)
            with vs.variable_scope(column_names[column]):
                if isinstance(column, _CategoricalColumn):
                    shape = (column._num_buckets, units)
                else:
                    shape = [column._variable_shape.num_elements(), units]
                weight = vs.get_variable("weights", shape=shape, initializer=init_ops.zeros_initializer(),
                                         trainable=trainable)
                _add_to_collections(weight, weight_collections)
                sums.append(_weighted_sum(column, builder, units, sparse_combiner, weight_collections, trainable,
                                          weight))
                local_vars[column] = ops.get_collection(ops.GraphKeys.GLOBAL_VARIABLES,
                                                        scope=vs.get_variable_scope().name)
        _verify_static_batch_size_equality(sums, ordered)
        no_bias = math_ops.add_n(sums, name="weighted_sum_no_bias")
        bias = vs.get_variable("bias_weights", shape=[units], initializer=init_ops.zeros_initializer(),
                               trainable=trainable)
        _add_to_collections(bias, weight_collections)
        bias_value = bias
        if hasattr(bias, "_get_variable_list"):
            bias_value = array_ops.concat(list(bias._get_variable_list()), 0)
        predictions = nn_ops.bias_add(no_bias, bias_value, name="weighted_sum")
        local_vars["bias"] = _expanded(bias)
    if cols_to_vars is not None:
        cols_to_vars.update(local_vars)
    return predictions


def make_parse_example_spec(feature_columns):
    """The ``parse_example`` features dict of ``feature_columns``: each column's parse spec, merged; a key
    two columns parse differently raises ValueError."""
    result = {}
    for column in feature_columns:
        if not isinstance(column, _FeatureColumn):
            raise ValueError(f"All feature_columns must be _FeatureColumn instances. Given: {column}")
        config = column._parse_example_spec
        for key, value in config.items():
            if key in result and value != result[key]:
                raise ValueError(f"feature_columns contain different parse_spec for key {key}. Given {value} and "
                                 f"{result[key]}")
        result.update(config)
    return result
