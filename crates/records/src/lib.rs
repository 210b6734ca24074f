//! TFRecord files, `tf.train.Example`, TensorBoard event files and the
//! summary kernels that feed them, byte-compatible with TensorFlow.
//!
//! * [`record`]: the TFRecord container (length, masked CRC-32C of the
//!   length, payload, masked CRC-32C of the payload), uncompressed, GZIP or
//!   ZLIB. Corrupt or truncated data is a `DataLossError` that names the file
//!   and the byte offset; nothing here panics on bad input.
//! * [`lmdb`]: a read-only, bounds-checked reader of LMDB database files
//!   (the main database's entries in key order), for `LMDBReader`.
//! * [`proto`]: the protobuf messages with TensorFlow's field numbers
//!   (`Event`, `Summary`, `HistogramProto`, `Example`, `SequenceExample`,
//!   `TensorProto`, ...). Serialization is byte-identical to TensorFlow's
//!   deterministic serialization (fields in number order, map keys sorted).
//! * [`events`]: the event-file writer (`events.out.tfevents.<time>.<host>`),
//!   which queues events and writes them from a background thread.
//! * [`graph_def`]: a ferroflow graph as a `GraphDef`, in ferroflow's own
//!   form or in the one TensorFlow imports and runs: TensorFlow's op registry
//!   table (signatures, attr defaults), the TensorFlow forms of the ops only
//!   ferroflow has (other crates register theirs), and the function library.
//! * [`graph_import`]: a `GraphDef` into a ferroflow graph (the reverse),
//!   function library and stripped default attrs included.
//! * [`ops`]: the TF1 summary ops (`ScalarSummary`, `HistogramSummary`,
//!   `ImageSummary`, `AudioSummaryV2`, `TensorSummaryV2`, `MergeSummary`) as
//!   graph ops with runtime kernels; [`register`] installs them.
//! * [`summary`]: summary kernels (scalars, TF1 histograms with TensorFlow's
//!   bucket boundaries, TF2 histogram tensors, PNG images, WAV audio, text and
//!   tensor summaries with TensorBoard plugin metadata).
//!
//! Formats are described in `shared/specs/formats/tfrecord.md` and
//! `events.md`.

pub mod crc;
pub mod events;
pub mod graph_def;
pub mod graph_import;
pub mod lmdb;
pub mod ops;
pub mod proto;
pub mod record;
pub mod summary;

#[doc(hidden)]
pub mod fuzzing;

pub use events::EventFileWriter;
pub use ops::register;
pub use record::{Compression, ReadOptions, Record, RecordReader, RecordWriter};

pub use ferroflow_tensor::{Code, Error, Result};
