"""What the input-pipeline benchmarks share: the machine line, the Example spec of issue 17's
pipeline benchmark and the TFRecord files of such Examples (read by both frameworks)."""

from __future__ import annotations

import os
import platform

import numpy as np

NUM_FILES = 4


def machine():
    """CPU model, core count and versions, for the report's first line."""
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, NumPy {np.__version__}"


def write_records(directory, num_examples):
    """Writes ``num_examples`` Examples over NUM_FILES TFRecord files with ferroflow's writer; returns the
    paths and the number written."""
    import ferroflow as tf

    rng = np.random.RandomState(0)
    paths = [os.path.join(directory, f"examples-{i}.tfrecord") for i in range(NUM_FILES)]
    per_file = num_examples // NUM_FILES
    for path in paths:
        with tf.io.TFRecordWriter(path) as w:
            for _ in range(per_file):
                feature = {}
                for k in range(5):
                    feature[f"f{k}"] = tf.train.Feature(float_list=tf.train.FloatList(value=rng.rand(4).tolist()))
                    feature[f"i{k}"] = tf.train.Feature(int64_list=tf.train.Int64List(value=[int(rng.randint(1000))]))
                feature["ids"] = tf.train.Feature(
                    int64_list=tf.train.Int64List(value=rng.randint(0, 10000, rng.randint(16)).tolist()))
                feature["blob"] = tf.train.Feature(bytes_list=tf.train.BytesList(value=[rng.bytes(1024)]))
                w.write(tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString())
    return paths, per_file * NUM_FILES


def spec(tf):
    """The parsing spec of the files above, in framework ``tf``."""
    s = {f"f{k}": tf.io.FixedLenFeature([4], tf.float32) for k in range(5)}
    s.update({f"i{k}": tf.io.FixedLenFeature([], tf.int64) for k in range(5)})
    s["ids"] = tf.io.VarLenFeature(tf.int64)
    s["blob"] = tf.io.FixedLenFeature([], tf.string)
    return s
