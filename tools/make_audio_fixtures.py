"""Write tests/fixtures/audio.json: TensorFlow 2.21's ``tf.audio.encode_wav`` / ``decode_wav`` on fixed inputs.

Run from the repository root with the TensorFlow virtualenv (the tests never import TensorFlow):

    TF_CPP_MIN_LOG_LEVEL=3 /work/tfvenv/bin/python tools/make_audio_fixtures.py

``encode``: float32 audio (as the hex of its little-endian bytes, so NaN and infinities survive), a sample
rate, and the WAV bytes TF writes (hex), or TF's error. ``decode``: WAV bytes (hex; files TF wrote and files
built here by hand: an 18-byte format chunk, padding chunks before ``fmt ``, chunks after ``data``, odd data
sizes, and corrupt headers), ``desired_channels`` / ``desired_samples``, and TF's output (audio as hex of
float32 bytes plus its shape, and the sample rate) or error class and message.
``tests/python/test_audio.py`` replays every case.
"""

from __future__ import annotations

import json
import pathlib
import struct

import numpy as np
import tensorflow as tf

OUT = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "audio.json"
v1 = tf.compat.v1


def wav(channels=1, rate=8000, samples=(0, 1000, -1000), fmt_size=16, audio_format=1, bits=16, block=None,
        byte_rate=None, before_fmt=b"", after_data=b"", data_size=None, riff=b"RIFF", wave=b"WAVE",
        data_id=b"data"):
    """A WAV file built field by field (``samples`` interleaved int16)."""
    block = 2 * channels if block is None else block
    byte_rate = (rate * block) % 2**32 if byte_rate is None else byte_rate
    data = b"".join(struct.pack("<h", s) for s in samples)
    fmt = struct.pack("<HHIIHH", audio_format, channels, rate, byte_rate, block, bits)
    if fmt_size == 18:
        fmt += b"\0\0"
    body = (wave + before_fmt + b"fmt " + struct.pack("<I", fmt_size) + fmt + data_id
            + struct.pack("<I", len(data) if data_size is None else data_size) + data + after_data)
    return riff + struct.pack("<I", len(body)) + body


def _kernel_message(text):
    """The kernel's own message out of TF's "Graph execution error" text (without the traceback of where the
    node was defined and the trailing ``[[{{node ...}}]]``)."""
    if "\nNode: '" in text:
        text = text.split("\nNode: '", 1)[1].split("\n", 1)[1]
    return text.split("\n\t [[", 1)[0].strip()


def outcome(build):
    try:
        with tf.Graph().as_default():
            fetches = build()
            with v1.Session() as sess:
                return sess.run(fetches), None
    except tf.errors.OpError as e:
        return None, {"error": type(e).__name__, "message": _kernel_message(e.message)}
    except (ValueError, TypeError) as e:
        return None, {"error": type(e).__name__, "message": str(e)}


def encode_cases():
    rng = np.random.RandomState(7)
    halves = (np.arange(-6, 7, dtype=np.float32) + 0.5) / 32768.0
    specials = np.array([0.0, -0.0, 1.0, -1.0, 1.5, -1.5, 0.99999, -0.99999, np.nan, np.inf, -np.inf,
                         1e-9, -1e-9, 32767.4 / 32768, 32767.5 / 32768, -32768.5 / 32768], np.float32)
    return [
        (rng.uniform(-1, 1, (50, 1)).astype(np.float32), 16000),
        (rng.uniform(-1.2, 1.2, (33, 2)).astype(np.float32), 44100),
        (halves.reshape(-1, 1), 8000),
        (specials.reshape(-1, 2), 22050),
        (np.zeros((0, 3), np.float32), 8000),
        (rng.uniform(-1, 1, (4, 5)).astype(np.float32), 1),
        (np.zeros((3, 1), np.float32), 0),
        (np.zeros((3, 1), np.float32), -5),
        (np.zeros((3, 0), np.float32), 8000),
        (np.zeros((0, 0), np.float32), 8000),
    ]


def main():
    v1.disable_eager_execution()
    encode, decode = [], []
    written = []
    for audio, rate in encode_cases():
        out, err = outcome(lambda audio=audio, rate=rate: tf.audio.encode_wav(audio, rate))
        case = {"audio": audio.tobytes().hex(), "shape": list(audio.shape), "sample_rate": rate}
        case.update(err or {"wav": out.hex()})
        encode.append(case)
        if out is not None:
            written.append(out)
    for wav_bytes in written:
        for channels, samples in [(-1, -1), (1, -1), (3, 7), (-1, 2), (2, 0), (0, 4)]:
            decode.append((wav_bytes, channels, samples))
    built = [
        wav(),
        wav(channels=2, samples=(1, 2, 3, 4, -32768, 32767)),
        wav(fmt_size=18),
        wav(before_fmt=b"JUNK" + struct.pack("<I", 4) + b"abcd"),
        wav(before_fmt=b"bext" + struct.pack("<I", 2) + b"xy"),
        wav(after_data=b"LIST" + struct.pack("<I", 4) + b"info"),
        wav(after_data=b"LIST" + struct.pack("<I", 40) + b"info"),
        wav(samples=(5, 6, 7), data_size=5),
        wav(channels=2, samples=(5, 6, 7, 8), data_size=7),
        wav(samples=(), data_size=0),
        wav(riff=b"RIFX"),
        wav(wave=b"WAVX"),
        wav(before_fmt=b"LIST" + struct.pack("<I", 4) + b"abcd"),
        wav(fmt_size=20),
        wav(audio_format=3),
        wav(channels=0, block=0),
        wav(bits=8),
        wav(bits=24, block=3),
        wav(block=4),
        wav(byte_rate=123),
        wav(data_id=b"date"),
        wav(data_size=1000),
        wav(data_size=0x7FFFFFFF),
        wav(data_size=0x80000000),
        wav(after_data=b"data" + struct.pack("<I", 2) + b"\1\0"),
        wav()[:30],
        wav()[:44],
        b"",
        b"RIFF",
        wav(rate=0x40000000, channels=4),
    ]
    for wav_bytes in built:
        decode.append((wav_bytes, -1, -1))
    decode.append((wav(channels=2, samples=(1, 2, 3, 4)), -2, -1))
    decode.append((wav(channels=2, samples=(1, 2, 3, 4)), -1, -3))
    decode_cases = []
    for wav_bytes, channels, samples in decode:
        out, err = outcome(lambda b=wav_bytes, c=channels, s=samples: tf.audio.decode_wav(
            b, desired_channels=c, desired_samples=s))
        case = {"wav": wav_bytes.hex(), "desired_channels": channels, "desired_samples": samples}
        if err:
            case.update(err)
        else:
            audio, rate = out
            case.update(audio=audio.astype(np.float32).tobytes().hex(), shape=list(audio.shape),
                        sample_rate=int(rate))
        decode_cases.append(case)
    # A non-scalar input.
    out, err = outcome(lambda: tf.audio.decode_wav(v1.placeholder_with_default([b"x", b"y"], [None])))
    decode_cases.append({"wav_vector": True, **err})
    OUT.write_text(json.dumps({"encode": encode, "decode": decode_cases}, indent=1) + "\n")
    print(f"wrote {len(encode)} encode and {len(decode_cases)} decode cases to {OUT}")


if __name__ == "__main__":
    main()
