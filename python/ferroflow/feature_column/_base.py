"""The feature-column base classes of TensorFlow 1.x (``_FeatureColumn``, ``_DenseColumn``,
``_CategoricalColumn``, ``_SequenceDenseColumn``), the ``_LazyBuilder`` that transforms each column once,
and the shared argument checks."""

from __future__ import annotations

import collections
import collections.abc

from ferroflow.framework import dtypes, ops, tensor_shape
from ferroflow.framework.sparse_tensor import SparseTensor, convert_to_tensor_or_sparse_tensor
from ferroflow.ops import array_ops, check_ops, math_ops, sparse_ops
from ferroflow.ops.cond import cond

__all__ = []


def dynamic_shape(tensor):
    """``tf.shape`` of a Tensor (int32) or SparseTensor (its dense shape, int64, as ``sparse_reshape``
    takes)."""
    if isinstance(tensor, SparseTensor):
        return tensor.dense_shape
    return array_ops.shape(tensor)


class _FeatureColumn:
    """A feature column: ``name``, how it is parsed (``_parse_example_spec``) and transformed
    (``_transform_feature``). Columns compare and hash as the tuples they are."""

    @property
    def name(self):
        raise NotImplementedError

    @property
    def _var_scope_name(self):
        return self.name

    def _transform_feature(self, inputs):
        raise NotImplementedError

    @property
    def _parse_example_spec(self):
        raise NotImplementedError

    def _reset_config(self):
        pass

    def __lt__(self, other):
        return str(self) < str(other)

    def __gt__(self, other):
        return str(self) > str(other)


class _DenseColumn(_FeatureColumn):
    """A column producing a dense tensor of ``[batch] + _variable_shape``."""

    @property
    def _variable_shape(self):
        raise NotImplementedError

    def _get_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        raise NotImplementedError


class _CategoricalColumn(_FeatureColumn):
    """A column producing sparse ids (and optional weights) in ``[0, _num_buckets)``."""

    IdWeightPair = collections.namedtuple("IdWeightPair", ["id_tensor", "weight_tensor"])

    @property
    def _num_buckets(self):
        raise NotImplementedError

    def _get_sparse_tensors(self, inputs, weight_collections=None, trainable=None):
        raise NotImplementedError


class _SequenceDenseColumn(_FeatureColumn):
    """A column producing ``[batch, time, ...]`` dense values and each row's sequence length."""

    TensorSequenceLengthPair = collections.namedtuple("TensorSequenceLengthPair",
                                                      ["dense_tensor", "sequence_length"])

    def _get_sequence_dense_tensor(self, inputs, weight_collections=None, trainable=None):
        raise NotImplementedError


class _LazyBuilder:
    """Transforms each feature column once: ``get(key)`` returns a raw feature (a string key, rank 1 raised to
    rank 2) or a column's transformed tensor, cached."""

    def __init__(self, features):
        self._features = features.copy()
        self._feature_tensors = {}

    def get(self, key):
        if key in self._feature_tensors:
            return self._feature_tensors[key]
        if key in self._features:
            tensor = self._get_raw_feature_as_tensor(key)
            self._feature_tensors[key] = tensor
            return tensor
        if isinstance(key, str):
            raise ValueError(f"Feature {key} is not in features dictionary.")
        if not isinstance(key, _FeatureColumn):
            raise TypeError(f'"key" must be either a "str" or "_FeatureColumn". Provided: {key}')
        transformed = key._transform_feature(self)
        if transformed is None:
            raise ValueError(f"Column {key.name} is not supported.")
        self._feature_tensors[key] = transformed
        return transformed

    def _get_raw_feature_as_tensor(self, key):
        tensor = convert_to_tensor_or_sparse_tensor(self._features[key])

        def expand(t):
            if isinstance(t, SparseTensor):
                return sparse_ops.sparse_reshape(t, [dynamic_shape(t)[0], 1])
            return array_ops.expand_dims(t, -1)

        rank = tensor.get_shape().ndims
        if rank is not None:
            if rank == 0:
                raise ValueError(f"Feature (key: {key}) cannot have rank 0. Given: {tensor}")
            return tensor if rank != 1 else expand(tensor)
        message = f"Feature (key: {key}) cannot have rank 0. Given: {tensor}"
        with ops.control_dependencies([check_ops.assert_positive(array_ops.rank(tensor), message=message)]):
            return cond(math_ops.equal(1, array_ops.rank(tensor)), lambda: expand(tensor), lambda: tensor)


def _to_sparse_input_and_drop_ignore_values(input_tensor, ignore_value=None):
    """A ``SparseTensor`` of the cells of a dense ``input_tensor`` that differ from ``ignore_value`` ('' for
    strings, -1 for integers, 0 otherwise); a ``SparseTensor`` is returned as it is."""
    input_tensor = convert_to_tensor_or_sparse_tensor(input_tensor)
    if isinstance(input_tensor, SparseTensor):
        return input_tensor
    with ops.name_scope(None, "to_sparse_input", [input_tensor]):
        if ignore_value is None:
            if input_tensor.dtype == dtypes.string:
                ignore_value = ""
            elif input_tensor.dtype.is_integer:
                ignore_value = -1
            else:
                ignore_value = input_tensor.dtype.as_numpy_dtype()
        ignore_value = math_ops.cast(ignore_value, input_tensor.dtype, name="ignore_value")
        indices = array_ops.where(math_ops.not_equal(input_tensor, ignore_value), name="indices")
        return SparseTensor(indices=indices, values=array_ops.gather_nd(input_tensor, indices, name="values"),
                            dense_shape=array_ops.shape(input_tensor, out_type=dtypes.int64, name="dense_shape"))


