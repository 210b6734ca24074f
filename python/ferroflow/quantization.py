"""``tf.quantization``: the fake-quantization ops (quantization-aware training)."""

from ferroflow.ops.fake_quant_ops import *  # noqa: F401,F403
from ferroflow.ops.fake_quant_ops import __all__  # noqa: F401
