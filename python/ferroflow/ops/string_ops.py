"""String ops: ``tf.strings`` and TF1's top-level string names, as TensorFlow's op types with Rust kernels.

Splitting returns a ``SparseTensor`` (TF1's default ``result_type``) or a ``RaggedTensor``
(``ferroflow.ops.ragged``); ``unicode_decode``/``unicode_split``/``bytes_split``/``ngrams`` return ragged
tensors as TensorFlow does. Regular expressions use RE2 syntax (``regex_full_match`` and ``regex_replace``
build the ``Static*`` ops for Python-string patterns, as TensorFlow does). Hashes are TensorFlow's, bit for bit:
``to_hash_bucket`` (TensorFlow's ``Hash64``), ``to_hash_bucket_fast`` (FarmHash ``Fingerprint64``),
``to_hash_bucket_strong`` (SipHash-2-4 with the two-int key) and ``fingerprint``.
"""

from __future__ import annotations

from ferroflow.framework import constant_op, dtypes, ops
from ferroflow.framework.sparse_tensor import SparseTensor
from ferroflow.ops import array_ops, math_ops
from ferroflow.ops._op_util import make, make_op, type_attr
from ferroflow.ops._ragged_hook import on_flat_values
from ferroflow.ops.ragged import RaggedTensor

__all__ = [
    "as_string",
    "bytes_split",
    "fingerprint",
    "join",
    "length",
    "lower",
    "ngrams",
    "reduce_join",
    "reduce_join_v2",
    "regex_full_match",
    "regex_replace",
    "split",
    "string_format",
    "string_join",
    "string_split",
    "string_split_v2",
    "string_strip",
    "string_to_hash_bucket",
    "string_to_hash_bucket_fast",
    "string_to_hash_bucket_strong",
    "string_to_number",
    "strip",
    "substr",
    "unicode_decode",
    "unicode_decode_with_offsets",
    "unicode_encode",
    "unicode_script",
    "unicode_split",
    "unicode_split_with_offsets",
    "unicode_transcode",
    "unsorted_segment_join",
    "upper",
]


def _str(x, name="input"):
    return ops.convert_to_tensor(x, dtype=dtypes.string, name=name)


def _pick(new, new_name, old, old_name):
    """TensorFlow's ``deprecated_argument_lookup``: one of two spellings of an argument."""
    if new is not None and old is not None:
        raise ValueError(f"Cannot specify both '{new_name}' and '{old_name}'")
    return new if new is not None else old


def _is_py_str(x):
    return isinstance(x, (str, bytes))


# --------------------------------------------------------------------------- ragged helpers


def _ragged_from_sparse_rows(indices, values, dense_shape):
    """A ragged tensor whose row ``indices[:, 0]`` hold ``values`` (sorted by row), ``dense_shape[0]`` rows."""
    return RaggedTensor.from_value_rowids(values, indices[:, 0], dense_shape[0])


def _wrap_uniform(rt_or_values, outer_shape, splits_dtype=dtypes.int64):
    """Nests ``rt_or_values`` (whose rows are the flattened ``outer_shape``) under uniform rows of ``outer_shape``
    (a static list of ints or an int tensor), so a ``[d0, d1]`` input gives a ragged tensor of ragged rank 2."""
    shape = ops.convert_to_tensor(outer_shape, dtype=splits_dtype)
    rank = shape.shape.as_list()[0]
    result = rt_or_values
    for axis in range(rank - 1, 0, -1):
        outer = math_ops.reduce_prod(shape[:axis])
        width = shape[axis]
        result = RaggedTensor._from_parts(result, math_ops.range(0, outer * width + 1, width, dtype=splits_dtype))
    return result


def _apply_flat(input, fn, name):  # noqa: A002
    """``fn(1-D strings) -> RaggedTensor`` applied to a string tensor of any known rank or a RaggedTensor:
    rank 0 gives row 0 of the result; rank ``k > 1`` nests the result under the input's dimensions."""
    if isinstance(input, RaggedTensor):
        return input.with_flat_values(_apply_flat(input.flat_values, fn, name))
    rank = input.shape.ndims
    if rank == 0:
        return fn(array_ops.reshape(input, [1])).values
    if rank == 1 or rank is None:
        return fn(input)
    flat = array_ops.reshape(input, [-1])
    return _wrap_uniform(fn(flat), array_ops.shape(input, out_type=dtypes.int64))