def _normalize_feature_columns(feature_columns):
    """``feature_columns`` as a list, checked: columns only, not empty, no two with the same name."""
    if isinstance(feature_columns, _FeatureColumn):
        feature_columns = [feature_columns]
    if isinstance(feature_columns, collections.abc.Iterator):
        feature_columns = list(feature_columns)
    if isinstance(feature_columns, dict):
        raise ValueError("Expected feature_columns to be iterable, found dict.")
    for column in feature_columns:
        if not isinstance(column, _FeatureColumn):
            raise ValueError(f"Items of feature_columns must be a _FeatureColumn. Given (type {type(column)}): "
                             f"{column}.")
    if not feature_columns:
        raise ValueError("feature_columns must not be empty.")
    by_name = {}
    for column in feature_columns:
        if column.name in by_name:
            raise ValueError(f"Duplicate feature column name found for columns: {column} and "
                             f"{by_name[column.name]}. This usually means that these columns refer to same base "
                             "feature. Either one must be discarded or a duplicated but renamed item must be "
                             "inserted in features dict.")
        by_name[column.name] = column
    return list(feature_columns)


def _verify_static_batch_size_equality(tensors, columns):
    """Raises ValueError when two tensors' static batch sizes differ."""
    expected, first = None, None
    for i, t in enumerate(tensors):
        dim = t.get_shape()[0] if t.get_shape().ndims else None
        value = tensor_shape.dimension_value(dim) if dim is not None else None
        if value is None:
            continue
        if expected is None:
            expected, first = value, i
        elif value != expected:
            raise ValueError("Batch size (first dimension) of each feature must be same. Batch size of columns "
                             f"({columns[first].name}, {columns[i].name}): ({expected}, {value})")


def _check_shape(shape, key):
    """``shape`` as a tuple of positive ints (an int becomes a 1-tuple)."""
    if not isinstance(shape, (list, tuple)):
        shape = [shape]
    shape = tuple(shape)
    for d in shape:
        if not isinstance(d, int) or isinstance(d, bool):
            raise TypeError(f"shape dimensions must be integer. shape: {shape}, key: {key}")
        if d < 1:
            raise ValueError(f"shape dimensions must be greater than 0. shape: {shape}, key: {key}")
    return shape


def _nested(x):
    return isinstance(x, (list, tuple))


def _flatten(x):
    if _nested(x):
        return [v for item in x for v in _flatten(item)]
    return [x]


def _compatible(value, shape):
    if _nested(value) != bool(shape):
        return False
    if not shape:
        return True
    if len(value) != shape[0]:
        return False
    return all(_compatible(v, shape[1:]) for v in value)


def _as_tuple(value):
    return tuple(_as_tuple(v) for v in value) if _nested(value) else value


def _create_tuple(shape, value):
    if shape:
        return tuple(_create_tuple(shape[1:], value) for _ in range(shape[0]))
    return value


def check_default_value(shape, default_value, dtype, key):
    """A numeric column's ``default_value`` as a nested tuple of ``shape`` (None stays None)."""
    if default_value is None:
        return None
    if isinstance(default_value, int):
        return _create_tuple(shape, default_value)
    if isinstance(default_value, float) and dtype.is_floating:
        return _create_tuple(shape, default_value)
    if callable(getattr(default_value, "tolist", None)):
        default_value = default_value.tolist()
    if _nested(default_value):
        if not _compatible(default_value, shape):
            raise ValueError("The shape of default_value must be equal to given shape. "
                             f"default_value: {default_value}, shape: {shape}, key: {key}")
        flat = _flatten(default_value)
        if all(isinstance(v, int) for v in flat):
            return _as_tuple(default_value)
        if any(isinstance(v, float) for v in flat) and dtype.is_floating:
            return _as_tuple(default_value)
    raise TypeError(f"default_value must be compatible with dtype. default_value: {default_value}, "
                    f"dtype: {dtype}, key: {key}")


def assert_string_or_int(dtype, prefix):
    if dtype != dtypes.string and not dtype.is_integer:
        raise ValueError(f"{prefix} dtype must be string or integer. dtype: {dtype}.")


def assert_key_is_string(key):
    if not isinstance(key, str):
        raise ValueError(f"key must be a string. Got: type {type(key)}. Given key: {key}.")


def sequence_length_from_sparse_tensor(sp_tensor, num_elements=1):
    """Each row's sequence length of a ``[batch, time * num_elements]`` SparseTensor (0 for empty rows)."""
    from ferroflow.ops import segment_ops

    with ops.name_scope(None, "sequence_length") as scope:
        row_ids = sp_tensor.indices[:, 0]
        column_ids = sp_tensor.indices[:, 1]
        column_ids += array_ops.ones_like(column_ids)
        seq_length = segment_ops.segment_max(column_ids, segment_ids=row_ids)
        seq_length = math_ops.cast(math_ops.ceil(seq_length / num_elements), dtypes.int64)
        n_pad = math_ops.cast(sp_tensor.dense_shape[:1], dtypes.int32) - array_ops.shape(seq_length)[:1]
        padding = array_ops.zeros(n_pad, dtype=seq_length.dtype)
        return array_ops.concat([seq_length, padding], axis=0, name=scope)
