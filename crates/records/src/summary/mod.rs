//! Summary kernels: what `tf.compat.v1.summary.*` (TF1 ops) and
//! `tf.summary.*` (TF2, TensorBoard's implementations) put into a
//! `Summary.Value`.
//!
//! TF1 values use the legacy fields (`simple_value`, `histo`, `image`,
//! `audio`); TF2 values are a tensor plus plugin metadata. TensorBoard reads
//! both.

pub mod audio;
pub mod histogram;
pub mod image;

pub use audio::encode_wav;
pub use histogram::{default_bucket_limits, histogram, histogram_buckets, Histogram};
pub use image::{encode_png, ImageShape, DEFAULT_BAD_COLOR};

use prost::Message;

use crate::proto::summary::{value, Audio, Image, Value};
use crate::proto::{AudioPluginData, SummaryMetadata, TensorProto, AUDIO_ENCODING_WAV};
use crate::{Error, Result};

/// TensorBoard plugin names.
pub mod plugins {
    pub const SCALARS: &str = "scalars";
    pub const HISTOGRAMS: &str = "histograms";
    pub const IMAGES: &str = "images";
    pub const AUDIO: &str = "audio";
    pub const TEXT: &str = "text";
}

/// Default number of buckets of TF2 histograms.
pub const DEFAULT_V2_BUCKETS: i64 = 30;

/// TF1 scalar: `simple_value` (float32), no metadata.
pub fn scalar(tag: &str, value: f32) -> Value {
    Value::new(tag, value::Value::SimpleValue(value))
}

/// TF1 histogram (`histo`) with TensorFlow's default buckets. Like the op,
/// NaN or infinite input is an `InvalidArgument` error naming the tag.
pub fn histogram_summary(tag: &str, values: &[f64]) -> Result<Value> {
    if values.iter().any(|v| v.is_nan()) {
        return Err(Error::invalid_argument(format!(
            "Nan in summary histogram for: {tag}"
        )));
    }
    if values.iter().any(|v| v.is_infinite()) {
        return Err(Error::invalid_argument(format!(
            "Infinity in summary histogram for: {tag}"
        )));
    }
    Ok(Value::new(tag, value::Value::Histo(histogram(values))))
}

/// The tag of the `index`-th image or audio clip of a TF1 summary named
/// `name`: `<name>/<kind>` when `max_outputs == 1`, else `<name>/<kind>/<i>`.
pub fn tf1_output_tag(name: &str, kind: &str, max_outputs: usize, index: usize) -> String {
    if max_outputs == 1 {
        format!("{name}/{kind}")
    } else {
        format!("{name}/{kind}/{index}")
    }
}

/// TF1 image summaries of an 8-bit batch: one `Summary.Image` (PNG,
/// colorspace = channels) per image, up to `max_outputs`, tagged by
/// [`tf1_output_tag`]. Use [`image::normalize_float_images`] first for float
/// images.
pub fn image_summaries(
    name: &str,
    pixels: &[u8],
    shape: ImageShape,
    max_outputs: usize,
) -> Result<Vec<Value>> {
    shape.check_data(pixels.len())?;
    let n = shape.batch.min(max_outputs);
    let per_image = shape.image_len();
    (0..n)
        .map(|i| {
            let img = &pixels[i * per_image..(i + 1) * per_image];
            let png = encode_png(img, shape.height, shape.width, shape.channels)?;
            let image = Image {
                height: shape.height as i32,
                width: shape.width as i32,
                colorspace: shape.channels as i32,
                encoded_image_string: png,
            };
            Ok(Value::new(
                tf1_output_tag(name, "image", max_outputs, i),
                value::Value::Image(image),
            ))
        })
        .collect()
}

/// Shape of an audio batch: `batch` clips of `frames` frames of `channels`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct AudioShape {
    pub batch: usize,
    pub frames: usize,
    pub channels: usize,
}

