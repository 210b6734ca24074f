//! A read-only, bounds-checked reader of LMDB database files (`data.mdb`),
//! for `tf.compat.v1.LMDBReader`: it walks the main database's B+tree and
//! yields its `(key, value)` entries in tree (key) order.
//!
//! LMDB files are treated as untrusted input. liblmdb itself trusts its file
//! (it maps it and follows page numbers unchecked), so this module reads the
//! format on its own, page by page with positioned reads:
//!
//! * Pages 0 and 1 are meta pages; the valid one with the larger transaction
//!   id is current. It gives the page size, the last page number and the main
//!   database's record (flags, tree depth, entry count, root page).
//! * Every page starts with a 16-byte header: page number (u64), padding
//!   (u16), flags (u16: 1 branch, 2 leaf, 4 overflow, 8 meta) and either the
//!   bounds of the free space (`lower`, `upper`: u16 each) or, on overflow
//!   pages, the number of pages of the run (u32). Branch and leaf pages keep
//!   an array of u16 node offsets after the header (`(lower - 16) / 2` of
//!   them); each node is a u16 triple (`lo`, `hi`, `flags`), a u16 key size
//!   and the key. A branch node's child page is `lo | hi << 16 | flags << 32`;
//!   a leaf node's value size is `lo | hi << 16` and its value follows the
//!   key, or lives on a run of overflow pages (node flag 1, the value holds
//!   the first page's number) after that page's header.
//!
//! Checked: magic and version, page size, every page number against the file
//! and the meta page's last page, each page's own number and kind against
//! where the tree expects it, node offsets and sizes against the page, the
//! depth of every leaf, overflow runs against the file, and the number of
//! entries against the meta page. Each page may be read once per walk (a
//! budget of the file's page count), so a crafted file with cycles or shared
//! subtrees ends with an error instead of running on; no allocation is larger
//! than the file. Anything wrong is a `DataLossError` naming the file.
//! Databases with sorted duplicates (`MDB_DUPSORT`) and files whose main
//! database holds named sub-databases are refused (`UnimplementedError`).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use ferroflow_tensor::{Error, Result};

const PAGE_HEADER: usize = 16;
const NODE_HEADER: usize = 8;
const META_SIZE: usize = 136;
const MAGIC: u32 = 0xBEEF_C0DE;
const DATA_VERSION: u32 = 1;
/// liblmdb's cursor stack depth: no valid tree is deeper.
const MAX_DEPTH: usize = 32;
const NO_PAGE: u64 = u64::MAX;

const P_BRANCH: u16 = 0x01;
const P_LEAF: u16 = 0x02;
const P_OVERFLOW: u16 = 0x04;
const P_META: u16 = 0x08;
/// Bits liblmdb may leave set on a page it wrote (dirty, loose, keep).
const P_TRANSIENT: u16 = 0x10 | 0x4000 | 0x8000;

const F_BIGDATA: u16 = 0x01;
const F_SUBDATA: u16 = 0x02;
const F_DUPDATA: u16 = 0x04;

const MDB_REVERSEKEY: u16 = 0x02;
const MDB_DUPSORT: u16 = 0x04;
const MDB_INTEGERKEY: u16 = 0x08;
const MDB_DUPFIXED: u16 = 0x10;
const MDB_INTEGERDUP: u16 = 0x20;
const MDB_REVERSEDUP: u16 = 0x40;

enum Backing {
    File { file: File, len: u64 },
    Bytes(Vec<u8>),
}

impl Backing {
    fn len(&self) -> u64 {
        match self {
            Backing::File { len, .. } => *len,
            Backing::Bytes(b) => b.len() as u64,
        }
    }

