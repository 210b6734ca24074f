"""``tf.train.NewCheckpointReader``: read the tensors of a V2 checkpoint by name.

A thin layer over the native bundle reader (``ferroflow._native.CheckpointReader``)
that speaks TensorFlow's Python vocabulary: dtypes come back as ferroflow
``DType`` objects and bfloat16 values as ``ml_dtypes.bfloat16`` when that
package is installed.
"""

from __future__ import annotations

import os

from ferroflow import _native
from ferroflow.framework import dtypes

__all__ = ["CheckpointReader", "NewCheckpointReader"]


class CheckpointReader:
    """Reads tensors, shapes and dtypes from the checkpoint at ``prefix``.

    Raises ``NotFoundError`` when ``prefix.index`` does not exist and
    ``DataLossError`` when the index or a data file is corrupt.
    """

    def __init__(self, prefix):
        self._prefix = os.fspath(prefix)
        self._reader = _native.CheckpointReader(self._prefix)

    @property
    def prefix(self):
        """The checkpoint prefix this reader was opened on."""
        return self._prefix

    def has_tensor(self, tensor_str):
        """Whether the checkpoint holds a tensor (or a partitioned tensor) named ``tensor_str``."""
        return self._reader.has_tensor(_as_str(tensor_str))

    def get_tensor(self, tensor_str):
        """The value stored under ``tensor_str`` as a NumPy array (0-d values as NumPy scalars).

        Partitioned variables are assembled from their slices. A missing key
        raises ``NotFoundError`` naming the key.
        """
        name = _as_str(tensor_str)
        value = self._reader.get_tensor(name)
        if dtypes._ml_dtypes is not None and self._reader.variable_to_dtype_map().get(name) == 14:
            value = value.view(dtypes._BF16_NP)
        return value

    def get_variable_to_shape_map(self):
        """``{name: [dims]}`` for every tensor in the checkpoint."""
        return dict(self._reader.variable_to_shape_map())

    def get_variable_to_dtype_map(self):
        """``{name: DType}`` for every tensor in the checkpoint."""
        return {k: dtypes.as_dtype(v) for k, v in self._reader.variable_to_dtype_map().items()}

    def debug_string(self):
        """One ``name (DT_...) [dims]`` line per stored entry, as bytes (TensorFlow's format)."""
        return self._reader.debug_string()

    def verify(self):
        """Checks every stored tensor's checksum; raises ``DataLossError`` on the first bad one."""
        self._reader.verify()

    # TensorFlow's pywrap reader exposes these private spellings too.
    _HasTensor = has_tensor
    _GetTensor = get_tensor
    _GetVariableToDataTypeMap = get_variable_to_dtype_map

    def __repr__(self):
        return f"<CheckpointReader {self._prefix!r}>"


def _as_str(name):
    if isinstance(name, bytes):
        return name.decode("utf-8")
    if not isinstance(name, str):
        raise TypeError(f"tensor name must be a string, got {type(name).__name__}: {name!r}")
    return name


def NewCheckpointReader(filepattern):  # noqa: N802 - TensorFlow's name
    """A ``CheckpointReader`` for the checkpoint prefix ``filepattern``."""
    return CheckpointReader(filepattern)
