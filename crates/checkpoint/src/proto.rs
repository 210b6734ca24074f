//! The protobuf messages of a tensor bundle, with TensorFlow's field numbers
//! (`tensorflow/core/protobuf/tensor_bundle.proto`, `framework/tensor_shape.proto`,
//! `framework/tensor_slice.proto`, `framework/versions.proto`).
//!
//! prost emits fields in field-number order and omits proto3 defaults, which
//! is exactly what TensorFlow's serializer produces for these messages: the
//! index bytes we write are TensorFlow's.

/// `tensorflow.BundleHeaderProto`: the value of the empty key, first in every index.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BundleHeaderProto {
    /// Number of data files in the bundle.
    #[prost(int32, tag = "1")]
    pub num_shards: i32,
    /// 0 = little endian, 1 = big endian.
    #[prost(int32, tag = "2")]
    pub endianness: i32,
    #[prost(message, optional, tag = "3")]
    pub version: Option<VersionDef>,
}

/// `tensorflow.VersionDef`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct VersionDef {
    #[prost(int32, tag = "1")]
    pub producer: i32,
    #[prost(int32, tag = "2")]
    pub min_consumer: i32,
    #[prost(int32, repeated, tag = "3")]
    pub bad_consumers: Vec<i32>,
}

/// `tensorflow.BundleEntryProto`: where one tensor (or one stored slice) lives.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BundleEntryProto {
    /// TensorFlow's `DataType` enum value.
    #[prost(int32, tag = "1")]
    pub dtype: i32,
    /// Always present, even for scalars (an empty message).
    #[prost(message, optional, tag = "2")]
    pub shape: Option<TensorShapeProto>,
    /// Index `SSSSS` of the data file.
    #[prost(int32, tag = "3")]
    pub shard_id: i32,
    #[prost(int64, tag = "4")]
    pub offset: i64,
    #[prost(int64, tag = "5")]
    pub size: i64,
    /// Masked CRC-32C of the stored bytes.
    #[prost(fixed32, tag = "6")]
    pub crc32c: u32,
    /// Only on the full-tensor entry of a tensor saved in slices.
    #[prost(message, repeated, tag = "7")]
    pub slices: Vec<TensorSliceProto>,
}

/// `tensorflow.TensorShapeProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorShapeProto {
    #[prost(message, repeated, tag = "2")]
    pub dim: Vec<Dim>,
    #[prost(bool, tag = "3")]
    pub unknown_rank: bool,
}

/// `tensorflow.TensorShapeProto.Dim`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Dim {
    #[prost(int64, tag = "1")]
    pub size: i64,
    #[prost(string, tag = "2")]
    pub name: String,
}

impl TensorShapeProto {
    pub fn from_dims(dims: &[i64]) -> TensorShapeProto {
        TensorShapeProto {
            dim: dims
                .iter()
                .map(|&size| Dim {
                    size,
                    name: String::new(),
                })
                .collect(),
            unknown_rank: false,
        }
    }

    pub fn dims(&self) -> Vec<i64> {
        self.dim.iter().map(|d| d.size).collect()
    }
}

/// `tensorflow.TensorSliceProto`: one extent per dimension.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorSliceProto {
    #[prost(message, repeated, tag = "1")]
    pub extent: Vec<Extent>,
}

/// `tensorflow.TensorSliceProto.Extent`. A missing `length` means the whole
/// dimension.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Extent {
    #[prost(int64, tag = "1")]
    pub start: i64,
    #[prost(oneof = "extent::HasLength", tags = "2")]
    pub has_length: Option<extent::HasLength>,
}

pub mod extent {
    /// The `has_length` oneof: emitted whenever set, even when 0.
    #[derive(Clone, Copy, PartialEq, Eq, prost::Oneof)]
    pub enum HasLength {
        #[prost(int64, tag = "2")]
        Length(i64),
    }
}

pub use prost::Message;
