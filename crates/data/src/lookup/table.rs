//! The table resource: a hash index from keys to rows of a value column.
//!
//! Keys (`int32`, `int64` or `string` scalars) map to row numbers in one
//! flat column of values, each row `value_shape` elements long. Lookups
//! first find a key's row and then copy the row (or the default) out, in
//! parallel pieces for large batches; removals free rows for reuse.

use std::sync::Arc;

use ferroflow_tensor::{bail, ensure, team, DType, Data, Element, Error, Result, Shape, Tensor};
use parking_lot::RwLock;
use rustc_hash::FxHashMap;

use super::str_index::StrIndex;

/// Which of TensorFlow's table classes a table behaves as.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TableKind {
    /// `HashTable`: filled once by an initializer, then read-only.
    Static,
    /// `MutableHashTable` / `MutableHashTableOfTensors`.
    Mutable,
    /// `MutableDenseHashTable` (open addressing with reserved empty and
    /// deleted keys; exports its bucket arrays).
    Dense,
}

impl TableKind {
    /// TensorFlow's class name, used in messages.
    pub fn type_name(self) -> &'static str {
        match self {
            TableKind::Static => "HashTable",
            TableKind::Mutable => "MutableHashTable",
            TableKind::Dense => "MutableDenseHashTable",
        }
    }
}

/// TensorFlow's name of a dtype in kernel messages (`float`, `double`, ...).
pub fn tf_type_name(d: DType) -> &'static str {
    match d {
        DType::Float32 => "float",
        DType::Float64 => "double",
        DType::Float16 => "half",
        other => other.name(),
    }
}

/// Keys of a table or of a lookup, by key type.
enum Keys<'a> {
    I32(&'a [i32]),
    I64(&'a [i64]),
    Str(&'a [Vec<u8>]),
}

impl Keys<'_> {
    fn of(t: &Tensor) -> Result<Keys<'_>> {
        Ok(match t.data() {
            Data::I32(v) => Keys::I32(v),
            Data::I64(v) => Keys::I64(v),
            Data::Str(v) => Keys::Str(v),
            _ => {
                bail!(
                    invalid_argument,
                    "lookup tables take int32, int64 or string keys, got {}",
                    tf_type_name(t.dtype())
                )
            }
        })
    }

    fn show(&self, i: usize) -> String {
        match self {
            Keys::I32(k) => k[i].to_string(),
            Keys::I64(k) => k[i].to_string(),
            Keys::Str(k) => String::from_utf8_lossy(&k[i]).into_owned(),
        }
    }
}

/// The hash index from keys to rows.
enum Index {
    I32(FxHashMap<i32, u32>),
    I64(FxHashMap<i64, u32>),
    Str(StrIndex),
}

impl Index {
    fn new(d: DType) -> Result<Index> {
        Ok(match d {
            DType::Int32 => Index::I32(FxHashMap::default()),
            DType::Int64 => Index::I64(FxHashMap::default()),
            DType::String => Index::Str(StrIndex::default()),
            other => {
                bail!(
                    unimplemented,
                    "lookup tables take int32, int64 or string keys, not {}",
                    tf_type_name(other)
                )
            }
        })
    }

    fn len(&self) -> usize {
        match self {
            Index::I32(m) => m.len(),
            Index::I64(m) => m.len(),
            Index::Str(m) => m.len(),
        }
    }

    fn clear(&mut self) {
        match self {
            Index::I32(m) => m.clear(),
            Index::I64(m) => m.clear(),
            Index::Str(m) => m.clear(),
        }
    }

    fn reserve(&mut self, n: usize) {
        match self {
            Index::I32(m) => m.reserve(n),
            Index::I64(m) => m.reserve(n),
            Index::Str(m) => m.reserve(n),
        }
    }

