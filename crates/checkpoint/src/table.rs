//! The `.index` file: TensorFlow's copy of the LevelDB table (SSTable)
//! format, restricted the way tensor bundles use it — no filter block, an
//! empty metaindex, bytewise key order, no compression.
//!
//! [`TableBuilder`] follows TensorFlow's writer step by step (block size,
//! restart intervals, shortened index keys), so the bytes it produces are
//! TensorFlow's. [`read_table`] checks everything it touches: footer magic,
//! block bounds, masked block CRCs, entry framing and key order. Corrupt
//! input is a `DataLossError` naming the file and what is wrong, never a
//! panic.

use crate::crc::{crc32c_extend, mask, unmask};
use ferroflow_tensor::{bail, ensure, Error, Result};

/// Data blocks are cut at 256 KiB (TensorFlow's bundle option).
pub const BLOCK_SIZE: usize = 262_144;
/// A restart point every 16 entries in data blocks.
pub const RESTART_INTERVAL: usize = 16;
/// Footer: two block handles padded to 40 bytes, then the 8-byte magic.
pub const FOOTER_LEN: usize = 48;
/// `0xdb4775248b80fb57`, stored low word first.
pub const MAGIC: u64 = 0xdb47_7524_8b80_fb57;
/// Bytes after each block: compression type and masked CRC.
const TRAILER_LEN: usize = 5;
const MAX_HANDLE_LEN: usize = 20;

pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Decodes a varint at `*pos`, advancing it; `None` if truncated or longer
/// than `max_bytes`.
pub fn get_varint(buf: &[u8], pos: &mut usize, max_bytes: usize) -> Option<u64> {
    let mut v = 0u64;
    for i in 0..max_bytes {
        let b = *buf.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Offset and size of a block's contents (trailer excluded).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockHandle {
    pub offset: u64,
    pub size: u64,
}

impl BlockHandle {
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_varint(out, self.offset);
        put_varint(out, self.size);
    }

    fn decode(buf: &[u8], pos: &mut usize) -> Option<BlockHandle> {
        let offset = get_varint(buf, pos, 10)?;
        let size = get_varint(buf, pos, 10)?;
        Some(BlockHandle { offset, size })
    }
}

/// Accumulates one block's entries with prefix-compressed keys.
struct BlockBuilder {
    restart_interval: usize,
    buffer: Vec<u8>,
    restarts: Vec<u32>,
    counter: usize,
    last_key: Vec<u8>,
}

impl BlockBuilder {
    fn new(restart_interval: usize) -> BlockBuilder {
        BlockBuilder {
            restart_interval,
            buffer: Vec::new(),
            restarts: vec![0],
            counter: 0,
            last_key: Vec::new(),
        }
    }

    fn is_empty(&self) -> bool {
        self.buffer.is_empty()
    }

    fn size_estimate(&self) -> usize {
        self.buffer.len() + 4 * self.restarts.len() + 4
    }

    fn add(&mut self, key: &[u8], value: &[u8]) {
        let mut shared = 0;
        if self.counter < self.restart_interval {
            let n = self.last_key.len().min(key.len());
            while shared < n && self.last_key[shared] == key[shared] {
                shared += 1;
            }
        } else {
            self.restarts.push(self.buffer.len() as u32);
            self.counter = 0;
        }
        let non_shared = key.len() - shared;
        put_varint(&mut self.buffer, shared as u64);
        put_varint(&mut self.buffer, non_shared as u64);
        put_varint(&mut self.buffer, value.len() as u64);
        self.buffer.extend_from_slice(&key[shared..]);
        self.buffer.extend_from_slice(value);
        self.last_key.truncate(shared);
        self.last_key.extend_from_slice(&key[shared..]);
        self.counter += 1;
    }

    /// The finished contents (entries, restart array, restart count); resets.
    fn finish(&mut self) -> Vec<u8> {
        let mut out = std::mem::take(&mut self.buffer);
        for r in &self.restarts {
            out.extend_from_slice(&r.to_le_bytes());
        }
        out.extend_from_slice(&(self.restarts.len() as u32).to_le_bytes());
        self.restarts = vec![0];
        self.counter = 0;
        self.last_key.clear();
        out
    }
}

/// LevelDB's `FindShortestSeparator` for the bytewise comparator.
fn shortest_separator(start: &[u8], limit: &[u8]) -> Vec<u8> {
    let n = start.len().min(limit.len());
    let mut i = 0;
    while i < n && start[i] == limit[i] {
        i += 1;
    }
    if i < n {
        let b = start[i];
        if b < 0xff && b + 1 < limit[i] {
            let mut out = start[..=i].to_vec();
            out[i] = b + 1;
            return out;
        }
    }
    start.to_vec()
}

