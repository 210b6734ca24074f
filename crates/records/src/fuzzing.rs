//! Entry points shared by the cargo-fuzz targets (`crates/records/fuzz`)
//! and the in-tree robustness tests. Not a stable API.

use prost::Message;

use crate::proto::{Event, Example, SequenceExample};
use crate::record::{Compression, ReadOptions, RecordReader};

/// Reads `data` as a record stream and parses every payload as an `Event`,
/// an `Example` and a `SequenceExample`. The first byte picks the
/// compression and read options; the rest is the stream. Must never panic.
pub fn read_records(data: &[u8]) -> usize {
    let Some((&selector, stream)) = data.split_first() else {
        return 0;
    };
    let compression = match selector % 3 {
        0 => Compression::None,
        1 => Compression::Zlib,
        _ => Compression::Gzip,
    };
    let options = ReadOptions {
        tolerate_truncated_tail: selector & 0x10 != 0,
        partial_header_is_eof: selector & 0x20 != 0,
    };
    let reader = RecordReader::from_bytes("fuzz", stream.to_vec(), compression, options);
    let mut count = 0;
    for record in reader {
        let Ok(payload) = record else { break };
        count += 1;
        if let Ok(event) = Event::decode(payload.as_slice()) {
            let _ = event.encode_to_vec();
        }
        if let Ok(example) = Example::decode(payload.as_slice()) {
            let _ = example.encode_to_vec();
        }
        let _ = SequenceExample::decode(payload.as_slice());
    }
    count
}

/// Decodes `data` as a `GraphDef` and imports it into an empty graph
/// (every node through op lookup, attribute conversion and shape
/// inference; nothing runs). Returns how many nodes were added. Must never
/// panic, whatever the bytes.
pub fn import_graph_def(data: &[u8]) -> usize {
    let Ok(def) = crate::graph_def::GraphDef::decode(data) else {
        return 0;
    };
    let mut graph = ferroflow_graph::Graph::new();
    crate::graph_import::import_graph_def(&mut graph, &def, &Default::default())
        .map(|nodes| nodes.len())
        .unwrap_or(0)
}

/// Reads `data` as an LMDB file and walks all its entries (see
/// [`crate::lmdb`]). Must never panic, hang or allocate past the input's
/// size; returns the entries read before the end or the first error.
pub fn read_lmdb(data: &[u8]) -> usize {
    let Ok(reader) = crate::lmdb::LmdbReader::from_bytes("fuzz.mdb", data.to_vec()) else {
        return 0;
    };
    let mut count = 0;
    for entry in reader {
        if entry.is_err() {
            break;
        }
        count += 1;
    }
    count
}
