//! Segment reductions (`SegmentSum`/`Mean`/`Prod`/`Max`/`Min` over sorted
//! ids, `UnsortedSegment*` over any ids), n-dimensional scatters into a
//! tensor (`ScatterNd`, `TensorScatter*`, `ScatterNd*` on variables) and the
//! `DynamicPartition` / `DynamicStitch` pair, with TensorFlow's CPU
//! semantics and error messages.
//!
//! The reductions split their work into pieces fixed by the problem alone
//! (never by the thread count), so results are identical whatever the
//! number of threads: sorted segments are cut at segment boundaries into
//! blocks of about [`BLOCK`] input elements, each summed in order by one
//! task; unsorted segments accumulate fixed row ranges into private copies
//! of the output, added together in range order.

use super::array::ScatterOp;
use super::elementwise::cast;
use super::scalar::Scalar;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::Shape;
use crate::team;
use crate::tensor::{Element, Tensor};

/// Input elements per block of a parallel reduction.
const BLOCK: usize = 1 << 16;

/// At most this many private output copies for an unsorted reduction.
const MAX_PARTIALS: usize = 8;

/// How a segment reduction combines the rows of one segment.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SegmentOp {
    Sum,
    Mean,
    Prod,
    Max,
    Min,
}

impl SegmentOp {
    /// TensorFlow's op type name (`Segment<op>` / `UnsortedSegment<op>`).
    pub fn name(self, sorted: bool) -> &'static str {
        use SegmentOp::*;
        match (sorted, self) {
            (true, Sum) => "SegmentSum",
            (true, Mean) => "SegmentMean",
            (true, Prod) => "SegmentProd",
            (true, Max) => "SegmentMax",
            (true, Min) => "SegmentMin",
            (false, Sum) => "UnsortedSegmentSum",
            (false, Mean) => "UnsortedSegmentMean",
            (false, Prod) => "UnsortedSegmentProd",
            (false, Max) => "UnsortedSegmentMax",
            (false, Min) => "UnsortedSegmentMin",
        }
    }
}

/// The finite extremes TensorFlow fills empty segments of a max (lowest) or
/// min (highest) with; for floats these are `-MAX`/`MAX`, not infinities.
pub trait Extremes: Scalar {
    fn lowest() -> Self;
    fn highest() -> Self;
}

macro_rules! impl_extremes {
    ($($t:ty),*) => {$(
        impl Extremes for $t {
            #[inline(always)] fn lowest() -> Self { <$t>::MIN }
            #[inline(always)] fn highest() -> Self { <$t>::MAX }
        }
    )*};
}
impl_extremes!(f32, f64, i8, i16, i32, i64, u8, u16, u32, u64);

/// An integer index type (`int32` or `int64` ids).
pub trait Index: Element + Copy {
    fn get(self) -> i64;
}
impl Index for i32 {
    #[inline(always)]
    fn get(self) -> i64 {
        self as i64
    }
}
impl Index for i64 {
    #[inline(always)]
    fn get(self) -> i64 {
        self
    }
}

#[cfg(test)]
fn combine<T: Scalar>(op: SegmentOp, a: T, b: T) -> T {
    match op {
        SegmentOp::Sum | SegmentOp::Mean => a.add(b),
        SegmentOp::Prod => a.mul(b),
        SegmentOp::Max => {
            if b > a {
                b
            } else {
                a
            }
        }
        SegmentOp::Min => {
            if b < a {
                b
            } else {
                a
            }
        }
    }
}

/// `acc[j] = acc[j] op x[j]`, with the operator hoisted out of the loop.
#[inline(always)]
fn combine_rows<T: Scalar>(op: SegmentOp, acc: &mut [T], x: &[T]) {
    match op {
        SegmentOp::Sum | SegmentOp::Mean => acc.iter_mut().zip(x).for_each(|(a, &b)| *a = a.add(b)),
        SegmentOp::Prod => acc.iter_mut().zip(x).for_each(|(a, &b)| *a = a.mul(b)),
        SegmentOp::Max => acc.iter_mut().zip(x).for_each(|(a, &b)| {
            if b > *a {
                *a = b
            }
        }),
        SegmentOp::Min => acc.iter_mut().zip(x).for_each(|(a, &b)| {
            if b < *a {
                *a = b
            }
        }),
    }
}

/// Runs `$go::<T>(...)` for the real dtype of `$dt`, or evaluates `$other`.
macro_rules! real_dispatch {
    ($dt:expr, $go:ident ( $($arg:expr),* ), $other:expr) => {
        match $dt {
            DType::Float32 => $go::<f32>($($arg),*),
            DType::Float64 => $go::<f64>($($arg),*),
            DType::Int32 => $go::<i32>($($arg),*),
            DType::Int64 => $go::<i64>($($arg),*),
            DType::Int8 => $go::<i8>($($arg),*),
            DType::Int16 => $go::<i16>($($arg),*),
            DType::UInt8 => $go::<u8>($($arg),*),
            DType::UInt16 => $go::<u16>($($arg),*),
            DType::UInt32 => $go::<u32>($($arg),*),
            DType::UInt64 => $go::<u64>($($arg),*),
            _ => $other,
        }
    };
}

/// Like `real_dispatch!` but also for the half floats, bool and string.
macro_rules! any_dispatch {
    ($dt:expr, $go:ident ( $($arg:expr),* ), $other:expr) => {
        match $dt {
            DType::Float16 => $go::<half::f16>($($arg),*),
            DType::BFloat16 => $go::<half::bf16>($($arg),*),
            DType::Bool => $go::<bool>($($arg),*),
            DType::String => $go::<Vec<u8>>($($arg),*),
            _ => real_dispatch!($dt, $go($($arg),*), $other),
        }
    };
}

