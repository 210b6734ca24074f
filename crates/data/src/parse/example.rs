//! The batch parser behind `ParseExampleV2`, `ParseExample` and
//! `ParseSingleExample`: serialized `tf.train.Example`s straight into the
//! output buffers, one pass over each message's bytes, features found by
//! key without allocating, large batches split across threads.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use ferroflow_tensor::{bail, ensure, DType, Error, Result, Tensor};
use rayon::prelude::*;

use super::wire::{for_each_map_entry, FeatureRef, Kind, Malformed};

/// Below this many examples a batch is parsed on the calling thread.
const PAR_MIN_EXAMPLES: usize = 64;
/// ... and below this many serialized bytes.
const PAR_MIN_BYTES: usize = 64 * 1024;
/// Each thread gets at least this many examples.
const MIN_CHUNK: usize = 16;

/// FNV-1a: feature keys are short, and the map is built once per run.
#[derive(Default)]
pub(crate) struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

pub(crate) type KeyMap = HashMap<Vec<u8>, usize, BuildHasherDefault<Fnv>>;

/// A `VarLenFeature` (a sparse output).
#[derive(Clone, Debug)]
pub struct SparseSpec {
    pub key: Vec<u8>,
    pub dtype: DType,
}

/// A `FixedLenFeature`, or a `FixedLenSequenceFeature` when `variable`.
#[derive(Clone, Debug)]
pub struct DenseSpec {
    pub key: Vec<u8>,
    pub dtype: DType,
    /// The shape of one example's value; for a variable-length feature the
    /// first dimension is -1.
    pub shape: Vec<i64>,
    pub variable: bool,
    /// Elements per example (fixed) or per row (variable).
    pub stride: usize,
    /// `None`: the feature is required (fixed) / padding is zero (variable).
    pub default: Option<Tensor>,
}

/// A key of a `RaggedFeature` (its values or one of its partitions): a
/// ragged output, values concatenated over the batch with row splits of
/// `split_dtype` (int32 or int64).
#[derive(Clone, Debug)]
pub struct RaggedSpec {
    pub key: Vec<u8>,
    pub dtype: DType,
    pub split_dtype: DType,
}

/// What to parse: the sparse and dense features, by key.
pub struct Spec {
    /// The sparse features, then the ragged ones (parsed the same way; they
    /// differ in their outputs): the last `ragged_splits.len()` entries.
    pub sparse: Vec<SparseSpec>,
    pub dense: Vec<DenseSpec>,
    /// Key -> slot (sparse and ragged features first, then dense).
    index: KeyMap,
    /// The row splits dtype of each ragged feature.
    ragged_splits: Vec<DType>,
}

/// TensorFlow's name of a dtype (`DataTypeString`).
pub(crate) fn dtype_name(d: DType) -> &'static str {
    match d {
        DType::Float32 => "float",
        DType::Int64 => "int64",
        DType::String => "string",
        _ => "unsupported",
    }
}

fn kind_of(d: DType) -> Kind {
    match d {
        DType::Float32 => Kind::Float,
        DType::Int64 => Kind::Int64,
        _ => Kind::Bytes,
    }
}

/// A shape as TensorFlow prints it in parse errors: `[?,2]`.
pub(crate) fn shape_text(dims: &[i64]) -> String {
    let parts: Vec<String> = dims
        .iter()
        .map(|&d| if d < 0 { "?".into() } else { d.to_string() })
        .collect();
    format!("[{}]", parts.join(","))
}

pub(crate) fn check_dtype(d: DType, what: &str) -> Result<()> {
    match d {
        DType::Float32 | DType::Int64 | DType::String => Ok(()),
        other => Err(Error::invalid_argument(format!(
            "{what}: data type {other} is not supported; Example features hold float32, int64 or string values"
        ))),
    }
}

