//! `Summary`, `SummaryMetadata` and `HistogramProto`
//! (`tensorflow/core/framework/summary.proto`, `tsl/protobuf/histogram.proto`).

use prost::bytes::{Buf, BufMut};
use prost::encoding::{self, DecodeContext, WireType};
use prost::DecodeError;

use super::tensor_proto::TensorProto;

/// `tensorflow.HistogramProto`: a TF1 histogram (`bucket[i]` counts values
/// in `[bucket_limit[i-1], bucket_limit[i])`, the first left edge being
/// -DBL_MAX).
///
/// The message is encoded by hand so that `-0.0` in `min`/`max`/`sum` is
/// written, as protobuf's C++ and upb encoders do (they compare the bit
/// pattern with zero, where a derived encoder would skip it).
#[derive(Clone, PartialEq, Debug, Default)]
pub struct HistogramProto {
    pub min: f64,
    pub max: f64,
    pub num: f64,
    pub sum: f64,
    pub sum_squares: f64,
    /// Right edges of the buckets (packed).
    pub bucket_limit: Vec<f64>,
    /// Counts (packed, as doubles).
    pub bucket: Vec<f64>,
}

impl HistogramProto {
    fn scalars(&self) -> [(u32, f64); 5] {
        [
            (1, self.min),
            (2, self.max),
            (3, self.num),
            (4, self.sum),
            (5, self.sum_squares),
        ]
    }
}

impl prost::Message for HistogramProto {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        for (tag, v) in self.scalars() {
            if v.to_bits() != 0 {
                encoding::double::encode(tag, &v, buf);
            }
        }
        encoding::double::encode_packed(6, &self.bucket_limit, buf);
        encoding::double::encode_packed(7, &self.bucket, buf);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        match tag {
            1 => encoding::double::merge(wire_type, &mut self.min, buf, ctx),
            2 => encoding::double::merge(wire_type, &mut self.max, buf, ctx),
            3 => encoding::double::merge(wire_type, &mut self.num, buf, ctx),
            4 => encoding::double::merge(wire_type, &mut self.sum, buf, ctx),
            5 => encoding::double::merge(wire_type, &mut self.sum_squares, buf, ctx),
            6 => encoding::double::merge_repeated(wire_type, &mut self.bucket_limit, buf, ctx),
            7 => encoding::double::merge_repeated(wire_type, &mut self.bucket, buf, ctx),
            _ => encoding::skip_field(wire_type, tag, buf, ctx),
        }
    }

    fn encoded_len(&self) -> usize {
        let scalars: usize = self
            .scalars()
            .iter()
            .filter(|(_, v)| v.to_bits() != 0)
            .map(|(tag, v)| encoding::double::encoded_len(*tag, v))
            .sum();
        scalars
            + encoding::double::encoded_len_packed(6, &self.bucket_limit)
            + encoding::double::encoded_len_packed(7, &self.bucket)
    }

    fn clear(&mut self) {
        *self = HistogramProto::default();
    }
}

/// `SummaryMetadata.PluginData`: which TensorBoard plugin owns a value.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PluginData {
    #[prost(string, tag = "1")]
    pub plugin_name: String,
    /// Plugin-specific serialized proto (often empty).
    #[prost(bytes = "vec", tag = "2")]
    pub content: Vec<u8>,
}

/// `SummaryMetadata.DataClass`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum DataClass {
    Unknown = 0,
    Scalar = 1,
    Tensor = 2,
    BlobSequence = 3,
}

/// `tensorflow.SummaryMetadata`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SummaryMetadata {
    #[prost(message, optional, tag = "1")]
    pub plugin_data: Option<PluginData>,
    #[prost(string, tag = "2")]
    pub display_name: String,
    #[prost(string, tag = "3")]
    pub summary_description: String,
    #[prost(enumeration = "DataClass", tag = "4")]
    pub data_class: i32,
}

impl SummaryMetadata {
    /// Metadata naming a plugin, with its serialized content.
    pub fn for_plugin(plugin_name: &str, content: Vec<u8>) -> SummaryMetadata {
        SummaryMetadata {
            plugin_data: Some(PluginData {
                plugin_name: plugin_name.to_string(),
                content,
            }),
            ..Default::default()
        }
    }

    /// The plugin name, or `""`.
    pub fn plugin_name(&self) -> &str {
        self.plugin_data
            .as_ref()
            .map(|p| p.plugin_name.as_str())
            .unwrap_or("")
    }
}

