"""``tf.keras.preprocessing.sequence.pad_sequences``: lists of ids to one padded (or truncated) array."""

from __future__ import annotations

import numpy as np

__all__ = ["pad_sequences"]


def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre", value=0.0):
    """``[n, maxlen]`` array: each sequence cut to ``maxlen`` (from the front with ``truncating='pre'``) and
    filled with ``value`` before it (``padding='pre'``) or after it (``'post'``)."""
    if padding not in ("pre", "post"):
        raise ValueError(f'Padding type "{padding}" not understood')
    if truncating not in ("pre", "post"):
        raise ValueError(f'Truncating type "{truncating}" not understood')
    lengths, sample_shape = [], ()
    for s in sequences:
        if not hasattr(s, "__len__"):
            raise ValueError(f"`sequences` must be a list of iterables. Found non-iterable: {s!r}")
        lengths.append(len(s))
        if len(s) and not sample_shape:
            sample_shape = np.asarray(s).shape[1:]
    if maxlen is None:
        maxlen = max(lengths) if lengths else 0
    x = np.full((len(sequences), maxlen) + sample_shape, value, dtype=dtype)
    for i, s in enumerate(sequences):
        if not len(s):
            continue
        trunc = s[-maxlen:] if truncating == "pre" else s[:maxlen]
        trunc = np.asarray(trunc, dtype=dtype)
        if padding == "post":
            x[i, : len(trunc)] = trunc
        else:
            x[i, maxlen - len(trunc):] = trunc
    return x