/// LevelDB's `FindShortSuccessor` for the bytewise comparator.
fn short_successor(key: &[u8]) -> Vec<u8> {
    match key.iter().position(|&b| b != 0xff) {
        Some(i) => {
            let mut out = key[..=i].to_vec();
            out[i] += 1;
            out
        }
        None => key.to_vec(),
    }
}

/// Builds a table in memory (an index is small next to the data it describes).
pub struct TableBuilder {
    out: Vec<u8>,
    data_block: BlockBuilder,
    index_block: BlockBuilder,
    last_key: Vec<u8>,
    num_entries: usize,
    pending_handle: Option<BlockHandle>,
}

impl Default for TableBuilder {
    fn default() -> Self {
        TableBuilder::new()
    }
}

impl TableBuilder {
    pub fn new() -> TableBuilder {
        TableBuilder {
            out: Vec::new(),
            data_block: BlockBuilder::new(RESTART_INTERVAL),
            index_block: BlockBuilder::new(1),
            last_key: Vec::new(),
            num_entries: 0,
            pending_handle: None,
        }
    }

    /// Adds an entry. Keys must arrive in strictly increasing bytewise order
    /// (callers add from a `BTreeMap`).
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        debug_assert!(self.num_entries == 0 || key > self.last_key.as_slice());
        if self.num_entries > 0 && key.len() + value.len() >= 2 * BLOCK_SIZE {
            self.flush();
        }
        if let Some(handle) = self.pending_handle.take() {
            let sep = shortest_separator(&self.last_key, key);
            let mut enc = Vec::with_capacity(MAX_HANDLE_LEN);
            handle.encode(&mut enc);
            self.index_block.add(&sep, &enc);
        }
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.num_entries += 1;
        self.data_block.add(key, value);
        if self.data_block.size_estimate() >= BLOCK_SIZE {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.data_block.is_empty() {
            return;
        }
        let contents = self.data_block.finish();
        self.pending_handle = Some(self.write_block(&contents));
    }

    fn write_block(&mut self, contents: &[u8]) -> BlockHandle {
        let handle = BlockHandle {
            offset: self.out.len() as u64,
            size: contents.len() as u64,
        };
        self.out.extend_from_slice(contents);
        let crc = crc32c_extend(crc32c::crc32c(contents), &[0]);
        self.out.push(0);
        self.out.extend_from_slice(&mask(crc).to_le_bytes());
        handle
    }

    /// Writes the last data block, the metaindex, the index and the footer;
    /// returns the file's bytes.
    pub fn finish(mut self) -> Vec<u8> {
        self.flush();
        let metaindex = BlockBuilder::new(RESTART_INTERVAL).finish();
        let metaindex_handle = self.write_block(&metaindex);
        if let Some(handle) = self.pending_handle.take() {
            let key = short_successor(&self.last_key);
            let mut enc = Vec::with_capacity(MAX_HANDLE_LEN);
            handle.encode(&mut enc);
            self.index_block.add(&key, &enc);
        }
        let index = self.index_block.finish();
        let index_handle = self.write_block(&index);
        let mut footer = Vec::with_capacity(FOOTER_LEN);
        metaindex_handle.encode(&mut footer);
        index_handle.encode(&mut footer);
        footer.resize(2 * MAX_HANDLE_LEN, 0);
        footer.extend_from_slice(&(MAGIC as u32).to_le_bytes());
        footer.extend_from_slice(&((MAGIC >> 32) as u32).to_le_bytes());
        self.out.extend_from_slice(&footer);
        self.out
    }
}

