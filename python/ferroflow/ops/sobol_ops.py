"""``tf.math.sobol_sample``: points of the Sobol low-discrepancy sequence (TensorFlow's ``SobolSample`` op)."""

from __future__ import annotations

from ferroflow.framework import dtypes, ops
from ferroflow.ops._op_util import make, type_attr

__all__ = ["sobol_sample"]


def sobol_sample(dim, num_results, skip=0, dtype=dtypes.float32, name=None):
    """``[num_results, dim]`` points of the Sobol sequence (Joe and Kuo's direction numbers, as TensorFlow),
    after the first ``skip`` points (the all-zero first point is always left out); ``dim`` up to 21200."""
    dtype = dtypes.as_dtype(dtype)
    if dtype not in (dtypes.float32, dtypes.float64):
        raise TypeError(
            f"Value passed to parameter 'dtype' has DataType {dtype.name} not in list of allowed values: float32, "
            "float64"
        )
    with ops.name_scope(name, "sobol", [dim, num_results, skip]) as scope:
        args = [ops.convert_to_tensor(v, dtype=dtypes.int32, name=n)
                for v, n in ((dim, "dim"), (num_results, "num_results"), (skip, "skip"))]
        return make("SobolSample", args, {"dtype": type_attr(dtype)}, scope)