    /// Every key with its row, in row order.
    fn entries(&self) -> (Vec<u32>, Data) {
        fn sorted<K: Clone, Q>(
            m: impl Iterator<Item = (K, u32)>,
            wrap: impl Fn(Vec<K>) -> Q,
        ) -> (Vec<u32>, Q) {
            let mut v: Vec<(K, u32)> = m.collect();
            v.sort_unstable_by_key(|e| e.1);
            let rows = v.iter().map(|e| e.1).collect();
            (rows, wrap(v.into_iter().map(|e| e.0).collect()))
        }
        match self {
            Index::I32(m) => sorted(m.iter().map(|(k, r)| (*k, *r)), i32::wrap),
            Index::I64(m) => sorted(m.iter().map(|(k, r)| (*k, *r)), i64::wrap),
            Index::Str(m) => sorted(m.entries().map(|(k, r)| (k.to_vec(), r)), Vec::<u8>::wrap),
        }
    }
}

/// Runs `$body` with `$T` the element type of a value dtype tables hold.
macro_rules! for_value_dtype {
    ($dt:expr, $T:ident => $body:expr) => {
        match $dt {
            DType::Float32 => {
                type $T = f32;
                $body
            }
            DType::Float64 => {
                type $T = f64;
                $body
            }
            DType::Int32 => {
                type $T = i32;
                $body
            }
            DType::Int64 => {
                type $T = i64;
                $body
            }
            DType::Bool => {
                type $T = bool;
                $body
            }
            DType::String => {
                type $T = Vec<u8>;
                $body
            }
            other => {
                bail!(
                    unimplemented,
                    "lookup tables hold bool, int32, int64, float, double or string values, not {}",
                    tf_type_name(other)
                )
            }
        }
    };
}

/// Whether `d` is a value dtype tables hold.
pub fn is_value_dtype(d: DType) -> bool {
    matches!(
        d,
        DType::Float32 | DType::Float64 | DType::Int32 | DType::Int64 | DType::Bool | DType::String
    )
}

/// Element `i` of `data`, for messages.
fn show_elem(data: &Data, i: usize) -> String {
    match data {
        Data::F32(v) => v[i].to_string(),
        Data::F64(v) => v[i].to_string(),
        Data::I32(v) => v[i].to_string(),
        Data::I64(v) => v[i].to_string(),
        Data::Bool(v) => v[i].to_string(),
        Data::Str(v) => String::from_utf8_lossy(&v[i]).into_owned(),
        _ => "?".to_string(),
    }
}

/// The dense table's reserved keys and bucket count.
struct DenseConfig {
    empty: Tensor,
    deleted: Tensor,
    max_load_factor: f64,
}

struct State {
    index: Index,
    /// Row `r` is `values[r * vlen..(r + 1) * vlen]`.
    values: Data,
    /// Rows in use or free.
    rows: usize,
    /// Rows freed by removals, reused first.
    free: Vec<u32>,
    initialized: bool,
    /// The dense table's bucket count (what it exports).
    num_buckets: usize,
}

/// A lookup table (see the module docs).
pub struct Table {
    kind: TableKind,
    name: String,
    key_dtype: DType,
    value_dtype: DType,
    value_shape: Shape,
    dense: Option<DenseConfig>,
    state: RwLock<State>,
}

/// Keys per parallel piece of a lookup; smaller batches run on one thread.
const PIECE: usize = 16384;

impl Table {
    /// A new, empty table. `value_shape` is `[]` for scalar values.
    pub fn new(
        kind: TableKind,
        name: &str,
        key_dtype: DType,
        value_dtype: DType,
        value_shape: Shape,
    ) -> Result<Table> {
        ensure!(
            is_value_dtype(value_dtype),
            unimplemented,
            "{} '{name}': no kernel for value dtype {}",
            kind.type_name(),
            tf_type_name(value_dtype)
        );
        Ok(Table {
            kind,
            name: name.to_string(),
            key_dtype,
            value_dtype,
            value_shape,
            dense: None,
            state: RwLock::new(State {
                index: Index::new(key_dtype)?,
                values: Data::zeros(value_dtype, 0),
                rows: 0,
                free: Vec::new(),
                initialized: false,
                num_buckets: 0,
            }),
        })
    }

