//! WAV audio: `DecodeWav` and `EncodeWav` (`tf.audio.decode_wav` /
//! `encode_wav`), 16-bit little-endian PCM only, as TensorFlow reads and
//! writes it.
//!
//! Decoding walks the RIFF chunks the way TensorFlow's reader does, with its
//! checks and messages: after `RIFF`/`WAVE`, padding and broadcast-WAV chunks
//! (`JUNK`, `bext`, `iXML`, `qlty`, `mext`, `levl`, `link`, `axml`) may come
//! before `fmt `; the format must be PCM (1) with 16 bits per sample and
//! consistent block and byte rates; then every chunk is skipped except one
//! `data` chunk, whose samples become floats `s / 32768` in [-1, 1). Every
//! length is checked against the input before anything is allocated, so a
//! header claiming gigabytes of samples fails with `InvalidArgument` instead
//! of allocating them. Offsets are 64-bit here, where TensorFlow's are `int`
//! and can wrap on chunk sizes near 2^31 (such files fail here with "Data
//! too short" instead).
//!
//! Encoding writes TensorFlow's 44-byte header and rounds each sample
//! `x * 32768` half away from zero, clamped to [-32768, 32767].

use ferroflow_graph::{AttrsExt, InferContext, OpDef, OutputInfo, PartialShape};
use ferroflow_runtime::{factory, KernelFactory, OpContext};
use ferroflow_tensor::{bail, ensure, DType, Error, Result, Tensor};

/// Strings in or out: neither op has a gradient (TensorFlow registers none);
/// the facade registers them with the gradient registry as not
/// differentiable, so gradients stop there.
pub const NOT_DIFFERENTIABLE: &[&str] = &["DecodeWav", "EncodeWav"];

/// Registers the WAV ops and kernels (idempotent).
pub(crate) fn register() {
    ferroflow_runtime::register_ops(op_defs(), kernels());
}

/// The graph-level definitions of the WAV ops.
pub fn op_defs() -> Vec<OpDef> {
    vec![
        OpDef::new("DecodeWav", &["contents"], infer_decode_wav),
        OpDef::new("EncodeWav", &["audio", "sample_rate"], infer_encode_wav),
    ]
}

/// A decoded WAV file: interleaved samples (`frames * channels`).
#[derive(Clone, Debug, PartialEq)]
pub struct Wav {
    pub samples: Vec<f32>,
    pub frames: u32,
    pub channels: u16,
    pub sample_rate: u32,
}

/// Reads a WAV file's bytes, moving an offset forward with TensorFlow's
/// bounds checks.
struct Cursor<'a> {
    data: &'a [u8],
    offset: i64,
}

impl<'a> Cursor<'a> {
    /// The offset `increment` bytes on, if the data holds them.
    fn advanced(&self, increment: i64) -> Result<i64> {
        let size = self.data.len() as i64;
        ensure!(
            self.offset <= size,
            invalid_argument,
            "Initial offset is outside data range: {}",
            self.offset
        );
        let next = self.offset + increment;
        ensure!(
            next <= size,
            invalid_argument,
            "Data too short when trying to read string"
        );
        Ok(next)
    }

    fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        let next = self.advanced(n as i64)?;
        let out = &self.data[self.offset as usize..next as usize];
        self.offset = next;
        Ok(out)
    }

    fn u16(&mut self) -> Result<u16> {
        let b = self.bytes(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32> {
        let b = self.bytes(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn expect(&mut self, text: &str) -> Result<()> {
        let found = self.bytes(text.len())?;
        ensure!(
            found == text.as_bytes(),
            invalid_argument,
            "Header mismatch: Expected {text} but found {}",
            String::from_utf8_lossy(found)
        );
        Ok(())
    }
}

/// Chunks that may come between `WAVE` and `fmt ` (padding, broadcast WAV).
const SKIPPABLE_BEFORE_FORMAT: [&[u8]; 8] = [
    b"JUNK", b"bext", b"iXML", b"qlty", b"mext", b"levl", b"link", b"axml",
];

/// Decodes a 16-bit PCM WAV file.
pub fn decode_wav(data: &[u8]) -> Result<Wav> {
    ensure!(
        data.len() <= i32::MAX as usize,
        invalid_argument,
        "WAV contents are too large for int: {}",
        data.len()
    );
    let mut c = Cursor { data, offset: 0 };
    c.expect("RIFF")?;
    let _total_file_size = c.u32()?;
    c.expect("WAVE")?;
    let mut id = c.bytes(4)?;
    while id != b"fmt " {
        ensure!(
            SKIPPABLE_BEFORE_FORMAT.contains(&id),
            invalid_argument,
            "Unexpected field {}",
            String::from_utf8_lossy(id)
        );
        let size = c.u32()?;
        c.offset = c.advanced(size as i64)?;
        id = c.bytes(4)?;
    }
    let format_size = c.u32()?;
    ensure!(
        format_size == 16 || format_size == 18,
        invalid_argument,
        "Bad format chunk size for WAV: Expected 16 or 18, but got{format_size}"
    );
    let audio_format = c.u16()?;
    ensure!(
        audio_format == 1,
        invalid_argument,
        "Bad audio format for WAV: Expected 1 (PCM), but got{audio_format}"
    );
    let channels = c.u16()?;
    ensure!(
        channels >= 1,
        invalid_argument,
        "Bad number of channels for WAV: Expected at least 1, but got {channels}"
    );
    let sample_rate = c.u32()?;
    let bytes_per_second = c.u32()?;
    let bytes_per_sample = c.u16()?;
    let bits_per_sample = c.u16()?;
    ensure!(
        bits_per_sample == 16,
        invalid_argument,
        "Can only read 16-bit WAV files, but received {bits_per_sample}"
    );
    let expected_bytes_per_sample = (bits_per_sample as u32 * channels as u32).div_ceil(8);
    ensure!(
        bytes_per_sample as u32 == expected_bytes_per_sample,
        invalid_argument,
        "Bad bytes per sample in WAV header: Expected {expected_bytes_per_sample} but got {bytes_per_sample}"
    );
    let expected_bytes_per_second = bytes_per_sample as u64 * sample_rate as u64;
    ensure!(
        bytes_per_second as u64 == expected_bytes_per_second,
        invalid_argument,
        "Bad bytes per second in WAV header: Expected {expected_bytes_per_second} but got \
         {bytes_per_second} (sample_rate={sample_rate}, bytes_per_sample={bytes_per_sample})"
    );
    if format_size == 18 {
        // Two unused bytes (the size of an extension that PCM does not have).
        c.offset += 2;
    }
    let mut decoded: Option<(Vec<f32>, u32)> = None;
    while c.offset < data.len() as i64 {
        let chunk_id = c.bytes(4)?;
        let chunk_size = c.u32()?;
        ensure!(
            chunk_size <= i32::MAX as u32,
            invalid_argument,
            "WAV data chunk '{}' is too large: {chunk_size} bytes, but the limit is {}",
            String::from_utf8_lossy(chunk_id),
            i32::MAX
        );
        if chunk_id != b"data" {
            c.offset += chunk_size as i64;
            continue;
        }
        ensure!(
            decoded.is_none(),
            invalid_argument,
            "More than one data chunk found in WAV"
        );
        let frames = chunk_size / bytes_per_sample as u32;
        let count = frames as usize * channels as usize;
        // The samples must be there before anything is allocated for them.
        let end = c.advanced(2 * count as i64)?;
        let raw = &data[c.offset as usize..end as usize];
        let samples = raw
            .chunks_exact(2)
            .map(|b| i16::from_le_bytes([b[0], b[1]]) as f32 / 32768.0)
            .collect();
        // Only the whole frames are read: a chunk's odd trailing bytes are
        // read as the start of the next chunk, as TensorFlow does.
        c.offset = end;
        decoded = Some((samples, frames));
    }
    let Some((samples, frames)) = decoded else {
        bail!(invalid_argument, "No data chunk found in WAV");
    };
    Ok(Wav {
        samples,
        frames,
        channels,
        sample_rate,
    })
}

/// `DecodeWav`'s output: `wav` as `[samples, channels]`, padded with zeros or
/// cut to `desired_samples` and with its last channel repeated or extra
/// channels dropped to reach `desired_channels` (-1: as in the file).
pub fn resample_layout(wav: &Wav, desired_channels: i64, desired_samples: i64) -> Result<Tensor> {
    ensure!(
        desired_channels >= -1,
        invalid_argument,
        "desired_channels must be >= -1, got {desired_channels}"
    );
    ensure!(
        desired_samples >= -1,
        invalid_argument,
        "desired_samples must be >= -1, got {desired_samples}"
    );
    let rows = if desired_samples == -1 {
        wav.frames as usize
    } else {
        desired_samples as usize
    };
    let cols = if desired_channels == -1 {
        wav.channels as usize
    } else {
        desired_channels as usize
    };
    let n = rows
        .checked_mul(cols)
        .filter(|&n| n <= i32::MAX as usize)
        .ok_or_else(|| {
            Error::resource_exhausted(format!(
                "DecodeWav: an output of {rows} samples x {cols} channels is too large"
            ))
        })?;
    let mut out = Vec::new();
    out.try_reserve_exact(n).map_err(|_| {
        Error::resource_exhausted(format!(
            "DecodeWav: cannot allocate {rows} samples x {cols} channels"
        ))
    })?;
    let have = wav.channels as usize;
    for sample in 0..rows {
        for channel in 0..cols {
            out.push(if sample < wav.frames as usize {
                wav.samples[sample * have + channel.min(have - 1)]
            } else {
                0.0
            });
        }
    }
    Tensor::from_vec(vec![rows, cols], out)
}

/// TensorFlow's float-to-sample rounding: `x * 32768` rounded half away
/// from zero and clamped; NaN gives 0 (what TensorFlow's x86 build writes).
fn to_sample(x: f32) -> i16 {
    let v = (x * 32768.0).round();
    if v.is_nan() {
        0
    } else {
        v.clamp(-32768.0, 32767.0) as i16
    }
}

/// Encodes `frames x channels` interleaved samples as a 16-bit PCM WAV file.
pub fn encode_wav(
    audio: &[f32],
    sample_rate: i32,
    channels: usize,
    frames: usize,
) -> Result<Vec<u8>> {
    // (TensorFlow's message for frames of zero channels: their buffer is null.)
    ensure!(
        !audio.is_empty() || frames == 0,
        invalid_argument,
        "audio is null"
    );
    // TensorFlow passes the int32 rate on as a size_t: a negative one is huge.
    let rate = sample_rate as i64 as u64;
    ensure!(
        rate != 0 && rate <= u32::MAX as u64,
        invalid_argument,
        "sample_rate must be in (0, 2^32), got: {rate}"
    );
    ensure!(
        channels != 0 && channels <= u16::MAX as usize,
        invalid_argument,
        "num_channels must be in (0, 2^16), got: {channels}"
    );
    let samples = frames as u64 * channels as u64;
    let file_size = 44 + samples * 2;
    ensure!(
        file_size <= u32::MAX as u64,
        invalid_argument,
        "Provided channels and frames cannot be encoded as a WAV."
    );
    let mut out = Vec::with_capacity(file_size as usize);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&((file_size - 8) as u32).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes());
    out.extend_from_slice(&(channels as u16).to_le_bytes());
    out.extend_from_slice(&(rate as u32).to_le_bytes());
    out.extend_from_slice(&((rate * 2 * channels as u64) as u32).to_le_bytes());
    out.extend_from_slice(&((2 * channels) as u16).to_le_bytes());
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&((samples * 2) as u32).to_le_bytes());
    for &x in &audio[..samples as usize] {
        out.extend_from_slice(&to_sample(x).to_le_bytes());
    }
    Ok(out)
}

fn kernels() -> Vec<(&'static str, KernelFactory)> {
    vec![
        (
            "DecodeWav",
            factory(|init| {
                let channels = init.node.attrs.int_or("desired_channels", -1)?;
                let samples = init.node.attrs.int_or("desired_samples", -1)?;
                Ok(Box::new(move |ctx: &mut OpContext<'_>| {
                    let contents = ctx.input(0)?;
                    ensure!(
                        contents.shape().rank() == 0,
                        invalid_argument,
                        "contents must be scalar, got shape {}",
                        contents.shape()
                    );
                    let bytes = contents
                        .as_slice::<Vec<u8>>()
                        .map_err(|_| Error::invalid_argument("contents must be a string tensor"))?;
                    let wav = decode_wav(&bytes[0])?;
                    let audio = resample_layout(&wav, channels, samples)?;
                    ctx.output(audio);
                    ctx.output(Tensor::scalar(wav.sample_rate as i32));
                    Ok(())
                }))
            }),
        ),
        (
            "EncodeWav",
            factory(|_| {
                Ok(Box::new(|ctx: &mut OpContext<'_>| {
                    let audio = ctx.input(0)?;
                    ensure!(
                        audio.shape().rank() == 2,
                        invalid_argument,
                        "audio must be 2-dimensional{}",
                        audio.shape()
                    );
                    let rate = ctx.input(1)?;
                    ensure!(
                        rate.shape().rank() == 0,
                        invalid_argument,
                        "Input sample_rate should be a scalar tensor, got {} instead.",
                        rate.shape()
                    );
                    let rate = rate.as_slice::<i32>()?[0];
                    let dims = audio.shape().dims();
                    ensure!(
                        dims[0]
                            .checked_mul(dims[1])
                            .is_some_and(|n| n < i32::MAX as usize),
                        invalid_argument,
                        "Cannot encode audio with >= max int32 elements"
                    );
                    let wav = encode_wav(audio.as_slice::<f32>()?, rate, dims[1], dims[0])?;
                    ctx.output(Tensor::scalar(wav));
                    Ok(())
                }))
            }),
        ),
    ]
}