# --------------------------------------------------------------------------- split / join


def string_split(source, sep=None, skip_empty=True, delimiter=None, result_type="SparseTensor", name=None):
    """TF1's ``tf.string_split``: splits each string of the 1-D ``source`` at any byte of ``sep`` (default " ";
    "" splits into bytes); a ``SparseTensor`` (or ``RaggedTensor``) of rank 2. ``StringSplit``."""
    with ops.name_scope(name, "StringSplit", [source]):
        delimiter = _pick(sep, "sep", delimiter, "delimiter")
        if delimiter is None:
            delimiter = " "
        src = _str(source, "source")
        op = make_op("StringSplit", [src, _str(delimiter, "delimiter")], {"skip_empty": bool(skip_empty)})
        indices, values, shape = op.outputs
        if result_type == "SparseTensor":
            return SparseTensor(indices, values, shape)
        if result_type == "RaggedTensor":
            return _ragged_from_sparse_rows(indices, values, shape)
        raise ValueError("result_type must be 'RaggedTensor' or 'SparseTensor'.")


def string_split_v2(source, sep=None, maxsplit=-1, name=None):
    """Splits each string of the 1-D ``source`` at ``sep`` as Python's ``str.split`` (``StringSplitV2``);
    a ``SparseTensor`` of rank 2."""
    with ops.name_scope(name, "StringSplit", [source]):
        sep = "" if sep is None else sep
        op = make_op("StringSplitV2", [_str(source, "source"), _str(sep, "sep")], {"maxsplit": int(maxsplit)})
        return SparseTensor(*op.outputs)


def _split_ragged(input, sep, maxsplit):  # noqa: A002
    def fn(flat):
        st = string_split_v2(flat, sep=sep, maxsplit=maxsplit)
        return _ragged_from_sparse_rows(st.indices, st.values, st.dense_shape)

    return _apply_flat(input, fn, "StringSplit")


def split(input=None, sep=None, maxsplit=-1, result_type="SparseTensor", source=None, name=None):  # noqa: A002
    """``tf.strings.split`` (TF1): splits each string at ``sep`` (None: runs of whitespace) as Python's
    ``str.split``, at most ``maxsplit`` times; a ``SparseTensor`` of rank ``N + 1`` or a ``RaggedTensor``."""
    input = _pick(input, "input", source, "source")  # noqa: A001
    with ops.name_scope(name, "StringSplit", [input]):
        x = input if isinstance(input, RaggedTensor) else _str(input)
        if not isinstance(x, RaggedTensor) and x.shape.ndims == 0:
            x = array_ops.expand_dims(x, 0)
        if result_type == "SparseTensor":
            if not isinstance(x, RaggedTensor) and x.shape.ndims == 1:
                return string_split_v2(x, sep=sep, maxsplit=maxsplit)
            return _split_ragged(x, sep, maxsplit).to_sparse()
        if result_type == "RaggedTensor":
            return _split_ragged(x, sep, maxsplit)
        raise ValueError("result_type must be 'RaggedTensor' or 'SparseTensor'.")


def bytes_split(input, name=None):  # noqa: A002
    """Each string's bytes, as a ``RaggedTensor`` of rank ``N + 1`` (a 1-D tensor for a scalar)."""
    with ops.name_scope(name, "StringsByteSplit", [input]):
        x = input if isinstance(input, RaggedTensor) else _str(input)

        def fn(flat):
            op = make_op("StringSplit", [flat, _str("", "delimiter")], {"skip_empty": False})
            return _ragged_from_sparse_rows(*op.outputs)

        if not isinstance(x, RaggedTensor) and x.shape.ndims is None:
            raise ValueError("input must have a statically-known rank.")
        return _apply_flat(x, fn, "StringsByteSplit")