    /// A `MutableDenseHashTable` with reserved keys `empty_key` and
    /// `deleted_key` (scalars), starting with `initial_num_buckets` buckets
    /// (a power of 2, at least 4).
    pub fn new_dense(
        name: &str,
        empty_key: Tensor,
        deleted_key: Tensor,
        value_dtype: DType,
        value_shape: Shape,
        initial_num_buckets: i64,
        max_load_factor: f64,
    ) -> Result<Table> {
        if empty_key.rank() != 0 || deleted_key.rank() != 0 {
            bail!(
                unimplemented,
                "MutableDenseHashTable '{name}': only scalar keys are supported, got an empty_key of \
                 shape {}",
                empty_key.shape()
            );
        }
        ensure!(
            empty_key.dtype() == deleted_key.dtype(),
            invalid_argument,
            "MutableDenseHashTable '{name}': empty_key is {} but deleted_key is {}",
            tf_type_name(empty_key.dtype()),
            tf_type_name(deleted_key.dtype())
        );
        if initial_num_buckets < 4 || (initial_num_buckets as u64).count_ones() != 1 {
            bail!(
                invalid_argument,
                "Number of buckets must be at least 4 and a power of 2, got: {initial_num_buckets}"
            );
        }
        ensure!(
            max_load_factor > 0.0 && max_load_factor < 1.0,
            invalid_argument,
            "max_load_factor must be between 0 and 1, got: {max_load_factor}"
        );
        ensure!(
            Keys::of(&empty_key)?.show(0) != Keys::of(&deleted_key)?.show(0),
            invalid_argument,
            "Empty and deleted keys cannot be equal"
        );
        let mut t = Table::new(
            TableKind::Dense,
            name,
            empty_key.dtype(),
            value_dtype,
            value_shape,
        )?;
        t.state.get_mut().num_buckets = initial_num_buckets as usize;
        t.dense = Some(DenseConfig {
            empty: empty_key,
            deleted: deleted_key,
            max_load_factor,
        });
        Ok(t)
    }

    /// How the table behaves.
    pub fn kind(&self) -> TableKind {
        self.kind
    }

    /// The table's name in messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key dtype.
    pub fn key_dtype(&self) -> DType {
        self.key_dtype
    }

    /// The value dtype.
    pub fn value_dtype(&self) -> DType {
        self.value_dtype
    }

    /// The shape of one key's value (`[]` for scalars).
    pub fn value_shape(&self) -> &Shape {
        &self.value_shape
    }

    /// Entries in the table.
    pub fn size(&self) -> usize {
        self.state.read().index.len()
    }

    /// Whether a static table was initialized (mutable tables always are).
    pub fn is_initialized(&self) -> bool {
        self.kind != TableKind::Static || self.state.read().initialized
    }

    fn vlen(&self) -> usize {
        self.value_shape.num_elements()
    }

    /// `keys.shape + value_shape`.
    fn full_shape(&self, keys: &Tensor) -> Shape {
        let mut d = keys.dims().to_vec();
        d.extend_from_slice(self.value_shape.dims());
        Shape::new(&d)
    }

    fn signature_error(&self, got: &[DType], want: &[DType], outputs: &str) -> Error {
        let names = |v: &[DType]| {
            v.iter()
                .map(|d| tf_type_name(*d))
                .collect::<Vec<_>>()
                .join(", ")
        };
        Error::invalid_argument(format!(
            "Signature mismatch, have: resource, {}{outputs} expected: resource, {}{outputs}",
            names(got),
            names(want)
        ))
    }

    /// Checks `keys` and `values` of an insert: dtypes, and the values'
    /// shape `keys.shape + value_shape`.
    fn check_insert(&self, keys: &Tensor, values: &Tensor) -> Result<()> {
        if keys.dtype() != self.key_dtype || values.dtype() != self.value_dtype {
            return Err(self.signature_error(
                &[keys.dtype(), values.dtype()],
                &[self.key_dtype, self.value_dtype],
                "",
            ));
        }
        let want = self.full_shape(keys);
        ensure!(
            values.shape() == &want,
            invalid_argument,
            "Expected shape {want} for value, got {}",
            values.shape()
        );
        Ok(())
    }