fn infer_decode_wav(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::String])?;
    ctx.shape(0).with_rank(0, "contents")?;
    let dim = |attr: &str, what: &str| -> Result<Option<usize>> {
        match ctx.attrs().int_or(attr, -1)? {
            -1 => Ok(None),
            n if n < 0 => Err(Error::value(format!(
                "{what} must be non-negative, got {n}"
            ))),
            n => Ok(Some(n as usize)),
        }
    };
    let samples = dim("desired_samples", "samples")?;
    let channels = dim("desired_channels", "channels")?;
    Ok(vec![
        OutputInfo::new(
            DType::Float32,
            PartialShape::from_dims(vec![samples, channels]),
        ),
        OutputInfo::new(DType::Int32, PartialShape::scalar()),
    ])
}

fn infer_encode_wav(ctx: &InferContext) -> Result<Vec<OutputInfo>> {
    ctx.expect_dtype(0, &[DType::Float32])?;
    ctx.expect_dtype(1, &[DType::Int32])?;
    ctx.shape(0).with_rank(2, "audio")?;
    ctx.shape(1).with_rank(0, "sample_rate")?;
    Ok(vec![OutputInfo::new(DType::String, PartialShape::scalar())])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(channels: u16, rate: u32, data_len: u32) -> Vec<u8> {
        let mut h = Vec::new();
        h.extend_from_slice(b"RIFF");
        h.extend_from_slice(&(36 + data_len).to_le_bytes());
        h.extend_from_slice(b"WAVEfmt ");
        h.extend_from_slice(&16u32.to_le_bytes());
        h.extend_from_slice(&1u16.to_le_bytes());
        h.extend_from_slice(&channels.to_le_bytes());
        h.extend_from_slice(&rate.to_le_bytes());
        h.extend_from_slice(&(rate * 2 * channels as u32).to_le_bytes());
        h.extend_from_slice(&(2 * channels).to_le_bytes());
        h.extend_from_slice(&16u16.to_le_bytes());
        h.extend_from_slice(b"data");
        h.extend_from_slice(&data_len.to_le_bytes());
        h
    }

    #[test]
    fn round_trip_and_layout() {
        let audio = [0.0f32, -1.0, 0.5, 0.25, -0.5, 0.999];
        let wav = encode_wav(&audio, 16000, 2, 3).unwrap();
        assert_eq!(wav.len(), 44 + 12);
        assert_eq!(&wav[..44], &header(2, 16000, 12)[..]);
        let d = decode_wav(&wav).unwrap();
        assert_eq!((d.frames, d.channels, d.sample_rate), (3, 2, 16000));
        assert_eq!(d.samples[..5], audio[..5]);
        assert_eq!(d.samples[5], 32735.0 / 32768.0);
        let t = resample_layout(&d, 3, 4).unwrap();
        assert_eq!(t.shape().dims(), &[4, 3]);
        let v = t.as_slice::<f32>().unwrap();
        assert_eq!(&v[..6], &[0.0, -1.0, -1.0, 0.5, 0.25, 0.25]);
        assert_eq!(&v[9..], &[0.0, 0.0, 0.0]);
        assert_eq!(
            resample_layout(&d, 1, -1)
                .unwrap()
                .as_slice::<f32>()
                .unwrap(),
            &[0.0, 0.5, -0.5]
        );
    }

    #[test]
    fn rounding_and_clamping() {
        let s: Vec<i16> = [
            1.5f32 / 32768.0,
            -1.5 / 32768.0,
            2.0,
            -2.0,
            f32::NAN,
            f32::INFINITY,
        ]
        .iter()
        .map(|&x| to_sample(x))
        .collect();
        assert_eq!(s, [2, -2, 32767, -32768, 0, 32767]);
    }

    #[test]
    fn corrupt_headers_are_invalid_argument() {
        let good = encode_wav(&[0.1, 0.2], 8000, 1, 2).unwrap();
        let err = |bytes: &[u8]| decode_wav(bytes).unwrap_err().to_string();
        assert!(err(&good[..3]).contains("Data too short"));
        assert!(err(b"RIFX\0\0\0\0WAVE").contains("Header mismatch: Expected RIFF but found RIFX"));
        let mut bad = good.clone();
        bad[12..16].copy_from_slice(b"LIST");
        assert!(err(&bad).contains("Unexpected field LIST"));
        let mut bad = good.clone();
        bad[34] = 8;
        assert!(err(&bad).contains("Can only read 16-bit WAV files, but received 8"));
        let mut bad = good.clone();
        bad[40..44].copy_from_slice(&1000u32.to_le_bytes());
        assert!(err(&bad).contains("Data too short"));
        let mut bad = good.clone();
        bad[36..40].copy_from_slice(b"junk");
        assert!(err(&bad).contains("No data chunk found in WAV"));
        let mut two = good.clone();
        two.extend_from_slice(&good[36..]);
        assert!(err(&two).contains("More than one data chunk"));
        // A huge claimed chunk fails before allocating.
        let mut bad = good;
        bad[40..44].copy_from_slice(&0x7fff_fff0u32.to_le_bytes());
        assert!(err(&bad).contains("Data too short"));
    }
}
