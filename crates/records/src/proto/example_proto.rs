//! `tf.train.Example` and friends (`tensorflow/core/example/*.proto`).
//!
//! Map fields are `BTreeMap`s, so they serialize with keys sorted bytewise:
//! the bytes equal TensorFlow's `SerializeToString(deterministic=True)`.
//! Map entries always carry both key and value (an empty `Feature` is
//! `12 00`), as protobuf's own encoders do. Parsing accepts any order, and
//! the last entry wins for a duplicated key.

use std::collections::BTreeMap;

use prost::bytes::{Buf, BufMut};
use prost::encoding::{self, DecodeContext, WireType};
use prost::{DecodeError, Message};

/// `tensorflow.BytesList`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BytesList {
    #[prost(bytes = "vec", repeated, tag = "1")]
    pub value: Vec<Vec<u8>>,
}

/// `tensorflow.FloatList` (packed float32).
#[derive(Clone, PartialEq, prost::Message)]
pub struct FloatList {
    #[prost(float, repeated, tag = "1")]
    pub value: Vec<f32>,
}

/// `tensorflow.Int64List` (packed varints; negatives take 10 bytes).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Int64List {
    #[prost(int64, repeated, tag = "1")]
    pub value: Vec<i64>,
}

/// `tensorflow.Feature`: one list, or none (which parsers treat as missing).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Feature {
    #[prost(oneof = "feature::Kind", tags = "1, 2, 3")]
    pub kind: Option<feature::Kind>,
}

/// Nested types of [`Feature`].
pub mod feature {
    /// The `kind` oneof of [`Feature`](super::Feature).
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub enum Kind {
        #[prost(message, tag = "1")]
        BytesList(super::BytesList),
        #[prost(message, tag = "2")]
        FloatList(super::FloatList),
        #[prost(message, tag = "3")]
        Int64List(super::Int64List),
    }
}

impl Feature {
    /// A `bytes_list` feature.
    pub fn bytes<I, B>(values: I) -> Feature
    where
        I: IntoIterator<Item = B>,
        B: Into<Vec<u8>>,
    {
        Feature {
            kind: Some(feature::Kind::BytesList(BytesList {
                value: values.into_iter().map(Into::into).collect(),
            })),
        }
    }

    /// A `float_list` feature.
    pub fn floats(values: impl Into<Vec<f32>>) -> Feature {
        Feature {
            kind: Some(feature::Kind::FloatList(FloatList {
                value: values.into(),
            })),
        }
    }

    /// An `int64_list` feature.
    pub fn int64s(values: impl Into<Vec<i64>>) -> Feature {
        Feature {
            kind: Some(feature::Kind::Int64List(Int64List {
                value: values.into(),
            })),
        }
    }
}

/// Encodes `map<string, M>` with both key and value in every entry.
fn encode_map<M: Message>(tag: u32, map: &BTreeMap<String, M>, buf: &mut impl BufMut) {
    for (key, value) in map {
        encoding::encode_key(tag, WireType::LengthDelimited, buf);
        encoding::encode_varint(entry_len(key, value) as u64, buf);
        encoding::string::encode(1, key, buf);
        encoding::message::encode(2, value, buf);
    }
}

fn entry_len<M: Message>(key: &String, value: &M) -> usize {
    encoding::string::encoded_len(1, key) + encoding::message::encoded_len(2, value)
}

fn map_encoded_len<M: Message>(tag: u32, map: &BTreeMap<String, M>) -> usize {
    map.iter()
        .map(|(k, v)| {
            let len = entry_len(k, v);
            encoding::key_len(tag) + encoding::encoded_len_varint(len as u64) + len
        })
        .sum()
}

fn merge_map<M: Message + Default>(
    wire_type: WireType,
    map: &mut BTreeMap<String, M>,
    buf: &mut impl Buf,
    ctx: DecodeContext,
) -> Result<(), DecodeError> {
    encoding::check_wire_type(WireType::LengthDelimited, wire_type)?;
    encoding::btree_map::merge(
        encoding::string::merge,
        encoding::message::merge,
        map,
        buf,
        ctx,
    )
}

/// `tensorflow.Features`: named features.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct Features {
    pub feature: BTreeMap<String, Feature>,
}

impl Message for Features {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        encode_map(1, &self.feature, buf);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        match tag {
            1 => merge_map(wire_type, &mut self.feature, buf, ctx),
            _ => encoding::skip_field(wire_type, tag, buf, ctx),
        }
    }

    fn encoded_len(&self) -> usize {
        map_encoded_len(1, &self.feature)
    }

    fn clear(&mut self) {
        self.feature.clear();
    }
}

impl<K: Into<String>> FromIterator<(K, Feature)> for Features {
    fn from_iter<T: IntoIterator<Item = (K, Feature)>>(iter: T) -> Self {
        Features {
            feature: iter.into_iter().map(|(k, v)| (k.into(), v)).collect(),
        }
    }
}

