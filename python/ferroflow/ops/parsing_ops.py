"""Example parsing and the decode / serialize ops (``tf.io`` and top-level ``tf.``).

``parse_example`` and ``parse_single_example`` emit ``ParseExampleV2`` exactly
as TensorFlow 2.x's ``tf.compat.v1`` does (features sorted by key, the same
inputs and attrs), so the GraphDefs interoperate; the parsing itself runs in
Rust (``crates/data/src/parse``). The feature configurations are TF's
namedtuples with TF's fields and defaults.
"""

from __future__ import annotations

import collections
import re

import numpy as np

from ferroflow.framework import dtypes, ops
from ferroflow.framework.constant_op import constant
from ferroflow.framework.sparse_tensor import SparseTensor, convert_to_tensor_or_sparse_tensor
from ferroflow.framework.tensor_shape import TensorShape, as_shape
from ferroflow.ops import array_ops
from ferroflow.ops._op_util import make, make_op, type_attr
from ferroflow.ops.parsing_ragged import RaggedFeature, ragged_keys
from ferroflow.ops.parsing_ragged import build as _build_ragged
from ferroflow.ops.parsing_ragged import build_sequence as _build_ragged_sequence

__all__ = [
    "FixedLenFeature",
    "FixedLenSequenceFeature",
    "SparseFeature",
    "VarLenFeature",
    "decode_base64",
    "decode_compressed",
    "decode_csv",
    "decode_json_example",
    "decode_raw",
    "deserialize_many_sparse",
    "encode_base64",
    "parse_example",
    "parse_sequence_example",
    "parse_single_example",
    "parse_single_sequence_example",
    "parse_tensor",
    "serialize_many_sparse",
    "serialize_sparse",
    "serialize_tensor",
]