    /// Fails on the dense table's reserved keys.
    fn check_reserved(&self, keys: &Tensor) -> Result<()> {
        let Some(cfg) = &self.dense else {
            return Ok(());
        };
        fn hit<T: Element + PartialEq>(keys: &Tensor, reserved: &Tensor) -> Result<bool> {
            let r = &reserved.as_slice::<T>()?[0];
            Ok(keys.as_slice::<T>()?.iter().any(|k| k == r))
        }
        for (reserved, which) in [(&cfg.empty, "empty_key"), (&cfg.deleted, "deleted_key")] {
            let found = match self.key_dtype {
                DType::Int32 => hit::<i32>(keys, reserved)?,
                DType::Int64 => hit::<i64>(keys, reserved)?,
                _ => hit::<Vec<u8>>(keys, reserved)?,
            };
            if found {
                bail!(
                    invalid_argument,
                    "Using the {which} as a table key is not allowed"
                );
            }
        }
        Ok(())
    }

    /// `LookupTableFind`: each key's value, or `default` (of shape
    /// `value_shape`, or `keys.shape + value_shape` for one default per key).
    pub fn find(&self, keys: &Tensor, default: &Tensor) -> Result<Tensor> {
        if keys.dtype() != self.key_dtype || default.dtype() != self.value_dtype {
            return Err(self.signature_error(
                &[keys.dtype(), default.dtype()],
                &[self.key_dtype, self.value_dtype],
                &format!("->{}", tf_type_name(self.value_dtype)),
            ));
        }
        let full = self.full_shape(keys);
        let per_key = if default.shape() == &self.value_shape {
            false
        } else if default.shape() == &full {
            true
        } else {
            bail!(
                invalid_argument,
                "Expected shape {} or {full} for default value, got {}",
                self.value_shape,
                default.shape()
            );
        };
        self.check_reserved(keys)?;
        let st = self.state.read();
        if self.kind == TableKind::Static && !st.initialized {
            bail!(failed_precondition, "Table not initialized.");
        }
        let n = keys.num_elements();
        let vlen = self.vlen();
        let mut out = Data::zeros(self.value_dtype, n * vlen);
        if n * vlen > 0 {
            let keys = Keys::of(keys)?;
            for_value_dtype!(self.value_dtype, T => {
                let vals = st.values_slice::<T>();
                let def = default.as_slice::<T>()?;
                let dst = Arc::get_mut(T::buffer_mut(&mut out).expect("value dtype"))
                    .expect("fresh buffer");
                let g = Gather { vals, def, per_key, vlen };
                match (&st.index, keys) {
                    (Index::I32(m), Keys::I32(k)) => g.run(dst, |at, rows| {
                        int_rows(m, &k[at..at + rows.len()], rows)
                    }),
                    (Index::I64(m), Keys::I64(k)) => g.run(dst, |at, rows| {
                        int_rows(m, &k[at..at + rows.len()], rows)
                    }),
                    (Index::Str(m), Keys::Str(k)) => {
                        g.run(dst, |at, rows| m.get_many(&k[at..at + rows.len()], rows))
                    }
                    _ => bail!(internal, "table key dtype mismatch"),
                }
            });
        }
        Tensor::new(full, out)
    }

    /// `LookupTableInsert` on a mutable table: adds or overwrites entries.
    pub fn insert(&self, keys: &Tensor, values: &Tensor) -> Result<()> {
        ensure!(
            self.kind != TableKind::Static,
            unimplemented,
            "Insert not supported by InitializableLookupTable implementations"
        );
        self.check_insert(keys, values)?;
        self.check_reserved(keys)?;
        let mut st = self.state.write();
        if let Some(cfg) = &self.dense {
            // TensorFlow grows before inserting, counting every key given.
            let need = (st.index.len() + keys.num_elements()) as f64;
            while need > st.num_buckets as f64 * cfg.max_load_factor {
                st.num_buckets *= 2;
            }
        }
        st.put(keys, values, self.vlen(), false).map(|_| ())
    }

