"""``tf.quantization``: fake quantization (quantization-aware training), quantize / dequantize into the
quantized dtypes, quantize-and-dequantize, and ``quantized_concat``."""

from ferroflow.ops import fake_quant_ops as _fake_quant_ops
from ferroflow.ops import quantize_ops as _quantize_ops
from ferroflow.ops.fake_quant_ops import *  # noqa: F401,F403
from ferroflow.ops.quantize_ops import *  # noqa: F401,F403

__all__ = _fake_quant_ops.__all__ + _quantize_ops.__all__