/// Reads every entry of a table, in key order. `file` names the file in errors.
pub fn read_table(file: &str, buf: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let corrupt = |what: String| Error::data_loss(format!("{file}: {what}"));
    if buf.len() < FOOTER_LEN {
        return Err(corrupt(format!(
            "not an sstable (file is {} bytes, shorter than the {FOOTER_LEN}-byte footer)",
            buf.len()
        )));
    }
    let footer = &buf[buf.len() - FOOTER_LEN..];
    let magic_lo = u32::from_le_bytes(footer[40..44].try_into().expect("4 bytes"));
    let magic_hi = u32::from_le_bytes(footer[44..48].try_into().expect("4 bytes"));
    if (u64::from(magic_hi) << 32 | u64::from(magic_lo)) != MAGIC {
        return Err(corrupt("not an sstable (bad magic number)".into()));
    }
    let mut pos = 0;
    let (Some(_metaindex), Some(index_handle)) = (
        BlockHandle::decode(footer, &mut pos),
        BlockHandle::decode(footer, &mut pos),
    ) else {
        return Err(corrupt("bad block handle in the footer".into()));
    };
    if pos > 2 * MAX_HANDLE_LEN {
        return Err(corrupt("bad block handle in the footer".into()));
    }
    let table_end = buf.len() - FOOTER_LEN;
    let index = read_block(file, &buf[..table_end], index_handle, "index")?;
    let mut out: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for (_, handle_bytes) in parse_block(file, &index, "index")? {
        let mut p = 0;
        let handle = BlockHandle::decode(&handle_bytes, &mut p)
            .filter(|_| p == handle_bytes.len())
            .ok_or_else(|| corrupt("bad block handle in the index block".into()))?;
        let block = read_block(file, &buf[..table_end], handle, "data")?;
        for (key, value) in parse_block(file, &block, "data")? {
            if let Some((last, _)) = out.last() {
                if key <= *last {
                    return Err(corrupt(format!(
                        "keys out of order ({:?} after {:?})",
                        String::from_utf8_lossy(&key),
                        String::from_utf8_lossy(last)
                    )));
                }
            }
            out.push((key, value));
        }
    }
    Ok(out)
}

/// The verified contents of the block at `handle`.
fn read_block(file: &str, buf: &[u8], handle: BlockHandle, kind: &str) -> Result<Vec<u8>> {
    let start = usize::try_from(handle.offset).ok();
    let end = start.and_then(|s| {
        usize::try_from(handle.size)
            .ok()
            .and_then(|n| s.checked_add(n))
    });
    let (Some(start), Some(end)) = (start, end) else {
        bail!(data_loss, "{file}: {kind} block handle out of range");
    };
    if end.checked_add(TRAILER_LEN).is_none_or(|e| e > buf.len()) {
        bail!(
            data_loss,
            "{file}: truncated {kind} block (offset {start}, {} bytes, file holds {})",
            handle.size,
            buf.len() + FOOTER_LEN
        );
    }
    let contents = &buf[start..end];
    let kind_byte = buf[end];
    let stored = u32::from_le_bytes(buf[end + 1..end + 5].try_into().expect("4 bytes"));
    let actual = crc32c_extend(crc32c::crc32c(contents), &[kind_byte]);
    ensure!(
        unmask(stored) == actual,
        data_loss,
        "{file}: block checksum mismatch in the {kind} block at offset {start}"
    );
    match kind_byte {
        0 => Ok(contents.to_vec()),
        1 => Err(Error::unimplemented(format!(
            "{file}: the {kind} block at offset {start} is Snappy-compressed, which ferroflow \
             does not read (TensorFlow never writes compressed bundle indexes)"
        ))),
        t => Err(Error::data_loss(format!(
            "{file}: bad block type {t} for the {kind} block at offset {start}"
        ))),
    }
}