# ----------------------------------------------------------------------------- features
class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A variable-length input feature, parsed into a ``SparseTensor``."""

    __slots__ = ()


class FixedLenFeature(collections.namedtuple("FixedLenFeature", ["shape", "dtype", "default_value"])):
    """A fixed-length input feature of ``shape``; without ``default_value`` it is required."""

    __slots__ = ()

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(
    collections.namedtuple("FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])
):
    """A variable number of values of ``shape`` each, stacked along a new first dimension."""

    __slots__ = ()

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class SparseFeature(
    collections.namedtuple("SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])
):
    """A sparse feature built from an index feature (or several) and a value feature."""

    __slots__ = ()

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


_SUPPORTED = (dtypes.float32, dtypes.int64, dtypes.string)


def _check_dtype(key, dtype):
    dtype = dtypes.as_dtype(dtype)
    if dtype.base_dtype not in _SUPPORTED:
        raise ValueError(
            f"Unsupported dtype {dtype.name} for feature {key!r}: Example features hold float32, int64 or string values."
        )
    return dtype.base_dtype


class _ParseParams:
    """TensorFlow's ``_ParseOpParams``: the op's keys, types, shapes and defaults, features sorted by key."""

    def __init__(self, features, sequence=False):
        self.sparse_keys, self.sparse_types = [], []
        self.dense_keys, self.dense_types, self.dense_shapes, self.dense_defaults = [], [], [], {}
        self.ragged_keys, self.ragged_value_types, self.ragged_split_types = [], [], []
        if not features:
            raise ValueError(f"Missing: features was {features}.")
        for key in sorted(features):
            f = features[key]
            if isinstance(f, VarLenFeature):
                self._add_sparse(key, _check_dtype(key, f.dtype))
            elif isinstance(f, SparseFeature):
                index_keys = [f.index_key] if isinstance(f.index_key, str) else list(f.index_key)
                for k in index_keys:
                    self._add_sparse(k, dtypes.int64)
                self._add_sparse(f.value_key, _check_dtype(key, f.dtype))
            elif isinstance(f, FixedLenFeature):
                if f.shape is None:
                    raise ValueError(f"Missing shape for feature {key}.")
                shape = as_shape(f.shape)
                if not shape.is_fully_defined():
                    raise ValueError(f"All dimensions of shape for feature {key} need to be known but received {shape}.")
                self._add_dense(key, _check_dtype(key, f.dtype), shape, f.default_value)
            elif isinstance(f, FixedLenSequenceFeature):
                if f.shape is None:
                    raise ValueError(f"Missing shape for feature {key}.")
                if not sequence and not f.allow_missing:
                    raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing to be True.")
                shape = as_shape(f.shape)
                if not shape.is_fully_defined():
                    raise ValueError(f"All dimensions of shape for feature {key} need to be known but received {shape}.")
                if not sequence:
                    shape = TensorShape([None]).concatenate(shape)
                self._add_dense(key, _check_dtype(key, f.dtype), shape, f.default_value)
            elif isinstance(f, RaggedFeature):
                for k, dtype in ragged_keys(key, f):
                    self._add_ragged(k, dtype, f.row_splits_dtype)
            else:
                raise ValueError(f"Invalid feature {key}:{f}.")
        for what, other in (("Dense", self.dense_keys), ("Sparse", self.sparse_keys)):
            both = set(other) & set(self.ragged_keys)
            if both:
                raise ValueError(f"{what} and ragged keys must not intersect; {what.lower()}_keys: {other}, "
                                 f"ragged_keys: {self.ragged_keys}, intersection: {both}")

    def _add_sparse(self, key, dtype):
        if key in self.sparse_keys:
            i = self.sparse_keys.index(key)
            if self.sparse_types[i] != dtype:
                raise ValueError(f"Conflicting type {self.sparse_types[i]} vs {dtype} for feature {key}.")
            return
        if key in self.dense_keys:
            raise ValueError(f"Feature {key} is both sparse and dense.")
        self.sparse_keys.append(key)
        self.sparse_types.append(dtype)

    def _add_ragged(self, key, dtype, split_dtype):
        if key in self.ragged_keys:
            i = self.ragged_keys.index(key)
            if self.ragged_value_types[i] != dtype:
                raise ValueError(f"Conflicting type {self.ragged_value_types[i]} vs {dtype} for feature {key}.")
            if self.ragged_split_types[i] != split_dtype:
                raise ValueError(f"Conflicting partition type {self.ragged_split_types[i]} vs {split_dtype} for "
                                 f"feature {key}.")
            return
        self.ragged_keys.append(key)
        self.ragged_value_types.append(dtype)
        self.ragged_split_types.append(split_dtype)

    def _add_dense(self, key, dtype, shape, default):
        if key in self.sparse_keys:
            raise ValueError(f"Feature {key} is both sparse and dense.")
        self.dense_keys.append(key)
        self.dense_types.append(dtype)
        self.dense_shapes.append(shape)
        if default is not None:
            self.dense_defaults[key] = default

    def default_tensors(self):
        """One default per dense feature: [] (required), the default reshaped, or a scalar padding value."""
        out = []
        for key, dtype, shape in zip(self.dense_keys, self.dense_types, self.dense_shapes):
            default = self.dense_defaults.get(key)
            variable = shape.ndims and shape.as_list()[0] is None
            clean = re.sub(r"[^A-Za-z0-9_.\-/]", "_", key)
            if variable:
                if default is None:
                    default = ops.convert_to_tensor("" if dtype == dtypes.string else 0, dtype=dtype)
                else:
                    default = ops.convert_to_tensor(default, dtype=dtype, name="padding_" + clean)
                    default = array_ops.reshape(default, [])
            elif default is None:
                default = constant([], dtype=dtype)
            elif not isinstance(default, ops.Tensor):
                default = ops.convert_to_tensor(default, dtype=dtype, name="key_" + clean)
                default = array_ops.reshape(default, shape.as_list())
            out.append(default)
        return out


def _strings(values, name):
    return constant(np.array([v.encode() if isinstance(v, str) else v for v in values], dtype=object).reshape(
        [len(values)]), dtype=dtypes.string, name=name)


def _shapes_attr(shapes):
    return ("list_shape", [s._as_native() for s in shapes])


def _types_attr(types):
    return ("list_type", [dtypes.as_dtype(t).as_datatype_enum for t in types])


def _parse_example_raw(serialized, names, params, name=None):
    """Adds one ``ParseExampleV2`` node; returns ({key: SparseTensor}, {key: Tensor}, {ragged key: (values,
    row splits)})."""
    if params.ragged_keys and serialized.get_shape().ndims is None:
        raise ValueError("serialized must have statically-known rank to parse ragged features.")
    with ops.name_scope(name, "ParseExampleV2"):
        names_t = _strings([] if names is None else list(np.asarray(names).reshape(-1)), "names") if (
            names is None or not isinstance(names, ops.Tensor)) else names
        if names is not None and not isinstance(names, ops.Tensor) and np.ndim(names) == 0:
            names_t = ops.convert_to_tensor(names, dtype=dtypes.string, name="names")
        sparse_keys = _strings(params.sparse_keys, "sparse_keys")
        dense_keys = _strings(params.dense_keys, "dense_keys")
        ragged_keys_t = _strings(params.ragged_keys, "ragged_keys")
    defaults = params.default_tensors()
    op = make_op(
        "ParseExampleV2",
        [serialized, names_t, sparse_keys, dense_keys, ragged_keys_t, *defaults],
        {
            "Tdense": _types_attr(params.dense_types),
            "num_sparse": len(params.sparse_keys),
            "sparse_types": _types_attr(params.sparse_types),
            "ragged_value_types": _types_attr(params.ragged_value_types),
            "ragged_split_types": _types_attr(params.ragged_split_types),
            "dense_shapes": _shapes_attr(params.dense_shapes),
        },
        name="ParseExampleV2",
    )
    outs = op._outputs
    ns = len(params.sparse_keys)
    sparse = {
        k: SparseTensor(outs[i], outs[ns + i], outs[2 * ns + i]) for i, k in enumerate(params.sparse_keys)
    }
    dense = {k: outs[3 * ns + i] for i, k in enumerate(params.dense_keys)}
    at, nr = 3 * ns + len(params.dense_keys), len(params.ragged_keys)
    ragged = {k: (outs[at + i], outs[at + nr + i]) for i, k in enumerate(params.ragged_keys)}
    return sparse, dense, ragged


def _sparse_merge(ids_list, values, size, already_sorted):
    """TensorFlow's ``sparse_merge_impl``: index features' values become the last coordinates."""
    if not isinstance(size, (list, tuple)):
        size = [size]
    first = ids_list[0]
    columns = [first.indices[:, :-1]] + [array_ops.expand_dims(ids.values, 1) for ids in ids_list]
    indices = array_ops.concat(columns, 1)
    shape = array_ops.concat(
        [first.dense_shape[:-1], constant([int(s) for s in size], dtype=dtypes.int64)], 0
    )
    if already_sorted:
        return SparseTensor(indices, values.values, shape)
    op = make_op("SparseReorder", [indices, values.values, shape], {"T": type_attr(values.dtype)},
                 name="SparseReorder")
    return SparseTensor(op._outputs[0], op._outputs[1], shape)


def _assemble(features, sparse, dense, ragged=None, scalar=False, ragged_built=None):
    """The output dict: RaggedTensors built from the raw ``ragged`` outputs (or given, built, in
    ``ragged_built``), SparseFeatures merged, the rest as parsed."""
    out = dict(ragged_built) if ragged_built is not None else _build_ragged(features, ragged or {}, scalar)
    for key, f in features.items():
        if isinstance(f, RaggedFeature):
            continue
        if isinstance(f, SparseFeature):
            index_keys = [f.index_key] if isinstance(f.index_key, str) else list(f.index_key)
            with ops.name_scope(None, "SparseMerge"):
                out[key] = _sparse_merge([sparse[k] for k in index_keys], sparse[f.value_key], f.size,
                                         f.already_sorted)
        elif isinstance(f, VarLenFeature):
            out[key] = sparse[key]
        else:
            out[key] = dense[key]
    return out


def _prepare(serialized, features):
    if not features:
        raise ValueError("Argument `features` cannot be None.")
    return ops.convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")


def parse_example(serialized, features, name=None, example_names=None):
    """Parses a batch of serialized ``Example`` protos (a string vector) into a dict of tensors.

    FixedLenFeature -> dense ``[batch] + shape``; VarLenFeature -> SparseTensor
    (``[batch, max count]``); SparseFeature -> SparseTensor ``[batch, size]``;
    FixedLenSequenceFeature (``allow_missing=True``) -> dense ``[batch, max rows] + shape``.
    """
    with ops.name_scope(name, "ParseExample", [serialized, example_names]):
        params = _ParseParams(features)
        serialized = _prepare(serialized, features)
        sparse, dense, ragged = _parse_example_raw(serialized, example_names, params)
        return _assemble(features, sparse, dense, ragged, scalar=serialized.get_shape().ndims == 0)


def parse_single_example(serialized, features, name=None, example_names=None):
    """Parses one serialized ``Example`` (a scalar string): like ``parse_example`` without the batch dimension."""
    if not features:
        raise ValueError("Invalid argument: features cannot be None.")
    with ops.name_scope(name, "ParseSingleExample", [serialized, example_names]):
        serialized = ops.convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        if serialized.get_shape().ndims not in (None, 0):
            raise ValueError(f"Input serialized must be a scalar, got shape {serialized.get_shape()}.")
        return parse_example(serialized, features, example_names=example_names)


def parse_example_fn(features):
    """A function ``serialized -> dict of tensors`` for ``tf.data`` (``map`` / ``parse_example_dataset``).

    It adds the same ``ParseExampleV2`` node ``parse_example`` does, in whichever
    graph (a traced map function included) ``serialized`` lives.
    """
    features = dict(features)

    def fn(serialized):
        return parse_example(serialized, features)

    return fn


# ----------------------------------------------------------------------- sequence examples
def _split_sequence_params(context_features, sequence_features):
    context = _ParseParams(context_features) if context_features else None
    seq = _ParseParams(sequence_features, sequence=True) if sequence_features else None
    if context is None and seq is None:
        raise ValueError("Missing features.")
    return context, seq


def _parse_sequence_raw(serialized, example_names, context_features, sequence_features, name, scalar):
    context, seq = _split_sequence_params(context_features, sequence_features)
    empty = _ParseParams.__new__(_ParseParams)
    for attr in ("sparse_keys", "sparse_types", "dense_keys", "dense_types", "dense_shapes", "ragged_keys",
                 "ragged_value_types", "ragged_split_types"):
        setattr(empty, attr, [])
    empty.dense_defaults = {}
    context = context or empty
    seq = seq or empty
    if (context.ragged_keys or seq.ragged_keys) and serialized.get_shape().ndims is None:
        raise ValueError("serialized must have statically-known rank to parse ragged features.")
    with ops.name_scope(name, "ParseSequenceExampleV2"):
        debug = _strings([] if example_names is None else list(np.asarray(example_names).reshape(-1)),
                         "debug_name")
        if example_names is not None and np.ndim(example_names) == 0 and not isinstance(example_names, ops.Tensor):
            debug = ops.convert_to_tensor(example_names, dtype=dtypes.string, name="debug_name")
        keys = [
            _strings(context.sparse_keys, "context_sparse_keys"),
            _strings(context.dense_keys, "context_dense_keys"),
            _strings(context.ragged_keys, "context_ragged_keys"),
            _strings(seq.sparse_keys, "feature_list_sparse_keys"),
            _strings(seq.dense_keys, "feature_list_dense_keys"),
            _strings(seq.ragged_keys, "feature_list_ragged_keys"),
        ]
        missing = [bool(sequence_features[k].allow_missing) for k in seq.dense_keys]
        missing_t = constant(np.array(missing, dtype=bool).reshape([len(missing)]), dtype=dtypes.bool,
                             name="feature_list_dense_missing_assumed_empty")
    op = make_op(
        "ParseSequenceExampleV2",
        [serialized, debug, *keys, missing_t, *context.default_tensors()],
        {
            "Ncontext_sparse": len(context.sparse_keys),
            "Tcontext_dense": _types_attr(context.dense_types),
            "context_sparse_types": _types_attr(context.sparse_types),
            "context_ragged_value_types": _types_attr(context.ragged_value_types),
            "context_ragged_split_types": _types_attr(context.ragged_split_types),
            "context_dense_shapes": _shapes_attr(context.dense_shapes),
            "Nfeature_list_sparse": len(seq.sparse_keys),
            "Nfeature_list_dense": len(seq.dense_keys),
            "feature_list_dense_types": _types_attr(seq.dense_types),
            "feature_list_sparse_types": _types_attr(seq.sparse_types),
            "feature_list_ragged_value_types": _types_attr(seq.ragged_value_types),
            "feature_list_ragged_split_types": _types_attr(seq.ragged_split_types),
            "feature_list_dense_shapes": _shapes_attr(seq.dense_shapes),
        },
        name="ParseSequenceExampleV2",
    )
    outs = list(op._outputs)

    def take(n):
        out = outs[:n]
        del outs[:n]
        return out

    cs = len(context.sparse_keys)
    ci, cv, csh = take(cs), take(cs), take(cs)
    cd = take(len(context.dense_keys))
    cr = len(context.ragged_keys)
    crv, crs = take(cr), take(cr)
    fs = len(seq.sparse_keys)
    fi, fv, fsh = take(fs), take(fs), take(fs)
    fd = take(len(seq.dense_keys))
    fl = take(len(seq.dense_keys))
    fr = len(seq.ragged_keys)
    frv, fro, fri = take(fr), take(fr), take(fr)
    c_sparse = {k: SparseTensor(ci[i], cv[i], csh[i]) for i, k in enumerate(context.sparse_keys)}
    c_dense = dict(zip(context.dense_keys, cd))
    f_sparse = {k: SparseTensor(fi[i], fv[i], fsh[i]) for i, k in enumerate(seq.sparse_keys)}
    f_dense = dict(zip(seq.dense_keys, fd))
    lengths = dict(zip(seq.dense_keys, fl))
    c_ragged = {k: (crv[i], crs[i]) for i, k in enumerate(context.ragged_keys)}
    f_ragged = {k: (frv[i], fro[i], fri[i]) for i, k in enumerate(seq.ragged_keys)}
    ctx_out = _assemble(context_features or {}, c_sparse, c_dense, c_ragged, scalar=scalar)
    seq_out = _assemble(sequence_features or {}, f_sparse, f_dense,
                        ragged_built=_build_ragged_sequence(sequence_features or {}, f_ragged, scalar))
    return ctx_out, seq_out, lengths


def parse_single_sequence_example(serialized, context_features=None, sequence_features=None, example_name=None,
                                  name=None):
    """Parses one serialized ``SequenceExample``: (context dict, feature-list dict)."""
    with ops.name_scope(name, "ParseSingleSequenceExample", [serialized, example_name]):
        serialized = ops.convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        if serialized.get_shape().ndims not in (None, 0):
            raise ValueError(f"Input serialized must be a scalar, got shape {serialized.get_shape()}.")
        with ops.name_scope(None, "ParseSequenceExample"):
            ctx, seq, _ = _parse_sequence_raw(serialized, example_name, context_features, sequence_features, None,
                                              True)
        return ctx, seq


def parse_sequence_example(serialized, context_features=None, sequence_features=None, example_names=None,
                           name=None):
    """Parses a batch of serialized ``SequenceExample``s: (context dict, feature-list dict, lengths dict)."""
    with ops.name_scope(name, "ParseSequenceExample", [serialized, example_names]):
        serialized = ops.convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
        if serialized.get_shape().ndims not in (None, 1):
            raise ValueError(f"Input serialized must be a vector, got shape {serialized.get_shape()}.")
        return _parse_sequence_raw(serialized, example_names, context_features, sequence_features, None, False)


# ---------------------------------------------------------------------------- decode ops
def decode_raw(input_bytes=None, out_type=None, little_endian=True, name=None, bytes=None):  # noqa: A002
    """Reinterprets the bytes of each string as a vector of ``out_type`` (TF1 signature)."""
    if input_bytes is None:
        input_bytes = bytes
    elif bytes is not None:
        raise ValueError("decode_raw: only one of `input_bytes` and `bytes` may be given.")
    if input_bytes is None:
        raise ValueError("decode_raw: `input_bytes` is required.")
    if out_type is None:
        raise ValueError("decode_raw: `out_type` is required.")
    input_bytes = ops.convert_to_tensor(input_bytes, dtype=dtypes.string, name="bytes")
    return make("DecodeRaw", [input_bytes],
                {"out_type": type_attr(out_type), "little_endian": bool(little_endian)}, name=name or "DecodeRaw")


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None, na_value="",
               select_cols=None):
    """Parses CSV records into one tensor per column (each shaped like ``records``)."""
    if select_cols is not None and any(select_cols[i] >= select_cols[i + 1] for i in range(len(select_cols) - 1)):
        raise ValueError("select_cols is not strictly increasing.")
    if select_cols is not None and select_cols and select_cols[0] < 0:
        raise ValueError("select_cols contains negative values.")
    if select_cols is not None and len(select_cols) != len(record_defaults):
        raise ValueError("Length of select_cols and record_defaults do not match.")
    with ops.name_scope(name, "DecodeCSV"):
        records = ops.convert_to_tensor(records, dtype=dtypes.string, name="records")
        defaults = []
        for i, d in enumerate(record_defaults):
            if isinstance(d, ops.Tensor):
                defaults.append(d)
                continue
            arr = np.asarray(d)
            if arr.size == 0 and not isinstance(d, (list, tuple, np.ndarray)):
                raise ValueError(f"record_defaults[{i}] must be a tensor or a list of at most one value.")
            defaults.append(ops.convert_to_tensor(d, name=f"record_defaults_{i}"))
    op = make_op(
        "DecodeCSV",
        [records, *defaults],
        {
            "OUT_TYPE": _types_attr([t.dtype.base_dtype for t in defaults]),
            "field_delim": field_delim,
            "use_quote_delim": bool(use_quote_delim),
            "na_value": na_value,
            "select_cols": [int(c) for c in (select_cols or [])],
        },
        name=name or "DecodeCSV",
    )
    return list(op._outputs)


def decode_json_example(json_examples, name=None):
    """Converts JSON-encoded ``Example`` records (protobuf's JSON mapping) to binary protos."""
    json_examples = ops.convert_to_tensor(json_examples, dtype=dtypes.string, name="json_examples")
    return make("DecodeJSONExample", [json_examples], {}, name=name or "DecodeJSONExample")


def decode_compressed(bytes, compression_type="", name=None):  # noqa: A002
    """Decompresses each string (``compression_type`` "", "ZLIB" or "GZIP")."""
    bytes = ops.convert_to_tensor(bytes, dtype=dtypes.string, name="bytes")
    return make("DecodeCompressed", [bytes], {"compression_type": compression_type},
                name=name or "DecodeCompressed")


def encode_base64(input, pad=False, name=None):  # noqa: A002
    """Web-safe base64 (``-`` and ``_``), ``=`` padding only with ``pad``."""
    input = ops.convert_to_tensor(input, dtype=dtypes.string, name="input")
    return make("EncodeBase64", [input], {"pad": bool(pad)}, name=name or "EncodeBase64")


def decode_base64(input, name=None):  # noqa: A002
    """Decodes web-safe base64 (padding optional)."""
    input = ops.convert_to_tensor(input, dtype=dtypes.string, name="input")
    return make("DecodeBase64", [input], {}, name=name or "DecodeBase64")


def serialize_tensor(tensor, name=None):
    """The tensor as a serialized ``TensorProto`` (TensorFlow's bytes)."""
    tensor = ops.convert_to_tensor(tensor, name="tensor")
    return make("SerializeTensor", [tensor], {"T": type_attr(tensor.dtype.base_dtype)},
                name=name or "SerializeTensor")


def parse_tensor(serialized, out_type, name=None):
    """A tensor of ``out_type`` from a serialized ``TensorProto``."""
    serialized = ops.convert_to_tensor(serialized, dtype=dtypes.string, name="serialized")
    return make("ParseTensor", [serialized], {"out_type": type_attr(out_type)}, name=name or "ParseTensor")


def _sparse_parts(sp_input):
    sp = convert_to_tensor_or_sparse_tensor(sp_input)
    if not isinstance(sp, SparseTensor):
        raise TypeError(f"Input must be a SparseTensor, got {type(sp_input).__name__}.")
    return sp


def serialize_sparse(sp_input, name=None, out_type=dtypes.string):
    """A ``SparseTensor`` as a 3-vector of serialized TensorProtos (indices, values, dense_shape)."""
    sp = _sparse_parts(sp_input)
    return make("SerializeSparse", [sp.indices, sp.values, sp.dense_shape],
                {"T": type_attr(sp.dtype.base_dtype), "out_type": type_attr(out_type)},
                name=name or "SerializeSparse")


def serialize_many_sparse(sp_input, name=None, out_type=dtypes.string):
    """A rank-R ``SparseTensor`` as ``[N, 3]`` serialized minibatch entries, one per row of dimension 0."""
    sp = _sparse_parts(sp_input)
    return make("SerializeManySparse", [sp.indices, sp.values, sp.dense_shape],
                {"T": type_attr(sp.dtype.base_dtype), "out_type": type_attr(out_type)},
                name=name or "SerializeManySparse")


def deserialize_many_sparse(serialized_sparse, dtype, rank=None, name=None):
    """Stacks ``[N, 3]`` serialized sparse tensors into one SparseTensor with a new first dimension."""
    serialized_sparse = ops.convert_to_tensor(serialized_sparse, dtype=dtypes.string, name="serialized_sparse")
    op = make_op("DeserializeManySparse", [serialized_sparse], {"dtype": type_attr(dtype)},
                 name=name or "DeserializeManySparse")
    indices, values, shape = op._outputs
    if rank is not None:
        indices.set_shape([None, rank])
        shape.set_shape([rank])
    return SparseTensor(indices, values, shape)
