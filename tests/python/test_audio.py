"""``tf.audio.decode_wav`` / ``encode_wav`` bit for bit against TensorFlow 2.21 (fixture:
tools/make_audio_fixtures.py): WAV bytes TF wrote, audio TF decoded (desired_channels/desired_samples), and
TF's InvalidArgumentError messages for corrupt files."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

import ferroflow as tf

FIXTURE = json.loads((pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "audio.json").read_text())
ERRORS = {"InvalidArgumentError": tf.errors.InvalidArgumentError, "ValueError": ValueError}


def _first_line(message):
    # TF's shape-function errors add " for '{{node ...}}' with input shapes: ..." after the rule itself.
    return message.split(" for '{{node", 1)[0]


def test_encode_matches_tf_bytes():
    with tf.Graph().as_default(), tf.Session() as sess:
        audio = tf.placeholder(tf.float32, [None, None])
        rate = tf.placeholder(tf.int32, [])
        wav = tf.audio.encode_wav(audio, rate)
        for case in FIXTURE["encode"]:
            values = np.frombuffer(bytes.fromhex(case["audio"]), np.float32).reshape(case["shape"])
            feed = {audio: values, rate: case["sample_rate"]}
            if "error" in case:
                with pytest.raises(tf.errors.InvalidArgumentError) as info:
                    sess.run(wav, feed)
                assert case["message"] in str(info.value)
            else:
                assert sess.run(wav, feed).hex() == case["wav"], case["shape"]


def test_decode_matches_tf():
    with tf.Graph().as_default(), tf.Session() as sess:
        contents = tf.placeholder(tf.string, [])
        decoded = {}
        for case in FIXTURE["decode"]:
            if "wav_vector" in case:
                continue
            key = (case["desired_channels"], case["desired_samples"])
            if case.get("error") == "ValueError":
                with pytest.raises(ValueError) as info:
                    tf.audio.decode_wav(contents, desired_channels=key[0], desired_samples=key[1])
                assert _first_line(case["message"]) in str(info.value)
                continue
            if key not in decoded:
                decoded[key] = tf.audio.decode_wav(contents, desired_channels=key[0], desired_samples=key[1])
            feed = {contents: bytes.fromhex(case["wav"])}
            if "error" in case:
                with pytest.raises(ERRORS[case["error"]]) as info:
                    sess.run(decoded[key], feed)
                assert case["message"] in str(info.value)
                continue
            audio, rate = sess.run(decoded[key], feed)
            assert audio.dtype == np.float32 and list(audio.shape) == case["shape"]
            assert audio.tobytes().hex() == case["audio"]
            assert rate.dtype == np.int32 and int(rate) == case["sample_rate"]


def test_static_shapes_and_rank_errors():
    with tf.Graph().as_default():
        out = tf.audio.decode_wav(tf.constant(b"x"), desired_channels=2, desired_samples=16000)
        assert out.audio.shape.as_list() == [16000, 2] and out.sample_rate.shape.as_list() == []
        assert tf.audio.decode_wav(tf.constant(b"x")).audio.shape.as_list() == [None, None]
        assert out.audio.op.type == "DecodeWav" and out.audio.op.get_attr("desired_samples") == 16000
        case = next(c for c in FIXTURE["decode"] if "wav_vector" in c)
        with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
            tf.audio.decode_wav(tf.constant([b"x", b"y"]))
        assert case["error"] == "ValueError" and "Shape must be rank 0 but is rank 1" in case["message"]
        with pytest.raises(ValueError, match="rank 2"):
            tf.audio.encode_wav(tf.zeros([3]), 8000)
        wav = tf.audio.encode_wav(tf.zeros([3, 1]), 8000)
        assert wav.dtype == tf.string and wav.shape.as_list() == []


def test_round_trip_in_a_dataset_map():
    # tf.data map functions run the ops inside graph functions.
    rng = np.random.RandomState(0)
    clips = [rng.uniform(-1, 1, (n, 2)).astype(np.float32) for n in (5, 9, 3)]
    with tf.Graph().as_default(), tf.Session() as sess:
        wavs = sess.run([tf.audio.encode_wav(c, 16000) for c in clips])
        ds = tf.data.Dataset.from_tensor_slices(wavs).map(
            lambda w: tf.audio.decode_wav(w, desired_channels=1, desired_samples=6).audio)
        it = tf.data.make_one_shot_iterator(ds).get_next()
        for clip in clips:
            want = np.zeros((6, 1), np.float32)
            n = min(6, len(clip))
            want[:n, 0] = np.clip(np.round(clip[:n, 0] * 32768), -32768, 32767) / 32768
            np.testing.assert_array_equal(sess.run(it), want)


def test_not_differentiable_as_in_tensorflow():
    from ferroflow import _native

    # Strings in or out: TensorFlow registers no gradient; ferroflow marks both not differentiable.
    for op in ["DecodeWav", "EncodeWav"]:
        assert _native.has_gradient(op), op
