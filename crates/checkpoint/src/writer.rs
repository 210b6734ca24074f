//! Writing a bundle, TensorFlow's way and crash-safe.
//!
//! Tensors stream into a temporary data file in the order they are added;
//! entries collect in a sorted map and become the index at the end. Both
//! files are written under temporary names in the target directory
//! (`<file>.tempstate<random>`), fsync'ed, then renamed into place — data
//! first, index last — so a crash while saving leaves any previous
//! checkpoint with the same prefix readable. The index is the commit
//! marker: a reader only looks at data files an index names.

use crate::codec::{element_size, tensor_bytes, write_strings};
use crate::crc::{crc32c_par, mask};
use crate::proto::{BundleEntryProto, BundleHeaderProto, Message, TensorShapeProto, VersionDef};
use crate::reader::{entry_shape, io_error, key_str, read_index};
use crate::slice::{encode_slice_key, TensorSlice};
use crate::table::TableBuilder;
use crate::{data_path, index_path};
use ferroflow_tensor::{bail, ensure, Data, Error, Result, Tensor};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::hash::{BuildHasher, Hasher};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Checksums are computed in parallel when a save holds at least this many bytes.
const PARALLEL_BYTES: usize = 1 << 20;

/// A random 64-bit number for temporary file names (std's hasher keys are
/// seeded from the OS).
fn random_u64() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish()
}

/// `path` with `.tempstate<random>` appended, as TensorFlow names its
/// temporary files.
fn temp_path(path: &Path) -> PathBuf {
    let mut s: OsString = path.as_os_str().to_owned();
    s.push(format!(".tempstate{}", random_u64()));
    PathBuf::from(s)
}

