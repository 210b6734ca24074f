"""``tf.quantization.fake_quant_with_min_max_*``: TensorFlow's fake-quantization ops and their gradient ops.

Each rounds float32 values onto the ``num_bits``-bit grid over a range that
is nudged so that zero is exactly representable (``narrow_range`` leaves out
the lowest level). ``_args`` takes the range as attrs, ``_vars`` as scalar
tensors (trainable: its gradient op also gives the range's gradients) and
``_vars_per_channel`` as vectors over the last dimension.
"""

from __future__ import annotations

from ferroflow.framework import dtypes, ops
from ferroflow.ops._op_util import make, make_op

__all__ = [
    "fake_quant_with_min_max_args",
    "fake_quant_with_min_max_args_gradient",
    "fake_quant_with_min_max_vars",
    "fake_quant_with_min_max_vars_gradient",
    "fake_quant_with_min_max_vars_per_channel",
    "fake_quant_with_min_max_vars_per_channel_gradient",
]


def _f32(x, name):
    return ops.convert_to_tensor(x, dtype=dtypes.float32, name=name)


def _bits(num_bits, narrow_range):
    return {"num_bits": int(num_bits), "narrow_range": bool(narrow_range)}


def fake_quant_with_min_max_args(inputs, min=-6, max=6, num_bits=8, narrow_range=False, name=None):  # noqa: A002
    """``FakeQuantWithMinMaxArgs``: ``inputs`` quantized over the attr range ``[min, max]``."""
    with ops.name_scope(name, "FakeQuantWithMinMaxArgs", [inputs]) as scope:
        attrs = {"min": float(min), "max": float(max), **_bits(num_bits, narrow_range)}
        return make("FakeQuantWithMinMaxArgs", [_f32(inputs, "inputs")], attrs, scope)


def fake_quant_with_min_max_args_gradient(gradients, inputs, min=-6, max=6, num_bits=8,  # noqa: A002
                                          narrow_range=False, name=None):
    """``FakeQuantWithMinMaxArgsGradient``: ``gradients`` where ``inputs`` is within the nudged range, else 0."""
    with ops.name_scope(name, "FakeQuantWithMinMaxArgsGradient", [gradients, inputs]) as scope:
        attrs = {"min": float(min), "max": float(max), **_bits(num_bits, narrow_range)}
        return make("FakeQuantWithMinMaxArgsGradient",
                    [_f32(gradients, "gradients"), _f32(inputs, "inputs")], attrs, scope)


def fake_quant_with_min_max_vars(inputs, min, max, num_bits=8, narrow_range=False, name=None):  # noqa: A002
    """``FakeQuantWithMinMaxVars``: ``inputs`` quantized over the scalar tensors ``[min, max]``."""
    with ops.name_scope(name, "FakeQuantWithMinMaxVars", [inputs, min, max]) as scope:
        return make("FakeQuantWithMinMaxVars",
                    [_f32(inputs, "inputs"), _f32(min, "min"), _f32(max, "max")], _bits(num_bits, narrow_range), scope)


def _three(op_type, gradients, inputs, min, max, num_bits, narrow_range, name):  # noqa: A002
    with ops.name_scope(name, op_type, [gradients, inputs, min, max]) as scope:
        op = make_op(op_type, [_f32(gradients, "gradients"), _f32(inputs, "inputs"), _f32(min, "min"),
                               _f32(max, "max")], _bits(num_bits, narrow_range), scope)
        return tuple(op.outputs)


def fake_quant_with_min_max_vars_gradient(gradients, inputs, min, max, num_bits=8,  # noqa: A002
                                          narrow_range=False, name=None):
    """``FakeQuantWithMinMaxVarsGradient``: ``(backprops_wrt_input, backprop_wrt_min, backprop_wrt_max)``."""
    return _three("FakeQuantWithMinMaxVarsGradient", gradients, inputs, min, max, num_bits, narrow_range, name)


def fake_quant_with_min_max_vars_per_channel(inputs, min, max, num_bits=8, narrow_range=False,  # noqa: A002
                                             name=None):
    """``FakeQuantWithMinMaxVarsPerChannel``: one ``[min[c], max[c]]`` per element ``c`` of the last dimension."""
    with ops.name_scope(name, "FakeQuantWithMinMaxVarsPerChannel", [inputs, min, max]) as scope:
        return make("FakeQuantWithMinMaxVarsPerChannel",
                    [_f32(inputs, "inputs"), _f32(min, "min"), _f32(max, "max")], _bits(num_bits, narrow_range), scope)


def fake_quant_with_min_max_vars_per_channel_gradient(gradients, inputs, min, max, num_bits=8,  # noqa: A002
                                                      narrow_range=False, name=None):
    """``FakeQuantWithMinMaxVarsPerChannelGradient``: ``(dx, dmin, dmax)`` with per-channel ``dmin``/``dmax``."""
    return _three("FakeQuantWithMinMaxVarsPerChannelGradient", gradients, inputs, min, max, num_bits,
                  narrow_range, name)