impl AudioShape {
    /// From `[batch, frames]` or `[batch, frames, channels]`.
    pub fn new(dims: &[usize]) -> Result<AudioShape> {
        match *dims {
            [batch, frames] => Ok(AudioShape {
                batch,
                frames,
                channels: 1,
            }),
            [batch, frames, channels] => Ok(AudioShape {
                batch,
                frames,
                channels,
            }),
            _ => Err(Error::invalid_argument(format!(
                "Tensor must be 3-D or 2-D, got: {dims:?}"
            ))),
        }
    }

    fn clip_len(&self) -> Option<usize> {
        self.frames.checked_mul(self.channels)
    }

    fn check(&self, len: usize) -> Result<usize> {
        let clip = self.clip_len();
        if clip.and_then(|c| c.checked_mul(self.batch)) != Some(len) {
            return Err(Error::invalid_argument(format!(
                "audio data has {len} values, shape {:?} needs {}x{}x{}",
                [self.batch, self.frames, self.channels],
                self.batch,
                self.frames,
                self.channels
            )));
        }
        Ok(clip.unwrap_or(0))
    }
}

/// TF1 audio summaries (`AudioSummaryV2`): one `Summary.Audio` (16-bit WAV)
/// per clip, up to `max_outputs`, tagged by [`tf1_output_tag`].
pub fn audio_summaries(
    name: &str,
    samples: &[f32],
    shape: AudioShape,
    sample_rate: f32,
    max_outputs: usize,
) -> Result<Vec<Value>> {
    let clip = shape.check(samples.len())?;
    let wav_rate = audio::tf1_wav_sample_rate(sample_rate)?;
    let n = shape.batch.min(max_outputs);
    (0..n)
        .map(|i| {
            let data = &samples[i * clip..(i + 1) * clip];
            let wav = encode_wav(data, shape.frames, shape.channels, wav_rate)?;
            let audio = Audio {
                sample_rate,
                num_channels: shape.channels as i64,
                length_frames: shape.frames as i64,
                encoded_audio_string: wav,
                content_type: "audio/wav".to_string(),
            };
            Ok(Value::new(
                tf1_output_tag(name, "audio", max_outputs, i),
                value::Value::Audio(audio),
            ))
        })
        .collect()
}

/// A tensor summary: `tensor` plus metadata naming `plugin_name`.
pub fn tensor_summary(
    tag: &str,
    tensor: TensorProto,
    plugin_name: &str,
    content: Vec<u8>,
) -> Value {
    Value::new(tag, value::Value::Tensor(tensor))
        .with_metadata(SummaryMetadata::for_plugin(plugin_name, content))
}

/// Text summary (TF1 `summary.text` and TF2 `tf.summary.text`): a DT_STRING
/// tensor of shape `dims` with plugin `text`.
pub fn text(tag: &str, dims: &[i64], strings: Vec<Vec<u8>>) -> Value {
    tensor_summary(
        tag,
        TensorProto::from_strings(dims, strings),
        plugins::TEXT,
        Vec::new(),
    )
}

/// TF2 scalar: DT_FLOAT scalar tensor (`tensor_content`), plugin `scalars`.
pub fn scalar_v2(tag: &str, value: f32) -> Value {
    tensor_summary(
        tag,
        TensorProto::from_f32(&[], &[value]),
        plugins::SCALARS,
        Vec::new(),
    )
}

/// TF2 histogram: a DT_DOUBLE `[k, 3]` tensor of `(left, right, count)`
/// rows (see [`histogram_buckets`]), plugin `histograms`.
pub fn histogram_v2(tag: &str, values: &[f64], buckets: i64) -> Value {
    let rows = histogram_buckets(values, buckets);
    let flat: Vec<f64> = rows.iter().flatten().copied().collect();
    tensor_summary(
        tag,
        TensorProto::from_f64(&[rows.len() as i64, 3], &flat),
        plugins::HISTOGRAMS,
        Vec::new(),
    )
}