def string_join(inputs, separator="", name=None):
    """Joins the strings of ``inputs`` (scalars or tensors of one shape) element-wise with ``separator``."""
    if any(isinstance(x, RaggedTensor) for x in inputs):
        from ferroflow.ops import ragged_dispatch

        return ragged_dispatch.string_join(inputs, separator, name)
    with ops.name_scope(name, "StringJoin", inputs) as scope:
        ts = [_str(x, "inputs") for x in inputs]
        return make("StringJoin", ts, {"separator": separator, "N": len(ts)}, scope)


join = string_join


def reduce_join_v2(inputs, axis=None, keepdims=False, separator="", name=None):
    """Joins the strings of ``inputs`` along ``axis`` (all axes, last first, by default)."""
    if isinstance(inputs, RaggedTensor):
        from ferroflow.ops import ragged_dispatch

        return ragged_dispatch.reduce_join(inputs, axis, keepdims, separator, name)
    with ops.name_scope(None, "ReduceJoin", [inputs, axis]):
        x = _str(inputs, "inputs")
        if axis is None:
            if x.shape.ndims is not None:
                axis = list(range(x.shape.ndims - 1, -1, -1))
            else:
                axis = math_ops.range(array_ops.rank(x) - 1, -1, -1)
        axes = axis if isinstance(axis, ops.Tensor) else ops.convert_to_tensor(axis, dtype=dtypes.int32,
                                                                              name="reduction_indices")
        return make("ReduceJoin", [x, axes], {"keep_dims": bool(keepdims), "separator": separator}, name)


def reduce_join(inputs, axis=None, keep_dims=None, separator="", name=None, reduction_indices=None, keepdims=None):
    """TF1's ``reduce_join``: ``reduce_join_v2`` with the ``keep_dims``/``reduction_indices`` spellings."""
    keepdims = _pick(keepdims, "keepdims", keep_dims, "keep_dims")
    axis = _pick(axis, "axis", reduction_indices, "reduction_indices")
    return reduce_join_v2(inputs, axis=axis, keepdims=bool(keepdims), separator=separator, name=name)


def unsorted_segment_join(inputs, segment_ids, num_segments, separator="", name=None):
    """Joins the strings of ``inputs`` with the same ``segment_ids`` (in order) into ``num_segments`` rows."""
    with ops.name_scope(name, "UnsortedSegmentJoin", [inputs, segment_ids, num_segments]) as scope:
        x = _str(inputs, "inputs")
        ids = ops.convert_to_tensor(segment_ids, name="segment_ids")
        n = ops.convert_to_tensor(num_segments, name="num_segments")
        return make("UnsortedSegmentJoin", [x, ids, n], {"separator": separator}, scope)


# --------------------------------------------------------------------------- element-wise


@on_flat_values("input")
def length(input, name=None, unit="BYTE"):  # noqa: A002
    """The length of each string in bytes (``unit="BYTE"``) or UTF-8 characters (``"UTF8_CHAR"``)."""
    with ops.name_scope(name, "StringLength", [input]) as scope:
        return make("StringLength", [_str(input)], {"unit": unit}, scope)


@on_flat_values("input")
def lower(input, encoding="", name=None):  # noqa: A002
    """Lower-cases each string (ASCII only; all of Unicode with ``encoding="utf-8"``)."""
    with ops.name_scope(name, "StringLower", [input]) as scope:
        return make("StringLower", [_str(input)], {"encoding": encoding}, scope)


@on_flat_values("input")
def upper(input, encoding="", name=None):  # noqa: A002
    """Upper-cases each string (ASCII only; all of Unicode with ``encoding="utf-8"``)."""
    with ops.name_scope(name, "StringUpper", [input]) as scope:
        return make("StringUpper", [_str(input)], {"encoding": encoding}, scope)


@on_flat_values("input")
def strip(input, name=None):  # noqa: A002
    """Each string without its leading and trailing ASCII whitespace."""
    with ops.name_scope(name, "StringStrip", [input]) as scope:
        return make("StringStrip", [_str(input)], {}, scope)


string_strip = strip


