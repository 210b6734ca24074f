"""``tf.quantization`` / ``tf.quantize``: TensorFlow's quantize, dequantize and quantize-and-dequantize ops.

``quantize`` maps float32 values into a quantized dtype (``qint8``, ``quint8``,
``qint16``, ``quint16``, ``qint32``) over a range, in one of TensorFlow's
three modes (``MIN_COMBINED``, ``MIN_FIRST``, ``SCALED``), per tensor or per
slice along ``axis``; ``dequantize`` maps them back. Quantized tensors are
fetched as arrays of the integer type of the same width, as TensorFlow 2.21
returns them. ``quantize_and_dequantize`` (op ``QuantizeAndDequantizeV2``,
gradient passed straight through) and ``quantize_and_dequantize_v2`` (op
``QuantizeAndDequantizeV4``, gradient zero outside the range) simulate the
precision loss on float tensors. ``quantized_concat`` joins quantized tensors
requantized into one range.
"""

from __future__ import annotations

import collections

from ferroflow.framework import dtypes, ops
from ferroflow.ops._op_util import make, make_op, type_attr

__all__ = [
    "dequantize",
    "quantize",
    "quantize_and_dequantize",
    "quantize_and_dequantize_v2",
    "quantized_concat",
]

QuantizeV2 = collections.namedtuple("QuantizeV2", ["output", "output_min", "output_max"])
QuantizedConcat = collections.namedtuple("QuantizedConcat", ["output", "output_min", "output_max"])

_QUANTIZED = (dtypes.qint8, dtypes.quint8, dtypes.qint32, dtypes.qint16, dtypes.quint16)
_MODES = ("MIN_COMBINED", "MIN_FIRST", "SCALED")


def _one_of(op_type, attr, value, allowed):
    if value not in allowed:
        raise ValueError(
            f"Attr '{attr}' of '{op_type}' Op passed string '{value}' not in: "
            + ", ".join(f'"{a}"' for a in allowed) + "."
        )
    return value


def _type_in(param, dtype, allowed):
    dtype = dtypes.as_dtype(dtype)
    if dtype not in allowed:
        raise TypeError(
            f"Value passed to parameter '{param}' has DataType {dtype.name} not in list of allowed values: "
            + ", ".join(d.name for d in allowed)
        )
    return dtype


def _axis(input, axis):  # noqa: A002
    """TensorFlow's Python rule: None means -1; a negative axis needs a known rank."""
    if axis is None:
        return -1
    axis = int(axis)
    if axis < 0:
        ndims = input.shape.ndims
        if ndims is None:
            raise ValueError("input should have known rank to use negative axis.")
        axis %= ndims
    return axis


def _f32(x, name):
    return ops.convert_to_tensor(x, dtype=dtypes.float32, name=name)


def quantize_v2(input, min_range, max_range, T, mode="MIN_COMBINED", name=None,  # noqa: A002
                round_mode="HALF_AWAY_FROM_ZERO", narrow_range=False, axis=None, ensure_minimum_range=0.01):
    """``QuantizeV2``: ``input`` (float32) in the quantized dtype ``T``; returns ``(output, output_min, output_max)``.

    ``min_range``/``max_range`` are scalars, or vectors over dimension ``axis``.
    The range actually used (widened to hold 0 and at least
    ``ensure_minimum_range`` wide; in ``SCALED`` mode made to fit the grid) is
    returned with the values.
    """
    t = _type_in("T", T, _QUANTIZED)
    _one_of("QuantizeV2", "mode", mode, _MODES)
    _one_of("QuantizeV2", "round_mode", round_mode, ("HALF_AWAY_FROM_ZERO", "HALF_TO_EVEN"))
    with ops.name_scope(name, "QuantizeV2", [input, min_range, max_range]) as scope:
        x = _f32(input, "input")
        attrs = {
            "T": type_attr(t),
            "mode": mode,
            "round_mode": round_mode,
            "narrow_range": bool(narrow_range),
            "axis": _axis(x, axis),
            "ensure_minimum_range": float(ensure_minimum_range),
        }
        op = make_op("QuantizeV2", [x, _f32(min_range, "min_range"), _f32(max_range, "max_range")], attrs, scope)
        return QuantizeV2(*op.outputs)


def quantize(input, min_range, max_range, T, mode="MIN_COMBINED", round_mode="HALF_AWAY_FROM_ZERO",  # noqa: A002
             name=None, narrow_range=False, axis=None, ensure_minimum_range=0.01):
    """``tf.quantization.quantize``: ``quantize_v2`` with ``round_mode`` before ``name``."""
    return quantize_v2(input, min_range, max_range, T, mode=mode, name=name, round_mode=round_mode,
                       narrow_range=narrow_range, axis=axis, ensure_minimum_range=ensure_minimum_range)


def dequantize(input, min_range, max_range, mode="MIN_COMBINED", name=None, axis=None,  # noqa: A002
               narrow_range=False, dtype=dtypes.float32):
    """``Dequantize``: a quantized ``input`` back to ``dtype`` (float32, or bfloat16 in ``MIN_COMBINED`` mode)."""
    _one_of("Dequantize", "mode", mode, _MODES)
    out = _type_in("dtype", dtype, (dtypes.bfloat16, dtypes.float32))
    with ops.name_scope(name, "Dequantize", [input, min_range, max_range]) as scope:
        x = ops.convert_to_tensor(input, name="input")
        t = _type_in("input", x.dtype, _QUANTIZED)
        attrs = {
            "T": type_attr(t),
            "mode": mode,
            "narrow_range": bool(narrow_range),
            "axis": _axis(x, axis),
            "dtype": type_attr(out),
        }
        return make("Dequantize", [x, _f32(min_range, "min_range"), _f32(max_range, "max_range")], attrs, scope)


