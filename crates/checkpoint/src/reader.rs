//! Reading a bundle: the whole `.index` is parsed and checked when the
//! reader opens; data shards are memory-mapped on first use and every
//! tensor's bytes are checked against its CRC-32C when read.

use crate::codec::{
    check_fixed, checked_fixed_to_tensor, dtype_enum_name, element_size, is_storable, read_strings,
    to_tensor, RawData, RawTensor, DT_STRING,
};
use crate::proto::{BundleEntryProto, BundleHeaderProto, Message};
use crate::slice::{copy_region, decode_slice_key, encode_slice_key, intersect, TensorSlice};
use crate::table::read_table;
use crate::{data_path, index_path};
use ferroflow_tensor::{bail, ensure, DType, Error, Result, Tensor};
use memmap2::Mmap;
use rayon::prelude::*;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The bundle format version this reader understands (`kTensorBundleVersion`).
const BUNDLE_VERSION: i32 = 1;
/// Reads of many tensors go parallel above this many bytes in total.
const PARALLEL_BYTES: i64 = 1 << 20;

/// What a checkpoint holds under one (user-visible) name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VariableInfo {
    pub name: String,
    /// TensorFlow's `DataType` enum value.
    pub dtype: i32,
    pub shape: Vec<i64>,
}

/// `(start, length)` per dimension, in full-tensor coordinates.
type Bounds = Vec<(i64, i64)>;

/// Entries at least this large are read ahead in one request.
const PREFETCH_MIN_BYTES: i64 = 4 << 20;

/// A bytes region of one data shard.
enum Region {
    Map(Mmap),
    Empty,
}

impl Region {
    fn bytes(&self) -> &[u8] {
        match self {
            Region::Map(m) => m,
            Region::Empty => &[],
        }
    }
}

/// The parsed `.index` of a bundle: header and every entry by key.
pub(crate) struct Index {
    pub header: BundleHeaderProto,
    pub entries: BTreeMap<Vec<u8>, BundleEntryProto>,
}

pub(crate) fn key_str(key: &[u8]) -> String {
    match decode_slice_key(key) {
        Some((name, slice)) => format!("{} (slice {slice})", String::from_utf8_lossy(&name)),
        None => String::from_utf8_lossy(key).into_owned(),
    }
}

/// A failed file operation as a status whose code follows the I/O error ([`Error::io`]), with the
/// message `<path>: <what>: <the I/O error>`; the reader and the writer both report through it.
pub(crate) fn io_error(path: &Path, what: &str, e: std::io::Error) -> Error {
    Error::io(&e, format_args!("{}: {what}: {e}", path.display()))
}

/// Reads and checks the index of `prefix`.
pub(crate) fn read_index(prefix: &Path) -> Result<Index> {
    let path = index_path(prefix);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            bail!(
                not_found,
                "Unsuccessful TensorSliceReader constructor: Failed to find any matching files \
                 for {} (no {})",
                prefix.display(),
                path.display()
            )
        }
        Err(e) => return Err(io_error(&path, "cannot read the checkpoint index", e)),
    };
    let file = path.display().to_string();
    let table = read_table(&file, &bytes)?;
    let corrupt = |what: String| Error::data_loss(format!("{file}: {what}"));
    let mut iter = table.into_iter();
    let header = match iter.next() {
        Some((k, v)) if k.is_empty() => BundleHeaderProto::decode(v.as_slice())
            .map_err(|e| corrupt(format!("cannot parse the bundle header: {e}")))?,
        _ => return Err(corrupt("the bundle header entry is missing".into())),
    };
    if header.num_shards < 1 {
        return Err(corrupt(format!(
            "the header lists {} data shards",
            header.num_shards
        )));
    }
    match header.endianness {
        0 => {}
        1 => {
            bail!(
                unimplemented,
                "{file}: the bundle was written on a big-endian machine, which ferroflow does not read"
            )
        }
        e => return Err(corrupt(format!("unknown endianness {e} in the header"))),
    }
    let version = header.version.clone().unwrap_or_default();
    if version.producer < 0
        || version.min_consumer > BUNDLE_VERSION
        || version.bad_consumers.contains(&BUNDLE_VERSION)
    {
        bail!(
            invalid_argument,
            "{file}: checkpoint version (producer {}, min_consumer {}) cannot be read by \
             version {BUNDLE_VERSION}",
            version.producer,
            version.min_consumer
        );
    }
    let mut entries = BTreeMap::new();
    for (key, value) in iter {
        let name = key_str(&key);
        let entry = BundleEntryProto::decode(value.as_slice())
            .map_err(|e| corrupt(format!("cannot parse the entry of '{name}': {e}")))?;
        check_entry(&entry, header.num_shards)
            .map_err(|what| corrupt(format!("entry of '{name}': {what}")))?;
        entries.insert(key, entry);
    }
    Ok(Index { header, entries })
}