impl DenseSpec {
    /// Checks a feature's shape and default value and builds its spec.
    pub fn new(
        key: Vec<u8>,
        dtype: DType,
        shape: Vec<i64>,
        default: Option<Tensor>,
    ) -> Result<Self> {
        let name = String::from_utf8_lossy(&key).into_owned();
        check_dtype(dtype, &format!("dense feature '{name}'"))?;
        let variable = shape.first().is_some_and(|&d| d < 0);
        let rest = if variable { &shape[1..] } else { &shape[..] };
        if rest.iter().any(|&d| d < 0) {
            bail!(
                invalid_argument,
                "dense_shapes of '{name}' must be fully defined (except a variable first dimension), got {}",
                shape_text(&shape)
            );
        }
        let stride = rest
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d as usize));
        let stride = stride.ok_or_else(|| {
            Error::invalid_argument(format!("dense shape of '{name}' is too large"))
        })?;
        let default = default.filter(|t| t.num_elements() > 0);
        if let Some(t) = &default {
            ensure!(
                t.dtype() == dtype,
                invalid_argument,
                "dense_defaults for '{name}' must be {}, got {}",
                dtype_name(dtype),
                t.dtype()
            );
            let want = if variable { 1 } else { stride };
            if t.num_elements() != want {
                return Err(Error::invalid_argument(if variable {
                    format!(
                        "For key: {name}, a variable-length feature's default value must be a scalar (padding), got {} elements",
                        t.num_elements()
                    )
                } else {
                    format!(
                        "Key: {name}, default value has {} elements but the feature's shape {} has {stride}",
                        t.num_elements(),
                        shape_text(&shape)
                    )
                }));
            }
        }
        Ok(DenseSpec {
            key,
            dtype,
            shape,
            variable,
            stride,
            default,
        })
    }
}

impl Spec {
    pub fn new(sparse: Vec<SparseSpec>, dense: Vec<DenseSpec>) -> Result<Self> {
        Spec::with_ragged(sparse, dense, Vec::new())
    }

    /// Sparse, dense and ragged features (`ParseExampleV2`).
    pub fn with_ragged(
        mut sparse: Vec<SparseSpec>,
        dense: Vec<DenseSpec>,
        ragged: Vec<RaggedSpec>,
    ) -> Result<Self> {
        let mut index = KeyMap::default();
        for s in &sparse {
            check_dtype(
                s.dtype,
                &format!("sparse feature '{}'", String::from_utf8_lossy(&s.key)),
            )?;
        }
        for r in &ragged {
            let what = format!("ragged feature '{}'", String::from_utf8_lossy(&r.key));
            check_dtype(r.dtype, &what)?;
            ensure!(
                matches!(r.split_dtype, DType::Int32 | DType::Int64),
                invalid_argument,
                "{what}: row splits must be int32 or int64, got {}",
                r.split_dtype
            );
        }
        let ragged_splits = ragged.iter().map(|r| r.split_dtype).collect();
        sparse.extend(ragged.into_iter().map(|r| SparseSpec {
            key: r.key,
            dtype: r.dtype,
        }));
        let keys = sparse
            .iter()
            .map(|s| &s.key)
            .chain(dense.iter().map(|d| &d.key));
        for (slot, key) in keys.enumerate() {
            if index.insert(key.clone(), slot).is_some() {
                bail!(
                    invalid_argument,
                    "Duplicate feature key: {}",
                    String::from_utf8_lossy(key)
                );
            }
        }
        Ok(Spec {
            sparse,
            dense,
            index,
            ragged_splits,
        })
    }

    fn slots(&self) -> usize {
        self.sparse.len() + self.dense.len()
    }

    /// The key of slot `slot` (sparse features first).
    fn key(&self, slot: usize) -> &[u8] {
        match self.sparse.get(slot) {
            Some(s) => &s.key,
            None => &self.dense[slot - self.sparse.len()].key,
        }
    }
}

/// A growable column of one dtype.
pub(crate) enum Col {
    F32(Vec<f32>),
    I64(Vec<i64>),
    Str(Vec<Vec<u8>>),
}

impl Col {
    pub(crate) fn new(d: DType) -> Col {
        match d {
            DType::Float32 => Col::F32(Vec::new()),
            DType::Int64 => Col::I64(Vec::new()),
            _ => Col::Str(Vec::new()),
        }
    }

