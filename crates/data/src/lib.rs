//! ferroflow's input pipelines, as graph ops with runtime kernels: data
//! flows from files to the training step in Rust, on the kernel threads,
//! without the GIL.
//!
//! * [`queue`]: TF1's queues (`FIFOQueueV2`, `PaddingFIFOQueueV2`,
//!   `RandomShuffleQueueV2`, `PriorityQueueV2`) and the gradient
//!   accumulators; blocking enqueues and dequeues wait without holding a
//!   kernel thread and wake on close (see `ferroflow_runtime::blocking`).
//! * [`reader`]: the TF1 readers (`TFRecordReaderV2`, `TextLineReaderV2`,
//!   `FixedLengthRecordReaderV2`, `WholeFileReaderV2`, `IdentityReaderV2`),
//!   which take their work (file names) from a queue.
//! * [`file_ops`]: `ReadFile`, `WriteFile`, `MatchingFiles`.
//! * [`parse`]: `tf.train.Example` and `SequenceExample` parsing.
//! * [`proto`]: `DecodeProtoV2` and `EncodeProto` (`tf.io.decode_proto`,
//!   `encode_proto`): fields of any protobuf message to and from tensors.
//! * [`decode`]: `DecodeRaw`, `DecodeCSV`, base64, compression, tensor
//!   serialization.
//! * [`lookup`]: lookup tables (`HashTableV2`, `MutableHashTableV2`,
//!   `MutableDenseHashTableV2`, ...) and the ops on them
//!   (`LookupTableFindV2`, `InitializeTableFromTextFileV2`, ...).
//! * [`wav`]: `DecodeWav` and `EncodeWav` (`tf.audio`), 16-bit PCM WAV files.
//! * [`dataset`]: `tf.data`: dataset ops building a pipeline description,
//!   iterators running it (map functions are graph functions).
//!
//! [`register`] installs every op and kernel.

pub mod dataset;
pub mod decode;
pub mod file_ops;
pub mod lookup;
pub mod parse;
pub mod proto;
pub mod queue;
pub mod reader;
pub mod wav;

use std::sync::Once;

/// Registers the input-pipeline ops and their kernels (idempotent).
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        ferroflow_records::register();
        dataset::register();
        decode::register();
        file_ops::register();
        lookup::register();
        parse::register();
        proto::register();
        queue::register();
        reader::register();
        wav::register();
    });
}