/// `tensorflow.Summary`: a list of tagged values.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Summary {
    #[prost(message, repeated, tag = "1")]
    pub value: Vec<summary::Value>,
}

/// Nested messages of [`Summary`].
pub mod summary {
    use super::*;

    /// `Summary.Image`: an encoded image.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Image {
        #[prost(int32, tag = "1")]
        pub height: i32,
        #[prost(int32, tag = "2")]
        pub width: i32,
        /// 1 grayscale, 2 grayscale + alpha, 3 RGB, 4 RGBA, 5 YUV, 6 BGRA.
        #[prost(int32, tag = "3")]
        pub colorspace: i32,
        /// PNG (or another browser format) bytes.
        #[prost(bytes = "vec", tag = "4")]
        pub encoded_image_string: Vec<u8>,
    }

    /// `Summary.Audio`: encoded audio.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Audio {
        #[prost(float, tag = "1")]
        pub sample_rate: f32,
        #[prost(int64, tag = "2")]
        pub num_channels: i64,
        #[prost(int64, tag = "3")]
        pub length_frames: i64,
        #[prost(bytes = "vec", tag = "4")]
        pub encoded_audio_string: Vec<u8>,
        /// `"audio/wav"`.
        #[prost(string, tag = "5")]
        pub content_type: String,
    }

    /// `Summary.Value`: one tagged value.
    ///
    /// Encoded by hand so that fields come out in field-number order like
    /// TensorFlow's (`tag` 1, the `value` oneof 2-6 or 8, `node_name` 7,
    /// `metadata` 9); a derived encoder writes a oneof as one block.
    #[derive(Clone, PartialEq, Debug, Default)]
    pub struct Value {
        pub tag: String,
        /// Legacy field, normally empty.
        pub node_name: String,
        pub metadata: Option<SummaryMetadata>,
        pub value: Option<value::Value>,
    }

    /// The `value` oneof of [`Value`].
    pub mod value {
        /// What a [`Value`](super::Value) holds.
        // Unboxed like prost-build's output; values are built once per write.
        #[allow(clippy::large_enum_variant)]
        #[derive(Clone, PartialEq, prost::Oneof)]
        pub enum Value {
            /// A TF1 scalar (float32).
            #[prost(float, tag = "2")]
            SimpleValue(f32),
            #[prost(bytes, tag = "3")]
            ObsoleteOldStyleHistogram(Vec<u8>),
            #[prost(message, tag = "4")]
            Image(super::Image),
            #[prost(message, tag = "5")]
            Histo(super::super::HistogramProto),
            #[prost(message, tag = "6")]
            Audio(super::Audio),
            /// A TF2 summary: a tensor interpreted by the plugin in `metadata`.
            #[prost(message, tag = "8")]
            Tensor(super::super::TensorProto),
        }

        impl Value {
            /// The field number of the set member.
            pub fn field_number(&self) -> u32 {
                match self {
                    Value::SimpleValue(_) => 2,
                    Value::ObsoleteOldStyleHistogram(_) => 3,
                    Value::Image(_) => 4,
                    Value::Histo(_) => 5,
                    Value::Audio(_) => 6,
                    Value::Tensor(_) => 8,
                }
            }
        }
    }

    impl Value {
        /// A value with a tag and content, no metadata.
        pub fn new(tag: impl Into<String>, value: value::Value) -> Value {
            Value {
                tag: tag.into(),
                node_name: String::new(),
                metadata: None,
                value: Some(value),
            }
        }

        /// Adds metadata.
        pub fn with_metadata(mut self, metadata: SummaryMetadata) -> Value {
            self.metadata = Some(metadata);
            self
        }

        /// The tensor, for TF2-style values.
        pub fn tensor(&self) -> Option<&TensorProto> {
            match &self.value {
                Some(value::Value::Tensor(t)) => Some(t),
                _ => None,
            }
        }
    }

    impl prost::Message for Value {
        fn encode_raw(&self, buf: &mut impl BufMut) {
            if !self.tag.is_empty() {
                encoding::string::encode(1, &self.tag, buf);
            }
            let oneof_after_node_name = matches!(&self.value, Some(v) if v.field_number() > 7);
            if !oneof_after_node_name {
                if let Some(v) = &self.value {
                    v.encode(buf);
                }
            }
            if !self.node_name.is_empty() {
                encoding::string::encode(7, &self.node_name, buf);
            }
            if oneof_after_node_name {
                if let Some(v) = &self.value {
                    v.encode(buf);
                }
            }
            if let Some(m) = &self.metadata {
                encoding::message::encode(9, m, buf);
            }
        }

        fn merge_field(
            &mut self,
            tag: u32,
            wire_type: WireType,
            buf: &mut impl Buf,
            ctx: DecodeContext,
        ) -> Result<(), DecodeError> {
            match tag {
                1 => encoding::string::merge(wire_type, &mut self.tag, buf, ctx),
                7 => encoding::string::merge(wire_type, &mut self.node_name, buf, ctx),
                9 => encoding::message::merge(
                    wire_type,
                    self.metadata.get_or_insert_with(Default::default),
                    buf,
                    ctx,
                ),
                2..=6 | 8 => value::Value::merge(&mut self.value, tag, wire_type, buf, ctx),
                _ => encoding::skip_field(wire_type, tag, buf, ctx),
            }
        }

        fn encoded_len(&self) -> usize {
            let mut len = 0;
            if !self.tag.is_empty() {
                len += encoding::string::encoded_len(1, &self.tag);
            }
            if !self.node_name.is_empty() {
                len += encoding::string::encoded_len(7, &self.node_name);
            }
            if let Some(v) = &self.value {
                len += v.encoded_len();
            }
            if let Some(m) = &self.metadata {
                len += encoding::message::encoded_len(9, m);
            }
            len
        }

        fn clear(&mut self) {
            *self = Value::default();
        }
    }
}

