//! TensorFlow V2 checkpoints ("tensor bundles"), read and written byte for
//! byte as TensorFlow does, and the ops that save and restore them.
//!
//! A checkpoint `P` is `P.index` (a LevelDB-style sorted table: a header
//! entry, then one `BundleEntryProto` per tensor or stored slice) plus data
//! files `P.data-00000-of-00001`, … holding the raw tensor bytes. The format
//! is described in `shared/specs/formats/checkpoint_v2.md`.
//!
//! * [`BundleReader`]: opens a checkpoint (index parsed and checked up
//!   front, data shards memory-mapped lazily), lists variables as
//!   TensorFlow does, reads tensors — whole, assembled from the slices of a
//!   partitioned variable, or any sub-slice — and verifies every CRC-32C.
//!   Corruption is a `DataLossError` naming the file and tensor; a missing
//!   checkpoint a `NotFoundError`. Nothing panics on bad bytes.
//! * [`BundleWriter`] / [`save`]: streams tensors into the data file and
//!   builds the index in memory; files are written under temporary names,
//!   fsync'ed and renamed into place (data first, index last).
//! * [`merge_bundles`]: one index over several bundles' data files (the
//!   sharded Saver's final step).
//! * [`register`]: the `SaveV2`, `RestoreV2` and `MergeV2Checkpoints` ops
//!   and kernels, plus `ShardedFilename`, the one string op of a sharded
//!   Saver's graph that is not a general string op.
//!
//! Every dtype ferroflow has is supported; the other fixed-size TensorFlow
//! dtypes (the quantized ones) are read and written as raw bytes
//! ([`BundleReader::read_raw`], [`BundleWriter::add_raw`]).

mod codec;
pub mod crc;
mod ops;
pub mod proto;
mod reader;
pub mod slice;
mod string_ops;
pub mod table;
mod writer;

#[doc(hidden)]
pub mod fuzzing;

pub use codec::{dtype_enum_name, dtype_string, element_size, RawData, RawTensor};
pub use reader::{BundleReader, VariableInfo};
pub use slice::{parse_shape_and_slice, ShapeAndSlice, TensorSlice};
pub use writer::{merge_bundles, save, BundleWriter, MergeOptions, SaveItem};

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Once;

/// `P.index`.
pub fn index_path(prefix: &Path) -> PathBuf {
    let mut s: OsString = prefix.as_os_str().to_owned();
    s.push(".index");
    PathBuf::from(s)
}

/// `P.data-SSSSS-of-NNNNN`.
pub fn data_path(prefix: &Path, shard: i32, num_shards: i32) -> PathBuf {
    let mut s: OsString = prefix.as_os_str().to_owned();
    s.push(format!(".data-{shard:05}-of-{num_shards:05}"));
    PathBuf::from(s)
}

/// Registers the checkpoint ops and their kernels (idempotent).
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        ferroflow_runtime::register_ops(ops::op_defs(), ops::kernels());
        ferroflow_runtime::register_ops(string_ops::op_defs(), string_ops::kernels());
    });
}