pub(crate) fn entry_shape(e: &BundleEntryProto) -> Vec<i64> {
    e.shape.as_ref().map(|s| s.dims()).unwrap_or_default()
}

fn num_elements(shape: &[i64]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &d| {
        usize::try_from(d).ok().and_then(|d| acc.checked_mul(d))
    })
}

/// Structural checks of one entry (its bytes passed the block CRC, but a
/// writer bug or a crafted file could still say nonsense).
fn check_entry(e: &BundleEntryProto, num_shards: i32) -> std::result::Result<(), String> {
    if !is_storable(e.dtype) {
        return Err(format!("dtype {} cannot be stored", e.dtype));
    }
    if e.shape.as_ref().is_some_and(|s| s.unknown_rank) {
        return Err("shape of unknown rank".into());
    }
    let shape = entry_shape(e);
    if num_elements(&shape).is_none() {
        return Err(format!("bad shape {shape:?}"));
    }
    if e.shard_id < 0 || e.shard_id >= num_shards {
        return Err(format!(
            "shard {} out of range (the bundle has {num_shards})",
            e.shard_id
        ));
    }
    if e.offset < 0 || e.size < 0 || e.offset.checked_add(e.size).is_none() {
        return Err(format!("bad offset {} / size {}", e.offset, e.size));
    }
    for s in &e.slices {
        TensorSlice::from_proto(s)
            .slice_shape(&shape)
            .map_err(|err| format!("bad slice: {}", err.message()))?;
    }
    Ok(())
}

/// Reads a TensorFlow V2 checkpoint (tensor bundle).
///
/// ```no_run
/// let r = ferroflow_checkpoint::BundleReader::open("train/model.ckpt-1000")?;
/// let w = r.read("dense/kernel")?;
/// # Ok::<(), ferroflow_tensor::Error>(())
/// ```
pub struct BundleReader {
    prefix: PathBuf,
    index: Index,
    shards: Vec<OnceLock<Result<Region>>>,
}

impl BundleReader {
    /// Opens the checkpoint `prefix` (the path without `.index`). A missing
    /// index is a `NotFoundError`; a corrupt one a `DataLossError`.
    pub fn open(prefix: impl AsRef<Path>) -> Result<BundleReader> {
        let prefix = prefix.as_ref().to_path_buf();
        let index = read_index(&prefix)?;
        let shards = (0..index.header.num_shards)
            .map(|_| OnceLock::new())
            .collect();
        Ok(BundleReader {
            prefix,
            index,
            shards,
        })
    }

    pub fn prefix(&self) -> &Path {
        &self.prefix
    }

    pub fn header(&self) -> &BundleHeaderProto {
        &self.index.header
    }

    pub fn num_shards(&self) -> usize {
        self.shards.len()
    }

    /// Every raw entry in key order, slice keys included (the header is not
    /// an entry).
    pub fn entries(&self) -> impl Iterator<Item = (&[u8], &BundleEntryProto)> {
        self.index.entries.iter().map(|(k, v)| (k.as_slice(), v))
    }

    /// True if the index has an entry under `key` (TensorFlow's `HasTensor`).
    pub fn contains(&self, key: impl AsRef<[u8]>) -> bool {
        self.index.entries.contains_key(key.as_ref())
    }

    /// The entry of `key`, or `NotFoundError` naming the key and checkpoint.
    pub fn entry(&self, key: impl AsRef<[u8]>) -> Result<&BundleEntryProto> {
        let key = key.as_ref();
        self.index.entries.get(key).ok_or_else(|| {
            Error::not_found(format!(
                "Key {} not found in checkpoint {}",
                key_str(key),
                self.prefix.display()
            ))
        })
    }

    /// TensorFlow's dtype enum and the full shape of `key`.
    pub fn dtype_and_shape(&self, key: impl AsRef<[u8]>) -> Result<(i32, Vec<i64>)> {
        let e = self.entry(key)?;
        Ok((e.dtype, entry_shape(e)))
    }

