"""``tf.spectral``: TensorFlow 1's older name for the transforms of ``tf.signal``."""

from ferroflow.signal.dct_ops import dct, idct  # noqa: F401
from ferroflow.signal.fft_ops import (  # noqa: F401
    fft,
    fft2d,
    fft3d,
    ifft,
    ifft2d,
    ifft3d,
    irfft,
    irfft2d,
    irfft3d,
    rfft,
    rfft2d,
    rfft3d,
)