    /// `InitializeTable` / `LookupTableImport` on a static table: fills it
    /// once; a second initialization with as many entries is ignored, with
    /// another number is `FailedPrecondition` (as TensorFlow). Duplicate keys
    /// must map to equal values.
    pub fn initialize(&self, keys: &Tensor, values: &Tensor) -> Result<()> {
        ensure!(
            self.kind == TableKind::Static,
            invalid_argument,
            "Table {} is not initializable",
            self.name
        );
        if keys.dtype() != self.key_dtype || values.dtype() != self.value_dtype {
            return Err(self.signature_error(
                &[keys.dtype(), values.dtype()],
                &[self.key_dtype, self.value_dtype],
                "",
            ));
        }
        ensure!(
            keys.rank() == 1,
            invalid_argument,
            "Keys must be a vector, but received shape{}",
            keys.shape()
        );
        ensure!(
            values.rank() == 1,
            invalid_argument,
            "Values must be a vector, but received shape{}",
            values.shape()
        );
        ensure!(
            keys.num_elements() == values.num_elements(),
            invalid_argument,
            "Keys and values must have the same size {} vs {}",
            keys.num_elements(),
            values.num_elements()
        );
        let mut st = self.state.write();
        if st.initialized {
            if st.index.len() == keys.num_elements() {
                return Ok(());
            }
            bail!(
                failed_precondition,
                "Table was already initialized with different data."
            );
        }
        st.index.reserve(keys.num_elements());
        match st.put(keys, values, self.vlen(), true) {
            Ok(()) => {
                st.initialized = true;
                Ok(())
            }
            Err(e) => {
                st.clear(self.value_dtype);
                Err(e)
            }
        }
    }

    /// `LookupTableRemove` on a mutable table; absent keys are ignored.
    pub fn remove(&self, keys: &Tensor) -> Result<()> {
        ensure!(
            self.kind != TableKind::Static,
            unimplemented,
            "Remove not supported by InitializableLookupTable implementations"
        );
        if keys.dtype() != self.key_dtype {
            return Err(self.signature_error(&[keys.dtype()], &[self.key_dtype], ""));
        }
        self.check_reserved(keys)?;
        let mut st = self.state.write();
        let st = &mut *st;
        let mut freed = Vec::new();
        match (&mut st.index, Keys::of(keys)?) {
            (Index::I32(m), Keys::I32(k)) => freed.extend(k.iter().filter_map(|x| m.remove(x))),
            (Index::I64(m), Keys::I64(k)) => freed.extend(k.iter().filter_map(|x| m.remove(x))),
            (Index::Str(m), Keys::Str(k)) => freed.extend(k.iter().filter_map(|x| m.remove(x))),
            _ => bail!(internal, "table key dtype mismatch"),
        }
        st.free.extend(freed);
        Ok(())
    }

    /// `LookupTableExport`: keys `[n]` and values `[n, *value_shape]`, in
    /// the order rows were taken (TensorFlow's order is its hash map's).
    /// A dense table exports its buckets instead: keys `[buckets, 1]` and
    /// values `[buckets, value size]`, empty buckets holding `empty_key` and
    /// zeros, each key in the bucket TensorFlow's probing gives it when the
    /// keys go in in row order (for integer keys TensorFlow hashes a key to
    /// itself, so its layout is reproduced; string keys hash differently).
    pub fn export(&self) -> Result<(Tensor, Tensor)> {
        let st = self.state.read();
        let (rows, keys) = st.index.entries();
        let vlen = self.vlen();
        if let Some(cfg) = &self.dense {
            return self.export_dense(&st, cfg, &rows, keys);
        }
        let n = rows.len();
        let values = for_value_dtype!(self.value_dtype, T => {
            let vals = st.values_slice::<T>();
            let mut out = Vec::with_capacity(n * vlen);
            for &r in &rows {
                let r = r as usize;
                out.extend_from_slice(&vals[r * vlen..(r + 1) * vlen]);
            }
            T::wrap(out)
        });
        let mut vdims = vec![n];
        vdims.extend_from_slice(self.value_shape.dims());
        Ok((
            Tensor::new(Shape::new(&[n]), keys)?,
            Tensor::new(Shape::new(&vdims), values)?,
        ))
    }

