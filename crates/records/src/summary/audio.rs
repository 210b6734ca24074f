//! WAV encoding for audio summaries (16-bit PCM, like TensorFlow's
//! `wav::EncodeAudioAsS16LEWav`).

use crate::{Error, Result};

const HEADER_LEN: usize = 44;
const BYTES_PER_SAMPLE: usize = 2;

/// One float sample in `[-1, 1]` as a 16-bit sample:
/// `clamp(round(x * 32768), -32768, 32767)`, rounding half away from zero.
pub fn float_to_i16(x: f32) -> i16 {
    (x * 32768.0).round().clamp(-32768.0, 32767.0) as i16
}

/// Encodes interleaved float samples (`frames * channels` values, frame
/// major) as a 44-byte-header RIFF/WAVE file of 16-bit little-endian PCM.
pub fn encode_wav(
    samples: &[f32],
    frames: usize,
    channels: usize,
    sample_rate: u32,
) -> Result<Vec<u8>> {
    if channels == 0 {
        return Err(Error::invalid_argument(
            "audio must have at least one channel",
        ));
    }
    if sample_rate == 0 {
        return Err(Error::invalid_argument("sample_rate must be positive"));
    }
    let num_samples = frames
        .checked_mul(channels)
        .filter(|&n| n == samples.len())
        .ok_or_else(|| {
            Error::invalid_argument(format!(
                "{} samples for {frames} frames of {channels} channels",
                samples.len()
            ))
        })?;
    let data_size = num_samples.checked_mul(BYTES_PER_SAMPLE);
    let file_size = data_size.and_then(|d| d.checked_add(HEADER_LEN));
    let too_large = || Error::invalid_argument("audio data too large to encode as WAV");
    let data_size = u32::try_from(data_size.ok_or_else(too_large)?).map_err(|_| too_large())?;
    let file_size = u32::try_from(file_size.ok_or_else(too_large)?).map_err(|_| too_large())?;
    let channels16 = u16::try_from(channels).map_err(|_| too_large())?;
    let block_align = channels16
        .checked_mul(BYTES_PER_SAMPLE as u16)
        .ok_or_else(too_large)?;
    let byte_rate = sample_rate
        .checked_mul(block_align as u32)
        .ok_or_else(too_large)?;

    let mut out = Vec::with_capacity(file_size as usize);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(file_size - 8).to_le_bytes());
    out.extend_from_slice(b"WAVE");
    out.extend_from_slice(b"fmt ");
    out.extend_from_slice(&16u32.to_le_bytes()); // fmt chunk size
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&channels16.to_le_bytes());
    out.extend_from_slice(&sample_rate.to_le_bytes());
    out.extend_from_slice(&byte_rate.to_le_bytes());
    out.extend_from_slice(&block_align.to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes()); // bits per sample
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_size.to_le_bytes());
    for &s in samples {
        out.extend_from_slice(&float_to_i16(s).to_le_bytes());
    }
    Ok(out)
}

/// The integer rate TF1's audio summary writes into the WAV header for a
/// float `sample_rate`: rounded to nearest (ties to even), at least 1.
pub fn tf1_wav_sample_rate(sample_rate: f32) -> Result<u32> {
    if !sample_rate.is_finite() || sample_rate <= 0.0 {
        return Err(Error::invalid_argument(format!(
            "sample_rate must be positive, got {sample_rate}"
        )));
    }
    let rounded = sample_rate.round_ties_even();
    if rounded > u32::MAX as f32 {
        return Err(Error::invalid_argument(format!(
            "sample_rate {sample_rate} is too large"
        )));
    }
    Ok((rounded as u32).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_layout() {
        let wav = encode_wav(&[0.0, 0.5, -1.0, 1.0], 2, 2, 8000).unwrap();
        assert_eq!(wav.len(), 44 + 8);
        assert_eq!(&wav[..4], b"RIFF");
        assert_eq!(
            u32::from_le_bytes(wav[4..8].try_into().unwrap()),
            44 + 8 - 8
        );
        assert_eq!(&wav[8..16], b"WAVEfmt ");
        assert_eq!(u16::from_le_bytes([wav[22], wav[23]]), 2); // channels
        assert_eq!(u32::from_le_bytes(wav[24..28].try_into().unwrap()), 8000);
        assert_eq!(u32::from_le_bytes(wav[28..32].try_into().unwrap()), 32000);
        assert_eq!(u16::from_le_bytes([wav[32], wav[33]]), 4); // block align
        assert_eq!(&wav[36..40], b"data");
        assert_eq!(u32::from_le_bytes(wav[40..44].try_into().unwrap()), 8);
        let samples: Vec<i16> = wav[44..]
            .chunks(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(samples, vec![0, 16384, -32768, 32767]);
    }

    #[test]
    fn rejects_bad_input() {
        assert!(encode_wav(&[0.0; 3], 2, 2, 8000).is_err());
        assert!(encode_wav(&[], 0, 0, 8000).is_err());
        assert!(encode_wav(&[], 0, 1, 0).is_err());
        assert!(tf1_wav_sample_rate(0.0).is_err());
        assert!(tf1_wav_sample_rate(f32::NAN).is_err());
        assert_eq!(tf1_wav_sample_rate(0.4).unwrap(), 1);
        assert_eq!(tf1_wav_sample_rate(8000.5).unwrap(), 8000);
    }
}