@on_flat_values("input")
def substr(input, pos, len, name=None, unit="BYTE"):  # noqa: A002
    """``len`` bytes (or UTF-8 characters) of each string from ``pos`` (negative: from the end); ``pos`` and
    ``len`` broadcast against ``input``. ``pos`` past either end is an InvalidArgumentError."""
    with ops.name_scope(name, "Substr", [input, pos, len]) as scope:
        x = _str(input)
        p = ops.convert_to_tensor(pos, name="pos")
        if p.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            p = ops.convert_to_tensor(pos, dtype=dtypes.int32, name="pos")
        n = ops.convert_to_tensor(len, dtype=p.dtype.base_dtype, name="len")
        return make("Substr", [x, p, n], {"unit": unit}, scope)


@on_flat_values("input")
def regex_full_match(input, pattern, name=None):  # noqa: A002
    """Whether each whole string matches the RE2 ``pattern`` (``StaticRegexFullMatch`` for a Python string)."""
    with ops.name_scope(name, "RegexFullMatch", [input]) as scope:
        x = _str(input)
        if _is_py_str(pattern):
            p = pattern.decode() if isinstance(pattern, bytes) else pattern
            return make("StaticRegexFullMatch", [x], {"pattern": p}, scope)
        return make("RegexFullMatch", [x, _str(pattern, "pattern")], {}, scope)


@on_flat_values("input")
def regex_replace(input, pattern, rewrite, replace_global=True, name=None):  # noqa: A002
    """Replaces the matches of the RE2 ``pattern`` with ``rewrite`` (``\\1`` is group 1, ``\\\\`` a backslash);
    only the first match unless ``replace_global``."""
    with ops.name_scope(name, "RegexReplace", [input]) as scope:
        x = _str(input)
        if _is_py_str(pattern) and _is_py_str(rewrite):
            p = pattern.decode() if isinstance(pattern, bytes) else pattern
            r = rewrite.decode() if isinstance(rewrite, bytes) else rewrite
            return make("StaticRegexReplace", [x], {"pattern": p, "rewrite": r,
                                                    "replace_global": bool(replace_global)}, scope)
        return make("RegexReplace", [x, _str(pattern, "pattern"), _str(rewrite, "rewrite")],
                    {"replace_global": bool(replace_global)}, scope)


@on_flat_values("input")
def as_string(input, precision=-1, scientific=False, shortest=False, width=-1, fill="", name=None):  # noqa: A002
    """Each element as a string, printf-style: ``%f`` (``%e`` if ``scientific``, ``%g`` if ``shortest``) with
    ``precision`` for floats, ``%d`` for integers, ``true``/``false`` for bools; ``width`` pads with ``fill``."""
    with ops.name_scope(name, "AsString", [input]) as scope:
        x = ops.convert_to_tensor(input, name="input")
        attrs = {"precision": int(precision), "scientific": bool(scientific), "shortest": bool(shortest),
                 "width": int(width), "fill": fill, "T": type_attr(x.dtype.base_dtype)}
        return make("AsString", [x], attrs, scope)


def string_to_number(string_tensor=None, out_type=dtypes.float32, name=None, input=None):  # noqa: A002
    """Parses each string as ``out_type`` (float32, float64, int32, int64, uint32 or uint64); a string that is
    not a number (of that type) is
    an InvalidArgumentError ("StringToNumberOp could not correctly convert string: ...")."""
    string_tensor = _pick(string_tensor, "string_tensor", input, "input")
    with ops.name_scope(name, "StringToNumber", [string_tensor]) as scope:
        out = dtypes.as_dtype(out_type)
        return make("StringToNumber", [_str(string_tensor, "string_tensor")],
                    {"out_type": type_attr(out)}, scope)


def _hash_bucket(op_type, x, num_buckets, name, extra=None):
    with ops.name_scope(name, op_type, [x]) as scope:
        attrs = {"num_buckets": int(num_buckets)}
        attrs.update(extra or {})
        return make(op_type, [_str(x)], attrs, scope)


@on_flat_values("string_tensor")
def string_to_hash_bucket(string_tensor=None, num_buckets=None, name=None, input=None):  # noqa: A002
    """``Hash64(s) % num_buckets`` with TensorFlow's legacy ``Hash64`` (``StringToHashBucket``)."""
    string_tensor = _pick(string_tensor, "string_tensor", input, "input")
    return _hash_bucket("StringToHashBucket", string_tensor, num_buckets, name)