    fn export_dense(
        &self,
        st: &State,
        cfg: &DenseConfig,
        rows: &[u32],
        keys: Data,
    ) -> Result<(Tensor, Tensor)> {
        let b = st.num_buckets;
        let mask = b - 1;
        let vlen = self.vlen();
        // Bucket of each entry, probing as TensorFlow does (1, 2, 3, ... steps).
        let hashes: Vec<u64> = match &keys {
            Data::I32(k) => k.iter().map(|&x| x as i64 as u64).collect(),
            Data::I64(k) => k.iter().map(|&x| x as u64).collect(),
            Data::Str(k) => k
                .iter()
                .map(|x| {
                    use std::hash::BuildHasher;
                    rustc_hash::FxBuildHasher.hash_one(x.as_slice())
                })
                .collect(),
            _ => bail!(internal, "table key dtype mismatch"),
        };
        let mut slot_of = vec![usize::MAX; b];
        for (e, h) in hashes.iter().enumerate() {
            let mut bucket = (*h as usize) & mask;
            let mut probes = 0;
            while slot_of[bucket] != usize::MAX {
                probes += 1;
                bucket = (bucket + probes) & mask;
            }
            slot_of[bucket] = e;
        }
        let out_keys = for_value_dtype!(self.key_dtype, K => {
            let k = K::buffer(&keys).expect("key dtype");
            let empty = &cfg.empty.as_slice::<K>()?[0];
            bucket_keys::<K>(&slot_of, k, empty)
        });
        let out_values = for_value_dtype!(self.value_dtype, T => {
            let vals = st.values_slice::<T>();
            let zeros = Data::zeros(self.value_dtype, b * vlen);
            let mut out = T::buffer(&zeros).expect("value dtype").to_vec();
            for (bucket, &e) in slot_of.iter().enumerate() {
                if e != usize::MAX {
                    let r = rows[e] as usize;
                    out[bucket * vlen..(bucket + 1) * vlen]
                        .clone_from_slice(&vals[r * vlen..(r + 1) * vlen]);
                }
            }
            T::wrap(out)
        });
        Ok((
            Tensor::new(Shape::new(&[b, 1]), out_keys)?,
            Tensor::new(Shape::new(&[b, vlen]), out_values)?,
        ))
    }

    /// `LookupTableImport`: replaces the contents of a mutable table (a
    /// dense table takes exported buckets, skipping empty and deleted
    /// keys); initializes a static one.
    pub fn import(&self, keys: &Tensor, values: &Tensor) -> Result<()> {
        match self.kind {
            TableKind::Static => self.initialize(keys, values),
            TableKind::Mutable => {
                self.check_insert(keys, values)?;
                let mut st = self.state.write();
                st.clear(self.value_dtype);
                st.put(keys, values, self.vlen(), false)
            }
            TableKind::Dense => {
                let cfg = self.dense.as_ref().expect("dense config");
                if keys.dtype() != self.key_dtype || values.dtype() != self.value_dtype {
                    return Err(self.signature_error(
                        &[keys.dtype(), values.dtype()],
                        &[self.key_dtype, self.value_dtype],
                        "",
                    ));
                }
                let b = keys.dims().first().copied().unwrap_or(0);
                let vlen = self.vlen();
                if keys.num_elements() != b
                    || values.num_elements() != b * vlen
                    || b < 4
                    || !b.is_power_of_two()
                {
                    bail!(
                        invalid_argument,
                        "MutableDenseHashTable '{}': import expects keys [buckets, 1] and values \
                         [buckets, {vlen}] with a power-of-2 bucket count, got {} and {}",
                        self.name,
                        keys.shape(),
                        values.shape()
                    );
                }
                // Keep the buckets holding real keys.
                fn live<K: Element + PartialEq>(
                    keys: &Tensor,
                    cfg: &DenseConfig,
                ) -> Result<Vec<usize>> {
                    let (e, d) = (
                        &cfg.empty.as_slice::<K>()?[0],
                        &cfg.deleted.as_slice::<K>()?[0],
                    );
                    Ok(keys
                        .as_slice::<K>()?
                        .iter()
                        .enumerate()
                        .filter(|(_, k)| *k != e && *k != d)
                        .map(|(i, _)| i)
                        .collect())
                }
                let keep = match self.key_dtype {
                    DType::Int32 => live::<i32>(keys, cfg)?,
                    DType::Int64 => live::<i64>(keys, cfg)?,
                    _ => live::<Vec<u8>>(keys, cfg)?,
                };
                let k = take_rows(keys, &keep, 1)?;
                let mut vdims = vec![keep.len()];
                vdims.extend_from_slice(self.value_shape.dims());
                let v = take_rows(values, &keep, vlen)?.with_shape(Shape::new(&vdims))?;
                let mut st = self.state.write();
                st.clear(self.value_dtype);
                st.num_buckets = b;
                st.put(&k, &v, vlen, false)
            }
        }
    }
}

