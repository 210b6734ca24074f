"""Writes crates/tensor/src/kernels/sobol_directions.bin: the Sobol direction numbers SobolSample uses.

Run from the repository root with a Python that has SciPy and TensorFlow (only to write and check the
file; never needed by ferroflow or its tests):

    /work/tfvenv/bin/python tools/make_sobol_data.py

The numbers are S. Joe and F. Y. Kuo's ("new-joe-kuo-6.21201", Constructing Sobol sequences with better
two-dimensional projections, SIAM J. Sci. Comput. 30, 2635-2654, 2008), which TensorFlow's SobolSample
and SciPy's ``scipy.stats.qmc.Sobol`` both use; this script reads SciPy's copy (its
``_sobol_direction_numbers.npz``: each dimension's primitive polynomial and initial direction
integers). TensorFlow's dimension ``j`` is Joe and Kuo's ``j + 1`` (the first is all ones), up to 21200.

Format, a little-endian bit stream after an 8-byte header (``b"SOBOLJK1"``) and a u32 dimension count:
for each dimension, the polynomial's degree ``s`` in 5 bits, its ``s - 1`` inner coefficients
``a_1 .. a_{s-1}`` as one ``s - 1``-bit number (``a_1`` highest), then the initial direction
integers ``m_1 .. m_s``, ``m_k`` in ``k`` bits. Degree 0 is the first dimension (every ``m_k`` is 1).

Before writing, the script checks the direction integers the recurrence gives against TensorFlow's own
SobolSample: the point at index ``2^(k+1) - 1`` of each dimension is ``m_k / 2^k``, for every
dimension and ``k`` up to 29 (``skip = 2^(k+1) - 2``).
"""

import os

import numpy as np

OUT = os.path.join(os.path.dirname(__file__), "..", "crates", "tensor", "src", "kernels", "sobol_directions.bin")
DIMS = 21200
BITS = 31


def load():
    from scipy.stats import qmc

    d = np.load(os.path.join(os.path.dirname(qmc.__file__), "_sobol_direction_numbers.npz"))
    return d["poly"][:DIMS].astype(np.int64), d["vinit"][:DIMS].astype(np.int64)


def direction_integers(poly, vinit):
    """``m[j, k]`` (k = 0 .. 30) by Joe and Kuo's recurrence."""
    m = np.zeros((DIMS, BITS), np.int64)
    m[0, :] = 1
    for j in range(1, DIMS):
        p = int(poly[j])
        s = p.bit_length() - 1
        m[j, :s] = vinit[j, :s]
        for k in range(s, BITS):
            v = m[j, k - s] ^ (m[j, k - s] << s)
            for i in range(1, s):
                if (p >> (s - i)) & 1:
                    v ^= m[j, k - i] << i
            m[j, k] = v
    return m


def check_against_tensorflow(m):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    for k in range(30):
        x = tf.math.sobol_sample(DIMS, 1, skip=2 ** (k + 1) - 2, dtype=tf.float64).numpy()[0]
        got = np.round(x * 2 ** (k + 1)).astype(np.int64)
        want = m[:, k] if k < 29 else -m[:, k]  # TF's 31-digit points flip sign (1 << 31 overflows in its kernel)
        if not np.array_equal(got, want):
            raise SystemExit(f"direction integer {k} differs from TensorFlow's in {np.sum(got != want)} dimensions")


class Bits:
    def __init__(self):
        self.words, self.acc, self.n = bytearray(), 0, 0

    def put(self, value, width):
        assert 0 <= value < (1 << width) or width == 0
        self.acc |= value << self.n
        self.n += width
        while self.n >= 8:
            self.words.append(self.acc & 0xFF)
            self.acc >>= 8
            self.n -= 8

    def bytes(self):
        return bytes(self.words) + (bytes([self.acc]) if self.n else b"")


def main():
    poly, vinit = load()
    m = direction_integers(poly, vinit)
    check_against_tensorflow(m)
    b = Bits()
    for j in range(DIMS):
        p = int(poly[j])
        s = p.bit_length() - 1
        b.put(s, 5)
        if s:
            b.put((p >> 1) & ((1 << (s - 1)) - 1), s - 1)
            for k in range(s):
                b.put(int(vinit[j, k]), k + 1)
    with open(OUT, "wb") as f:
        f.write(b"SOBOLJK1" + DIMS.to_bytes(4, "little") + b.bytes())
    print(f"wrote {OUT}: {DIMS} dimensions, {os.path.getsize(OUT)} bytes")


if __name__ == "__main__":
    main()