@on_flat_values("input")
def string_to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002
    """``Fingerprint64(s) % num_buckets`` with FarmHash's fingerprint (``StringToHashBucketFast``)."""
    return _hash_bucket("StringToHashBucketFast", input, num_buckets, name)


@on_flat_values("input")
def string_to_hash_bucket_strong(input, num_buckets, key, name=None):  # noqa: A002
    """``SipHash-2-4(key, s) % num_buckets`` with the two-int ``key`` (``StringToHashBucketStrong``)."""
    key = [int(k) for k in key]
    if len(key) != 2:
        raise ValueError(f"key must have 2 elements, got {len(key)}")
    return _hash_bucket("StringToHashBucketStrong", input, num_buckets, name, {"key": key})


def fingerprint(data, method="farmhash64", name=None):
    """uint8 ``[N, 8]``: the FarmHash ``Fingerprint64`` of each row of ``data``, little-endian (``Fingerprint``)."""
    with ops.name_scope(name, "Fingerprint", [data]) as scope:
        x = ops.convert_to_tensor(data, name="data")
        return make("Fingerprint", [x, _str(method, "method")], {}, scope)


def string_format(template, inputs, placeholder="{}", summarize=3, name=None):
    """``template`` with each ``placeholder`` replaced by the next input, printed as TensorFlow prints tensors
    (at most ``summarize`` entries at each end of each dimension; -1 for all)."""
    if isinstance(inputs, (ops.Tensor, RaggedTensor)) or not isinstance(inputs, (list, tuple)):
        inputs = [inputs]
    count = len(template.split(placeholder)) - 1 if placeholder else 0
    if count != len(inputs):
        raise ValueError(f"The template expects {count} tensors, but the inputs only has {len(inputs)}. "
                         "Please ensure the number of placeholders in template matches inputs length.")
    with ops.name_scope(name, "StringFormat", inputs) as scope:
        ts = [ops.convert_to_tensor(x) for x in inputs]
        attrs = {"template": template, "placeholder": placeholder, "summarize": int(summarize),
                 "T": ("list_type", [t.dtype.base_dtype.as_datatype_enum for t in ts])}
        return make("StringFormat", ts, attrs, scope)


# --------------------------------------------------------------------------- unicode


def _decode(input, input_encoding, errors, replacement_char, replace_control_characters, with_offsets):  # noqa: A002
    x = input if isinstance(input, RaggedTensor) else _str(input)
    if not isinstance(x, RaggedTensor) and x.shape.ndims is None:
        raise ValueError("Rank of `input` must be statically known.")
    attrs = {"input_encoding": input_encoding, "errors": errors, "replacement_char": int(replacement_char),
             "replace_control_characters": bool(replace_control_characters),
             "Tsplits": type_attr(dtypes.int64)}
    op_type = "UnicodeDecodeWithOffsets" if with_offsets else "UnicodeDecode"
    parts = {}

    def fn(flat):
        op = make_op(op_type, [flat], attrs)
        chars = RaggedTensor.from_row_splits(op.outputs[1], op.outputs[0])
        if with_offsets:
            parts["offsets"] = RaggedTensor.from_row_splits(op.outputs[2], op.outputs[0])
        return chars

    codepoints = _apply_flat(x, fn, op_type)
    if not with_offsets:
        return codepoints
    # The offsets share the codepoints' row partition.
    offsets_flat = parts["offsets"]
    if isinstance(codepoints, RaggedTensor):
        offsets = _same_partition(codepoints, offsets_flat.values)
    else:
        offsets = offsets_flat.values
    return codepoints, offsets


def _same_partition(rt, flat_values):
    return rt.with_flat_values(flat_values)


def unicode_decode(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                   replace_control_characters=False, name=None):
    """The code points of each string (a ``RaggedTensor`` of rank ``N + 1``; a 1-D tensor for a scalar)."""
    with ops.name_scope(name, "UnicodeDecode", [input]):
        return _decode(input, input_encoding, errors, replacement_char, replace_control_characters, False)