    pub(crate) fn filled(d: DType, n: usize, fill: Option<&Tensor>) -> Result<Col> {
        Ok(match d {
            DType::Float32 => {
                let v = fill.map_or(Ok(0.0), |t| t.as_slice::<f32>().map(|s| s[0]))?;
                Col::F32(vec![v; n])
            }
            DType::Int64 => {
                let v = fill.map_or(Ok(0), |t| t.as_slice::<i64>().map(|s| s[0]))?;
                Col::I64(vec![v; n])
            }
            _ => {
                let v = fill.map_or(Ok(Vec::new()), |t| {
                    t.as_slice::<Vec<u8>>().map(|s| s[0].clone())
                })?;
                Col::Str(vec![v; n])
            }
        })
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Col::F32(v) => v.len(),
            Col::I64(v) => v.len(),
            Col::Str(v) => v.len(),
        }
    }

    pub(crate) fn extend(&mut self, other: Col) {
        match (self, other) {
            (Col::F32(a), Col::F32(b)) => a.extend(b),
            (Col::I64(a), Col::I64(b)) => a.extend(b),
            (Col::Str(a), Col::Str(b)) => a.extend(b),
            _ => unreachable!("columns of one feature share a dtype"),
        }
    }

    /// Appends a feature's values (its kind already checked).
    pub(crate) fn push_feature(
        &mut self,
        f: &FeatureRef<'_>,
    ) -> std::result::Result<(), Malformed> {
        match self {
            Col::F32(v) => f.for_each_f32(|x| v.push(x)),
            Col::I64(v) => f.for_each_i64(|x| v.push(x)),
            Col::Str(v) => f.for_each_bytes(|x| v.push(x.to_vec())),
        }
    }

    pub(crate) fn into_tensor(self, shape: Vec<usize>) -> Result<Tensor> {
        match self {
            Col::F32(v) => Tensor::from_vec(shape, v),
            Col::I64(v) => Tensor::from_vec(shape, v),
            Col::Str(v) => Tensor::from_vec(shape, v),
        }
    }
}