/// `tensorflow.Example`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Example {
    /// Unset serializes to zero bytes; an empty `Features` to `0A 00`.
    #[prost(message, optional, tag = "1")]
    pub features: Option<Features>,
}

impl Example {
    /// An example with the given features.
    pub fn from_features<K: Into<String>>(
        features: impl IntoIterator<Item = (K, Feature)>,
    ) -> Self {
        Example {
            features: Some(features.into_iter().collect()),
        }
    }

    /// The feature named `key`, if present.
    pub fn feature(&self, key: &str) -> Option<&Feature> {
        self.features.as_ref().and_then(|f| f.feature.get(key))
    }
}

/// `tensorflow.FeatureList`: one feature per time step.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FeatureList {
    #[prost(message, repeated, tag = "1")]
    pub feature: Vec<Feature>,
}

/// `tensorflow.FeatureLists`: named feature lists.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct FeatureLists {
    pub feature_list: BTreeMap<String, FeatureList>,
}

impl Message for FeatureLists {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        encode_map(1, &self.feature_list, buf);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        match tag {
            1 => merge_map(wire_type, &mut self.feature_list, buf, ctx),
            _ => encoding::skip_field(wire_type, tag, buf, ctx),
        }
    }

    fn encoded_len(&self) -> usize {
        map_encoded_len(1, &self.feature_list)
    }

    fn clear(&mut self) {
        self.feature_list.clear();
    }
}

/// `tensorflow.SequenceExample`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SequenceExample {
    #[prost(message, optional, tag = "1")]
    pub context: Option<Features>,
    #[prost(message, optional, tag = "2")]
    pub feature_lists: Option<FeatureLists>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The annotated example of the format spec (§3.1), built in a scrambled
    /// order: serialization sorts the keys and keeps empty values.
    #[test]
    fn spec_example_bytes() {
        let ex = Example::from_features([
            ("zeta", Feature::int64s(vec![1, -1, 300])),
            ("mid", Feature::bytes([b"abc".to_vec(), vec![]])),
            ("empty", Feature::default()),
            ("alpha", Feature::floats(vec![0.5, 2.0])),
        ]);
        let bytes = ex.encode_to_vec();
        assert_eq!(
            hex(&bytes),
            concat!(
                "0a4f",
                "0a15",
                "0a05616c706861",
                "120c",
                "120a",
                "0a080000003f00000040",
                "0a09",
                "0a05656d707479",
                "1200",
                "0a10",
                "0a036d6964",
                "1209",
                "0a07",
                "0a03616263",
                "0a00",
                "0a19",
                "0a047a657461",
                "1211",
                "1a0f",
                "0a0d01ffffffffffffffffff01ac02",
            )
        );
        assert_eq!(Example::decode(bytes.as_slice()).unwrap(), ex);
    }

    #[test]
    fn empty_example_and_empty_key() {
        assert!(Example::default().encode_to_vec().is_empty());
        assert_eq!(
            Example {
                features: Some(Features::default())
            }
            .encode_to_vec(),
            [0x0a, 0x00]
        );
        let ex = Example::from_features([("", Feature::default())]);
        let bytes = ex.encode_to_vec();
        assert_eq!(bytes, [0x0a, 0x06, 0x0a, 0x04, 0x0a, 0x00, 0x12, 0x00]);
        assert_eq!(Example::decode(bytes.as_slice()).unwrap(), ex);
    }

    #[test]
    fn duplicate_key_last_wins_and_unpacked_accepted() {
        // features { feature { key: "dup" value { int64_list { value: 1 } } }
        //            feature { key: "dup" value { int64_list { value: 2 } } } }
        // with the int64 list written unpacked (08 xx).
        let entry = |v: u8| {
            vec![
                0x0a, 0x0b, 0x0a, 0x03, b'd', b'u', b'p', 0x12, 0x04, 0x1a, 0x02, 0x08, v,
            ]
        };
        let mut features = entry(1);
        features.extend(entry(2));
        let mut bytes = vec![0x0a, features.len() as u8];
        bytes.extend(features);
        let ex = Example::decode(bytes.as_slice()).unwrap();
        assert_eq!(ex.feature("dup"), Some(&Feature::int64s(vec![2])));
    }

    #[test]
    fn sequence_example_spec_bytes() {
        let ex = SequenceExample {
            context: Some(Features::from_iter([("len", Feature::int64s(vec![2]))])),
            feature_lists: Some(FeatureLists {
                feature_list: [(
                    "tok".to_string(),
                    FeatureList {
                        feature: vec![
                            Feature::bytes([b"a".to_vec()]),
                            Feature::bytes([b"b".to_vec()]),
                        ],
                    },
                )]
                .into_iter()
                .collect(),
            }),
        };
        assert_eq!(
            hex(&ex.encode_to_vec()),
            concat!(
                "0a0e0a0c0a036c656e12051a030a0102",
                "12170a150a03746f6b120e0a050a030a01610a050a030a0162"
            )
        );
    }
}
