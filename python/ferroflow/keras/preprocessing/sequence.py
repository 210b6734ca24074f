"""``tf.keras.preprocessing.sequence``: ``pad_sequences`` (lists of ids to one padded or truncated array),
``TimeseriesGenerator`` (batches of windows over a series), and word2vec's ``skipgrams`` with
``make_sampling_table``. ``skipgrams`` draws from Python's ``random`` in Keras's order, so a program that seeds
``random`` gets TensorFlow's pairs."""

from __future__ import annotations

import json
import random

import numpy as np

from ferroflow.keras.utils import Sequence

__all__ = ["TimeseriesGenerator", "make_sampling_table", "pad_sequences", "skipgrams"]


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


class TimeseriesGenerator(Sequence):
    """Batches ``(samples, targets)`` of windows over ``data``: the sample ending before row ``i`` is
    ``data[i - length:i:sampling_rate]`` and its target ``targets[i]``, for ``i`` from ``start_index + length``
    to ``end_index`` every ``stride`` rows (or ``batch_size`` random rows with ``shuffle``); ``reverse`` turns
    each window around."""

    def __init__(self, data, targets, length, sampling_rate=1, stride=1, start_index=0, end_index=None,
                 shuffle=False, reverse=False, batch_size=128):
        if len(data) != len(targets):
            raise ValueError(f"Data and targets have to be of same length. Data length is {len(data)} while target "
                             f"length is {len(targets)}")
        self.data = data
        self.targets = targets
        self.length = length
        self.sampling_rate = sampling_rate
        self.stride = stride
        self.start_index = start_index + length
        self.end_index = len(data) - 1 if end_index is None else end_index
        self.shuffle = shuffle
        self.reverse = reverse
        self.batch_size = batch_size
        if self.start_index > self.end_index:
            raise ValueError(f"`start_index+length={self.start_index} > end_index={self.end_index}` is disallowed, as "
                             "no part of the sequence would be left to be used as current step.")

    def __len__(self):
        span = self.batch_size * self.stride
        return (self.end_index - self.start_index + span) // span

    def __getitem__(self, index):
        if self.shuffle:
            rows = np.random.randint(self.start_index, self.end_index + 1, size=self.batch_size)
        else:
            first = self.start_index + self.batch_size * self.stride * index
            rows = np.arange(first, min(first + self.batch_size * self.stride, self.end_index + 1), self.stride)
        samples = np.array([self.data[row - self.length:row:self.sampling_rate] for row in rows])
        targets = np.array([self.targets[row] for row in rows])
        return (samples[:, ::-1, ...], targets) if self.reverse else (samples, targets)

    def get_config(self):
        """The generator's arguments (data and targets as JSON text, as Keras writes them)."""
        def as_json(values, what):
            if type(values).__module__ == np.__name__:
                values = values.tolist()
            try:
                return json.dumps(values)
            except TypeError as e:
                raise TypeError(f"{what} not JSON Serializable:", values) from e

        return {"data": as_json(self.data, "Data"), "targets": as_json(self.targets, "Targets"),
                "length": self.length, "sampling_rate": self.sampling_rate, "stride": self.stride,
                "start_index": self.start_index, "end_index": self.end_index, "shuffle": self.shuffle,
                "reverse": self.reverse, "batch_size": self.batch_size}

    def to_json(self, **kwargs):
        return json.dumps({"class_name": type(self).__name__, "config": self.get_config()}, **kwargs)


def make_sampling_table(size, sampling_factor=1e-5):
    """The probability of keeping the word of each rank ``i`` (0 to ``size - 1``) in ``skipgrams``, for a
    Zipf-distributed vocabulary: ``min(1, sqrt(sampling_factor / frequency))``, the frequency of rank ``i``
    approximated as ``1 / (i (ln i + gamma) + 1/2 - 1/(12 i))``."""
    gamma = 0.577
    rank = np.arange(size)
    rank[0] = 1
    inverse_frequency = rank * (np.log(rank) + gamma) + 0.5 - 1.0 / (12.0 * rank)
    f = sampling_factor * inverse_frequency
    return np.minimum(1.0, f / np.sqrt(f))


def skipgrams(sequence, vocabulary_size, window_size=4, negative_samples=1.0, shuffle=True, categorical=False,
              sampling_table=None, seed=None):
    """word2vec's training pairs of a sequence of word ids (0 is no word): ``(couples, labels)`` with label 1
    for each word and a neighbour within ``window_size``, and ``negative_samples`` times as many pairs of a
    word and a random id labelled 0 (``[1, 0]``/``[0, 1]`` with ``categorical``); words are kept with the
    probability ``sampling_table`` gives; ``shuffle`` shuffles pairs and labels alike."""
    couples, labels = [], []
    positive, negative = ([0, 1], [1, 0]) if categorical else (1, 0)
    for i, word in enumerate(sequence):
        if not word:
            continue
        if sampling_table is not None and sampling_table[word] < random.random():
            continue
        for j in range(max(0, i - window_size), min(len(sequence), i + window_size + 1)):
            if j == i or not sequence[j]:
                continue
            couples.append([word, sequence[j]])
            labels.append(positive)
    if negative_samples > 0:
        count = int(len(labels) * negative_samples)
        words = [c[0] for c in couples]
        random.shuffle(words)
        couples += [[words[i % len(words)], random.randint(1, int(vocabulary_size - 1))] for i in range(count)]
        labels += [negative] * count
    if shuffle:
        if seed is None:
            seed = random.randint(0, int(10e6))
        random.seed(seed)
        random.shuffle(couples)
        random.seed(seed)
        random.shuffle(labels)
    return couples, labels