    /// Fills `buf` from `offset`; the caller has checked the range against
    /// [`len`](Self::len), so a short read means the file shrank.
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        match self {
            Backing::File { file, .. } => {
                file.seek(SeekFrom::Start(offset))?;
                file.read_exact(buf)
            }
            Backing::Bytes(b) => {
                let start = usize::try_from(offset).unwrap_or(usize::MAX);
                let src = start
                    .checked_add(buf.len())
                    .and_then(|end| b.get(start..end))
                    .ok_or(std::io::ErrorKind::UnexpectedEof)?;
                buf.copy_from_slice(src);
                Ok(())
            }
        }
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// The main database's record and what the walk needs of the meta page.
#[derive(Clone, Copy, Debug)]
struct Meta {
    txnid: u64,
    last_page: u64,
    flags: u16,
    depth: u16,
    entries: u64,
    root: u64,
}

/// A branch or leaf page being walked: its bytes, node count and the next
/// node to visit.
struct Frame {
    page: Vec<u8>,
    nodes: usize,
    next: usize,
    leaf: bool,
}

/// Iterates over the entries of an LMDB file's main database in key order
/// (see the module docs).
pub struct LmdbReader {
    name: String,
    src: Backing,
    page_size: usize,
    /// Pages the walk may still read (each page of the file at most once).
    budget: u64,
    /// Pages of the committed tree: `last_page + 1`, within the file.
    pages: u64,
    meta: Meta,
    stack: Vec<Frame>,
    started: bool,
    produced: u64,
    done: bool,
}

impl std::fmt::Debug for LmdbReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LmdbReader")
            .field("name", &self.name)
            .field("page_size", &self.page_size)
            .field("meta", &self.meta)
            .field("produced", &self.produced)
            .finish()
    }
}

impl LmdbReader {
    /// Opens an LMDB file, or the `data.mdb` of an LMDB directory (what
    /// liblmdb opens for a directory). A missing file is `NotFoundError`.
    pub fn open(path: &str) -> Result<LmdbReader> {
        let p = Path::new(path);
        let file_path = if p.is_dir() {
            p.join("data.mdb")
        } else {
            p.to_path_buf()
        };
        let shown = file_path.display().to_string();
        let file = File::open(&file_path).map_err(|e| io_error(&shown, &e))?;
        let len = file.metadata().map_err(|e| io_error(&shown, &e))?.len();
        LmdbReader::new(shown, Backing::File { file, len })
    }

    /// Reads an LMDB file held in memory; `name` names it in errors.
    pub fn from_bytes(name: impl Into<String>, data: Vec<u8>) -> Result<LmdbReader> {
        LmdbReader::new(name.into(), Backing::Bytes(data))
    }

    fn new(name: String, mut src: Backing) -> Result<LmdbReader> {
        let corrupt = |what: String| Error::data_loss(format!("{name}: corrupt LMDB file: {what}"));
        let len = src.len();
        if len < (PAGE_HEADER + META_SIZE) as u64 {
            return Err(corrupt(format!(
                "{len} bytes, too short for a meta page (truncated?)"
            )));
        }
        let mut first = vec![0u8; PAGE_HEADER + META_SIZE];
        src.read_at(0, &mut first)
            .map_err(|e| corrupt(format!("cannot read the first meta page: {e}")))?;
        let page_size = match parse_meta(&first, 0) {
            Ok((_, psize)) => psize,
            Err(what) => return Err(corrupt(format!("meta page 0: {what}"))),
        };
        let meta0 = parse_meta(&first, 0).map(|(m, _)| m);
        let mut second = vec![0u8; PAGE_HEADER + META_SIZE];
        let meta1 = if len >= (page_size + PAGE_HEADER + META_SIZE) as u64 {
            src.read_at(page_size as u64, &mut second)
                .map_err(|e| corrupt(format!("cannot read the second meta page: {e}")))?;
            parse_meta(&second, 1).and_then(|(m, psize)| {
                if psize == page_size {
                    Ok(m)
                } else {
                    Err(format!(
                        "page size {psize} differs from meta page 0's {page_size}"
                    ))
                }
            })
        } else {
            Err("past the end of the file".to_string())
        };
        let meta = match (meta0, meta1) {
            (Ok(a), Ok(b)) => {
                if b.txnid > a.txnid {
                    b
                } else {
                    a
                }
            }
            (Ok(a), Err(_)) => a,
            (Err(_), Ok(b)) => b,
            (Err(_), Err(e)) => return Err(corrupt(format!("meta page 1: {e}"))),
        };
        let file_pages = len / page_size as u64;
        if meta.last_page < 1 || meta.last_page >= file_pages {
            return Err(corrupt(format!(
                "the meta page's last page is {} but the file holds {file_pages} pages of \
                 {page_size} bytes (truncated?)",
                meta.last_page
            )));
        }
        if meta.flags & (MDB_DUPSORT | MDB_DUPFIXED | MDB_INTEGERDUP | MDB_REVERSEDUP) != 0 {
            return Err(Error::unimplemented(format!(
                "{name}: the LMDB main database has sorted duplicates (MDB_DUPSORT), which \
                 ferroflow's LMDB reader does not read"
            )));
        }
        if meta.flags & !(MDB_REVERSEKEY | MDB_INTEGERKEY) != 0 {
            return Err(corrupt(format!(
                "unknown main database flags {:#x}",
                meta.flags
            )));
        }
        if meta.root == NO_PAGE {
            if meta.entries != 0 || meta.depth != 0 {
                return Err(corrupt(format!(
                    "no root page but {} entries and depth {}",
                    meta.entries, meta.depth
                )));
            }
        } else if meta.depth == 0 || usize::from(meta.depth) > MAX_DEPTH {
            return Err(corrupt(format!(
                "tree depth {} (1 to {MAX_DEPTH} expected)",
                meta.depth
            )));
        }
        let pages = meta.last_page + 1;
        Ok(LmdbReader {
            name,
            src,
            page_size,
            budget: pages,
            pages,
            meta,
            stack: Vec::new(),
            started: false,
            produced: 0,
            done: false,
        })
    }