/// Decodes a block's entries (prefix-compressed keys) in order.
fn parse_block(file: &str, block: &[u8], kind: &str) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let corrupt = |what: &str| Error::data_loss(format!("{file}: bad {kind} block: {what}"));
    if block.len() < 4 {
        return Err(corrupt("shorter than its restart count"));
    }
    let num_restarts =
        u32::from_le_bytes(block[block.len() - 4..].try_into().expect("4 bytes")) as usize;
    let max_restarts = (block.len() - 4) / 4;
    if num_restarts == 0 || num_restarts > max_restarts {
        return Err(corrupt("restart count out of range"));
    }
    let limit = block.len() - 4 - 4 * num_restarts;
    for i in 0..num_restarts {
        let at = limit + 4 * i;
        let r = u32::from_le_bytes(block[at..at + 4].try_into().expect("4 bytes")) as usize;
        if r > limit || (i == 0 && r != 0 && limit > 0) {
            return Err(corrupt("restart point out of range"));
        }
    }
    let mut entries = Vec::new();
    let mut key: Vec<u8> = Vec::new();
    let mut pos = 0;
    while pos < limit {
        let data = &block[..limit];
        let (Some(shared), Some(non_shared), Some(value_len)) = (
            get_varint(data, &mut pos, 5),
            get_varint(data, &mut pos, 5),
            get_varint(data, &mut pos, 5),
        ) else {
            return Err(corrupt("truncated entry header"));
        };
        let (shared, non_shared, value_len) =
            (shared as usize, non_shared as usize, value_len as usize);
        if shared > key.len() || (entries.is_empty() && shared != 0) {
            return Err(corrupt("entry shares more bytes than the previous key has"));
        }
        let Some(end) = pos
            .checked_add(non_shared)
            .and_then(|k| k.checked_add(value_len))
            .filter(|&e| e <= limit)
        else {
            return Err(corrupt("entry runs past the end of the block"));
        };
        key.truncate(shared);
        key.extend_from_slice(&data[pos..pos + non_shared]);
        let value = data[pos + non_shared..end].to_vec();
        pos = end;
        entries.push((key.clone(), value));
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_and_successors() {
        assert_eq!(shortest_separator(b"abc", b"abe"), b"abd");
        assert_eq!(shortest_separator(b"abc", b"abd"), b"abc");
        assert_eq!(shortest_separator(b"ab", b"abc"), b"ab");
        assert_eq!(shortest_separator(b"a\xff", b"b"), b"a\xff");
        assert_eq!(short_successor(b"step/.ATTRIBUTES/VARIABLE_VALUE"), b"t");
        assert_eq!(short_successor(b"zz_full_slice"), b"{");
        assert_eq!(short_successor(b"\xff\xff"), b"\xff\xff");
        assert_eq!(short_successor(b"\xff\x01"), b"\xff\x02");
    }

    #[test]
    fn worked_example_from_the_spec() {
        // checkpoint_v2.md §3.9: the complete 153-byte index of a 2-shard bundle.
        let mut b = TableBuilder::new();
        b.add(b"", &[0x08, 0x02, 0x1a, 0x02, 0x08, 0x01]);
        b.add(
            b"dev0_var",
            &[
                0x08, 0x01, 0x12, 0x04, 0x12, 0x02, 0x08, 0x02, 0x28, 0x08, 0x35, 0x59, 0x3c, 0xe5,
                0x35,
            ],
        );
        b.add(
            b"dev1_var",
            &[
                0x08, 0x09, 0x12, 0x04, 0x12, 0x02, 0x08, 0x02, 0x18, 0x01, 0x28, 0x10, 0x35, 0x02,
                0xcc, 0x6b, 0x93,
            ],
        );
        let bytes = b.finish();
        assert_eq!(bytes.len(), 153);
        assert_eq!(&bytes[0x44..0x49], &[0x00, 0x97, 0xba, 0x73, 0xec]);
        assert_eq!(
            &bytes[0x49..0x56],
            &[0, 0, 0, 0, 1, 0, 0, 0, 0x00, 0xc0, 0xf2, 0xa1, 0xb0]
        );
        assert_eq!(&bytes[0x56..0x5c], &[0x00, 0x01, 0x02, b'e', 0x00, 0x44]);
        assert_eq!(&bytes[0x64..0x69], &[0x00, 0x10, 0xb0, 0x02, 0xb8]);
        assert_eq!(&bytes[0x69..0x6d], &[0x49, 0x08, 0x56, 0x0e]);
        assert_eq!(
            &bytes[145..],
            &[0x57, 0xfb, 0x80, 0x8b, 0x24, 0x75, 0x47, 0xdb]
        );
        let entries = read_table("t", &bytes).unwrap();
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[2].0, b"dev1_var");
    }

    #[test]
    fn many_entries_span_blocks_and_restarts() {
        let mut b = TableBuilder::new();
        let value = vec![7u8; 1000];
        let keys: Vec<Vec<u8>> = (0..1000)
            .map(|i| format!("key/{i:06}").into_bytes())
            .collect();
        for k in &keys {
            b.add(k, &value);
        }
        let bytes = b.finish();
        let entries = read_table("t", &bytes).unwrap();
        assert_eq!(entries.len(), 1000);
        for (e, k) in entries.iter().zip(&keys) {
            assert_eq!(&e.0, k);
            assert_eq!(e.1, value);
        }
    }

    #[test]
    fn an_oversized_entry_gets_its_own_block() {
        let mut b = TableBuilder::new();
        b.add(b"a", b"small");
        let big = vec![1u8; 2 * BLOCK_SIZE];
        b.add(b"b", &big);
        b.add(b"c", b"small");
        let entries = read_table("t", &b.finish()).unwrap();
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[1].1.len(), 2 * BLOCK_SIZE);
    }
}