    /// The tensors as TensorFlow lists them (`list_variables`,
    /// `get_variable_to_shape_map`): by name, partitioned tensors once
    /// under their full name and shape, their slice entries hidden.
    pub fn variables(&self) -> Vec<VariableInfo> {
        let mut hidden = HashSet::new();
        for (key, e) in &self.index.entries {
            for s in &e.slices {
                hidden.insert(encode_slice_key(key, &TensorSlice::from_proto(s)));
            }
        }
        self.index
            .entries
            .iter()
            .filter(|(k, _)| !hidden.contains(*k))
            .map(|(k, e)| VariableInfo {
                name: String::from_utf8_lossy(k).into_owned(),
                dtype: e.dtype,
                shape: entry_shape(e),
            })
            .collect()
    }

    /// TensorFlow's `CheckpointReader.debug_string()`: one line
    /// `key (DT_...) [dims]` per entry without slices (so the slice entries
    /// of a partitioned tensor appear under their raw encoded keys, and the
    /// full tensor does not — TensorFlow prints it that way).
    pub fn debug_string(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for (key, e) in &self.index.entries {
            if !e.slices.is_empty() {
                continue;
            }
            out.extend_from_slice(key);
            let dims: Vec<String> = entry_shape(e).iter().map(i64::to_string).collect();
            out.extend_from_slice(
                format!(" ({}) [{}]\n", dtype_enum_name(e.dtype), dims.join(",")).as_bytes(),
            );
        }
        out
    }

    /// Reads the full tensor `name` (assembled from its slices if it was
    /// saved partitioned), verifying every checksum.
    pub fn read(&self, name: impl AsRef<[u8]>) -> Result<Tensor> {
        let name = name.as_ref();
        let e = self.entry(name)?;
        if e.slices.is_empty() && e.dtype != DT_STRING && DType::from_enum(e.dtype).is_some() {
            // Straight from the mapped file into the tensor: one copy, with
            // the checksum computed on the way.
            let bytes = self.fixed_stored(name, e)?;
            let what = self.what(name, e.shard_id);
            return checked_fixed_to_tensor(e.dtype, &entry_shape(e), bytes, e.crc32c, &what);
        }
        let raw = self.read_raw(name)?;
        to_tensor(&key_str(name), &self.prefix.display().to_string(), raw)
    }

    /// Reads `slice` (full-tensor coordinates) of `name`.
    pub fn read_slice(&self, name: impl AsRef<[u8]>, slice: &TensorSlice) -> Result<Tensor> {
        let name = name.as_ref();
        let raw = self.read_raw_slice(name, Some(slice))?;
        to_tensor(&key_str(name), &self.prefix.display().to_string(), raw)
    }

    /// Reads `name` as stored, for any dtype (fixed-size types come back as
    /// raw little-endian bytes).
    pub fn read_raw(&self, name: impl AsRef<[u8]>) -> Result<RawTensor> {
        self.read_raw_slice(name.as_ref(), None)
    }

    /// Reads several tensors (each whole, or one slice), in parallel when
    /// there is enough data to pay for it.
    pub fn read_many(&self, requests: &[(&[u8], Option<&TensorSlice>)]) -> Result<Vec<Tensor>> {
        let total: i64 = requests
            .iter()
            .filter_map(|(k, _)| self.index.entries.get(*k))
            .map(|e| e.size)
            .sum();
        let one = |(name, slice): &(&[u8], Option<&TensorSlice>)| -> Result<Tensor> {
            match slice {
                None => self.read(name),
                Some(s) => self.read_slice(name, s),
            }
        };
        if requests.len() > 1 && total >= PARALLEL_BYTES && ferroflow_tensor::team::threads() > 1 {
            requests.par_iter().map(one).collect()
        } else {
            requests.iter().map(one).collect()
        }
    }

    /// Verifies the checksum of every stored entry (in parallel); returns
    /// the first failure.
    pub fn verify(&self) -> Result<()> {
        let keys: Vec<&Vec<u8>> = self
            .index
            .entries
            .iter()
            .filter(|(_, e)| e.slices.is_empty())
            .map(|(k, _)| k)
            .collect();
        let check = |k: &&Vec<u8>| self.load_entry(k, &self.index.entries[*k]).map(|_| ());
        if ferroflow_tensor::team::threads() > 1 {
            keys.par_iter().map(check).collect()
        } else {
            keys.iter().try_for_each(check)
        }
    }

    fn what(&self, key: &[u8], shard: i32) -> String {
        format!(
            "tensor '{}' in {}",
            key_str(key),
            data_path(&self.prefix, shard, self.shards.len() as i32).display()
        )
    }

