"""``tf.dtypes``: element types."""

from ferroflow.framework.dtypes import (  # noqa: F401
    QUANTIZED_DTYPES,
    DType,
    as_dtype,
    bfloat16,
    bool,
    complex64,
    complex128,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    qint8,
    qint16,
    qint32,
    quint8,
    quint16,
    resource,
    string,
    uint8,
    uint16,
    uint32,
    uint64,
    variant,
)
from ferroflow.ops.array_ops import cast  # noqa: F401
from ferroflow.ops.complex_ops import complex  # noqa: F401
from ferroflow.ops.math_ops import saturate_cast  # noqa: F401
from ferroflow.ops.string_ops import as_string  # noqa: F401