/// The dense table's exported keys: each bucket's key, or `empty`.
fn bucket_keys<K: Element>(slot_of: &[usize], keys: &[K], empty: &K) -> Data {
    K::wrap(
        slot_of
            .iter()
            .map(|&e| {
                if e == usize::MAX {
                    empty.clone()
                } else {
                    keys[e].clone()
                }
            })
            .collect(),
    )
}

/// Rows `keep` of `t` (rows of `width` elements), as a flat vector.
fn take_rows(t: &Tensor, keep: &[usize], width: usize) -> Result<Tensor> {
    let data = for_value_dtype!(t.dtype(), T => {
        let s = t.as_slice::<T>()?;
        let mut out = Vec::with_capacity(keep.len() * width);
        for &i in keep {
            out.extend_from_slice(&s[i * width..(i + 1) * width]);
        }
        T::wrap(out)
    });
    Tensor::new(Shape::new(&[keep.len() * width]), data)
}

impl State {
    fn values_slice<T: Element>(&self) -> &[T] {
        T::buffer(&self.values).expect("value dtype")
    }

    fn clear(&mut self, value_dtype: DType) {
        self.index.clear();
        self.values = Data::zeros(value_dtype, 0);
        self.rows = 0;
        self.free.clear();
        self.initialized = false;
    }

