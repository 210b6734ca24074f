//! Fuzzes the WAV decoder (`DecodeWav`'s kernel) on untrusted bytes:
//! errors are fine; panics, hangs and allocations the input does not pay
//! for are not. A file that decodes is laid out at other channel and sample
//! counts, re-encoded, and decoded again to the same samples (16-bit PCM
//! round-trips exactly).
//!
//! `cargo fuzz run decode_wav` (nightly), or on stable as `parse_example.rs`
//! describes.
#![no_main]

use ferroflow_data::wav::{decode_wav, encode_wav, resample_layout};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(wav) = decode_wav(data) else {
        return;
    };
    assert_eq!(
        wav.samples.len(),
        wav.frames as usize * wav.channels as usize
    );
    let first = data.first().copied().unwrap_or(0) as i64;
    for (channels, samples) in [(-1, -1), (first % 5, -1), (-1, first % 7), (1, 3)] {
        let out = resample_layout(&wav, channels, samples).unwrap();
        let rows = if samples < 0 {
            wav.frames as usize
        } else {
            samples as usize
        };
        let cols = if channels < 0 {
            wav.channels as usize
        } else {
            channels as usize
        };
        assert_eq!(out.shape().dims(), &[rows, cols]);
    }
    let again = encode_wav(
        &wav.samples,
        wav.sample_rate.max(1) as i32,
        wav.channels as usize,
        wav.frames as usize,
    );
    if let Ok(bytes) = again {
        let back = decode_wav(&bytes).unwrap();
        assert_eq!(back.samples, wav.samples);
    }
});
