"""``tf.audio``: ``decode_wav`` and ``encode_wav`` (see ``ops/audio_ops.py``)."""

from ferroflow.ops.audio_ops import decode_wav, encode_wav  # noqa: F401

__all__ = ["decode_wav", "encode_wav"]