    /// Inserts `keys` with their value rows. With `check_same`, a key
    /// already present must have the same value (a static table's rule).
    fn put(&mut self, keys: &Tensor, values: &Tensor, vlen: usize, check_same: bool) -> Result<()> {
        let ks = Keys::of(keys)?;
        let n = keys.num_elements();
        // First the rows: (row, whether the key was there already).
        let mut rows: Vec<(u32, bool)> = Vec::with_capacity(n);
        {
            let (rows_used, free) = (&mut self.rows, &mut self.free);
            let mut alloc = || -> Result<u32> {
                if let Some(r) = free.pop() {
                    return Ok(r);
                }
                let r = u32::try_from(*rows_used)
                    .map_err(|_| Error::resource_exhausted("lookup table is full (2^32 rows)"))?;
                *rows_used += 1;
                Ok(r)
            };
            fn slot<K: std::hash::Hash + Eq>(
                m: &mut FxHashMap<K, u32>,
                k: K,
                alloc: &mut impl FnMut() -> Result<u32>,
            ) -> Result<(u32, bool)> {
                use std::collections::hash_map::Entry;
                Ok(match m.entry(k) {
                    Entry::Occupied(o) => (*o.get(), true),
                    Entry::Vacant(v) => (*v.insert(alloc()?), false),
                })
            }
            match (&mut self.index, &ks) {
                (Index::I32(m), Keys::I32(k)) => {
                    for &x in k.iter() {
                        rows.push(slot(m, x, &mut alloc)?);
                    }
                }
                (Index::I64(m), Keys::I64(k)) => {
                    for &x in k.iter() {
                        rows.push(slot(m, x, &mut alloc)?);
                    }
                }
                (Index::Str(m), Keys::Str(k)) => {
                    m.reserve(k.len());
                    for x in k.iter() {
                        rows.push(m.get_or_insert(x, &mut alloc)?);
                    }
                }
                _ => bail!(internal, "table key dtype mismatch"),
            }
        }
        let total = self.rows * vlen;
        let values_dtype = values.dtype();
        for_value_dtype!(values_dtype, T => {
            let src = values.as_slice::<T>()?;
            let col = Arc::make_mut(T::buffer_mut(&mut self.values).expect("value dtype"));
            if col.len() < total {
                let fill = Data::zeros(values_dtype, total - col.len());
                col.extend_from_slice(T::buffer(&fill).expect("value dtype"));
            }
            for (i, &(r, existed)) in rows.iter().enumerate() {
                let (r, src_row) = (r as usize, &src[i * vlen..(i + 1) * vlen]);
                let dst = &mut col[r * vlen..(r + 1) * vlen];
                if existed && check_same && !same_values(dst, src_row) {
                    bail!(
                        failed_precondition,
                        "HashTable has different value for same key. Key {} has {} and trying to \
                         add value {}",
                        ks.show(i),
                        show_elem(&T::wrap(dst.to_vec()), 0),
                        show_elem(values.data(), i * vlen)
                    );
                }
                dst.clone_from_slice(src_row);
            }
            Ok(())
        })
    }
}

fn same_values<T: Element + PartialEq>(a: &[T], b: &[T]) -> bool {
    a == b
}

/// A lookup's gather: copies each key's row, or the default.
struct Gather<'a, T> {
    vals: &'a [T],
    def: &'a [T],
    per_key: bool,
    vlen: usize,
}

impl<T: Element> Gather<'_, T> {
    /// Fills `out` (one row per key) with each key's values or the
    /// default. `fill(at, rows)` writes the rows of keys `at..at +
    /// rows.len()` (`u32::MAX`: absent). Pieces of [`PIECE`] keys run in
    /// parallel when there are several.
    fn run(&self, out: &mut [T], fill: impl Fn(usize, &mut [u32]) + Sync) {
        const SUB: usize = 1024;
        let vlen = self.vlen;
        let n = out.len() / vlen;
        let piece = if n <= PIECE {
            n
        } else {
            // Enough pieces to balance the team, none smaller than PIECE.
            n.div_ceil(team::threads() * 8).max(PIECE)
        };
        team::for_each_chunk_mut(out, piece * vlen, |c, dst| {
            let mut rows = [0u32; SUB];
            for (s, sub) in dst.chunks_mut(SUB * vlen).enumerate() {
                let first = c * piece + s * SUB;
                let m = sub.len() / vlen;
                fill(first, &mut rows[..m]);
                if vlen == 1 && !self.per_key {
                    let d = &self.def[0];
                    for (o, &r) in sub.iter_mut().zip(&rows[..m]) {
                        *o = if r == u32::MAX {
                            d.clone()
                        } else {
                            self.vals[r as usize].clone()
                        };
                    }
                    continue;
                }
                for (j, (o, &r)) in sub.chunks_mut(vlen).zip(&rows[..m]).enumerate() {
                    let i = first + j;
                    let src = if r != u32::MAX {
                        &self.vals[r as usize * vlen..(r as usize + 1) * vlen]
                    } else if self.per_key {
                        &self.def[i * vlen..(i + 1) * vlen]
                    } else {
                        self.def
                    };
                    o.clone_from_slice(src);
                }
            }
        });
    }
}

/// The rows of integer `keys` (`u32::MAX`: absent).
fn int_rows<K: std::hash::Hash + Eq>(m: &FxHashMap<K, u32>, keys: &[K], rows: &mut [u32]) {
    for (r, k) in rows.iter_mut().zip(keys) {
        *r = m.get(k).copied().unwrap_or(u32::MAX);
    }
}