    fn shard(&self, id: i32) -> Result<&Region> {
        let slot = &self.shards[id as usize];
        slot.get_or_init(|| {
            let path = data_path(&self.prefix, id, self.shards.len() as i32);
            let file = std::fs::File::open(&path).map_err(|e| {
                io_error(
                    &path,
                    &format!("data file of checkpoint {}", self.prefix.display()),
                    e,
                )
            })?;
            let len = file
                .metadata()
                .map_err(|e| io_error(&path, "cannot stat the data file", e))?
                .len();
            if len == 0 {
                return Ok(Region::Empty);
            }
            // SAFETY: bundle files are immutable once renamed into place
            // (every writer here writes a temporary file and renames it), so
            // the mapping is not modified underneath us.
            let map = unsafe { Mmap::map(&file) }
                .map_err(|e| io_error(&path, "cannot map the data file", e))?;
            Ok(Region::Map(map))
        })
        .as_ref()
        .map_err(Clone::clone)
    }

    /// The stored bytes of one entry (bounds-checked, not yet verified).
    fn stored(&self, key: &[u8], e: &BundleEntryProto) -> Result<&[u8]> {
        let bytes = self.shard(e.shard_id)?.bytes();
        let (start, end) = (e.offset as u64, (e.offset + e.size) as u64);
        if end > bytes.len() as u64 {
            bail!(
                data_loss,
                "{}: bytes [{start}, {end}) lie past the end of the file ({} bytes); \
                 the data file is truncated",
                self.what(key, e.shard_id),
                bytes.len()
            );
        }
        if e.size >= PREFETCH_MIN_BYTES {
            if let Ok(Region::Map(map)) = self.shard(e.shard_id) {
                // Start reading the whole entry from disk now (a no-op when
                // it is cached) instead of fault by fault; only a hint, so
                // a failure changes nothing.
                let _ =
                    map.advise_range(memmap2::Advice::WillNeed, start as usize, e.size as usize);
            }
        }
        Ok(&bytes[start as usize..end as usize])
    }

    /// The verified stored bytes of a fixed-size entry without slices.
    fn fixed_entry(&self, key: &[u8], e: &BundleEntryProto) -> Result<&[u8]> {
        let stored = self.fixed_stored(key, e)?;
        check_fixed(stored, e.crc32c, &self.what(key, e.shard_id))?;
        Ok(stored)
    }

    /// The stored bytes of a fixed-size entry without slices, their length
    /// checked against the shape (the checksum is not checked here).
    fn fixed_stored(&self, key: &[u8], e: &BundleEntryProto) -> Result<&[u8]> {
        let stored = self.stored(key, e)?;
        let n = num_elements(&entry_shape(e)).expect("checked when opened");
        let elem = element_size(e.dtype).expect("fixed-size dtype");
        ensure!(
            n.checked_mul(elem) == Some(stored.len()),
            data_loss,
            "{}: {} stored bytes for {n} elements of {elem} bytes",
            self.what(key, e.shard_id),
            stored.len()
        );
        Ok(stored)
    }

    /// The verified stored data of one entry without slices.
    fn load_entry(&self, key: &[u8], e: &BundleEntryProto) -> Result<RawData> {
        if e.dtype == DT_STRING {
            let n = num_elements(&entry_shape(e)).expect("checked when opened");
            let what = self.what(key, e.shard_id);
            return read_strings(self.stored(key, e)?, n, e.crc32c, &what).map(RawData::Strings);
        }
        Ok(RawData::Bytes(self.fixed_entry(key, e)?.to_vec()))
    }

    fn read_raw_slice(&self, key: &[u8], want: Option<&TensorSlice>) -> Result<RawTensor> {
        let e = self.entry(key)?;
        let full_shape = entry_shape(e);
        let full_bounds = TensorSlice::full(full_shape.len()).bounds(&full_shape);
        let region = match want {
            None => full_bounds.clone(),
            Some(s) => {
                s.slice_shape(&full_shape).map_err(|err| {
                    Error::invalid_argument(format!(
                        "tensor '{}' of shape {full_shape:?}: {}",
                        key_str(key),
                        err.message()
                    ))
                })?;
                s.bounds(&full_shape)
            }
        };
        let shape: Vec<i64> = region.iter().map(|&(_, l)| l).collect();
        let n = num_elements(&shape).expect("within a checked shape");
        let elem = element_size(e.dtype);
        let data = if e.slices.is_empty() {
            let stored = self.load_entry(key, e)?;
            if region == full_bounds {
                stored
            } else {
                let mut out = empty_like(&stored, n, elem);
                copy_into(&stored, &full_bounds, &mut out, &region, &region, elem);
                out
            }
        } else {
            self.assemble(key, e, &full_shape, &region, n, elem)?
        };
        Ok(RawTensor {
            dtype: e.dtype,
            shape,
            data,
        })
    }