fn is_half(d: DType) -> bool {
    matches!(d, DType::Float16 | DType::BFloat16)
}

fn dims_text(d: &[usize]) -> String {
    let parts: Vec<String> = d.iter().map(usize::to_string).collect();
    format!("[{}]", parts.join(","))
}

// ---------------------------------------------------------------------------
// Sorted segments.

/// `Segment<op>(data, segment_ids)`: reduces the rows of `data` that share a
/// segment id; `segment_ids` is a sorted vector as long as `data`'s first
/// dimension. The output has `segment_ids[-1] + 1` rows; rows of ids that do
/// not occur are 0 (1 for `Prod`), as TensorFlow's CPU kernel.
pub fn segment_reduce(data: &Tensor, ids: &Tensor, op: SegmentOp) -> Result<Tensor> {
    let name = op.name(true);
    if data.rank() < 1 {
        return Err(Error::invalid_argument(format!(
            "{name}: input must be at least rank 1"
        )));
    }
    if ids.rank() != 1 {
        return Err(Error::invalid_argument(format!(
            "{name}: segment_ids should be a vector."
        )));
    }
    if ids.num_elements() != data.dims()[0] {
        return Err(Error::invalid_argument(
            "segment_ids should be the same size as dimension 0 of input.",
        ));
    }
    let dt = data.dtype();
    if is_half(dt) {
        let r = segment_reduce(&cast(data, DType::Float32)?, ids, op)?;
        return cast(&r, dt);
    }
    match ids.dtype() {
        DType::Int32 => sorted_typed(data, ids.as_slice::<i32>()?, op),
        DType::Int64 => sorted_typed(data, ids.as_slice::<i64>()?, op),
        other => Err(Error::invalid_argument(format!(
            "{name}: segment_ids must be int32 or int64, got {other}"
        ))),
    }
}

fn sorted_typed<I: Index>(data: &Tensor, ids: &[I], op: SegmentOp) -> Result<Tensor> {
    let name = op.name(true);
    let n = ids.len();
    let num = if n > 0 { ids[n - 1].get() + 1 } else { 0 };
    if num < 0 {
        return Err(Error::invalid_argument("segment ids must be >= 0"));
    }
    if !is_sorted_non_negative(ids) {
        return Err(sorted_error(ids, num));
    }
    let num = num as usize;
    let rest = &data.dims()[1..];
    let inner: usize = rest.iter().product();
    let mut shape = Shape::new(&[num]);
    for &d in rest {
        shape.push(d);
    }
    Tensor::check_allocation(name, data.dtype(), shape.dims())?;
    fn go<T: Scalar + Extremes>(
        data: &Tensor,
        ids: &[impl Index],
        op: SegmentOp,
        num: usize,
        inner: usize,
        shape: Shape,
    ) -> Result<Tensor> {
        let d = data.as_slice::<T>()?;
        Tensor::from_vec(shape, sorted_kernel(d, ids, op, num, inner))
    }
    real_dispatch!(
        data.dtype(),
        go(data, ids, op, num, inner, shape),
        Err(Error::invalid_argument(format!(
            "{name} is not supported for {}",
            data.dtype()
        )))
    )
}

/// True when the ids are non-decreasing and the first is non-negative
/// (checked in parallel for long vectors).
fn is_sorted_non_negative<I: Index>(ids: &[I]) -> bool {
    if ids.first().is_some_and(|v| v.get() < 0) {
        return false;
    }
    let sorted = |s: &[I]| s.windows(2).all(|w| w[0].get() <= w[1].get());
    if ids.len() < BLOCK * 4 {
        return sorted(ids);
    }
    // Overlapping chunks (one shared element) so the seams are checked too.
    let chunks = ids.len().div_ceil(BLOCK * 4);
    let ok = team::map_chunks(&vec![(); chunks], 1, |c, _| {
        let lo = c * BLOCK * 4;
        let hi = ((c + 1) * BLOCK * 4 + 1).min(ids.len());
        sorted(&ids[lo..hi])
    });
    ok.into_iter().all(|b| b)
}

/// TensorFlow's error for unsorted or out-of-range ids, found by its own
/// scan order: each run of equal ids is bounds-checked, then compared with
/// the next run.
fn sorted_error<I: Index>(ids: &[I], num: i64) -> Error {
    let mut k = 0;
    while k < ids.len() {
        let id = ids[k].get();
        let mut end = k + 1;
        while end < ids.len() && ids[end].get() == id {
            end += 1;
        }
        if id < 0 || id >= num {
            return Error::invalid_argument(format!(
                "Segment id {id} out of range [0, {num}), possibly because 'segment_ids' input is not sorted."
            ));
        }
        if end < ids.len() && ids[end].get() < id {
            return Error::invalid_argument("segment ids are not increasing");
        }
        k = end;
    }
    Error::invalid_argument("segment ids are not increasing")
}