impl Summary {
    /// A summary holding `values`.
    pub fn from_values(values: Vec<summary::Value>) -> Summary {
        Summary { value: values }
    }
}

/// TensorBoard's `AudioPluginData` (plugin content of TF2 audio summaries).
#[derive(Clone, PartialEq, prost::Message)]
pub struct AudioPluginData {
    #[prost(int32, tag = "1")]
    pub version: i32,
    /// `Encoding`: 0 unknown, 11 WAV.
    #[prost(int32, tag = "2")]
    pub encoding: i32,
    #[prost(bool, tag = "3")]
    pub converted_to_tensor: bool,
}

/// `AudioPluginData.Encoding.WAV`.
pub const AUDIO_ENCODING_WAV: i32 = 11;

#[cfg(test)]
mod tests {
    use super::summary::{value, Value};
    use super::*;
    use prost::Message;

    #[test]
    fn value_fields_in_number_order() {
        let mut v = Value::new(
            "t",
            value::Value::Tensor(TensorProto::from_f32(&[], &[1.0])),
        )
        .with_metadata(SummaryMetadata::for_plugin("scalars", vec![]));
        v.node_name = "n".into();
        let bytes = v.encode_to_vec();
        // tag(1) "t", node_name(7) "n", tensor(8), metadata(9)
        assert_eq!(&bytes[..6], &[0x0a, 0x01, b't', 0x3a, 0x01, b'n']);
        assert_eq!(bytes[6], 0x42);
        assert_eq!(Value::decode(bytes.as_slice()).unwrap(), v);

        let s = Value::new("s", value::Value::SimpleValue(2.0));
        let mut with_node = s.clone();
        with_node.node_name = "n".into();
        let bytes = with_node.encode_to_vec();
        assert_eq!(
            bytes,
            [0x0a, 0x01, b's', 0x15, 0, 0, 0, 0x40, 0x3a, 0x01, b'n']
        );
        assert_eq!(Value::decode(bytes.as_slice()).unwrap(), with_node);
    }

    #[test]
    fn histogram_negative_zero_is_written() {
        let h = HistogramProto {
            min: -0.0,
            max: 0.0,
            ..Default::default()
        };
        let bytes = h.encode_to_vec();
        assert_eq!(bytes, [0x09, 0, 0, 0, 0, 0, 0, 0, 0x80]);
        let back = HistogramProto::decode(bytes.as_slice()).unwrap();
        assert!(back.min.is_sign_negative());
    }

    #[test]
    fn audio_plugin_content_matches_tensorboard() {
        let content = AudioPluginData {
            encoding: AUDIO_ENCODING_WAV,
            ..Default::default()
        };
        assert_eq!(content.encode_to_vec(), [0x10, 0x0b]);
    }
}