def unicode_decode_with_offsets(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                                replace_control_characters=False, name=None):
    """``unicode_decode`` and the byte offset where each character starts."""
    with ops.name_scope(name, "UnicodeDecodeWithOffsets", [input]):
        return _decode(input, input_encoding, errors, replacement_char, replace_control_characters, True)


def _chars_to_strings(codepoints, encoding, errors, replacement_char):
    """Each code point of the 1-D int32 ``codepoints`` as its own string in ``encoding``."""
    n = array_ops.shape(codepoints, out_type=dtypes.int64)[0]
    splits = math_ops.range(0, n + 1, dtype=dtypes.int64)
    return make("UnicodeEncode", [codepoints, splits],
                {"output_encoding": encoding, "errors": errors, "replacement_char": int(replacement_char),
                 "Tsplits": type_attr(dtypes.int64)})


def unicode_split(input, input_encoding, errors="replace", replacement_char=65533, name=None):  # noqa: A002
    """Each string's characters, each as a string in ``input_encoding`` (a ``RaggedTensor``)."""
    with ops.name_scope(name, "UnicodeSplit", [input]):
        cps = _decode(input, input_encoding, errors, replacement_char, False, False)
        if isinstance(cps, RaggedTensor):
            return cps.with_flat_values(_chars_to_strings(cps.flat_values, input_encoding, errors, replacement_char))
        return _chars_to_strings(cps, input_encoding, errors, replacement_char)


def unicode_split_with_offsets(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                               name=None):
    """``unicode_split`` and the byte offset where each character starts."""
    with ops.name_scope(name, "UnicodeSplitWithOffsets", [input]):
        cps, offsets = _decode(input, input_encoding, errors, replacement_char, False, True)
        if isinstance(cps, RaggedTensor):
            chars = cps.with_flat_values(_chars_to_strings(cps.flat_values, input_encoding, errors,
                                                           replacement_char))
        else:
            chars = _chars_to_strings(cps, input_encoding, errors, replacement_char)
        return chars, offsets


def unicode_encode(input, output_encoding, errors="replace", replacement_char=65533, name=None):  # noqa: A002
    """Encodes the code points of the innermost dimension of ``input`` (an int32 tensor of rank >= 1 or a
    ``RaggedTensor``) as strings in ``output_encoding`` (UTF-8, UTF-16-BE or UTF-32-BE)."""
    with ops.name_scope(name, "UnicodeEncode", [input]):
        attrs = {"output_encoding": output_encoding, "errors": errors, "replacement_char": int(replacement_char),
                 "Tsplits": type_attr(dtypes.int64)}
        if isinstance(input, RaggedTensor):
            if isinstance(input.values, RaggedTensor):
                return input.with_values(unicode_encode(input.values, output_encoding, errors, replacement_char))
            splits = input.row_splits
            if splits.dtype.base_dtype != dtypes.int64:
                splits = math_ops.cast(splits, dtypes.int64)
            return make("UnicodeEncode", [ops.convert_to_tensor(input.values, dtype=dtypes.int32), splits], attrs)
        x = ops.convert_to_tensor(input, dtype=dtypes.int32, name="input")
        rank = x.shape.ndims
        if rank is None:
            raise ValueError("Rank of input_tensor must be statically known.")
        if rank == 0:
            raise ValueError("input_tensor's rank must be at least 1.")
        shape = array_ops.shape(x, out_type=dtypes.int64)
        width = shape[-1]
        flat = array_ops.reshape(x, [-1])
        total = array_ops.size(flat, out_type=dtypes.int64)
        splits = math_ops.range(0, total + 1, math_ops.maximum(width, 1), dtype=dtypes.int64)
        if rank == 1:
            splits = array_ops.stack([constant_op.constant(0, dtype=dtypes.int64), total])
        out = make("UnicodeEncode", [flat, splits], attrs)
        if rank == 1:
            return array_ops.reshape(out, [])
        return array_ops.reshape(out, shape[:-1])


def unicode_transcode(input, input_encoding, output_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                      replace_control_characters=False, name=None):
    """Re-encodes each string from ``input_encoding`` to ``output_encoding``."""
    with ops.name_scope(name, "UnicodeTranscode", [input]) as scope:
        attrs = {"input_encoding": input_encoding, "output_encoding": output_encoding, "errors": errors,
                 "replacement_char": int(replacement_char),
                 "replace_control_characters": bool(replace_control_characters)}
        return make("UnicodeTranscode", [_str(input)], attrs, scope)