/// The reduction over validated sorted ids.
fn sorted_kernel<T: Scalar, I: Index>(
    d: &[T],
    ids: &[I],
    op: SegmentOp,
    num: usize,
    inner: usize,
) -> Vec<T> {
    let n = ids.len();
    let empty = if op == SegmentOp::Prod {
        T::one()
    } else {
        T::zero()
    };
    let mut out = vec![empty; num * inner];
    if n == 0 || inner == 0 {
        return out;
    }
    // Block starts: the first segment start at or after each multiple of
    // `rows` input rows (so every block holds whole segments).
    let rows = (BLOCK / inner).max(1);
    let mut starts = vec![0usize];
    let mut p = rows;
    while p < n {
        let prev = ids[p - 1].get();
        let s = ids.partition_point(|x| x.get() <= prev);
        if s >= n {
            break;
        }
        if s > *starts.last().expect("non-empty") {
            starts.push(s);
        }
        p = s.max(p) + rows;
    }
    // Output rows of each block: from its first id (0 for the first block)
    // to the next block's first id.
    let mut pieces: Vec<(usize, usize, usize, &mut [T])> = Vec::with_capacity(starts.len());
    let mut rest: &mut [T] = &mut out;
    for (b, &s) in starts.iter().enumerate() {
        let o_lo = if b == 0 { 0 } else { ids[s].get() as usize };
        let (e, o_hi) = match starts.get(b + 1) {
            Some(&e) => (e, ids[e].get() as usize),
            None => (n, num),
        };
        let (mine, tail) = std::mem::take(&mut rest).split_at_mut((o_hi - o_lo) * inner);
        pieces.push((s, e, o_lo, mine));
        rest = tail;
    }
    team::for_each_mut_sweep(&mut pieces, team::Sweep::Forward, |_, piece| {
        let (s, e, o_lo, ref mut o) = *piece;
        if sum_narrow_rows(op, d, ids, (s, e, o_lo), o, inner) {
            return;
        }
        let mut k = s;
        while k < e {
            let id = ids[k].get() as usize;
            let row = &mut o[(id - o_lo) * inner..(id - o_lo + 1) * inner];
            row.copy_from_slice(&d[k * inner..(k + 1) * inner]);
            let mut end = k + 1;
            while end < e && ids[end].get() as usize == id {
                combine_rows(op, row, &d[end * inner..(end + 1) * inner]);
                end += 1;
            }
            if op == SegmentOp::Mean {
                let c = T::from_i64((end - k) as i64);
                row.iter_mut().for_each(|x| *x = x.div(c));
            }
            k = end;
        }
    });
    out
}

/// The sum or mean of sorted segments of float rows 1, 2, 4, 8 or 16 wide
/// (embedding-sized rows): each segment is summed in an accumulator held in
/// registers, in the same order as the general loop, so the results are the
/// same bits. The general loop pays a slice setup per input row, which made
/// it compute-bound on narrow rows. Returns false, having done nothing, for
/// any other case.
fn sum_narrow_rows<T: Scalar, I: Index>(
    op: SegmentOp,
    d: &[T],
    ids: &[I],
    rows: (usize, usize, usize),
    out: &mut [T],
    inner: usize,
) -> bool {
    use std::any::TypeId;
    if !matches!(op, SegmentOp::Sum | SegmentOp::Mean) {
        return false;
    }
    let mean = op == SegmentOp::Mean;
    macro_rules! widths {
        ($f:ty) => {{
            // SAFETY: `T` is `$f` (checked by the caller's TypeId test), so
            // the slices are reinterpreted as their own element type.
            let d = unsafe { std::slice::from_raw_parts(d.as_ptr() as *const $f, d.len()) };
            let out =
                unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr() as *mut $f, out.len()) };
            match inner {
                1 => sum_rows::<$f, I, 1>(d, ids, rows, out, mean),
                2 => sum_rows::<$f, I, 2>(d, ids, rows, out, mean),
                4 => sum_rows::<$f, I, 4>(d, ids, rows, out, mean),
                8 => sum_rows::<$f, I, 8>(d, ids, rows, out, mean),
                16 => sum_rows::<$f, I, 16>(d, ids, rows, out, mean),
                _ => return false,
            }
            true
        }};
    }
    if TypeId::of::<T>() == TypeId::of::<f32>() {
        widths!(f32)
    } else if TypeId::of::<T>() == TypeId::of::<f64>() {
        widths!(f64)
    } else {
        false
    }
}

/// [`sum_narrow_rows`] for rows of `W` elements: input rows `lo..hi`, whose
/// segments land in `out` from segment `o_lo` on.
fn sum_rows<F: Scalar, I: Index, const W: usize>(
    d: &[F],
    ids: &[I],
    (lo, hi, o_lo): (usize, usize, usize),
    out: &mut [F],
    mean: bool,
) {
    let row = |k: usize| -> [F; W] { d[k * W..(k + 1) * W].try_into().expect("W elements") };
    let mut k = lo;
    while k < hi {
        let id = ids[k].get();
        let mut acc = row(k);
        let mut end = k + 1;
        while end < hi && ids[end].get() == id {
            let x = row(end);
            for j in 0..W {
                acc[j] = acc[j].add(x[j]);
            }
            end += 1;
        }
        if mean {
            let c = F::from_i64((end - k) as i64);
            acc.iter_mut().for_each(|a| *a = a.div(c));
        }
        let at = (id as usize - o_lo) * W;
        out[at..at + W].copy_from_slice(&acc);
        k = end;
    }
}

// ---------------------------------------------------------------------------
// Unsorted segments.