    /// The file's name (or the path of the `data.mdb` read).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The number of entries the meta page records.
    pub fn entries(&self) -> u64 {
        self.meta.entries
    }

    /// The page size the file was written with.
    pub fn page_size(&self) -> usize {
        self.page_size
    }

    fn corrupt(&self, what: impl std::fmt::Display) -> Error {
        Error::data_loss(format!("{}: corrupt LMDB file: {what}", self.name))
    }

    /// Checks `pgno` (a tree or overflow page, not a meta page) and spends
    /// `count` pages of the walk's budget.
    fn claim(&mut self, pgno: u64, count: u64) -> Result<u64> {
        if pgno < 2 || pgno >= self.pages || count > self.pages - pgno {
            return Err(self.corrupt(format!(
                "page {pgno} (+{count}) is outside the database's {} pages",
                self.pages
            )));
        }
        if count > self.budget {
            return Err(self.corrupt(format!(
                "page {pgno} is reached more than once (the tree is not a tree)"
            )));
        }
        self.budget -= count;
        Ok(pgno * self.page_size as u64)
    }

    fn read(&mut self, offset: u64, buf: &mut [u8], pgno: u64) -> Result<()> {
        let name = &self.name;
        self.src.read_at(offset, buf).map_err(|e| {
            Error::data_loss(format!(
                "{name}: corrupt LMDB file: cannot read page {pgno}: {e}"
            ))
        })
    }

    /// Reads page `pgno` as a branch or leaf page at `level` (0 = root).
    fn load(&mut self, pgno: u64, level: usize) -> Result<Frame> {
        let offset = self.claim(pgno, 1)?;
        let mut page = vec![0u8; self.page_size];
        self.read(offset, &mut page, pgno)?;
        let want_leaf = level + 1 == usize::from(self.meta.depth);
        let own = u64_at(&page, 0);
        let flags = u16_at(&page, 10) & !P_TRANSIENT;
        let want = if want_leaf { P_LEAF } else { P_BRANCH };
        if own != pgno {
            return Err(self.corrupt(format!("page {pgno} says it is page {own}")));
        }
        if flags != want {
            return Err(self.corrupt(format!(
                "page {pgno} at tree level {level} of {} has flags {flags:#x}, expected a {} page",
                self.meta.depth,
                if want_leaf { "leaf" } else { "branch" }
            )));
        }
        let lower = usize::from(u16_at(&page, 12));
        let upper = usize::from(u16_at(&page, 14));
        if lower < PAGE_HEADER
            || !(lower - PAGE_HEADER).is_multiple_of(2)
            || lower > upper
            || upper > self.page_size
        {
            return Err(self.corrupt(format!(
                "page {pgno} has free space bounds {lower}..{upper}"
            )));
        }
        let nodes = (lower - PAGE_HEADER) / 2;
        if nodes == 0 {
            return Err(self.corrupt(format!("page {pgno} has no nodes")));
        }
        for i in 0..nodes {
            let at = usize::from(u16_at(&page, PAGE_HEADER + 2 * i));
            if at < upper || at + NODE_HEADER > self.page_size {
                return Err(self.corrupt(format!(
                    "node {i} of page {pgno} starts at {at}, outside the page's nodes \
                     ({upper}..{})",
                    self.page_size
                )));
            }
            let key_end = at + NODE_HEADER + usize::from(u16_at(&page, at + 6));
            if key_end > self.page_size {
                return Err(self.corrupt(format!(
                    "the key of node {i} of page {pgno} runs past the page"
                )));
            }
        }
        Ok(Frame {
            page,
            nodes,
            next: 0,
            leaf: want_leaf,
        })
    }

