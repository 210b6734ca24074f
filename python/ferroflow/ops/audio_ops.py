"""``tf.audio``: WAV files to and from float32 audio (TensorFlow's ``DecodeWav`` and ``EncodeWav`` ops, run by
the Rust core: ``crates/data/src/wav.rs``)."""

from __future__ import annotations

import collections

from ferroflow.framework import dtypes, ops
from ferroflow.ops._op_util import make, make_op

DecodeWavOutput = collections.namedtuple("DecodeWav", ["audio", "sample_rate"])


def decode_wav(contents, desired_channels=-1, desired_samples=-1, name=None):
    """Decodes one 16-bit PCM WAV file (a scalar string) into ``(audio, sample_rate)``: ``audio`` is float32
    ``[samples, channels]`` with values ``s / 32768`` in [-1, 1), ``sample_rate`` an int32 scalar.
    ``desired_channels`` keeps the first channels or repeats the last one; ``desired_samples`` cuts the audio
    or pads it with zeros (-1: as in the file). A file that is not such a WAV is an ``InvalidArgumentError``
    naming the problem."""
    for what, n in (("channels", desired_channels), ("samples", desired_samples)):
        if int(n) < -1:
            # (The shape function's check, as TensorFlow words it.)
            raise ValueError(f"{what} must be non-negative, got {int(n)}")
    contents = ops.convert_to_tensor(contents, dtype=dtypes.string, name="contents")
    op = make_op("DecodeWav", [contents],
                 {"desired_channels": int(desired_channels), "desired_samples": int(desired_samples)},
                 name=name or "DecodeWav")
    return DecodeWavOutput(*op._outputs)


def encode_wav(audio, sample_rate, name=None):
    """Encodes float32 ``audio`` ``[samples, channels]`` as a 16-bit PCM WAV file (a scalar string): each
    value times 32768, rounded half away from zero and clamped to the int16 range."""
    audio = ops.convert_to_tensor(audio, dtype=dtypes.float32, name="audio")
    sample_rate = ops.convert_to_tensor(sample_rate, dtype=dtypes.int32, name="sample_rate")
    return make("EncodeWav", [audio, sample_rate], {}, name=name or "EncodeWav")