/// `UnsortedSegment<op>(data, segment_ids, num_segments)`: reduces the
/// slices `data[i...]` into row `segment_ids[i...]` of a `num_segments`-row
/// output; `segment_ids`' shape is a prefix of `data`'s; negative ids are
/// dropped; empty rows are 0 (sum), 1 (prod), the lowest (max) or highest
/// (min) value of the dtype. `Mean` is not an op of its own (TensorFlow
/// composes it) and is refused.
pub fn unsorted_segment_reduce(
    data: &Tensor,
    ids: &Tensor,
    num: i64,
    op: SegmentOp,
) -> Result<Tensor> {
    let name = op.name(false);
    if op == SegmentOp::Mean {
        return Err(Error::invalid_argument(
            "UnsortedSegmentMean is not a kernel (compose it from UnsortedSegmentSum)",
        ));
    }
    if num < 0 {
        return Err(Error::invalid_argument(format!(
            "Input num_segments == {num} must not be negative."
        )));
    }
    let r = ids.rank();
    if data.rank() < r || data.dims()[..r] != *ids.dims() {
        return Err(Error::invalid_argument(format!(
            "data.shape = {} does not start with segment_ids.shape = {}",
            dims_text(data.dims()),
            dims_text(ids.dims())
        )));
    }
    let num = num as usize;
    let rest = &data.dims()[r..];
    let inner: usize = rest.iter().product();
    let mut shape = Shape::new(&[num]);
    for &d in rest {
        shape.push(d);
    }
    Tensor::check_allocation(name, data.dtype(), shape.dims())?;
    let dt = data.dtype();
    if is_half(dt) {
        let r = unsorted_segment_reduce(&cast(data, DType::Float32)?, ids, num as i64, op)?;
        return cast(&r, dt);
    }
    fn go<T: Scalar + Extremes>(
        data: &Tensor,
        ids: &Tensor,
        op: SegmentOp,
        num: usize,
        inner: usize,
        shape: Shape,
    ) -> Result<Tensor> {
        let d = data.as_slice::<T>()?;
        let out = match ids.dtype() {
            DType::Int32 => unsorted_kernel(d, ids.as_slice::<i32>()?, op, num, inner)?,
            DType::Int64 => unsorted_kernel(d, ids.as_slice::<i64>()?, op, num, inner)?,
            other => {
                return Err(Error::invalid_argument(format!(
                    "segment_ids must be int32 or int64, got {other}"
                )))
            }
        };
        Tensor::from_vec(shape, out)
    }
    real_dispatch!(
        dt,
        go(data, ids, op, num, inner, shape),
        Err(Error::invalid_argument(format!(
            "{name} is not supported for {dt}"
        )))
    )
}

fn empty_value<T: Extremes>(op: SegmentOp) -> T {
    match op {
        SegmentOp::Sum | SegmentOp::Mean => T::zero(),
        SegmentOp::Prod => T::one(),
        SegmentOp::Max => T::lowest(),
        SegmentOp::Min => T::highest(),
    }
}

/// Accumulates rows `lo..hi` into `out`; the first out-of-range id is an error.
#[allow(clippy::too_many_arguments)]
fn accumulate<T: Scalar, I: Index>(
    out: &mut [T],
    d: &[T],
    ids: &[I],
    lo: usize,
    hi: usize,
    op: SegmentOp,
    num: usize,
    inner: usize,
) -> Result<()> {
    for k in lo..hi {
        let id = ids[k].get();
        if id < 0 {
            continue;
        }
        if id as usize >= num {
            return Err(Error::invalid_argument(format!(
                "segment_ids[{k}] = {id} is out of range [0, {num})"
            )));
        }
        let i = id as usize;
        combine_rows(
            op,
            &mut out[i * inner..(i + 1) * inner],
            &d[k * inner..(k + 1) * inner],
        );
    }
    Ok(())
}

/// The number of private output copies an unsorted reduction of `n` rows
/// into `num` rows uses: a function of the sizes only, and small enough that
/// the copies cost at most half the input's traffic.
fn partials(n: usize, num: usize, inner: usize) -> usize {
    let mut k = (n.saturating_mul(inner) / (BLOCK * 2)).clamp(1, MAX_PARTIALS);
    while k > 1 && k.saturating_mul(num) > n / 2 {
        k -= 1;
    }
    k
}

