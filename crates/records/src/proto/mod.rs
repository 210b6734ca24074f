//! Protobuf messages with TensorFlow's field numbers, derived by hand with
//! prost (no `protoc` at build time).
//!
//! Every message serializes with fields in field-number order and map keys
//! sorted bytewise, which is TensorFlow's deterministic serialization; the
//! few messages where a derived encoder would differ from protobuf's own
//! (`Summary.Value`'s oneof/`node_name` order, `-0.0` doubles in
//! `HistogramProto`, map entries with default keys or values) implement
//! `prost::Message` by hand.

mod event_proto;
mod example_proto;
mod summary_proto;
mod tensor_proto;

pub use event_proto::{
    event, Event, LogLevel, LogMessage, SessionLog, SessionStatus, SourceMetadata,
    TaggedRunMetadata,
};
pub use example_proto::{
    feature, BytesList, Example, Feature, FeatureList, FeatureLists, Features, FloatList,
    Int64List, SequenceExample,
};
pub use summary_proto::{
    summary, AudioPluginData, DataClass, HistogramProto, PluginData, Summary, SummaryMetadata,
    AUDIO_ENCODING_WAV,
};
pub use tensor_proto::{DataType, Dim, TensorProto, TensorShapeProto};

/// Re-exported so callers can encode and decode without naming prost.
pub use prost::Message;