    /// The entry of node `i` of a leaf page (offsets checked by `load`).
    fn entry(&mut self, page: &[u8], i: usize, pgno_hint: u64) -> Result<(Vec<u8>, Vec<u8>)> {
        let at = usize::from(u16_at(page, PAGE_HEADER + 2 * i));
        let size = usize::from(u16_at(page, at)) | (usize::from(u16_at(page, at + 2)) << 16);
        let flags = u16_at(page, at + 4);
        let key_start = at + NODE_HEADER;
        let key_end = key_start + usize::from(u16_at(page, at + 6));
        let key = page[key_start..key_end].to_vec();
        if flags & (F_SUBDATA | F_DUPDATA) != 0 {
            return Err(Error::unimplemented(format!(
                "{}: the LMDB main database holds {} (key {:?}), which ferroflow's LMDB \
                 reader does not read",
                self.name,
                if flags & F_SUBDATA != 0 {
                    "a named sub-database"
                } else {
                    "sorted duplicates"
                },
                String::from_utf8_lossy(&key)
            )));
        }
        if flags & !F_BIGDATA != 0 {
            return Err(self.corrupt(format!(
                "node {i} of page {pgno_hint} has unknown flags {flags:#x}"
            )));
        }
        if flags & F_BIGDATA == 0 {
            let end = key_end + size;
            if end > self.page_size {
                return Err(self.corrupt(format!(
                    "the value of node {i} of page {pgno_hint} ({size} bytes) runs past the page"
                )));
            }
            return Ok((key, page[key_end..end].to_vec()));
        }
        if key_end + 8 > self.page_size {
            return Err(self.corrupt(format!(
                "the overflow page number of node {i} of page {pgno_hint} runs past the page"
            )));
        }
        let first = u64_at(page, key_end);
        let offset = self.claim(first, 1)?;
        let mut header = [0u8; PAGE_HEADER];
        self.read(offset, &mut header, first)?;
        let own = u64_at(&header, 0);
        let kind = u16_at(&header, 10) & !P_TRANSIENT;
        let count = u64::from(u32_at(&header, 12));
        if own != first || kind != P_OVERFLOW || count == 0 {
            return Err(self.corrupt(format!(
                "page {first}, the value of node {i} of page {pgno_hint}, is not an overflow \
                 page (number {own}, flags {kind:#x}, {count} pages)"
            )));
        }
        // The first page is claimed; claim the rest of the run.
        if count > 1 {
            self.claim(first + 1, count - 1)?;
        }
        let room = count as u128 * self.page_size as u128 - PAGE_HEADER as u128;
        if size as u128 > room {
            return Err(self.corrupt(format!(
                "a {size}-byte value does not fit the {count} overflow pages at page {first}"
            )));
        }
        let mut value = vec![0u8; size];
        self.read(offset + PAGE_HEADER as u64, &mut value, first)?;
        Ok((key, value))
    }

    /// The next `(key, value)` entry, `None` after the last one.
    pub fn next_entry(&mut self) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        if self.done {
            return Ok(None);
        }
        if !self.started {
            self.started = true;
            if self.meta.root != NO_PAGE {
                let root = self.load(self.meta.root, 0)?;
                self.stack.push(root);
            }
        }
        loop {
            let Some(top) = self.stack.last_mut() else {
                self.done = true;
                if self.produced != self.meta.entries {
                    return Err(self.corrupt(format!(
                        "the tree holds {} entries, the meta page says {}",
                        self.produced, self.meta.entries
                    )));
                }
                return Ok(None);
            };
            if top.next >= top.nodes {
                self.stack.pop();
                continue;
            }
            let i = top.next;
            top.next += 1;
            let pgno = u64_at(&top.page, 0);
            if top.leaf {
                // Take the page out while the entry may read overflow pages.
                let page = std::mem::take(&mut top.page);
                let got = self.entry(&page, i, pgno);
                if let Some(top) = self.stack.last_mut() {
                    top.page = page;
                }
                let entry = got?;
                self.produced += 1;
                return Ok(Some(entry));
            }
            let page = &top.page;
            let at = usize::from(u16_at(page, PAGE_HEADER + 2 * i));
            let child = u64::from(u16_at(page, at))
                | (u64::from(u16_at(page, at + 2)) << 16)
                | (u64::from(u16_at(page, at + 4)) << 32);
            let level = self.stack.len();
            let frame = self.load(child, level)?;
            self.stack.push(frame);
        }
    }
}