fn unsorted_kernel<T: Scalar + Extremes, I: Index>(
    d: &[T],
    ids: &[I],
    op: SegmentOp,
    num: usize,
    inner: usize,
) -> Result<Vec<T>> {
    let n = ids.len();
    let empty = empty_value::<T>(op);
    let len = num * inner;
    if inner == 0 {
        // Still check the ids, as TensorFlow does.
        accumulate::<T, I>(&mut [], &[], ids, 0, n, op, num, 0)?;
        return Ok(Vec::new());
    }
    let k = partials(n, num, inner);
    if k == 1 {
        let mut out = vec![empty; len];
        accumulate(&mut out, d, ids, 0, n, op, num, inner)?;
        return Ok(out);
    }
    let rows = n.div_ceil(k);
    let mut parts: Vec<Result<Vec<T>>> = (0..k).map(|_| Ok(Vec::new())).collect();
    team::for_each_mut_sweep(&mut parts, team::Sweep::Forward, |p, slot| {
        let mut buf = vec![empty; len];
        let (lo, hi) = (p * rows, ((p + 1) * rows).min(n));
        *slot = accumulate(&mut buf, d, ids, lo, hi, op, num, inner).map(|_| buf);
    });
    let mut bufs = Vec::with_capacity(k);
    for p in parts {
        bufs.push(p?);
    }
    let mut out = bufs.swap_remove(0);
    // `swap_remove` moved the last copy to the front; restore the order so
    // the copies are combined as 0, 1, ..., k-1.
    if !bufs.is_empty() {
        bufs.rotate_left(1);
    }
    let chunk = super::parallel::CHUNK;
    let add = |i: usize, piece: &mut [T]| {
        let lo = i * chunk;
        for b in &bufs {
            combine_rows(op, piece, &b[lo..lo + piece.len()]);
        }
    };
    if len < super::parallel::PARALLEL_THRESHOLD {
        add(0, &mut out);
    } else {
        team::for_each_chunk_mut(&mut out, chunk, add);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// N-dimensional scatters.

/// The flat offsets of each index row of `indices` into `shape`, after
/// TensorFlow's checks; with `ignore_bad`, rows that do not index into
/// `shape` become `None` (`bad_indices_policy="IGNORE"`).
fn nd_offsets(
    indices: &Tensor,
    shape: &[usize],
    updates: &Tensor,
    ignore_bad: bool,
) -> Result<(Vec<Option<usize>>, usize)> {
    let id = indices.dims();
    let Some(&depth) = id.last() else {
        return Err(Error::invalid_argument(format!(
            "Indices shape must have rank at least one. Found:{}",
            dims_text(id)
        )));
    };
    if depth > shape.len() {
        return Err(Error::invalid_argument(format!(
            "Index innermost dimension length must be <= output rank; saw: {depth} vs. {}",
            shape.len()
        )));
    }
    let outer = &id[..id.len() - 1];
    let n: usize = outer.iter().product();
    let slice = &shape[depth..];
    let inner: usize = slice.iter().product();
    let want: Vec<usize> = outer.iter().chain(slice).copied().collect();
    if updates.dims() != want.as_slice() {
        return Err(Error::invalid_argument(format!(
            "updates.shape {} must be indices.shape[:-1] + shape[indices.shape[-1]:] = {} (indices.shape = {}, shape = {})",
            dims_text(updates.dims()),
            dims_text(&want),
            dims_text(id),
            dims_text(shape)
        )));
    }
    let idx = indices.to_i64_vec()?;
    let mut strides = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    let mut offs = Vec::with_capacity(n);
    for k in 0..n {
        let row = &idx[k * depth..(k + 1) * depth];
        let mut off = 0usize;
        let mut ok = true;
        for (dd, &v) in row.iter().enumerate() {
            if v < 0 || v as usize >= shape[dd] {
                ok = false;
                break;
            }
            off += v as usize * strides[dd];
        }
        if ok {
            offs.push(Some(off));
        } else if ignore_bad {
            offs.push(None);
        } else {
            let parts: Vec<String> = row.iter().map(i64::to_string).collect();
            return Err(Error::invalid_argument(format!(
                "indices[{k}] = [{}] does not index into shape {}",
                parts.join(", "),
                dims_text(shape)
            )));
        }
    }
    Ok((offs, inner))
}

fn apply_rows<T: Element + Copy>(
    t: &mut Tensor,
    u: &Tensor,
    offs: &[Option<usize>],
    inner: usize,
    f: impl Fn(T, T) -> T,
) -> Result<()> {
    let u = u.as_slice::<T>()?.to_vec();
    let v = t.make_mut::<T>()?;
    for (k, off) in offs.iter().enumerate() {
        if let Some(off) = *off {
            for (x, &y) in v[off..off + inner]
                .iter_mut()
                .zip(&u[k * inner..(k + 1) * inner])
            {
                *x = f(*x, y);
            }
        }
    }
    Ok(())
}

fn apply_scalar<T: Scalar>(
    t: &mut Tensor,
    u: &Tensor,
    offs: &[Option<usize>],
    inner: usize,
    op: ScatterOp,
) -> Result<()> {
    match op {
        ScatterOp::Update => apply_rows::<T>(t, u, offs, inner, |_, y| y),
        ScatterOp::Add => apply_rows::<T>(t, u, offs, inner, |x, y| x.add(y)),
        ScatterOp::Sub => apply_rows::<T>(t, u, offs, inner, |x, y| x.sub(y)),
        ScatterOp::Mul => apply_rows::<T>(t, u, offs, inner, |x, y| x.mul(y)),
        ScatterOp::Div => apply_rows::<T>(t, u, offs, inner, |x, y| x.div(y)),
        ScatterOp::Max => apply_rows::<T>(t, u, offs, inner, |x, y| if y > x { y } else { x }),
        ScatterOp::Min => apply_rows::<T>(t, u, offs, inner, |x, y| if y < x { y } else { x }),
    }
}

/// Applies `updates` at the n-dimensional `indices` of `target` in place:
/// `target[indices[i]] op= updates[i]` (later updates of the same element
/// apply after earlier ones). Every index is checked before anything is
/// written, so a failed scatter leaves `target` unchanged. `op_name` names
/// the op in errors; `ignore_bad` skips indices outside `target`.
pub fn scatter_nd_apply(
    target: &mut Tensor,
    indices: &Tensor,
    updates: &Tensor,
    op: ScatterOp,
    op_name: &str,
    ignore_bad: bool,
) -> Result<()> {
    if updates.dtype() != target.dtype() {
        return Err(Error::invalid_argument(format!(
            "{op_name}: updates dtype {} does not match the tensor's {}",
            updates.dtype(),
            target.dtype()
        )));
    }
    let shape = target.dims().to_vec();
    let (offs, inner) = nd_offsets(indices, &shape, updates, ignore_bad)?;
    let dt = target.dtype();
    if is_half(dt) {
        let mut wide = cast(target, DType::Float32)?;
        let wu = cast(updates, DType::Float32)?;
        apply_scalar::<f32>(&mut wide, &wu, &offs, inner, op)?;
        *target = cast(&wide, dt)?;
        return Ok(());
    }
    match (dt, op) {
        (DType::Bool, ScatterOp::Update) => {
            apply_rows::<bool>(target, updates, &offs, inner, |_, y| y)
        }
        // TF's ScatterNd adds bools as `+=` on bool: a logical or.
        (DType::Bool, ScatterOp::Add) => {
            apply_rows::<bool>(target, updates, &offs, inner, |x, y| x | y)
        }
        (DType::String, ScatterOp::Update) => {
            let u = updates.as_slice::<Vec<u8>>()?.to_vec();
            let v = target.make_mut::<Vec<u8>>()?;
            for (k, off) in offs.iter().enumerate() {
                if let Some(off) = *off {
                    v[off..off + inner].clone_from_slice(&u[k * inner..(k + 1) * inner]);
                }
            }
            Ok(())
        }
        _ => real_dispatch!(
            dt,
            apply_scalar(target, updates, &offs, inner, op),
            Err(Error::invalid_argument(format!(
                "{op_name} is not supported for {dt}"
            )))
        ),
    }
}

/// Whether a `bad_indices_policy` attr asks to skip bad indices ("IGNORE");
/// "" / "DEFAULT" / "ERROR" raise, anything else is refused.
pub fn ignore_bad_indices(policy: &str) -> Result<bool> {
    match policy {
        "" | "DEFAULT" | "ERROR" => Ok(false),
        "IGNORE" => Ok(true),
        other => Err(Error::invalid_argument(format!(
            "Invalid bad indices policy: {other}"
        ))),
    }
}

// ---------------------------------------------------------------------------
// DynamicPartition / DynamicStitch.

/// `DynamicPartition`: splits the slices `data[i...]` into `num` outputs by
/// `partitions[i...]` (a prefix of `data`'s shape), keeping their order.
pub fn dynamic_partition(data: &Tensor, partitions: &Tensor, num: usize) -> Result<Vec<Tensor>> {
    let r = partitions.rank();
    if data.rank() < r || data.dims()[..r] != *partitions.dims() {
        return Err(Error::invalid_argument(format!(
            "data.shape must start with partitions.shape, got data.shape = {}, partitions.shape = {}",
            dims_text(data.dims()),
            dims_text(partitions.dims())
        )));
    }
    let p = partitions.to_i64_vec()?;
    let mut counts = vec![0usize; num];
    for (i, &v) in p.iter().enumerate() {
        if v < 0 || v as usize >= num {
            return Err(Error::invalid_argument(format!(
                "partitions{} = {v} is not in [0, {num})",
                index_text(i, partitions.dims())
            )));
        }
        counts[v as usize] += 1;
    }
    let rest = &data.dims()[r..];
    let inner: usize = rest.iter().product();
    fn go<T: Element + Clone + Default>(
        data: &Tensor,
        p: &[i64],
        counts: &[usize],
        rest: &[usize],
        inner: usize,
    ) -> Result<Vec<Tensor>> {
        let d = data.as_slice::<T>()?;
        let mut outs: Vec<Vec<T>> = counts
            .iter()
            .map(|&c| Vec::with_capacity(c * inner))
            .collect();
        for (i, &v) in p.iter().enumerate() {
            outs[v as usize].extend_from_slice(&d[i * inner..(i + 1) * inner]);
        }
        outs.into_iter()
            .zip(counts)
            .map(|(v, &c)| {
                let mut s = Shape::new(&[c]);
                for &x in rest {
                    s.push(x);
                }
                Tensor::from_vec(s, v)
            })
            .collect()
    }
    any_dispatch!(
        data.dtype(),
        go(data, &p, &counts, rest, inner),
        Err(Error::invalid_argument(format!(
            "DynamicPartition is not supported for {}",
            data.dtype()
        )))
    )
}

/// `[i]` for a vector, `[i,j,...]` for higher ranks (TensorFlow's wording of
/// an element position).
fn index_text(flat: usize, dims: &[usize]) -> String {
    if dims.len() <= 1 {
        return format!("[{flat}]");
    }
    let mut pos = vec![0usize; dims.len()];
    let mut f = flat;
    for i in (0..dims.len()).rev() {
        pos[i] = f % dims[i].max(1);
        f /= dims[i].max(1);
    }
    let parts: Vec<String> = pos.iter().map(usize::to_string).collect();
    format!("[{}]", parts.join(","))
}

/// `DynamicStitch` / `ParallelDynamicStitch`: `out[indices[m][i...]] =
/// data[m][i...]`, with `max(indices) + 1` rows; later pieces win where
/// indices repeat, rows no index names are zero.
pub fn dynamic_stitch(indices: &[Tensor], data: &[Tensor]) -> Result<Tensor> {
    if indices.len() != data.len() || data.is_empty() {
        return Err(Error::invalid_argument(format!(
            "DynamicStitch: {} indices and {} data tensors",
            indices.len(),
            data.len()
        )));
    }
    let dt = data[0].dtype();
    let mut rest: Option<Vec<usize>> = None;
    let mut max = -1i64;
    let mut ids = Vec::with_capacity(indices.len());
    for (m, (ix, dx)) in indices.iter().zip(data).enumerate() {
        if dx.dtype() != dt {
            return Err(Error::invalid_argument(format!(
                "DynamicStitch: data[{m}] has dtype {} but data[0] has {dt}",
                dx.dtype()
            )));
        }
        let r = ix.rank();
        if dx.rank() < r || dx.dims()[..r] != *ix.dims() {
            return Err(Error::invalid_argument(format!(
                "data[{m}].shape = {} does not start with indices[{m}].shape = {}",
                dims_text(dx.dims()),
                dims_text(ix.dims())
            )));
        }
        let tail = dx.dims()[r..].to_vec();
        match &rest {
            Some(t) if *t != tail => {
                return Err(Error::invalid_argument(format!(
                    "Need data[0].shape[{}:] = data[{m}].shape[{r}:], got data[0].shape = {}, data[{m}].shape = {}, indices[0].shape = {}, indices[{m}].shape = {}",
                    indices[0].rank(),
                    dims_text(data[0].dims()),
                    dims_text(dx.dims()),
                    dims_text(indices[0].dims()),
                    dims_text(ix.dims())
                )))
            }
            Some(_) => {}
            None => rest = Some(tail),
        }
        let v = ix.to_i64_vec()?;
        for (i, &x) in v.iter().enumerate() {
            if x < 0 {
                return Err(Error::invalid_argument(format!(
                    "DynamicStitch: indices[{m}]{} = {x} is negative",
                    index_text(i, ix.dims())
                )));
            }
            max = max.max(x);
        }
        ids.push(v);
    }
    let rest = rest.unwrap_or_default();
    let inner: usize = rest.iter().product();
    let rows = (max + 1) as usize;
    let mut shape = Shape::new(&[rows]);
    for &x in &rest {
        shape.push(x);
    }
    Tensor::check_allocation("DynamicStitch", dt, shape.dims())?;
    fn go<T: Element + Clone + Default>(
        data: &[Tensor],
        ids: &[Vec<i64>],
        inner: usize,
        shape: Shape,
    ) -> Result<Tensor> {
        let mut out = vec![T::default(); shape.num_elements()];
        for (dx, v) in data.iter().zip(ids) {
            let d = dx.as_slice::<T>()?;
            for (i, &x) in v.iter().enumerate() {
                let x = x as usize;
                out[x * inner..(x + 1) * inner].clone_from_slice(&d[i * inner..(i + 1) * inner]);
            }
        }
        Tensor::from_vec(shape, out)
    }
    any_dispatch!(
        dt,
        go(data, &ids, inner, shape),
        Err(Error::invalid_argument(format!(
            "DynamicStitch is not supported for {dt}"
        )))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(shape: &[usize], v: Vec<f32>) -> Tensor {
        Tensor::from_vec(shape, v).unwrap()
    }

    /// A plain serial reference of every reduction.
    fn reference(
        d: &[f32],
        ids: &[i64],
        num: usize,
        inner: usize,
        op: SegmentOp,
        empty: f32,
    ) -> Vec<f32> {
        let mut out = vec![empty; num * inner];
        let mut count = vec![0usize; num];
        for (k, &i) in ids.iter().enumerate() {
            if i < 0 {
                continue;
            }
            let i = i as usize;
            for j in 0..inner {
                let x = d[k * inner + j];
                let o = &mut out[i * inner + j];
                *o = if count[i] == 0 { x } else { combine(op, *o, x) };
            }
            count[i] += 1;
        }
        if op == SegmentOp::Mean {
            for i in 0..num {
                for j in 0..inner {
                    if count[i] > 0 {
                        out[i * inner + j] /= count[i] as f32;
                    }
                }
            }
        }
        out
    }

    #[test]
    fn sorted_matches_tensorflow_small() {
        let d = t(&[6, 2], (0..12).map(|x| x as f32).collect());
        let ids = Tensor::vector(vec![0i32, 0, 2, 2, 3, 3]);
        let max = segment_reduce(&d, &ids, SegmentOp::Max).unwrap();
        assert_eq!(
            max.as_slice::<f32>().unwrap(),
            &[2., 3., 0., 0., 6., 7., 10., 11.]
        );
        let prod = segment_reduce(&d, &ids, SegmentOp::Prod).unwrap();
        assert_eq!(
            prod.as_slice::<f32>().unwrap(),
            &[0., 3., 1., 1., 24., 35., 80., 99.]
        );
        let mean = segment_reduce(&d, &ids, SegmentOp::Mean).unwrap();
        assert_eq!(
            mean.as_slice::<f32>().unwrap(),
            &[1., 2., 0., 0., 5., 6., 9., 10.]
        );
    }

    #[test]
    fn narrow_row_sums_equal_the_general_loop_bit_for_bit() {
        // Widths with and without the register path (3, 5 take the general
        // loop), segments of uneven lengths, some ids absent.
        for inner in [1usize, 2, 3, 4, 5, 8, 16] {
            let n = 5_000;
            let d: Vec<f32> = (0..n * inner)
                .map(|i| ((i * 7919) % 1013) as f32 * 0.37 - 91.0)
                .collect();
            let ids: Vec<i64> = (0..n).map(|i| ((i * i) / 977) as i64 * 2).collect();
            let num = *ids.last().unwrap() as usize + 1;
            for op in [SegmentOp::Sum, SegmentOp::Mean] {
                let got =
                    segment_reduce(&t(&[n, inner], d.clone()), &Tensor::vector(ids.clone()), op)
                        .unwrap();
                let want = reference(&d, &ids, num, inner, op, 0.0);
                let got: Vec<u32> = got
                    .as_slice::<f32>()
                    .unwrap()
                    .iter()
                    .map(|x| x.to_bits())
                    .collect();
                let want: Vec<u32> = want.iter().map(|x| x.to_bits()).collect();
                assert_eq!(got, want, "{op:?}, rows of {inner}");
            }
            let d64: Vec<f64> = d.iter().map(|&x| x as f64 / 3.0).collect();
            let got = segment_reduce(
                &Tensor::from_vec([n, inner], d64.clone()).unwrap(),
                &Tensor::vector(ids.iter().map(|&i| i as i32).collect::<Vec<_>>()),
                SegmentOp::Sum,
            )
            .unwrap();
            let mut want = vec![0f64; num * inner];
            for (k, &i) in ids.iter().enumerate() {
                for j in 0..inner {
                    want[i as usize * inner + j] += d64[k * inner + j];
                }
            }
            assert_eq!(
                got.as_slice::<f64>().unwrap(),
                &want[..],
                "f64 rows of {inner}"
            );
        }
    }

    #[test]
    fn sorted_errors_follow_tensorflow_scan_order() {
        let d = t(&[6, 2], vec![0.; 12]);
        let e = |ids: Vec<i32>| {
            segment_reduce(&d, &Tensor::vector(ids), SegmentOp::Sum)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(e(vec![0, 0, 2, 1, 3, 3]), "segment ids are not increasing");
        assert!(e(vec![0, 0, 2, 2, 3, 1]).starts_with("Segment id 2 out of range [0, 2)"));
        assert!(e(vec![-1, 0, 2, 2, 3, 3]).starts_with("Segment id -1 out of range [0, 4)"));
        assert!(e(vec![0, 0, 2, 2, 3]).contains("same size as dimension 0"));
    }

    #[test]
    fn large_reductions_match_the_serial_reference() {
        // Big enough for several blocks and partial copies.
        let (n, inner, num) = (200_003usize, 3usize, 997usize);
        let d: Vec<f32> = (0..n * inner)
            .map(|i| ((i * 7919) % 1000) as f32 / 100.0 - 5.0)
            .collect();
        let dt = t(&[n, inner], d.clone());
        let mut sorted: Vec<i64> = (0..n).map(|i| ((i * 31) % num) as i64).collect();
        sorted.sort_unstable();
        let unsorted: Vec<i64> = (0..n)
            .map(|i| ((i * 7 + 3) % (num + 2)) as i64 - 2)
            .collect();
        for op in [
            SegmentOp::Sum,
            SegmentOp::Mean,
            SegmentOp::Max,
            SegmentOp::Min,
        ] {
            let got = segment_reduce(&dt, &Tensor::vector(sorted.clone()), op).unwrap();
            let want = reference(&d, &sorted, num, inner, op, 0.0);
            for (a, b) in got.as_slice::<f32>().unwrap().iter().zip(&want) {
                assert!(
                    (a - b).abs() <= 1e-3 * b.abs().max(1.0),
                    "{op:?}: {a} vs {b}"
                );
            }
            if op == SegmentOp::Mean {
                continue;
            }
            let got =
                unsorted_segment_reduce(&dt, &Tensor::vector(unsorted.clone()), num as i64, op)
                    .unwrap();
            let empty = empty_value::<f32>(op);
            let want = reference(&d, &unsorted, num, inner, op, empty);
            for (a, b) in got.as_slice::<f32>().unwrap().iter().zip(&want) {
                assert!(
                    (a - b).abs() <= 1e-3 * b.abs().max(1.0),
                    "{op:?}: {a} vs {b}"
                );
            }
        }
    }

    #[test]
    fn unsorted_names_the_first_bad_index() {
        let n = 300_000usize;
        let d = t(&[n], vec![1.0; n]);
        let mut ids: Vec<i32> = vec![0; n];
        ids[250_000] = 9;
        ids[123_456] = 7;
        let e = unsorted_segment_reduce(&d, &Tensor::vector(ids), 5, SegmentOp::Sum).unwrap_err();
        assert_eq!(
            e.message(),
            "segment_ids[123456] = 7 is out of range [0, 5)"
        );
    }

    #[test]
    fn scatter_nd_checks_before_writing() {
        let mut x = t(&[4, 2], (0..8).map(|v| v as f32).collect());
        let idx = Tensor::from_vec([2, 2], vec![0i32, 1, 4, 0]).unwrap();
        let upd = Tensor::vector(vec![2f32, 30.]);
        let e = scatter_nd_apply(
            &mut x,
            &idx,
            &upd,
            ScatterOp::Update,
            "ScatterNdUpdate",
            false,
        )
        .unwrap_err();
        assert_eq!(
            e.message(),
            "indices[1] = [4, 0] does not index into shape [4,2]"
        );
        assert_eq!(x.as_slice::<f32>().unwrap()[1], 1.0);
        scatter_nd_apply(
            &mut x,
            &idx,
            &upd,
            ScatterOp::Update,
            "TensorScatterUpdate",
            true,
        )
        .unwrap();
        assert_eq!(
            x.as_slice::<f32>().unwrap(),
            &[0., 2., 2., 3., 4., 5., 6., 7.]
        );
    }

    #[test]
    fn partition_then_stitch_round_trips() {
        let x = t(&[4, 2], (0..8).map(|v| v as f32).collect());
        let p = Tensor::vector(vec![0i32, 1, 0, 2]);
        let parts = dynamic_partition(&x, &p, 3).unwrap();
        assert_eq!(parts[0].as_slice::<f32>().unwrap(), &[0., 1., 4., 5.]);
        let idx = dynamic_partition(&Tensor::vector(vec![0i32, 1, 2, 3]), &p, 3).unwrap();
        let back = dynamic_stitch(&idx, &parts).unwrap();
        assert_eq!(
            back.as_slice::<f32>().unwrap(),
            x.as_slice::<f32>().unwrap()
        );
        let e = dynamic_partition(&x, &Tensor::vector(vec![0i32, 1, 0, 3]), 3).unwrap_err();
        assert_eq!(e.message(), "partitions[3] = 3 is not in [0, 3)");
    }
}