    /// Builds `region` of a partitioned tensor from its stored slices.
    fn assemble(
        &self,
        key: &[u8],
        e: &BundleEntryProto,
        full_shape: &[i64],
        region: &[(i64, i64)],
        n: usize,
        elem: Option<usize>,
    ) -> Result<RawData> {
        let name = key_str(key);
        // (slice key, its bounds, its overlap with the region)
        let mut parts: Vec<(Vec<u8>, Bounds, Bounds)> = Vec::new();
        let mut covered = 0usize;
        for s in &e.slices {
            let slice = TensorSlice::from_proto(s);
            let bounds = slice.bounds(full_shape);
            let Some(overlap) = intersect(&bounds, region) else {
                continue;
            };
            if parts
                .iter()
                .any(|(_, b, _)| intersect(b, &bounds).is_some())
            {
                bail!(
                    data_loss,
                    "checkpoint {}: stored slices of '{name}' overlap",
                    self.prefix.display()
                );
            }
            let slice_key = encode_slice_key(key, &slice);
            let se = self.index.entries.get(&slice_key).ok_or_else(|| {
                Error::data_loss(format!(
                    "checkpoint {}: '{name}' lists slice {slice} but the index has no entry for it",
                    self.prefix.display()
                ))
            })?;
            let want_shape: Vec<i64> = bounds.iter().map(|&(_, l)| l).collect();
            if se.dtype != e.dtype || entry_shape(se) != want_shape || !se.slices.is_empty() {
                bail!(
                    data_loss,
                    "checkpoint {}: the entry of slice {slice} of '{name}' does not match it",
                    self.prefix.display()
                );
            }
            // Bounds-check the stored bytes before allocating the result.
            let shard_len = self.shard(se.shard_id)?.bytes().len() as u64;
            if (se.offset + se.size) as u64 > shard_len {
                bail!(
                    data_loss,
                    "{}: bytes past the end of the file; the data file is truncated",
                    self.what(&slice_key, se.shard_id)
                );
            }
            covered +=
                num_elements(&overlap.iter().map(|&(_, l)| l).collect::<Vec<_>>()).unwrap_or(0);
            parts.push((slice_key, bounds, overlap));
        }
        ensure!(
            covered == n,
            internal,
            "Does not have sufficient slices for partitioned tensor {name} in checkpoint {} \
                 to restore in slice_spec: {}",
            self.prefix.display(),
            TensorSlice::new(
                region
                    .iter()
                    .map(|&(s, l)| crate::slice::Extent {
                        start: s,
                        length: Some(l)
                    })
                    .collect()
            )
        );
        let mut out = match elem {
            Some(sz) => RawData::Bytes(vec![0u8; n * sz]),
            None => RawData::Strings(vec![Vec::new(); n]),
        };
        for (slice_key, bounds, overlap) in &parts {
            let se = &self.index.entries[slice_key];
            let data = self.load_entry(slice_key, se)?;
            copy_into(&data, bounds, &mut out, region, overlap, elem);
        }
        Ok(out)
    }
}

fn empty_like(data: &RawData, n: usize, elem: Option<usize>) -> RawData {
    match data {
        RawData::Bytes(_) => RawData::Bytes(vec![0u8; n * elem.unwrap_or(1)]),
        RawData::Strings(_) => RawData::Strings(vec![Vec::new(); n]),
    }
}

/// Copies `region` from `src` (holding `src_bounds`) into `dst` (holding `dst_bounds`).
fn copy_into(
    src: &RawData,
    src_bounds: &[(i64, i64)],
    dst: &mut RawData,
    dst_bounds: &[(i64, i64)],
    region: &[(i64, i64)],
    elem: Option<usize>,
) {
    match (src, dst) {
        (RawData::Bytes(s), RawData::Bytes(d)) => {
            // Bytes are elements with one more (innermost) dimension.
            let e = (0, elem.unwrap_or(1) as i64);
            let with = |b: &[(i64, i64)]| b.iter().copied().chain([e]).collect::<Vec<_>>();
            copy_region(s, &with(src_bounds), d, &with(dst_bounds), &with(region));
        }
        (RawData::Strings(s), RawData::Strings(d)) => {
            copy_region(s, src_bounds, d, dst_bounds, region)
        }
        _ => unreachable!("one dtype per tensor"),
    }
}