def unicode_script(input, name=None):  # noqa: A002
    """ICU's script code (``UScriptCode``) of each int32 code point; -1 for an invalid one."""
    with ops.name_scope(name, "UnicodeScript", [input]) as scope:
        return make("UnicodeScript", [ops.convert_to_tensor(input, dtype=dtypes.int32, name="input")], {}, scope)


# --------------------------------------------------------------------------- ngrams


def ngrams(data, ngram_width, separator=" ", pad_values=None, padding_width=None,
           preserve_short_sequences=False, name=None):
    """The n-grams of the innermost dimension of ``data`` (``StringNGrams``): windows of ``ngram_width``
    adjacent strings (several widths: all of them, in order) joined with ``separator``, optionally padded."""
    with ops.name_scope(name, "StringNGrams", [data]):
        if pad_values is None:
            left_pad = right_pad = ""
        elif isinstance(pad_values, (list, tuple)):
            if not all(_is_py_str(p) for p in pad_values[:2]):
                raise TypeError("pad_values must be a string, tuple of strings, or None.")
            left_pad, right_pad = pad_values[0], pad_values[1]
        elif _is_py_str(pad_values):
            left_pad = right_pad = pad_values
        else:
            raise TypeError("pad_values must be a string, tuple of strings, or None.")
        if padding_width is not None and padding_width < 1:
            raise ValueError("padding_width must be greater than 0.")
        if padding_width is not None and pad_values is None:
            raise ValueError("pad_values must be provided if padding_width is set.")
        widths = list(ngram_width) if isinstance(ngram_width, (list, tuple)) else [ngram_width]
        for w in widths:
            if w < 1:
                raise ValueError(f"All ngram_widths must be greater than 0. Got {ngram_width}")
        pad_width = 0 if pad_values is None else (-1 if padding_width is None else padding_width)
        attrs = {"separator": separator, "ngram_widths": [int(w) for w in widths],
                 "left_pad": left_pad.decode() if isinstance(left_pad, bytes) else left_pad,
                 "right_pad": right_pad.decode() if isinstance(right_pad, bytes) else right_pad,
                 "pad_width": int(pad_width), "preserve_short_sequences": bool(preserve_short_sequences),
                 "Tsplits": type_attr(dtypes.int64)}

        def run(values, splits):
            if splits.dtype.base_dtype != dtypes.int64:
                splits = math_ops.cast(splits, dtypes.int64)
            op = make_op("StringNGrams", [values, splits], attrs)
            return op.outputs[0], op.outputs[1]

        if isinstance(data, RaggedTensor):
            if isinstance(data.values, RaggedTensor):
                return data.with_values(ngrams(data.values, ngram_width, separator, pad_values, padding_width,
                                               preserve_short_sequences))
            out, out_splits = run(data.values, data.row_splits)
            return RaggedTensor.from_row_splits(out, out_splits)
        x = _str(data, "data")
        rank = x.shape.ndims
        if rank is None:
            raise ValueError("Rank of data must be known.")
        if rank == 0:
            raise ValueError("Data must have rank>0")
        shape = array_ops.shape(x, out_type=dtypes.int64)
        width = shape[-1]
        flat = array_ops.reshape(x, [-1])
        total = array_ops.size(flat, out_type=dtypes.int64)
        if rank == 1:
            splits = array_ops.stack([constant_op.constant(0, dtype=dtypes.int64), total])
        else:
            splits = math_ops.range(0, total + 1, math_ops.maximum(width, 1), dtype=dtypes.int64)
        out, _ = run(flat, splits)
        if rank == 1:
            return out
        return array_ops.reshape(out, array_ops.concat([shape[:-1], constant_op.constant([-1], dtypes.int64)], 0))


to_number = string_to_number
to_hash_bucket = string_to_hash_bucket
to_hash_bucket_fast = string_to_hash_bucket_fast
to_hash_bucket_strong = string_to_hash_bucket_strong
