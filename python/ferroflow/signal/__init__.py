"""``tf.signal``: Fourier and cosine transforms, framing, windows, spectrograms and mel features."""

from ferroflow.signal.dct_ops import dct, idct  # noqa: F401
from ferroflow.signal.fft_ops import (  # noqa: F401
    fft,
    fft2d,
    fft3d,
    fftnd,
    fftshift,
    ifft,
    ifft2d,
    ifft3d,
    ifftnd,
    ifftshift,
    irfft,
    irfft2d,
    irfft3d,
    irfftnd,
    rfft,
    rfft2d,
    rfft3d,
    rfftnd,
)
from ferroflow.signal.mel_ops import linear_to_mel_weight_matrix, mfccs_from_log_mel_spectrograms  # noqa: F401
from ferroflow.signal.shape_ops import frame, overlap_and_add  # noqa: F401
from ferroflow.signal.spectral_ops import (  # noqa: F401
    inverse_mdct,
    inverse_stft,
    inverse_stft_window_fn,
    mdct,
    stft,
)
from ferroflow.signal.window_ops import (  # noqa: F401
    hamming_window,
    hann_window,
    kaiser_bessel_derived_window,
    kaiser_window,
    vorbis_window,
)
