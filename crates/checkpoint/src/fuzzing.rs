//! Entry points shared by the cargo-fuzz target (`crates/checkpoint/fuzz`)
//! and the in-tree corruption tests. Not a stable API.

use crate::reader::BundleReader;
use std::path::Path;

/// Parses `data` as an index table (must never panic).
pub fn parse_index(data: &[u8]) -> usize {
    crate::table::read_table("fuzz.index", data).map_or(0, |e| e.len())
}

/// Opens the bundle at `prefix` and reads everything it lists: every
/// variable whole, every raw entry, the listing and the debug string.
/// Returns how many tensors read successfully; must never panic.
pub fn read_everything(prefix: &Path) -> usize {
    let Ok(r) = BundleReader::open(prefix) else {
        return 0;
    };
    let _ = r.debug_string();
    let _ = r.verify();
    let mut ok = 0;
    for v in r.variables() {
        if r.read_raw(v.name.as_bytes()).is_ok() {
            ok += 1;
        }
        let _ = r.read(v.name.as_bytes());
    }
    let keys: Vec<Vec<u8>> = r.entries().map(|(k, _)| k.to_vec()).collect();
    for k in keys {
        let _ = r.read_raw(&k);
    }
    ok
}

/// Writes `index` and `data` as a one-shard bundle in `dir` and reads it
/// with [`read_everything`].
pub fn read_bundle_bytes(dir: &Path, index: &[u8], data: &[u8]) -> usize {
    let prefix = dir.join("fuzz");
    if std::fs::write(crate::index_path(&prefix), index).is_err()
        || std::fs::write(crate::data_path(&prefix, 0, 1), data).is_err()
    {
        return 0;
    }
    read_everything(&prefix)
}
