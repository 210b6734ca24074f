"""The audio front end of TF1 speech models (the "Simple Audio Recognition" tutorial's input_data.py and the
tf.signal MFCC recipe of its docs): a WAV file written with tf.audio.encode_wav (tf.contrib.framework's
audio_ops in TF 1.x) and read back with tf.read_file + decode_wav(desired_channels=1, desired_samples),
volume scaling, time shifting by tf.pad + tf.slice, background noise mixed in and clipped with
tf.clip_by_value; then tf.signal.stft (frame_length, frame_step, fft_length, a hann window), magnitude
spectrograms by tf.abs, a mel filterbank from tf.signal.linear_to_mel_weight_matrix applied by
tf.tensordot with set_shape, log-mel features, tf.signal.mfccs_from_log_mel_spectrograms, tf.signal.frame
and overlap_and_add, inverse_stft with inverse_stft_window_fn; a tiny conv classifier over the MFCCs
trained a few steps.

Deterministic: the signals are numpy sines and noise, the weights come from numpy.
"""

import os
import shutil
import tempfile

import numpy as np
from _common import fixed_init, run_as_script

TF_STEPS = 5
SAMPLE_RATE = 8000


def main(tf, steps=5):
    tf.reset_default_graph()
    rng = np.random.RandomState(140)
    tmp = tempfile.mkdtemp()
    n = 4000
    t = np.arange(n) / SAMPLE_RATE
    clips = [0.5 * np.sin(2 * np.pi * f * t) for f in (440.0, 880.0, 300.0, 1200.0)]
    noise = (0.05 * rng.randn(n)).astype(np.float32)
    paths = []
    audio_in = tf.placeholder(tf.float32, [None, 1])
    encoded = tf.audio.encode_wav(audio_in, SAMPLE_RATE)
    with tf.Session() as sess:
        for i, c in enumerate(clips):
            path = os.path.join(tmp, "clip%d.wav" % i)
            with open(path, "wb") as f:
                f.write(sess.run(encoded, {audio_in: c.astype(np.float32).reshape(-1, 1)}))
            paths.append(path)

    wav_filename = tf.placeholder(tf.string, [])
    wav_decoder = tf.audio.decode_wav(tf.read_file(wav_filename), desired_channels=1, desired_samples=n)
    foreground_volume = tf.placeholder(tf.float32, [])
    scaled = tf.multiply(wav_decoder.audio, foreground_volume)
    time_shift_padding = tf.placeholder(tf.int32, [2, 2])
    time_shift_offset = tf.placeholder(tf.int32, [2])
    padded = tf.pad(scaled, time_shift_padding, mode="CONSTANT")
    sliced = tf.slice(padded, time_shift_offset, [n, -1])
    background = tf.placeholder(tf.float32, [n, 1])
    background_volume = tf.placeholder(tf.float32, [])
    mixed = tf.clip_by_value(tf.add(background * background_volume, sliced), -1.0, 1.0)
    signal = tf.reshape(mixed, [1, n])

    stfts = tf.signal.stft(signal, frame_length=256, frame_step=128, fft_length=256, window_fn=tf.signal.hann_window)
    spectrograms = tf.abs(stfts)
    num_spectrogram_bins = stfts.shape[-1].value
    mel_matrix = tf.signal.linear_to_mel_weight_matrix(20, num_spectrogram_bins, SAMPLE_RATE, 80.0, 3800.0)
    mel = tf.tensordot(spectrograms, mel_matrix, 1)
    mel.set_shape(spectrograms.shape[:-1].concatenate(mel_matrix.shape[-1:]))
    log_mel = tf.log(mel + 1e-6)
    mfccs = tf.signal.mfccs_from_log_mel_spectrograms(log_mel)[..., :10]
    frames = tf.signal.frame(signal, 200, 100)
    rebuilt = tf.signal.overlap_and_add(frames, 100)
    inverse = tf.signal.inverse_stft(stfts, 256, 128, 256,
                                     window_fn=tf.signal.inverse_stft_window_fn(128))

    label = tf.placeholder(tf.int64, [None])
    features = tf.expand_dims(mfccs, -1)
    conv_w = tf.Variable(fixed_init([3, 3, 1, 4], 1400, 0.3))
    h = tf.nn.relu(tf.nn.conv2d(features, conv_w, [1, 2, 2, 1], "SAME"))
    flat = tf.reshape(h, [-1, int(np.prod(h.shape[1:]))])
    logits = tf.layers.dense(flat, 4, kernel_initializer=tf.constant_initializer(
        fixed_init([int(flat.shape[1]), 4], 1401, 0.1)))
    loss = tf.losses.sparse_softmax_cross_entropy(label, logits)
    train_op = tf.train.GradientDescentOptimizer(0.002).minimize(loss)

    def feed(i, shift):
        pad = [[shift, 0], [0, 0]] if shift > 0 else [[0, -shift], [0, 0]]
        off = [0, 0] if shift > 0 else [-shift, 0]
        return {wav_filename: paths[i], foreground_volume: 0.8, time_shift_padding: pad, time_shift_offset: off,
                background: noise.reshape(-1, 1), background_volume: 0.3}

    out = {"stft_shape": str(stfts.shape), "mel_shape": str(mel.shape), "mfcc_shape": str(mfccs.shape),
           "frames_shape": str(frames.shape)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        r = sess.run({"rate": wav_decoder.sample_rate, "mixed": mixed, "spec": spectrograms, "mel": log_mel,
                      "mfcc": mfccs, "rebuilt": rebuilt, "inverse": inverse, "signal": signal}, feed(0, 40))
        out["sample_rate"] = int(r["rate"])
        out["mixed_head"] = r["mixed"][:50, 0].tolist()
        out["spec_row"] = r["spec"][0, 3].tolist()
        out["log_mel_row"] = r["mel"][0, 3].tolist()
        out["mfcc"] = r["mfcc"][0].ravel().tolist()
        out["rebuilt_matches"] = bool(np.allclose(r["rebuilt"][0, 100:3900] * 0.5, r["signal"][0, 100:3900], atol=1e-5))
        out["inverse_mid"] = r["inverse"][0, 1000:1040].tolist()
        out["mel_matrix_sum"] = float(np.sum(sess.run(mel_matrix)))
        losses = []
        for step in range(steps):
            for i in range(4):
                _, l = sess.run([train_op, loss], {**feed(i, (step * 7 + i * 13) % 60 - 30), label: [i]})
            losses.append(float(l))
        out["losses"] = losses
    shutil.rmtree(tmp)
    return out


if __name__ == "__main__":
    run_as_script(main, TF_STEPS)