fn parent_dir(prefix: &Path) -> PathBuf {
    match prefix.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Whether a save makes its files durable (fsync of the data, the index and
/// the directory) before and after renaming them into place. Yes, unless
/// the environment variable `FERROFLOW_CHECKPOINT_SYNC` is `0` when the
/// save starts: then the files only reach the page cache (TensorFlow's own
/// behaviour, which never fsyncs a checkpoint). Renames stay atomic either
/// way, so a process killed mid-save still leaves the previous checkpoint;
/// only a machine crash can then lose the newest one.
pub(crate) fn sync_enabled() -> bool {
    std::env::var_os("FERROFLOW_CHECKPOINT_SYNC").is_none_or(|v| v != "0")
}

/// A durable save hands the data file to the disk in pieces of this many
/// bytes while it is being written (see [`start_writeback`]).
const WRITE_BEHIND_BYTES: u64 = 16 << 20;

/// Asks the kernel to start writing `len` bytes of `file` from `offset` back
/// to disk without waiting for it (Linux `sync_file_range` with
/// `SYNC_FILE_RANGE_WRITE`). A durable save does this for each piece of the
/// data file as soon as it is written, so the disk's writes overlap the
/// copying of the following tensors and the closing fsync only waits for the
/// tail: a durable save then takes about as long as the slower of the two
/// instead of their sum. Best effort: an error here leaves the work to the
/// fsync, which still decides whether the save succeeded.
#[cfg(target_os = "linux")]
fn start_writeback(file: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    if let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) {
        // SAFETY: a plain system call on an open descriptor; it reads no
        // memory of ours.
        unsafe {
            libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_file: &File, _offset: u64, _len: u64) {}

/// Makes renames in `dir` durable (best effort: not every filesystem lets
/// a directory be fsync'ed).
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Writes `bytes` to a fresh temporary file next to `path`, fsyncs it when
/// `sync` and returns its name.
fn write_temp(path: &Path, bytes: &[u8], sync: bool) -> Result<PathBuf> {
    let tmp = temp_path(path);
    let res = (|| {
        let mut f = File::options().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        if sync {
            f.sync_all()?;
        }
        Ok(())
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_error(&tmp, "cannot write the checkpoint index", e));
    }
    Ok(tmp)
}

fn header(num_shards: i32, version: Option<VersionDef>) -> BundleHeaderProto {
    BundleHeaderProto {
        num_shards,
        endianness: 0,
        version: Some(version.unwrap_or(VersionDef {
            producer: 1,
            min_consumer: 0,
            bad_consumers: Vec::new(),
        })),
    }
}

/// The index file's bytes for a header and sorted entries.
fn build_index(
    header: &BundleHeaderProto,
    entries: &BTreeMap<Vec<u8>, BundleEntryProto>,
) -> Vec<u8> {
    let mut table = TableBuilder::new();
    table.add(b"", &header.encode_to_vec());
    for (key, entry) in entries {
        table.add(key, &entry.encode_to_vec());
    }
    table.finish()
}

/// One tensor of a save: the whole tensor, or one slice of a larger one.
#[derive(Clone, Debug)]
pub struct SaveItem<'a> {
    pub name: &'a [u8],
    pub tensor: &'a Tensor,
    /// `(full shape, slice)` for a slice of a partitioned tensor.
    pub slice: Option<(Vec<i64>, TensorSlice)>,
}

/// Writes a single-shard bundle.
///
/// ```no_run
/// # use ferroflow_tensor::Tensor;
/// let mut w = ferroflow_checkpoint::BundleWriter::new("/tmp/ckpt/model.ckpt")?;
/// w.add("w", &Tensor::vector(vec![1.0f32, 2.0]))?;
/// w.finish()?;
/// # Ok::<(), ferroflow_tensor::Error>(())
/// ```
pub struct BundleWriter {
    prefix: PathBuf,
    data_tmp: PathBuf,
    data: Option<BufWriter<File>>,
    offset: u64,
    entries: BTreeMap<Vec<u8>, BundleEntryProto>,
    /// Whether this save is durable ([`sync_enabled`] when it started).
    sync: bool,
    /// Bytes of the data file whose writeback has been started.
    written_back: u64,
}

impl BundleWriter {
    /// Starts a bundle at `prefix`, creating its directory if needed.
    pub fn new(prefix: impl AsRef<Path>) -> Result<BundleWriter> {
        let prefix = prefix.as_ref().to_path_buf();
        let dir = parent_dir(&prefix);
        std::fs::create_dir_all(&dir)
            .map_err(|e| io_error(&dir, "cannot create the checkpoint directory", e))?;
        let data_tmp = temp_path(&data_path(&prefix, 0, 1));
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(&data_tmp)
            .map_err(|e| io_error(&data_tmp, "cannot create the checkpoint data file", e))?;
        Ok(BundleWriter {
            prefix,
            data_tmp,
            data: Some(BufWriter::with_capacity(1 << 20, file)),
            offset: 0,
            entries: BTreeMap::new(),
            sync: sync_enabled(),
            written_back: 0,
        })
    }

    pub fn prefix(&self) -> &Path {
        &self.prefix
    }

    fn check_new_key(&self, key: &[u8]) -> Result<()> {
        if key.is_empty() {
            bail!(
                invalid_argument,
                "a checkpoint tensor cannot have an empty name (the empty key is the bundle header)"
            );
        }
        if self.entries.contains_key(key) {
            bail!(
                invalid_argument,
                "Adding duplicate key: {} to checkpoint {}",
                key_str(key),
                self.prefix.display()
            );
        }
        Ok(())
    }

    /// Appends `bytes` to the data file at `self.offset` (the caller then
    /// advances the offset). A durable save starts the writeback of every
    /// full [`WRITE_BEHIND_BYTES`] written so far.
    fn write(&mut self, bytes: &[u8]) -> Result<()> {
        let out = self.data.as_mut().ok_or_else(|| {
            Error::failed_precondition(format!(
                "the writer of checkpoint {} is closed",
                self.prefix.display()
            ))
        })?;
        let fail = |e| io_error(&self.data_tmp, "cannot write checkpoint data", e);
        if !self.sync {
            return out.write_all(bytes).map_err(fail);
        }
        let mut end = self.offset;
        for piece in bytes.chunks(WRITE_BEHIND_BYTES as usize) {
            out.write_all(piece).map_err(fail)?;
            end += piece.len() as u64;
            if end - self.written_back >= WRITE_BEHIND_BYTES {
                out.flush().map_err(fail)?;
                start_writeback(out.get_ref(), self.written_back, end - self.written_back);
                self.written_back = end;
            }
        }
        Ok(())
    }

    /// Appends a tensor's bytes to the data file; returns its entry.
    fn append(&mut self, t: &Tensor, crc: Option<u32>) -> Result<BundleEntryProto> {
        let offset = self.offset;
        let (size, masked) = match t.data() {
            Data::Str(items) => {
                let out = self
                    .data
                    .as_mut()
                    .ok_or_else(|| Error::failed_precondition("the checkpoint writer is closed"))?;
                write_strings(out, items)
                    .map_err(|e| io_error(&self.data_tmp, "cannot write checkpoint data", e))?
            }
            _ => {
                let bytes = tensor_bytes(t).expect("fixed-size dtype");
                let masked = crc.unwrap_or_else(|| mask(crc32c_par(bytes)));
                self.write(bytes)?;
                (bytes.len() as u64, masked)
            }
        };
        self.offset += size;
        Ok(BundleEntryProto {
            dtype: t.dtype().as_enum(),
            shape: Some(TensorShapeProto::from_dims(&t.shape().to_i64())),
            shard_id: 0,
            offset: offset as i64,
            size: size as i64,
            crc32c: masked,
            slices: Vec::new(),
        })
    }

    /// Adds a whole tensor under `name`.
    pub fn add(&mut self, name: impl AsRef<[u8]>, t: &Tensor) -> Result<()> {
        self.add_with_crc(name.as_ref(), t, None).map(|_| ())
    }

    /// Adds a whole tensor; returns the key of its entry.
    fn add_with_crc(&mut self, name: &[u8], t: &Tensor, crc: Option<u32>) -> Result<Vec<u8>> {
        self.check_new_key(name)?;
        let entry = self.append(t, crc)?;
        self.entries.insert(name.to_vec(), entry);
        Ok(name.to_vec())
    }

    /// Adds raw little-endian elements of any fixed-size TensorFlow dtype
    /// (e.g. complex64, which ferroflow's tensors do not hold).
    pub fn add_raw(
        &mut self,
        name: impl AsRef<[u8]>,
        dtype: i32,
        shape: &[i64],
        bytes: &[u8],
    ) -> Result<()> {
        let name = name.as_ref();
        self.check_new_key(name)?;
        let elem = element_size(dtype).ok_or_else(|| {
            Error::invalid_argument(format!(
                "add_raw: dtype {} of '{}' is not a fixed-size dtype",
                crate::codec::dtype_string(dtype),
                key_str(name)
            ))
        })?;
        let n = shape.iter().try_fold(1usize, |acc, &d| {
            usize::try_from(d).ok().and_then(|d| acc.checked_mul(d))
        });
        ensure!(
            n.and_then(|n| n.checked_mul(elem)) == Some(bytes.len()),
            invalid_argument,
            "add_raw: {} bytes do not hold a {} tensor of shape {shape:?}",
            bytes.len(),
            crate::codec::dtype_string(dtype)
        );
        let offset = self.offset;
        let masked = mask(crc32c_par(bytes));
        self.write(bytes)?;
        self.offset += bytes.len() as u64;
        self.entries.insert(
            name.to_vec(),
            BundleEntryProto {
                dtype,
                shape: Some(TensorShapeProto::from_dims(shape)),
                shard_id: 0,
                offset: offset as i64,
                size: bytes.len() as i64,
                crc32c: masked,
                slices: Vec::new(),
            },
        );
        Ok(())
    }

    /// Adds `t` as the slice `slice` of the tensor `full_name` of shape
    /// `full_shape` (TensorFlow's `AddSlice`). A slice covering the whole
    /// tensor is stored as a plain tensor, as TensorFlow does.
    pub fn add_slice(
        &mut self,
        full_name: impl AsRef<[u8]>,
        full_shape: &[i64],
        slice: &TensorSlice,
        t: &Tensor,
    ) -> Result<()> {
        self.add_slice_with_crc(full_name.as_ref(), full_shape, slice, t, None)
            .map(|_| ())
    }

    /// Adds a slice; returns the key of the entry holding its bytes.
    fn add_slice_with_crc(
        &mut self,
        full_name: &[u8],
        full_shape: &[i64],
        slice: &TensorSlice,
        t: &Tensor,
        crc: Option<u32>,
    ) -> Result<Vec<u8>> {
        let name = key_str(full_name);
        let slice_shape = slice.slice_shape(full_shape)?;
        ensure!(
            t.shape().to_i64() == slice_shape,
            invalid_argument,
            "slice {slice} of '{name}' (full shape {full_shape:?}) has shape {slice_shape:?}, \
                 but the tensor given for it has shape {}",
            t.shape()
        );
        if slice.is_full() || slice_shape == full_shape {
            return self.add_with_crc(full_name, t, crc);
        }
        let dtype = t.dtype().as_enum();
        if let Some(full) = self.entries.get(full_name) {
            if full.slices.is_empty() {
                bail!(
                    invalid_argument,
                    "Adding duplicate key: {name} (already saved whole, now as slice {slice})"
                );
            }
            if full.dtype != dtype || entry_shape(full) != full_shape {
                bail!(
                    invalid_argument,
                    "slices of '{name}' disagree: {} {:?} was saved, now {} {full_shape:?}",
                    crate::codec::dtype_string(full.dtype),
                    entry_shape(full),
                    crate::codec::dtype_string(dtype)
                );
            }
        }
        let slice_key = encode_slice_key(full_name, slice);
        self.check_new_key(&slice_key)?;
        let entry = self.append(t, crc)?;
        self.entries.insert(slice_key.clone(), entry);
        let full = self
            .entries
            .entry(full_name.to_vec())
            .or_insert_with(|| BundleEntryProto {
                dtype,
                shape: Some(TensorShapeProto::from_dims(full_shape)),
                ..Default::default()
            });
        full.slices.push(slice.to_proto());
        Ok(slice_key)
    }

    fn add_item(&mut self, item: &SaveItem<'_>, crc: Option<u32>) -> Result<Vec<u8>> {
        match &item.slice {
            None => self.add_with_crc(item.name, item.tensor, crc),
            Some((shape, slice)) => {
                self.add_slice_with_crc(item.name, shape, slice, item.tensor, crc)
            }
        }
    }

    /// Adds many tensors in order. Above 1 MiB in total, the checksums of
    /// the fixed-size tensors are computed on other threads while this one
    /// writes the bytes (the data file does not need them; their entries
    /// get them once both are done), so a large save costs about its write
    /// alone.
    pub fn add_all(&mut self, items: &[SaveItem<'_>]) -> Result<()> {
        let total: usize = items
            .iter()
            .filter_map(|i| tensor_bytes(i.tensor))
            .map(<[u8]>::len)
            .sum();
        if total < PARALLEL_BYTES || ferroflow_tensor::team::threads() < 2 {
            for item in items {
                self.add_item(item, None)?;
            }
            return Ok(());
        }
        let ((keys, written), crcs) = rayon::join(
            || {
                let mut keys = Vec::with_capacity(items.len());
                for item in items {
                    // A stand-in, replaced below, for tensors checksummed on
                    // the other side of the join.
                    let pending = tensor_bytes(item.tensor).map(|_| 0);
                    match self.add_item(item, pending) {
                        Ok(key) => keys.push(key),
                        Err(e) => return (keys, Err(e)),
                    }
                }
                (keys, Ok(()))
            },
            || {
                items
                    .par_iter()
                    .map(|i| tensor_bytes(i.tensor).map(|b| mask(crc32c_par(b))))
                    .collect::<Vec<Option<u32>>>()
            },
        );
        // Also after an error: the tensors added before it stay valid.
        for (key, crc) in keys.iter().zip(crcs) {
            if let Some(crc) = crc {
                if let Some(entry) = self.entries.get_mut(key) {
                    entry.crc32c = crc;
                }
            }
        }
        written
    }

    /// Flushes and fsyncs the data, writes the index, and renames both into
    /// place (data first, index last). On error the temporary files are
    /// removed and any previous checkpoint at the prefix is untouched.
    pub fn finish(mut self) -> Result<()> {
        let result = self.finish_inner();
        if result.is_err() {
            self.cleanup();
        }
        result
    }

    fn finish_inner(&mut self) -> Result<()> {
        let out = self
            .data
            .take()
            .ok_or_else(|| Error::failed_precondition("the checkpoint writer is already closed"))?;
        let file = out.into_inner().map_err(|e| {
            io_error(
                &self.data_tmp,
                "cannot write checkpoint data",
                e.into_error(),
            )
        })?;
        let sync = self.sync;
        if sync {
            file.sync_all()
                .map_err(|e| io_error(&self.data_tmp, "cannot fsync checkpoint data", e))?;
        }
        drop(file);
        let index = build_index(&header(1, None), &self.entries);
        let index_final = index_path(&self.prefix);
        let index_tmp = write_temp(&index_final, &index, sync)?;
        let data_final = data_path(&self.prefix, 0, 1);
        let renamed = std::fs::rename(&self.data_tmp, &data_final)
            .map_err(|e| io_error(&data_final, "cannot rename the data file into place", e))
            .and_then(|_| {
                std::fs::rename(&index_tmp, &index_final)
                    .map_err(|e| io_error(&index_final, "cannot rename the index into place", e))
            });
        if renamed.is_err() {
            let _ = std::fs::remove_file(&index_tmp);
        }
        renamed?;
        if sync {
            sync_dir(&parent_dir(&self.prefix));
        }
        Ok(())
    }

    fn cleanup(&mut self) {
        self.data = None;
        let _ = std::fs::remove_file(&self.data_tmp);
    }
}

impl Drop for BundleWriter {
    /// An unfinished writer removes its temporary data file.
    fn drop(&mut self) {
        if self.data.is_some() {
            self.cleanup();
        }
    }
}

/// Writes `items` as a single-shard bundle at `prefix` (SaveV2).
pub fn save(prefix: impl AsRef<Path>, items: &[SaveItem<'_>]) -> Result<()> {
    let mut w = BundleWriter::new(prefix)?;
    w.add_all(items)?;
    w.finish()
}

/// Options of [`merge_bundles`] (`MergeV2Checkpoints`' attributes).
#[derive(Clone, Copy, Debug)]
pub struct MergeOptions {
    /// Remove each input's directory afterwards when it is empty.
    pub delete_old_dirs: bool,
    /// Skip inputs whose index does not exist instead of failing.
    pub allow_missing_files: bool,
}

impl Default for MergeOptions {
    fn default() -> Self {
        MergeOptions {
            delete_old_dirs: true,
            allow_missing_files: false,
        }
    }
}

/// Merges the bundles at `prefixes` into one bundle at `dest` whose index
/// references all their data files (TensorFlow's `MergeBundles`, which the
/// sharded Saver runs after each device wrote its own bundle). Data files
/// are renamed, not copied; the inputs' index files are deleted.
pub fn merge_bundles(
    prefixes: &[impl AsRef<Path>],
    dest: impl AsRef<Path>,
    options: MergeOptions,
) -> Result<()> {
    let dest = dest.as_ref();
    let dest_dir = parent_dir(dest);
    std::fs::create_dir_all(&dest_dir)
        .map_err(|e| io_error(&dest_dir, "cannot create the checkpoint directory", e))?;
    let mut entries: BTreeMap<Vec<u8>, BundleEntryProto> = BTreeMap::new();
    // Data files in the order first met, each with its new shard id.
    let mut shard_files: Vec<PathBuf> = Vec::new();
    let mut num_shards = 0i32;
    let mut version: Option<VersionDef> = None;
    let mut merged: Vec<&Path> = Vec::new();
    for prefix in prefixes {
        let prefix = prefix.as_ref();
        if options.allow_missing_files && !index_path(prefix).exists() {
            continue;
        }
        let index = read_index(prefix)?;
        num_shards += index.header.num_shards;
        if version.is_none() {
            version = index.header.version.clone();
        }
        for (key, mut entry) in index.entries {
            if let Some(existing) = entries.get_mut(&key) {
                if existing.slices.is_empty() {
                    bail!(
                        invalid_argument,
                        "Duplicate tensor keyed by {} encountered, when merging prefix: {}",
                        key_str(&key),
                        prefix.display()
                    );
                }
                if entry.slices.is_empty() {
                    bail!(
                        internal,
                        "Duplicate tensor keyed by {}; attempting to merge in a non-slice bundle \
                         entry from {}",
                        key_str(&key),
                        prefix.display()
                    );
                }
                if existing.dtype != entry.dtype || entry_shape(existing) != entry_shape(&entry) {
                    bail!(
                        invalid_argument,
                        "slices of {} disagree on dtype or shape when merging prefix: {}",
                        key_str(&key),
                        prefix.display()
                    );
                }
                existing.slices.append(&mut entry.slices);
                continue;
            }
            let file = data_path(prefix, entry.shard_id, index.header.num_shards);
            let id = match shard_files.iter().position(|f| *f == file) {
                Some(i) => i,
                None => {
                    shard_files.push(file);
                    shard_files.len() - 1
                }
            };
            entry.shard_id = id as i32;
            entries.insert(key, entry);
        }
        merged.push(prefix);
    }
    if merged.is_empty() && !prefixes.is_empty() {
        bail!(
            invalid_argument,
            "MergeV2Checkpoints: none of the checkpoints to merge exist"
        );
    }
    // Write the merged index first under a temporary name; it becomes
    // visible only after every data file is in place.
    let index_final = index_path(dest);
    let index = build_index(&header(num_shards, version), &entries);
    let sync = sync_enabled();
    let index_tmp = write_temp(&index_final, &index, sync)?;
    let total = shard_files.len() as i32;
    for (id, file) in shard_files.iter().enumerate() {
        let target = data_path(dest, id as i32, total);
        if let Err(e) = std::fs::rename(file, &target) {
            let _ = std::fs::remove_file(&index_tmp);
            return Err(io_error(
                file,
                &format!("cannot rename the data file to {}", target.display()),
                e,
            ));
        }
    }
    if let Err(e) = std::fs::rename(&index_tmp, &index_final) {
        let _ = std::fs::remove_file(&index_tmp);
        return Err(io_error(
            &index_final,
            "cannot rename the merged index into place",
            e,
        ));
    }
    if sync {
        sync_dir(&dest_dir);
    }
    for prefix in &merged {
        if index_path(prefix) != index_final {
            let _ = std::fs::remove_file(index_path(prefix));
        }
    }
    if options.delete_old_dirs {
        for prefix in &merged {
            let dir = parent_dir(prefix);
            if dir != dest_dir {
                // Fails (and is ignored) unless the directory is empty now.
                let _ = std::fs::remove_dir(&dir);
            }
        }
    }
    Ok(())
}