/// TF2 image: a DT_STRING tensor `[width, height, png...]` (dimensions as
/// decimal strings) with up to `max_outputs` PNGs, plugin `images`. Use
/// [`image::convert_f32_to_u8`] first for float images.
pub fn image_v2(tag: &str, pixels: &[u8], shape: ImageShape, max_outputs: usize) -> Result<Value> {
    shape.check_data(pixels.len())?;
    let n = shape.batch.min(max_outputs);
    let per_image = shape.image_len();
    let mut strings = vec![
        shape.width.to_string().into_bytes(),
        shape.height.to_string().into_bytes(),
    ];
    for i in 0..n {
        let img = &pixels[i * per_image..(i + 1) * per_image];
        strings.push(encode_png(img, shape.height, shape.width, shape.channels)?);
    }
    let dims = [strings.len() as i64];
    Ok(tensor_summary(
        tag,
        TensorProto::from_strings(&dims, strings),
        plugins::IMAGES,
        Vec::new(),
    ))
}

/// TF2 audio: a DT_STRING tensor `[n, 2]` of `(wav, label)` rows with empty
/// labels, up to `max_outputs` clips, plugin `audio` with WAV encoding.
pub fn audio_v2(
    tag: &str,
    samples: &[f32],
    shape: AudioShape,
    sample_rate: u32,
    max_outputs: usize,
) -> Result<Value> {
    let clip = shape.check(samples.len())?;
    let n = shape.batch.min(max_outputs);
    let mut strings = Vec::with_capacity(2 * n);
    for i in 0..n {
        let data = &samples[i * clip..(i + 1) * clip];
        strings.push(encode_wav(data, shape.frames, shape.channels, sample_rate)?);
        strings.push(Vec::new());
    }
    let content = AudioPluginData {
        encoding: AUDIO_ENCODING_WAV,
        ..Default::default()
    }
    .encode_to_vec();
    Ok(tensor_summary(
        tag,
        TensorProto::from_strings(&[n as i64, 2], strings),
        plugins::AUDIO,
        content,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags() {
        assert_eq!(tf1_output_tag("x", "image", 1, 0), "x/image");
        assert_eq!(tf1_output_tag("x", "image", 3, 2), "x/image/2");
    }

    #[test]
    fn histogram_rejects_non_finite() {
        let e = histogram_summary("w", &[1.0, f64::NAN]).unwrap_err();
        assert_eq!(e.message(), "Nan in summary histogram for: w");
        let e = histogram_summary("w", &[f64::NEG_INFINITY]).unwrap_err();
        assert_eq!(e.message(), "Infinity in summary histogram for: w");
    }

    #[test]
    fn image_limits_outputs() {
        let shape = ImageShape::new(&[3, 1, 2, 1]).unwrap();
        let v = image_summaries("im", &[0, 1, 2, 3, 4, 5], shape, 2).unwrap();
        assert_eq!(v.len(), 2);
        assert_eq!(v[1].tag, "im/image/1");
        let v2 = image_v2("im", &[0, 1, 2, 3, 4, 5], shape, 1).unwrap();
        let strings = v2.tensor().unwrap().to_strings().unwrap();
        assert_eq!(strings.len(), 3);
        assert_eq!(strings[0], b"2");
        assert_eq!(strings[1], b"1");
    }

    #[test]
    fn audio_shapes() {
        let shape = AudioShape::new(&[2, 3]).unwrap();
        let v = audio_summaries("s", &[0.0; 6], shape, 8000.0, 1).unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].tag, "s/audio");
        assert!(audio_summaries("s", &[0.0; 5], shape, 8000.0, 1).is_err());
        let v2 = audio_v2("s", &[0.0; 6], shape, 8000, 5).unwrap();
        assert_eq!(v2.tensor().unwrap().dims(), vec![2, 2]);
        assert_eq!(
            v2.metadata.unwrap().plugin_data.unwrap().content,
            [0x10, 0x0b]
        );
    }
}