def _qdq(op_type, input, input_min, input_max, signed_input, num_bits, range_given, round_mode,  # noqa: A002
         name, narrow_range, axis):
    _one_of(op_type, "round_mode", round_mode, ("HALF_TO_EVEN", "HALF_UP"))
    with ops.name_scope(name, op_type, [input, input_min, input_max]) as scope:
        x = ops.convert_to_tensor(input, name="input")
        _type_in("input", x.dtype, (dtypes.bfloat16, dtypes.float16, dtypes.float32, dtypes.float64))
        attrs = {
            "T": type_attr(x.dtype),
            "signed_input": bool(signed_input),
            "num_bits": int(num_bits),
            "range_given": bool(range_given),
            "round_mode": round_mode,
            "narrow_range": bool(narrow_range),
            "axis": _axis(x, axis),
        }
        lo = ops.convert_to_tensor(input_min, dtype=x.dtype, name="input_min")
        hi = ops.convert_to_tensor(input_max, dtype=x.dtype, name="input_max")
        return make(op_type, [x, lo, hi], attrs, scope)


def quantize_and_dequantize(input, input_min, input_max, signed_input=True, num_bits=8,  # noqa: A002
                            range_given=False, round_mode="HALF_TO_EVEN", name=None, narrow_range=False,
                            axis=None):
    """``QuantizeAndDequantizeV2``: ``input`` rounded onto a ``num_bits`` grid and mapped back.

    The range is ``[input_min, input_max]`` when ``range_given``, else the
    input's own (per slice of ``axis``); it is adjusted so that 0 stays on the
    grid. The gradient passes straight through.
    """
    return _qdq("QuantizeAndDequantizeV2", input, input_min, input_max, signed_input, num_bits, range_given,
                round_mode, name, narrow_range, axis)


def quantize_and_dequantize_v2(input, input_min, input_max, signed_input=True, num_bits=8,  # noqa: A002
                               range_given=False, round_mode="HALF_TO_EVEN", name=None, narrow_range=False,
                               axis=None):
    """``QuantizeAndDequantizeV4``: as ``quantize_and_dequantize``, but the gradient is zero outside
    ``[input_min, input_max]``."""
    return _qdq("QuantizeAndDequantizeV4", input, input_min, input_max, signed_input, num_bits, range_given,
                round_mode, name, narrow_range, axis)


def quantize_and_dequantize_v3(input, input_min, input_max, num_bits, signed_input=True, range_given=True,  # noqa: A002
                               narrow_range=False, axis=-1, name=None):
    """The raw ``QuantizeAndDequantizeV3`` op (``num_bits`` a tensor, rounding half to even, gradient straight
    through), which TF1 graphs hold; no public TensorFlow name wraps it."""
    with ops.name_scope(name, "QuantizeAndDequantizeV3", [input, input_min, input_max, num_bits]) as scope:
        x = ops.convert_to_tensor(input, name="input")
        _type_in("input", x.dtype, (dtypes.bfloat16, dtypes.float16, dtypes.float32, dtypes.float64))
        attrs = {
            "T": type_attr(x.dtype),
            "signed_input": bool(signed_input),
            "range_given": bool(range_given),
            "narrow_range": bool(narrow_range),
            "axis": int(axis),
        }
        lo = ops.convert_to_tensor(input_min, dtype=x.dtype, name="input_min")
        hi = ops.convert_to_tensor(input_max, dtype=x.dtype, name="input_max")
        bits = ops.convert_to_tensor(num_bits, dtype=dtypes.int32, name="num_bits")
        return make("QuantizeAndDequantizeV3", [x, lo, hi, bits], attrs, scope)


def quantized_concat(concat_dim, values, input_mins, input_maxes, name=None):
    """``QuantizedConcat``: quantized ``values`` joined along ``concat_dim``, each requantized into one range
    covering all of theirs (and 0); returns ``(output, output_min, output_max)``."""
    values, input_mins, input_maxes = list(values), list(input_mins), list(input_maxes)
    if len(values) < 2:
        raise ValueError(
            f"List argument 'values' to 'QuantizedConcat' Op with length {len(values)} shorter than minimum length 2."
        )
    for arg, lst in (("input_mins", input_mins), ("input_maxes", input_maxes)):
        if len(lst) != len(values):
            raise ValueError(
                f"List argument '{arg}' to 'quantized_concat' Op with length {len(lst)} must match length "
                f"{len(values)} of argument 'values'."
            )
    with ops.name_scope(name, "QuantizedConcat", [concat_dim, *values, *input_mins, *input_maxes]) as scope:
        vs = [ops.convert_to_tensor(v, name="values") for v in values]
        for v in vs:
            if v.dtype not in _QUANTIZED:
                raise TypeError(
                    f"Value passed to parameter 'values' has DataType {v.dtype.name} not in list of allowed "
                    "values: qint8, quint8, qint32, qint16, quint16"
                )
        dim = ops.convert_to_tensor(concat_dim, dtype=dtypes.int32, name="concat_dim")
        mins = [_f32(m, "input_mins") for m in input_mins]
        maxes = [_f32(m, "input_maxes") for m in input_maxes]
        attrs = {"N": len(vs), "T": type_attr(vs[0].dtype)}
        op = make_op("QuantizedConcat", [dim, *vs, *mins, *maxes], attrs, scope)
        return QuantizedConcat(*op.outputs)
