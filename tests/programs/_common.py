"""Shared bits of the classic TF1 programs: synthetic data and the `tf` module to run them with.

Each program in this folder is written the way the public TF1 tutorial or repository wrote it
(same API calls, same structure), with the downloads replaced by small synthetic data made here.
`python tests/programs/<name>.py` runs one with ferroflow; `--real-tf` runs it with TensorFlow's
compat.v1 (graph mode), which is how tools/run_tf1_programs_tf.py records the reference numbers.
"""

import json
import sys

import numpy as np


def load_tf(real_tf=False):
    if real_tf:
        import tensorflow.compat.v1 as tf

        tf.disable_v2_behavior()
        return tf
    import ferroflow as tf

    return tf


def fake_mnist(n, seed=0, flat=True):
    """n images of 28x28 in [0, 1] whose class is readable from the picture (a bright band per class)."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, 10, size=n)
    images = rng.uniform(0.0, 0.3, size=(n, 28, 28)).astype(np.float32)
    for i, k in enumerate(labels):
        images[i, 2 * k + 4 : 2 * k + 7, 4:24] += 0.7
    onehot = np.eye(10, dtype=np.float32)[labels]
    if flat:
        return images.reshape(n, 784), onehot
    return images.reshape(n, 28, 28, 1), onehot


def fixed_init(shape, seed, scale=0.1):
    """Deterministic initial values (numpy), so ferroflow and TensorFlow start from the same weights."""
    return (np.random.RandomState(seed).standard_normal(shape) * scale).astype(np.float32)


def run_as_script(main, default_steps):
    real = "--real-tf" in sys.argv
    tf = load_tf(real)
    out = main(tf, default_steps)
    print(json.dumps(out, indent=1, default=float))