impl Iterator for LmdbReader {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_entry() {
            Ok(Some(e)) => Some(Ok(e)),
            Ok(None) => None,
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

/// Parses meta page `index` from its first bytes: the meta and page size.
fn parse_meta(b: &[u8], index: u64) -> std::result::Result<(Meta, usize), String> {
    let flags = u16_at(b, 10) & !P_TRANSIENT;
    if u64_at(b, 0) != index || flags != P_META {
        return Err(format!(
            "not a meta page (number {}, flags {flags:#x})",
            u64_at(b, 0)
        ));
    }
    let m = PAGE_HEADER;
    let magic = u32_at(b, m);
    if magic != MAGIC {
        return Err(format!("bad magic {magic:#x} (not an LMDB file)"));
    }
    let version = u32_at(b, m + 4);
    if version != DATA_VERSION {
        return Err(format!(
            "format version {version}, ferroflow reads version {DATA_VERSION}"
        ));
    }
    // mm_dbs[0] (the free-page database) keeps the page size in its pad.
    let page_size = u32_at(b, m + 24) as usize;
    if !page_size.is_power_of_two() || !(512..=65536).contains(&page_size) {
        return Err(format!("page size {page_size}"));
    }
    let main = m + 24 + 48;
    Ok((
        Meta {
            flags: u16_at(b, main + 4),
            depth: u16_at(b, main + 6),
            entries: u64_at(b, main + 32),
            root: u64_at(b, main + 40),
            last_page: u64_at(b, m + 120),
            txnid: u64_at(b, m + 128),
        },
        page_size,
    ))
}

fn io_error(path: &str, e: &std::io::Error) -> Error {
    // TensorFlow's wording: the kind alone for the errors it names, the whole error otherwise.
    match e.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied => {
            Error::io(e, format_args!("{path}; {}", e.kind()))
        }
        _ => Error::io(e, format_args!("{path}; {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PS: usize = 4096;

    /// A meta page with the main database's record.
    fn meta_page(
        index: u64,
        txnid: u64,
        last: u64,
        flags: u16,
        depth: u16,
        entries: u64,
        root: u64,
    ) -> Vec<u8> {
        let mut p = vec![0u8; PS];
        p[0..8].copy_from_slice(&index.to_le_bytes());
        p[10..12].copy_from_slice(&P_META.to_le_bytes());
        let m = PAGE_HEADER;
        p[m..m + 4].copy_from_slice(&MAGIC.to_le_bytes());
        p[m + 4..m + 8].copy_from_slice(&DATA_VERSION.to_le_bytes());
        p[m + 24..m + 28].copy_from_slice(&(PS as u32).to_le_bytes());
        p[m + 24 + 40..m + 24 + 48].copy_from_slice(&NO_PAGE.to_le_bytes());
        let d = m + 72;
        p[d + 4..d + 6].copy_from_slice(&flags.to_le_bytes());
        p[d + 6..d + 8].copy_from_slice(&depth.to_le_bytes());
        p[d + 32..d + 40].copy_from_slice(&entries.to_le_bytes());
        p[d + 40..d + 48].copy_from_slice(&root.to_le_bytes());
        p[m + 120..m + 128].copy_from_slice(&last.to_le_bytes());
        p[m + 128..m + 136].copy_from_slice(&txnid.to_le_bytes());
        p
    }

    /// A branch or leaf page of `nodes` (flags, lo, hi, key, data).
    /// A node: leaf flags, `lo | hi << 16`, a branch's `flags` word (its
    /// child's high bits), key, data.
    type Node<'a> = (u16, u32, u16, &'a [u8], &'a [u8]);

    fn node_page(pgno: u64, kind: u16, nodes: &[Node<'_>]) -> Vec<u8> {
        let mut p = vec![0u8; PS];
        p[0..8].copy_from_slice(&pgno.to_le_bytes());
        p[10..12].copy_from_slice(&kind.to_le_bytes());
        let mut upper = PS;
        for (i, (flags, lohi, extra, key, data)) in nodes.iter().enumerate() {
            let size = NODE_HEADER + key.len() + data.len();
            upper -= size + (size & 1);
            p[upper..upper + 2].copy_from_slice(&(*lohi as u16).to_le_bytes());
            p[upper + 2..upper + 4].copy_from_slice(&((*lohi >> 16) as u16).to_le_bytes());
            let f = if kind == P_BRANCH { *extra } else { *flags };
            p[upper + 4..upper + 6].copy_from_slice(&f.to_le_bytes());
            p[upper + 6..upper + 8].copy_from_slice(&(key.len() as u16).to_le_bytes());
            p[upper + 8..upper + 8 + key.len()].copy_from_slice(key);
            p[upper + 8 + key.len()..upper + size].copy_from_slice(data);
            let ptr = PAGE_HEADER + 2 * i;
            p[ptr..ptr + 2].copy_from_slice(&(upper as u16).to_le_bytes());
        }
        let lower = PAGE_HEADER + 2 * nodes.len();
        p[12..14].copy_from_slice(&(lower as u16).to_le_bytes());
        p[14..16].copy_from_slice(&(upper as u16).to_le_bytes());
        p
    }

    fn file(pages: &[Vec<u8>]) -> Vec<u8> {
        pages.concat()
    }

    fn read_all(data: Vec<u8>) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        LmdbReader::from_bytes("test.mdb", data)?.collect()
    }

    /// root branch (page 2) over leaves 3 and 4; leaf 4's second value on
    /// overflow pages 5-6.
    fn two_level() -> Vec<Vec<u8>> {
        let big: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        let mut over = vec![0u8; 2 * PS];
        over[0..8].copy_from_slice(&5u64.to_le_bytes());
        over[10..12].copy_from_slice(&P_OVERFLOW.to_le_bytes());
        over[12..16].copy_from_slice(&2u32.to_le_bytes());
        over[PAGE_HEADER..PAGE_HEADER + big.len()].copy_from_slice(&big);
        vec![
            meta_page(0, 0, 1, 0, 0, 0, NO_PAGE),
            meta_page(1, 1, 6, 0, 2, 4, 2),
            node_page(2, P_BRANCH, &[(0, 3, 0, b"", b""), (0, 4, 0, b"c", b"")]),
            node_page(3, P_LEAF, &[(0, 1, 0, b"a", b"1"), (0, 2, 0, b"b", b"22")]),
            node_page(
                4,
                P_LEAF,
                &[
                    (0, 1, 0, b"c", b"3"),
                    (F_BIGDATA, 5000, 0, b"d", &5u64.to_le_bytes()),
                ],
            ),
            over[..PS].to_vec(),
            over[PS..].to_vec(),
        ]
    }

    #[test]
    fn walks_a_two_level_tree_with_an_overflow_value() {
        let got = read_all(file(&two_level())).unwrap();
        let keys: Vec<&[u8]> = got.iter().map(|(k, _)| k.as_slice()).collect();
        assert_eq!(keys, [b"a", b"b", b"c", b"d"]);
        assert_eq!(got[1].1, b"22");
        assert_eq!(got[3].1.len(), 5000);
        assert!(got[3]
            .1
            .iter()
            .enumerate()
            .all(|(i, &b)| b == (i % 251) as u8));
    }

    #[test]
    fn empty_database_has_no_entries() {
        let data = file(&[
            meta_page(0, 0, 1, 0, 0, 0, NO_PAGE),
            meta_page(1, 1, 1, 0, 0, 0, NO_PAGE),
        ]);
        assert!(read_all(data).unwrap().is_empty());
    }

    fn data_loss(data: Vec<u8>) -> String {
        match read_all(data) {
            Err(e) if e.code() == Some(ferroflow_tensor::Code::DataLoss) => e.to_string(),
            other => panic!("expected DataLoss, got {other:?}"),
        }
    }

    #[test]
    fn corrupt_files_are_data_loss_naming_the_file() {
        let good = two_level();
        // Truncated: the last overflow page is gone.
        let mut cut = file(&good);
        cut.truncate(6 * PS);
        assert!(data_loss(cut).contains("test.mdb"));
        // A child pointer to the root (a cycle), and to a meta page.
        for child in [2u32, 1, 99] {
            let mut pages = good.clone();
            pages[2] = node_page(
                2,
                P_BRANCH,
                &[(0, 3, 0, b"", b""), (0, child, 0, b"c", b"")],
            );
            let msg = data_loss(file(&pages));
            assert!(msg.contains("corrupt LMDB file"), "{msg}");
        }
        // A node offset past the page, an oversized inline value.
        let mut pages = good.clone();
        pages[3][PAGE_HEADER..PAGE_HEADER + 2].copy_from_slice(&(PS as u16 - 4).to_le_bytes());
        data_loss(file(&pages));
        let mut pages = good.clone();
        pages[3] = node_page(
            3,
            P_LEAF,
            &[(0, 60000, 0, b"a", b"1"), (0, 2, 0, b"b", b"22")],
        );
        data_loss(file(&pages));
        // An overflow value larger than its run.
        let mut pages = good.clone();
        pages[4] = node_page(
            4,
            P_LEAF,
            &[
                (0, 1, 0, b"c", b"3"),
                (F_BIGDATA, 9000, 0, b"d", &5u64.to_le_bytes()),
            ],
        );
        data_loss(file(&pages));
        // Wrong entry count, wrong depth, bad magic in both metas.
        let mut pages = good.clone();
        pages[1] = meta_page(1, 1, 6, 0, 2, 5, 2);
        assert!(data_loss(file(&pages)).contains("5"));
        let mut pages = good.clone();
        pages[1] = meta_page(1, 1, 6, 0, 3, 4, 2);
        data_loss(file(&pages));
        let mut pages = good.clone();
        pages[0][PAGE_HEADER] ^= 1;
        pages[1][PAGE_HEADER] ^= 1;
        assert!(data_loss(file(&pages)).contains("magic"));
        data_loss(vec![0u8; 100]);
    }

    #[test]
    fn dupsort_and_sub_databases_are_refused() {
        let mut pages = two_level();
        pages[1] = meta_page(1, 1, 6, MDB_DUPSORT, 2, 4, 2);
        let e = read_all(file(&pages)).unwrap_err();
        assert_eq!(e.code(), Some(ferroflow_tensor::Code::Unimplemented));
        assert!(e.to_string().contains("MDB_DUPSORT"));
        let mut pages = two_level();
        pages[3] = node_page(
            3,
            P_LEAF,
            &[(0, 1, 0, b"a", b"1"), (F_SUBDATA, 2, 0, b"b", b"22")],
        );
        let e = read_all(file(&pages)).unwrap_err();
        assert_eq!(e.code(), Some(ferroflow_tensor::Code::Unimplemented));
        assert!(e.to_string().contains("sub-database"), "{e}");
    }

    #[test]
    fn fixtures_match_liblmdb() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/lmdb");
        let digits: Vec<_> = LmdbReader::open(&format!("{dir}/digits.mdb"))
            .unwrap()
            .collect::<Result<_>>()
            .unwrap();
        let want: Vec<(Vec<u8>, Vec<u8>)> = (0..10u8)
            .map(|i| (vec![b'0' + i], vec![b'a' + i]))
            .collect();
        assert_eq!(digits, want);
        let tree = LmdbReader::open(&format!("{dir}/tree.mdb")).unwrap();
        assert_eq!(tree.entries(), 72);
        let tree: Vec<_> = tree.collect::<Result<_>>().unwrap();
        assert_eq!(tree.len(), 72);
        assert!(tree.windows(2).all(|w| w[0].0 < w[1].0));
        let mut big: Vec<usize> = tree
            .iter()
            .map(|(_, v)| v.len())
            .filter(|&n| n > 64)
            .collect();
        big.sort();
        assert_eq!(big, [4100, 8200]);
        let e = LmdbReader::open(&format!("{dir}/missing.mdb")).unwrap_err();
        assert_eq!(e.code(), Some(ferroflow_tensor::Code::NotFound));
    }
}