/// One chunk's rows of a fixed-length dense output.
enum Rows<'a> {
    F32(&'a mut [f32]),
    I64(&'a mut [i64]),
    Str(&'a mut [Vec<u8>]),
    /// A variable-length feature (collected in the chunk's accumulators).
    None,
}

/// Values and per-example counts of a sparse or variable-length feature.
struct Acc {
    values: Col,
    counts: Vec<usize>,
}

struct ChunkOut {
    sparse: Vec<Acc>,
    /// Per dense feature; `None` for fixed-length ones.
    var: Vec<Option<Acc>>,
}

/// The parsed batch: per sparse feature (indices, values, shape), per
/// dense feature its value, per ragged feature (values, row splits).
#[derive(Debug)]
pub struct Parsed {
    pub sparse: Vec<(Tensor, Tensor, Tensor)>,
    pub dense: Vec<Tensor>,
    pub ragged: Vec<(Tensor, Tensor)>,
}

fn malformed(bytes: &[u8]) -> Error {
    Error::invalid_argument(format!(
        "Could not parse example input, value: '{}'",
        String::from_utf8_lossy(bytes)
    ))
}

/// Parses `serialized` (one example per element). `names` (empty or one per
/// example) name examples in errors. With `scalar`, the one example's
/// outputs have no batch dimension.
pub fn parse_batch(
    spec: &Spec,
    serialized: &[Vec<u8>],
    names: &[Vec<u8>],
    scalar: bool,
) -> Result<Parsed> {
    let n = serialized.len();
    let total: usize = serialized.iter().map(Vec::len).sum();
    let chunks = if n >= PAR_MIN_EXAMPLES && total >= PAR_MIN_BYTES {
        rayon::current_num_threads().min(n / MIN_CHUNK).max(1)
    } else {
        1
    };
    let per = n.div_ceil(chunks).max(1);

    // Fixed-length dense outputs are written in place, chunk by chunk.
    let mut fixed: Vec<Option<Col>> = spec
        .dense
        .iter()
        .map(|d| {
            (!d.variable)
                .then(|| Col::filled(d.dtype, n * d.stride, None))
                .transpose()
        })
        .collect::<Result<_>>()?;
    let mut rows: Vec<Vec<Rows<'_>>> = (0..chunks).map(|_| Vec::new()).collect();
    for (d, col) in spec.dense.iter().zip(fixed.iter_mut()) {
        let step = per * d.stride;
        match col {
            None => rows.iter_mut().for_each(|r| r.push(Rows::None)),
            Some(Col::F32(v)) => split(v, step, &mut rows, Rows::F32),
            Some(Col::I64(v)) => split(v, step, &mut rows, Rows::I64),
            Some(Col::Str(v)) => split(v, step, &mut rows, Rows::Str),
        }
    }

    let run = |(c, mut r): (usize, Vec<Rows<'_>>)| {
        let range = (c * per).min(n)..((c + 1) * per).min(n);
        parse_chunk(spec, serialized, names, range, &mut r, scalar)
    };
    let outs: Vec<Result<ChunkOut>> = if chunks == 1 {
        rows.into_iter().enumerate().map(run).collect()
    } else {
        rows.into_par_iter().enumerate().map(run).collect()
    };
    let outs: Vec<ChunkOut> = outs.into_iter().collect::<Result<_>>()?;
    assemble(spec, outs, fixed, n, scalar)
}

/// Splits `v` into one piece of `step` elements per chunk (the last ones
/// possibly shorter or empty).
fn split<'a, T>(
    mut v: &'a mut [T],
    step: usize,
    rows: &mut [Vec<Rows<'a>>],
    wrap: fn(&'a mut [T]) -> Rows<'a>,
) {
    for r in rows.iter_mut() {
        let (head, tail) = v.split_at_mut(step.min(v.len()));
        r.push(wrap(head));
        v = tail;
    }
}

fn parse_chunk<'a>(
    spec: &Spec,
    serialized: &'a [Vec<u8>],
    names: &[Vec<u8>],
    range: std::ops::Range<usize>,
    rows: &mut [Rows<'_>],
    scalar: bool,
) -> Result<ChunkOut> {
    let len = range.len();
    let mut out = ChunkOut {
        sparse: spec
            .sparse
            .iter()
            .map(|s| Acc {
                values: Col::new(s.dtype),
                counts: Vec::with_capacity(len),
            })
            .collect(),
        var: spec
            .dense
            .iter()
            .map(|d| {
                d.variable.then(|| Acc {
                    values: Col::new(d.dtype),
                    counts: Vec::with_capacity(len),
                })
            })
            .collect(),
    };
    let mut found: Vec<Option<FeatureRef<'a>>> = vec![None; spec.slots()];
    let mut hints: Vec<Hint<'a>> = Vec::new();
    let start = range.start;
    for i in range {
        let bytes = &serialized[i];
        found.iter_mut().for_each(|f| *f = None);
        find_features(spec, bytes, &mut found, &mut hints).map_err(|_| malformed(bytes))?;
        let ctx = ExampleCtx {
            names,
            index: i,
            scalar,
        };
        let row = i - start;
        if let Err(e) = parse_one(spec, &found, &mut out, rows, row, &ctx, bytes) {
            // TensorFlow meets the features in the order they were written:
            // report the first bad one in that order.
            return Err(wire_order_error(spec, bytes, &ctx).unwrap_or(e));
        }
        let missing = spec
            .dense
            .iter()
            .zip(&found[spec.sparse.len()..])
            .find(|(d, f)| f.is_none() && !d.variable && d.default.is_none());
        if let Some((d, _)) = missing {
            let name = if ctx.scalar {
                String::new()
            } else {
                format!("Name: {}, ", ctx.name())
            };
            bail!(
                invalid_argument,
                "{name}Feature: {} (data type: {}) is required but could not be found.",
                String::from_utf8_lossy(&d.key),
                dtype_name(d.dtype)
            );
        }
    }
    Ok(out)
}

/// Parses one example's found features into the outputs (a missing
/// required feature is left for the caller to report).
fn parse_one(
    spec: &Spec,
    found: &[Option<FeatureRef<'_>>],
    out: &mut ChunkOut,
    rows: &mut [Rows<'_>],
    row: usize,
    ctx: &ExampleCtx<'_>,
    bytes: &[u8],
) -> Result<()> {
    let (sparse_found, dense_found) = found.split_at(spec.sparse.len());
    for ((s, f), acc) in spec.sparse.iter().zip(sparse_found).zip(&mut out.sparse) {
        let before = acc.values.len();
        if let Some(f) = f {
            kind_check(s.dtype, false, f, ctx, &s.key)?;
            acc.values.push_feature(f).map_err(|_| malformed(bytes))?;
        }
        acc.counts.push(acc.values.len() - before);
    }
    for (((d, f), r), var) in spec
        .dense
        .iter()
        .zip(dense_found)
        .zip(rows.iter_mut())
        .zip(&mut out.var)
    {
        match var {
            Some(acc) => {
                let before = acc.values.len();
                if let Some(f) = f {
                    kind_check(d.dtype, true, f, ctx, &d.key)?;
                    acc.values.push_feature(f).map_err(|_| malformed(bytes))?;
                }
                let n = acc.values.len() - before;
                count_check(d, n, ctx)?;
                acc.counts.push(n);
            }
            None => {
                if let Some(f) = f {
                    kind_check(d.dtype, true, f, ctx, &d.key)?;
                }
                let n = write_fixed(d, f.as_ref(), r, row, bytes)?;
                if f.is_some() {
                    count_check(d, n, ctx)?;
                }
            }
        }
    }
    Ok(())
}

/// The first error among the wanted features, in the order the example
/// holds them.
fn wire_order_error(spec: &Spec, bytes: &[u8], ctx: &ExampleCtx<'_>) -> Option<Error> {
    let mut seen = vec![false; spec.slots()];
    let mut first = None;
    let _ = for_each_map_entry(bytes, 1, |key, value| {
        let Some(&slot) = spec.index.get(key) else {
            return Ok(());
        };
        if std::mem::replace(&mut seen[slot], true) || first.is_some() {
            return Ok(());
        }
        let Ok(f) = FeatureRef::parse(value) else {
            first = Some(malformed(bytes));
            return Ok(());
        };
        let res = if slot < spec.sparse.len() {
            let s = &spec.sparse[slot];
            check_feature(s.dtype, None, &f, ctx, &s.key, bytes)
        } else {
            let d = &spec.dense[slot - spec.sparse.len()];
            check_feature(d.dtype, Some(d), &f, ctx, &d.key, bytes)
        };
        first = res.err();
        Ok(())
    });
    first
}

/// Checks a found feature's kind and (for dense features) its number of
/// values, with TensorFlow's messages.
fn check_feature(
    dtype: DType,
    dense: Option<&DenseSpec>,
    f: &FeatureRef<'_>,
    ctx: &ExampleCtx<'_>,
    key: &[u8],
    bytes: &[u8],
) -> Result<()> {
    kind_check(dtype, dense.is_some(), f, ctx, key)?;
    match dense {
        Some(d) => count_check(d, f.count().map_err(|_| malformed(bytes))?, ctx),
        None => Ok(()),
    }
}

/// A feature of another kind than the spec's dtype is an error.
#[inline(always)]
fn kind_check(
    dtype: DType,
    dense: bool,
    f: &FeatureRef<'_>,
    ctx: &ExampleCtx<'_>,
    key: &[u8],
) -> Result<()> {
    if f.kind != Kind::Empty && f.kind != kind_of(dtype) {
        let what = if dense {
            format!(
                "Data types don't match. Data type: {} but expected type: {}",
                f.kind.dtype_name(),
                dtype_name(dtype)
            )
        } else {
            format!(
                "Data types don't match. Expected type: {}, Actual type: {}",
                dtype_name(dtype),
                f.kind.dtype_name()
            )
        };
        return Err(ctx.error(key, what));
    }
    Ok(())
}

/// A dense feature with `n` values must fill its shape (fixed) or a whole
/// number of rows (variable).
#[inline(always)]
fn count_check(d: &DenseSpec, n: usize, ctx: &ExampleCtx<'_>) -> Result<()> {
    let (dtype, key) = (d.dtype, &d.key[..]);
    if d.variable {
        if !n.is_multiple_of(d.stride) {
            if ctx.scalar {
                bail!(
                    invalid_argument,
                    "Error while parsing feature with key {}: number of elements should be divisible by {}, found {n} instead",
                    String::from_utf8_lossy(key),
                    d.stride
                );
            }
            return Err(ctx.error(
                key,
                format!(
                    "Number of {} values is not a multiple of stride length. Saw {n} values but output shape is: {}",
                    dtype_name(dtype),
                    shape_text(&d.shape)
                ),
            ));
        }
        return Ok(());
    }
    if n != d.stride && ctx.scalar {
        let what = match (dtype, n > d.stride) {
            (DType::String, true) => "Parsing bytes_list failed".to_string(),
            (t, _) => format!(
                "Some {}_list slice was not parsed",
                match t {
                    DType::Float32 => "float",
                    DType::Int64 => "int64",
                    _ => "bytes",
                }
            ),
        };
        return Err(ctx.error(key, format!("Can't parse serialized Example: {what}.")));
    }
    if n != d.stride {
        return Err(ctx.error(
            key,
            format!(
                "Number of {} values != expected.  Values size: {n} but output shape: {}",
                dtype_name(dtype),
                shape_text(&d.shape)
            ),
        ));
    }
    Ok(())
}

/// Where an example sits, for error messages.
struct ExampleCtx<'a> {
    names: &'a [Vec<u8>],
    index: usize,
    /// A single example (`ParseExampleV2` of a scalar): TensorFlow's
    /// single-example parser words its messages differently.
    scalar: bool,
}

impl ExampleCtx<'_> {
    fn name(&self) -> String {
        match self.names.get(self.index) {
            Some(n) if !n.is_empty() => String::from_utf8_lossy(n).into_owned(),
            _ => "<unknown>".to_string(),
        }
    }

    fn error(&self, key: &[u8], what: String) -> Error {
        if self.scalar {
            return Error::invalid_argument(format!(
                "Key: {}.  {what}",
                String::from_utf8_lossy(key)
            ));
        }
        Error::invalid_argument(format!(
            "Name: {}, Key: {}, Index: {}.  {what}",
            self.name(),
            String::from_utf8_lossy(key),
            self.index
        ))
    }
}

/// What the entry at one position of the previous example was: examples
/// of one dataset list their features in the same order, so checking the
/// previous key first (a short compare) usually saves the hash lookup.
#[derive(Clone, Copy)]
enum Hint<'a> {
    Unknown,
    Slot(usize),
    Unwanted(&'a [u8]),
}

/// Records the first occurrence of each wanted feature (as TensorFlow's fast
/// parser does; protobuf maps never repeat a key).
fn find_features<'a>(
    spec: &Spec,
    bytes: &'a [u8],
    found: &mut [Option<FeatureRef<'a>>],
    hints: &mut Vec<Hint<'a>>,
) -> std::result::Result<(), Malformed> {
    let mut pos = 0usize;
    for_each_map_entry(bytes, 1, |key, value| {
        if pos == hints.len() {
            hints.push(Hint::Unknown);
        }
        let slot = match hints[pos] {
            Hint::Slot(s) if spec.key(s) == key => Some(s),
            Hint::Unwanted(k) if k == key => None,
            _ => {
                let slot = spec.index.get(key).copied();
                hints[pos] = slot.map_or(Hint::Unwanted(key), Hint::Slot);
                slot
            }
        };
        pos += 1;
        if let Some(slot) = slot {
            if found[slot].is_none() {
                found[slot] = Some(FeatureRef::parse(value)?);
            }
        }
        Ok(())
    })
}

/// Writes a fixed-length feature's values or its default into row `row`
/// (a missing required one is left as is); returns how many values the
/// feature holds (more than the row takes are counted, not written).
fn write_fixed(
    d: &DenseSpec,
    f: Option<&FeatureRef<'_>>,
    rows: &mut Rows<'_>,
    row: usize,
    bytes: &[u8],
) -> Result<usize> {
    let at = row * d.stride..(row + 1) * d.stride;
    let Some(f) = f else {
        if let Some(def) = &d.default {
            match rows {
                Rows::F32(v) => v[at].copy_from_slice(def.as_slice::<f32>()?),
                Rows::I64(v) => v[at].copy_from_slice(def.as_slice::<i64>()?),
                Rows::Str(v) => v[at].clone_from_slice(def.as_slice::<Vec<u8>>()?),
                Rows::None => {}
            }
        }
        return Ok(0);
    };
    let mut n = 0usize;
    let res = match rows {
        Rows::F32(v) => {
            let mut out = v[at].iter_mut();
            f.for_each_f32(|x| {
                n += 1;
                if let Some(o) = out.next() {
                    *o = x;
                }
            })
        }
        Rows::I64(v) => {
            let mut out = v[at].iter_mut();
            f.for_each_i64(|x| {
                n += 1;
                if let Some(o) = out.next() {
                    *o = x;
                }
            })
        }
        Rows::Str(v) => {
            let mut out = v[at].iter_mut();
            f.for_each_bytes(|x| {
                n += 1;
                if let Some(o) = out.next() {
                    o.extend_from_slice(x);
                }
            })
        }
        Rows::None => Ok(()),
    };
    res.map_err(|_| malformed(bytes))?;
    Ok(n)
}

fn assemble(
    spec: &Spec,
    mut outs: Vec<ChunkOut>,
    fixed: Vec<Option<Col>>,
    n: usize,
    scalar: bool,
) -> Result<Parsed> {
    let num_sparse = spec.sparse.len() - spec.ragged_splits.len();
    let mut sparse = Vec::with_capacity(num_sparse);
    let mut ragged = Vec::with_capacity(spec.ragged_splits.len());
    for (s_i, s) in spec.sparse.iter().enumerate() {
        let accs: Vec<Acc> = outs
            .iter_mut()
            .map(|o| std::mem::replace(&mut o.sparse[s_i], empty_acc(s.dtype)))
            .collect();
        match s_i.checked_sub(num_sparse) {
            None => sparse.push(sparse_output(s.dtype, accs, n, scalar)?),
            Some(r) => ragged.push(ragged_output(
                s.dtype,
                spec.ragged_splits[r],
                accs,
                n,
                scalar,
            )?),
        }
    }
    let mut dense = Vec::with_capacity(spec.dense.len());
    for (d_i, (d, col)) in spec.dense.iter().zip(fixed).enumerate() {
        let t = match col {
            Some(col) => {
                let mut shape: Vec<usize> = if scalar { vec![] } else { vec![n] };
                shape.extend(d.shape.iter().map(|&x| x as usize));
                col.into_tensor(shape)?
            }
            None => {
                let accs: Vec<Acc> = outs
                    .iter_mut()
                    .map(|o| o.var[d_i].take().unwrap_or_else(|| empty_acc(d.dtype)))
                    .collect();
                var_dense_output(d, accs, n, scalar)?
            }
        };
        dense.push(t);
    }
    Ok(Parsed {
        sparse,
        dense,
        ragged,
    })
}

fn empty_acc(d: DType) -> Acc {
    Acc {
        values: Col::new(d),
        counts: Vec::new(),
    }
}

/// Indices `[N, 2]` (example, position) or `[N, 1]` for a scalar input,
/// the values, and the dense shape `[batch, max count]` (or `[max]`).
fn sparse_output(
    dtype: DType,
    accs: Vec<Acc>,
    n: usize,
    scalar: bool,
) -> Result<(Tensor, Tensor, Tensor)> {
    let total: usize = accs.iter().map(|a| a.values.len()).sum();
    let width = if scalar { 1 } else { 2 };
    let mut indices = Vec::with_capacity(total * width);
    let mut values = Col::new(dtype);
    let mut max = 0usize;
    let mut example = 0i64;
    for acc in accs {
        for &c in &acc.counts {
            max = max.max(c);
            for j in 0..c as i64 {
                if !scalar {
                    indices.push(example);
                }
                indices.push(j);
            }
            example += 1;
        }
        values.extend(acc.values);
    }
    let shape = if scalar {
        vec![max as i64]
    } else {
        vec![n as i64, max as i64]
    };
    Ok((
        Tensor::from_vec(vec![total, width], indices)?,
        values.into_tensor(vec![total])?,
        Tensor::vector(shape),
    ))
}

/// The values of every example, concatenated, and the row splits `[0,
/// c0, c0 + c1, ...]` (`batch + 1` of them; none for a scalar input, as
/// TensorFlow's kernel gives).
fn ragged_output(
    dtype: DType,
    split_dtype: DType,
    accs: Vec<Acc>,
    n: usize,
    scalar: bool,
) -> Result<(Tensor, Tensor)> {
    let mut values = Col::new(dtype);
    let mut splits: Vec<i64> = Vec::with_capacity(if scalar { 0 } else { n + 1 });
    if !scalar {
        splits.push(0);
    }
    let mut end = 0i64;
    for acc in accs {
        if !scalar {
            for &c in &acc.counts {
                end += c as i64;
                splits.push(end);
            }
        }
        values.extend(acc.values);
    }
    let total = values.len();
    Ok((
        values.into_tensor(vec![total])?,
        splits_tensor(splits, split_dtype)?,
    ))
}

/// Row splits as a vector of `split_dtype` (int32 or int64); int32 fails
/// with InvalidArgumentError when a split does not fit.
pub(crate) fn splits_tensor(splits: Vec<i64>, split_dtype: DType) -> Result<Tensor> {
    if split_dtype != DType::Int32 {
        return Ok(Tensor::vector(splits));
    }
    let v = splits
        .into_iter()
        .map(i32::try_from)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|_| {
            Error::invalid_argument(
                "ragged feature: more values than int32 row splits can hold; use \
                 row_splits_dtype=int64",
            )
        })?;
    Ok(Tensor::vector(v))
}

/// `[batch, max rows] + shape[1..]`, each example's rows padded with the
/// default value.
fn var_dense_output(d: &DenseSpec, accs: Vec<Acc>, n: usize, scalar: bool) -> Result<Tensor> {
    let rows_of = |c: usize| c.checked_div(d.stride).unwrap_or(0);
    let max_rows = accs
        .iter()
        .flat_map(|a| a.counts.iter())
        .map(|&c| rows_of(c))
        .max()
        .unwrap_or(0);
    let per = max_rows * d.stride;
    let mut out = Col::filled(d.dtype, n * per, d.default.as_ref())?;
    let mut example = 0usize;
    for acc in accs {
        let mut offset = 0usize;
        for &c in &acc.counts {
            let dst = example * per..example * per + c;
            let src = offset..offset + c;
            match (&mut out, &acc.values) {
                (Col::F32(o), Col::F32(v)) => o[dst].copy_from_slice(&v[src]),
                (Col::I64(o), Col::I64(v)) => o[dst].copy_from_slice(&v[src]),
                (Col::Str(o), Col::Str(v)) => o[dst].clone_from_slice(&v[src]),
                _ => unreachable!("columns of one feature share a dtype"),
            }
            offset += c;
            example += 1;
        }
    }
    let mut shape: Vec<usize> = if scalar { vec![] } else { vec![n] };
    shape.push(max_rows);
    shape.extend(d.shape[1..].iter().map(|&x| x as usize));
    out.into_tensor(shape)
}
