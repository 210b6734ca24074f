//! The remaining array ops of TensorFlow's `array_ops`/`manip_ops`:
//! `Roll`, `ReverseSequence`, `SpaceToBatchND`/`BatchToSpaceND`,
//! `HistogramFixedWidth`, `UnravelIndex`, `LowerBound`/`UpperBound`,
//! `ExtractVolumePatches`, `EditDistance`, `BroadcastArgs` and
//! `UniqueWithCounts`, with TensorFlow's checks and messages.
//!
//! The element-moving ops are generic over every dtype (strings included):
//! they compute, for each output element, the flat index of the input
//! element it copies, and gather those.

use super::array::{pad, transpose, unique, PadMode};
use super::elementwise::cast;
use super::scalar::Scalar;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::Shape;
use crate::tensor::{Data, Element, Tensor};
use crate::{with_data, with_real};
use std::cmp::Ordering;

/// `out[i] = x[src[i]]` (a `None` source reads the dtype's default, zero).
fn take_flat(x: &Tensor, shape: Shape, src: &[Option<usize>]) -> Result<Tensor> {
    fn go<T: Element + Default>(v: &[T], src: &[Option<usize>]) -> Vec<T> {
        src.iter()
            .map(|s| s.map_or_else(T::default, |i| v[i].clone()))
            .collect()
    }
    let data: Data = with_data!(x.data(), v => Element::wrap(go(v, src)));
    Tensor::new(shape, data)
}

/// Calls `f(index, flat)` for every multi-index of `dims` in row-major order.
fn for_each_index(dims: &[usize], mut f: impl FnMut(&[usize], usize)) {
    let n: usize = dims.iter().product();
    let mut idx = vec![0usize; dims.len()];
    for flat in 0..n {
        f(&idx, flat);
        for d in (0..dims.len()).rev() {
            idx[d] += 1;
            if idx[d] < dims[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// A scalar-or-vector integer argument of `op`.
fn scalar_or_vector(t: &Tensor, what: &str) -> Result<Vec<i64>> {
    if t.rank() > 1 {
        return Err(Error::invalid_argument(format!(
            "{what} must be a scalar or a 1-D vector. Found: {}",
            t.shape()
        )));
    }
    t.to_i64_vec()
}

/// `Roll`: elements shifted by `shift[i]` along `axis[i]` (wrapping around);
/// shifts along a repeated axis add up.
pub fn roll(x: &Tensor, shift: &Tensor, axis: &Tensor) -> Result<Tensor> {
    if x.rank() < 1 {
        return Err(Error::invalid_argument(format!(
            "input must be 1-D or higher, got shape {}",
            x.shape()
        )));
    }
    let shifts = scalar_or_vector(shift, "shift")?;
    let axes = scalar_or_vector(axis, "axis")?;
    if shifts.len() != axes.len() {
        return Err(Error::invalid_argument(
            "shift and axis must have the same size",
        ));
    }
    let dims = x.dims();
    let rank = dims.len() as i64;
    let mut total = vec![0i64; dims.len()];
    for (&s, &a) in shifts.iter().zip(&axes) {
        let ax = if a < 0 { a + rank } else { a };
        if !(0..rank).contains(&ax) {
            return Err(Error::invalid_argument(format!("axis {a} is out of range")));
        }
        total[ax as usize] = total[ax as usize].wrapping_add(s);
    }
    let strides = x.shape().strides();
    let maps: Vec<Vec<usize>> = dims
        .iter()
        .zip(&total)
        .map(|(&n, &s)| {
            let n = n as i64;
            (0..n)
                .map(|i| {
                    if n == 0 {
                        0
                    } else {
                        (i - s).rem_euclid(n) as usize
                    }
                })
                .collect()
        })
        .collect();
    let mut src = Vec::with_capacity(x.num_elements());
    for_each_index(dims, |idx, _| {
        let off = idx
            .iter()
            .enumerate()
            .map(|(d, &i)| maps[d][i] * strides[d])
            .sum();
        src.push(Some(off));
    });
    take_flat(x, x.shape().clone(), &src)
}

/// `ReverseSequence`: along `seq_dim`, the first `seq_lengths[b]` elements of
/// each batch entry `b` (along `batch_dim`) reversed, the rest kept.
pub fn reverse_sequence(
    x: &Tensor,
    seq_lengths: &Tensor,
    seq_dim: i64,
    batch_dim: i64,
) -> Result<Tensor> {
    let dims = x.dims();
    let rank = dims.len() as i64;
    if !(0..rank).contains(&batch_dim) {
        return Err(Error::invalid_argument(format!(
            "Invalid batch_dim {batch_dim}"
        )));
    }
    if seq_lengths.rank() != 1 {
        return Err(Error::invalid_argument(format!(
            "seq_lengths must be 1-dim, not {}",
            seq_lengths.rank()
        )));
    }
    let lens = seq_lengths.to_i64_vec()?;
    let (b, s) = (batch_dim as usize, seq_dim);
    if lens.len() != dims[b] {
        return Err(Error::invalid_argument(format!(
            "Length of seq_lengths != input.dims({batch_dim}), ({} vs. {})",
            lens.len(),
            dims[b]
        )));
    }
    if batch_dim == seq_dim {
        return Err(Error::invalid_argument(format!(
            "batch_dim == seq_dim == {seq_dim}"
        )));
    }
    if !(0..rank).contains(&seq_dim) {
        return Err(Error::invalid_argument(format!(
            "seq_dim must be < input rank ( {seq_dim} vs. {rank})"
        )));
    }
    let s = s as usize;
    for (i, &l) in lens.iter().enumerate() {
        if l < 0 {
            return Err(Error::invalid_argument(format!("seq_lens({i}) < 0")));
        }
        if l as usize > dims[s] {
            return Err(Error::invalid_argument(format!(
                "seq_lens({i}) > input.dims({seq_dim})"
            )));
        }
    }
    let strides = x.shape().strides();
    let mut src = Vec::with_capacity(x.num_elements());
    for_each_index(dims, |idx, flat| {
        let l = lens[idx[b]] as usize;
        let i = idx[s];
        src.push(Some(if i < l {
            flat - i * strides[s] + (l - 1 - i) * strides[s]
        } else {
            flat
        }));
    });
    take_flat(x, x.shape().clone(), &src)
}

/// A `[m, 2]` table of non-negative integer pairs (`paddings`, `crops`).
fn pairs(t: &Tensor, m: usize, what: &str, negative: &str) -> Result<Vec<(i64, i64)>> {
    if t.rank() != 2 || t.dims()[0] != m || t.dims()[1] != 2 {
        return Err(Error::invalid_argument(format!(
            "{what} should have shape [{m}, 2] instead of {}",
            t.shape()
        )));
    }
    let v = t.to_i64_vec()?;
    if v.iter().any(|&p| p < 0) {
        return Err(Error::invalid_argument(negative.to_string()));
    }
    Ok(v.chunks(2).map(|p| (p[0], p[1])).collect())
}

/// The block sizes of `SpaceToBatchND`/`BatchToSpaceND`, checked against the
/// input's rank.
fn block_sizes(x: &Tensor, block_shape: &Tensor) -> Result<Vec<usize>> {
    if block_shape.rank() != 1 {
        return Err(Error::invalid_argument(format!(
            "block_shape rank should be 1 instead of {}",
            block_shape.rank()
        )));
    }
    let block = block_shape.to_i64_vec()?;
    if x.rank() < 1 + block.len() {
        return Err(Error::invalid_argument(format!(
            "input rank should be >= {} instead of {}",
            1 + block.len(),
            x.rank()
        )));
    }
    for (d, &b) in block.iter().enumerate() {
        if b < 1 {
            return Err(Error::invalid_argument(format!(
                "All values in block_shape must be positive, got value, {b} at index {d}."
            )));
        }
    }
    Ok(block.into_iter().map(|b| b as usize).collect())
}

/// `SpaceToBatchND`: zero-pads the `M` spatial dimensions after the batch by
/// `paddings`, then moves each `block_shape` block of positions into the
/// batch: `[b, s1.., r..] -> [b * prod(block), (s1 + pad) / block1.., r..]`,
/// the block offset outermost in the new batch.
pub fn space_to_batch_nd(x: &Tensor, block_shape: &Tensor, paddings: &Tensor) -> Result<Tensor> {
    let block = block_sizes(x, block_shape)?;
    let m = block.len();
    let pads = pairs(paddings, m, "paddings", "Paddings must be non-negative")?;
    let dims = x.dims().to_vec();
    let mut full: Vec<(i64, i64)> = vec![(0, 0); dims.len()];
    let mut padded = dims.clone();
    for d in 0..m {
        full[d + 1] = pads[d];
        let p = (dims[d + 1] as i64)
            .checked_add(pads[d].0)
            .and_then(|v| v.checked_add(pads[d].1))
            .ok_or_else(|| Error::invalid_argument("Paddings are too large"))?;
        if !(p as usize).is_multiple_of(block[d]) {
            return Err(Error::invalid_argument(format!(
                "padded_shape[{d}]={p} is not divisible by block_shape[{d}]={}",
                block[d]
            )));
        }
        padded[d + 1] = p as usize;
    }
    let zero = Tensor::zeros(x.dtype(), Shape::scalar());
    let xp = if full.iter().any(|&p| p != (0, 0)) {
        pad(x, &full, PadMode::Constant, &zero)?
    } else {
        x.clone()
    };
    // [b, p1/k1, k1, ..., pm/km, km, rest..]
    let mut split = vec![dims[0]];
    for d in 0..m {
        split.push(padded[d + 1] / block[d]);
        split.push(block[d]);
    }
    split.extend_from_slice(&dims[m + 1..]);
    let xs = xp.reshape(split)?;
    // -> [k1, ..., km, b, p1/k1, ..., pm/km, rest..]
    let mut perm: Vec<usize> = (0..m).map(|d| 2 + 2 * d).collect();
    perm.push(0);
    perm.extend((0..m).map(|d| 1 + 2 * d));
    perm.extend(2 * m + 1..2 * m + dims.len() - m);
    let t = transpose(&xs, &perm)?;
    let mut out = vec![dims[0] * block.iter().product::<usize>()];
    out.extend((0..m).map(|d| padded[d + 1] / block[d]));
    out.extend_from_slice(&dims[m + 1..]);
    t.with_shape(out)
}

/// `BatchToSpaceND`, the inverse of [`space_to_batch_nd`]: moves batch blocks
/// back into the spatial dimensions, then crops by `crops`.
pub fn batch_to_space_nd(x: &Tensor, block_shape: &Tensor, crops: &Tensor) -> Result<Tensor> {
    let block = block_sizes(x, block_shape)?;
    let m = block.len();
    let crops = pairs(crops, m, "crops", "Crops must be non-negative")?;
    let dims = x.dims().to_vec();
    let prod: usize = block.iter().product();
    if !dims[0].is_multiple_of(prod) {
        return Err(Error::invalid_argument(format!(
            "Input batch dimension ({}) is not divisible by product of block sizes ({prod})",
            dims[0]
        )));
    }
    let batch = dims[0] / prod;
    let mut cropped = Vec::with_capacity(m);
    for d in 0..m {
        let size = (dims[d + 1] * block[d]) as i64 - crops[d].0 - crops[d].1;
        if size < 0 {
            return Err(Error::invalid_argument(format!(
                "cropped_shape[{d}]={size} must be non-negative"
            )));
        }
        cropped.push(size as usize);
    }
    // [k1, ..., km, b, s1, ..., sm, rest..]
    let mut split = block.clone();
    split.push(batch);
    split.extend_from_slice(&dims[1..]);
    let xs = x.reshape(split)?;
    // -> [b, s1, k1, ..., sm, km, rest..]
    let mut perm = vec![m];
    for d in 0..m {
        perm.push(m + 1 + d);
        perm.push(d);
    }
    perm.extend(2 * m + 1..m + dims.len());
    let t = transpose(&xs, &perm)?;
    let mut full = vec![batch];
    full.extend((0..m).map(|d| dims[d + 1] * block[d]));
    full.extend_from_slice(&dims[m + 1..]);
    let t = t.with_shape(full.clone())?;
    if crops.iter().all(|&c| c == (0, 0)) {
        return Ok(t);
    }
    let mut begin = vec![0i64; full.len()];
    let mut size: Vec<i64> = full.iter().map(|&d| d as i64).collect();
    for d in 0..m {
        begin[d + 1] = crops[d].0;
        size[d + 1] = cropped[d] as i64;
    }
    super::array::slice(&t, &begin, &size)
}

/// `HistogramFixedWidth`: counts of `values` in `nbins` equal bins over
/// `value_range = [lo, hi]`; values below `lo` count in the first bin and
/// values from `hi` on in the last, as TensorFlow's kernel.
pub fn histogram_fixed_width(
    values: &Tensor,
    value_range: &Tensor,
    nbins: &Tensor,
    out: DType,
) -> Result<Tensor> {
    if nbins.rank() != 0 {
        return Err(Error::invalid_argument(format!(
            "nbins should be a scalar, but got '{}'",
            nbins.shape()
        )));
    }
    let n = nbins.scalar_i64()?;
    if n <= 0 {
        return Err(Error::invalid_argument(format!(
            "nbins should be a positive number, but got '{n}'"
        )));
    }
    if value_range.rank() != 1 || value_range.num_elements() != 2 {
        return Err(Error::invalid_argument(
            "value_range should be a vector of 2 elements.",
        ));
    }
    if value_range.dtype() != values.dtype() {
        return Err(Error::invalid_argument(
            "value_range must have the dtype of values",
        ));
    }
    fn bins<T: Scalar>(v: &[T], lo: T, hi: T, n: i64) -> Result<Vec<i64>> {
        if lo.partial_cmp(&hi) != Some(Ordering::Less) {
            return Err(Error::invalid_argument(format!(
                "value_range should satisfy value_range[0] < value_range[1], but got '[{}, {}]'",
                lo.to_f64(),
                hi.to_f64()
            )));
        }
        let step = (hi.sub(lo)).to_f64() / n as f64;
        let last = (n - 1) as f64;
        let mut counts = vec![0i64; n as usize];
        for &x in v {
            let above = if x < lo { lo } else { x };
            let at = (above.sub(lo).to_f64() / step).min(last);
            // NaN slots (NaN values) land in the first bin, as a cast of NaN
            // to an integer gives 0 here.
            counts[at as usize] += 1;
        }
        Ok(counts)
    }
    let wide;
    let (vals, range) = if matches!(values.dtype(), DType::Float16 | DType::BFloat16) {
        wide = (
            cast(values, DType::Float32)?,
            cast(value_range, DType::Float32)?,
        );
        (&wide.0, &wide.1)
    } else {
        (values, value_range)
    };
    let counts = with_real!(vals.data(), v => {
        let r = range.as_slice()?;
        bins(v, r[0], r[1], n)?
    }, _ => return Err(Error::invalid_argument(format!(
        "HistogramFixedWidth does not support {} values", values.dtype()
    ))));
    let t = Tensor::vector(counts);
    cast(&t, out)
}

/// `UnravelIndex`: the coordinates of flat `indices` in an array of shape
/// `dims`, as `[len(dims)]` for a scalar index or `[len(dims), n]` for `n`.
pub fn unravel_index(indices: &Tensor, dims: &Tensor) -> Result<Tensor> {
    if dims.rank() != 1 {
        return Err(Error::invalid_argument(format!(
            "The dims can only be a 1-D vector, got \"{}\"",
            dims.shape()
        )));
    }
    if indices.rank() > 1 {
        return Err(Error::invalid_argument(format!(
            "The indices can only be scalar or vector, got \"{}\"",
            indices.shape()
        )));
    }
    let d = dims.to_i64_vec()?;
    for (i, &v) in d.iter().enumerate() {
        if v < 0 {
            return Err(Error::invalid_argument(format!(
                "Input dims cannot be negative. Got dim = {v} at index {i}"
            )));
        }
    }
    let total = d.iter().try_fold(1i64, |a, &b| a.checked_mul(b));
    let idx = indices.to_i64_vec()?;
    if idx.iter().any(|&i| total.is_some_and(|t| i >= t)) {
        return Err(Error::invalid_argument(
            "index is out of bound as with dims",
        ));
    }
    // Strides of `dims`, row-major; then TensorFlow's (index / stride) % dim
    // with C's truncating division.
    let mut strides = vec![1i64; d.len()];
    for k in (0..d.len().saturating_sub(1)).rev() {
        strides[k] = strides[k + 1].saturating_mul(d[k + 1]);
    }
    let mut out = Vec::with_capacity(d.len() * idx.len());
    for k in 0..d.len() {
        for &i in &idx {
            out.push(if d[k] == 0 || strides[k] == 0 {
                0
            } else {
                (i / strides[k]) % d[k]
            });
        }
    }
    let shape: Shape = if indices.rank() == 0 {
        Shape::new(&[d.len()])
    } else {
        Shape::new(&[d.len(), idx.len()])
    };
    cast(&Tensor::new(shape, Data::I64(out.into()))?, dims.dtype())
}

/// `LowerBound` (`upper` false) and `UpperBound`: for each row of `values`,
/// the insertion points of its entries in the same row of `sorted`.
pub fn search_sorted(sorted: &Tensor, values: &Tensor, upper: bool, out: DType) -> Result<Tensor> {
    for (t, what) in [
        (sorted, "sorted input argument"),
        (values, "values argument"),
    ] {
        if t.rank() != 2 {
            return Err(Error::invalid_argument(format!("{what} must be a matrix")));
        }
    }
    if sorted.dims()[0] != values.dims()[0] {
        return Err(Error::invalid_argument(
            "Leading dim_size of both tensors must match.",
        ));
    }
    if sorted.dtype() != values.dtype() {
        return Err(Error::invalid_argument(
            "sorted_inputs and values must have the same dtype",
        ));
    }
    let (rows, n, k) = (sorted.dims()[0], sorted.dims()[1], values.dims()[1]);
    fn go<T: Scalar>(s: &[T], v: &[T], rows: usize, n: usize, k: usize, upper: bool) -> Vec<i64> {
        let mut out = Vec::with_capacity(rows * k);
        for r in 0..rows {
            let row = &s[r * n..(r + 1) * n];
            for &x in &v[r * k..(r + 1) * k] {
                let at = if upper {
                    row.partition_point(|&e| x.partial_cmp(&e) != Some(Ordering::Less))
                } else {
                    row.partition_point(|&e| e < x)
                };
                out.push(at as i64);
            }
        }
        out
    }
    let wide;
    let (s, v) = if matches!(sorted.dtype(), DType::Float16 | DType::BFloat16) {
        wide = (cast(sorted, DType::Float32)?, cast(values, DType::Float32)?);
        (&wide.0, &wide.1)
    } else {
        (sorted, values)
    };
    let idx = with_real!(s.data(), a => go(a, v.as_slice()?, rows, n, k, upper),
    _ => return Err(Error::invalid_argument(format!(
        "searchsorted does not support {} tensors", sorted.dtype()
    ))));
    if out == DType::Int32 && n > i32::MAX as usize {
        return Err(Error::invalid_argument(
            "sorted_inputs has too many columns for int32 output",
        ));
    }
    cast(
        &Tensor::new(values.shape().clone(), Data::I64(idx.into()))?,
        out,
    )
}

/// The window geometry of an `ExtractVolumePatches` node (planes, rows,
/// columns).
#[derive(Clone, Copy, Debug)]
pub struct VolumeWindows {
    /// Window size along planes, rows and columns.
    pub ksize: [usize; 3],
    /// Step between windows.
    pub strides: [usize; 3],
    /// `SAME` (pad so that `ceil(in / stride)` windows fit) or `VALID`.
    pub same: bool,
}

impl VolumeWindows {
    /// Parses the `ksizes`, `strides` and `padding` attrs (five-element
    /// lists with 1 in the batch and depth positions).
    pub fn parse(ksizes: &[i64], strides: &[i64], padding: &str) -> Result<VolumeWindows> {
        let three = |name: &str, v: &[i64]| -> Result<[usize; 3]> {
            if v.len() != 5 {
                return Err(Error::invalid_argument(format!(
                    "{name} input must be a list of length 5, got {}",
                    v.len()
                )));
            }
            if v[0] != 1 || v[4] != 1 {
                return Err(Error::unimplemented(format!(
                    "Only support {name} across space."
                )));
            }
            if v[1..4].iter().any(|&k| k < 1) {
                return Err(Error::invalid_argument(format!(
                    "{name} must be positive, got {v:?}"
                )));
            }
            Ok([v[1] as usize, v[2] as usize, v[3] as usize])
        };
        let same = match padding {
            "SAME" => true,
            "VALID" => false,
            other => {
                return Err(Error::invalid_argument(format!(
                    "padding must be SAME or VALID, got {other:?}"
                )))
            }
        };
        Ok(VolumeWindows {
            ksize: three("ksizes", ksizes)?,
            strides: three("strides", strides)?,
            same,
        })
    }

    /// Output length along axis `a` for an input of length `n`, and the
    /// padding before the first window.
    pub fn along(&self, a: usize, n: usize) -> (usize, usize) {
        let (k, s) = (self.ksize[a], self.strides[a]);
        if self.same {
            let out = n.div_ceil(s);
            let need = ((out.max(1) - 1) * s + k).saturating_sub(n);
            (out, need / 2)
        } else {
            ((n + 1).saturating_sub(k).div_ceil(s), 0)
        }
    }
}

/// `ExtractVolumePatches` of a `[batch, planes, rows, cols, depth]` tensor:
/// each window flattened (planes, rows, cols, depth order) into the depth of
/// `[batch, out_planes, out_rows, out_cols, kp * kr * kc * depth]`; window
/// positions over the border (`SAME`) read zeros.
pub fn extract_volume_patches(x: &Tensor, w: &VolumeWindows) -> Result<Tensor> {
    if x.rank() != 5 {
        return Err(Error::invalid_argument(format!(
            "input must be 5-dimensional, got shape {}",
            x.shape()
        )));
    }
    let d = x.dims();
    let (b, c) = (d[0], d[4]);
    let geo: Vec<(usize, usize)> = (0..3).map(|a| w.along(a, d[a + 1])).collect();
    let [kp, kr, kc] = w.ksize;
    let depth = kp * kr * kc * c;
    let out_dims = vec![b, geo[0].0, geo[1].0, geo[2].0, depth];
    Tensor::check_allocation("ExtractVolumePatches", x.dtype(), &out_dims)?;
    let n: usize = out_dims.iter().product();
    let mut src = Vec::with_capacity(n);
    for_each_index(&out_dims[..4], |o, _| {
        for i in 0..kp {
            for j in 0..kr {
                for k in 0..kc {
                    let at = [i, j, k];
                    let mut pos = [0usize; 3];
                    let mut inside = true;
                    for a in 0..3 {
                        let p = (o[a + 1] * w.strides[a] + at[a]) as i64 - geo[a].1 as i64;
                        if p < 0 || p as usize >= d[a + 1] {
                            inside = false;
                        } else {
                            pos[a] = p as usize;
                        }
                    }
                    let base = (((o[0] * d[1] + pos[0]) * d[2] + pos[1]) * d[3] + pos[2]) * c;
                    for ch in 0..c {
                        src.push(inside.then_some(base + ch));
                    }
                }
            }
        }
    });
    take_flat(x, Shape::from(out_dims), &src)
}

/// One sparse input of `EditDistance`: indices `[n, rank]`, values `[n]`,
/// dense shape `[rank]`.
struct Sparse<'a> {
    indices: Vec<i64>,
    values: &'a Tensor,
    shape: Vec<i64>,
}

fn sparse_input<'a>(
    name: &str,
    indices: &Tensor,
    values: &'a Tensor,
    shape: &Tensor,
) -> Result<Sparse<'a>> {
    if indices.rank() != 2 {
        return Err(Error::invalid_argument(format!(
            "{name}_indices should be a matrix, but got shape: {}",
            indices.shape()
        )));
    }
    if values.rank() != 1 {
        return Err(Error::invalid_argument(format!(
            "{name}_values should be a vector, but got shape: {}",
            values.shape()
        )));
    }
    if shape.rank() != 1 {
        return Err(Error::invalid_argument(format!(
            "{name}_shape should be a vector, but got shape: {}",
            shape.shape()
        )));
    }
    if shape.num_elements() != indices.dims()[1] {
        return Err(Error::invalid_argument(format!(
            "Expected {name}_shape.NumElements == #cols({name}_indices), their shapes are: {} and {}",
            shape.shape(),
            indices.shape()
        )));
    }
    if values.num_elements() != indices.dims()[0] {
        return Err(Error::invalid_argument(format!(
            "Expected {name}_values.NumElements == #rows({name}_indices), their shapes are: {} and {}",
            values.shape(),
            indices.shape()
        )));
    }
    Ok(Sparse {
        indices: indices.to_i64_vec()?,
        values,
        shape: shape.to_i64_vec()?,
    })
}

/// Levenshtein distance between two sequences.
fn levenshtein<T: PartialEq>(a: &[&T], b: &[&T]) -> usize {
    if a.is_empty() {
        return b.len();
    }
    let mut row: Vec<usize> = (0..=a.len()).collect();
    for (j, y) in b.iter().enumerate() {
        let mut diag = row[0];
        row[0] = j + 1;
        for (i, x) in a.iter().enumerate() {
            let cost = usize::from(x != y);
            let next = (row[i + 1] + 1).min(row[i] + 1).min(diag + cost);
            diag = row[i + 1];
            row[i + 1] = next;
        }
    }
    row[a.len()]
}

/// `EditDistance` between the sequences of two sparse tensors (grouped by
/// all but their last index): `[hypothesis_indices, hypothesis_values,
/// hypothesis_shape, truth_indices, truth_values, truth_shape]`. The result
/// has the elementwise maximum of the two dense shapes without their last
/// dimension; with `normalize`, distances are divided by the truth's length
/// (an empty truth gives `inf` for a non-empty hypothesis).
pub fn edit_distance(inputs: [&Tensor; 6], normalize: bool) -> Result<Tensor> {
    let h = sparse_input("hypothesis", inputs[0], inputs[1], inputs[2])?;
    let t = sparse_input("truth", inputs[3], inputs[4], inputs[5])?;
    if h.shape.len() != t.shape.len() {
        return Err(Error::invalid_argument(format!(
            "hypothesis_shape should have as many elements as truth_shape: {} vs. {}",
            h.shape.len(),
            t.shape.len()
        )));
    }
    let rank = t.shape.len();
    if rank < 2 {
        return Err(Error::invalid_argument(format!(
            "Input SparseTensors must have rank at least 2, but truth_shape rank is: {rank}"
        )));
    }
    if h.values.dtype() != t.values.dtype() {
        return Err(Error::invalid_argument(
            "hypothesis_values and truth_values must have the same dtype",
        ));
    }
    let out_dims: Vec<usize> = (0..rank - 1)
        .map(|d| h.shape[d].max(t.shape[d]).max(0) as usize)
        .collect();
    let total: usize = out_dims.iter().product();
    let strides = Shape::new(&out_dims).strides();
    // Groups: the flat output position of each entry, in entry order.
    let groups = |s: &Sparse<'_>| -> Result<Vec<usize>> {
        s.indices
            .chunks(rank)
            .map(|ix| {
                let mut at = 0usize;
                let mut ok = true;
                for d in 0..rank - 1 {
                    if ix[d] < 0 || ix[d] as usize >= out_dims[d] {
                        ok = false;
                    } else {
                        at += ix[d] as usize * strides[d];
                    }
                }
                if !ok || at >= total {
                    let inner: i64 = ix[..rank - 1]
                        .iter()
                        .zip(strides.iter())
                        .map(|(&i, &s)| i * s as i64)
                        .sum();
                    return Err(Error::internal(format!(
                        "Got an inner product {inner} which would require writing to outside of the buffer for the output tensor (max elements {total})"
                    )));
                }
                Ok(at)
            })
            .collect()
    };
    let hg = groups(&h)?;
    let tg = groups(&t)?;
    fn go<T: Element + PartialEq>(
        hv: &[T],
        tv: &Tensor,
        hg: &[usize],
        tg: &[usize],
        total: usize,
        normalize: bool,
    ) -> Result<Vec<f32>> {
        let tv = tv.as_slice::<T>()?;
        let mut hyp: Vec<Vec<&T>> = vec![Vec::new(); total];
        let mut truth: Vec<Vec<&T>> = vec![Vec::new(); total];
        for (v, &g) in hv.iter().zip(hg) {
            hyp[g].push(v);
        }
        for (v, &g) in tv.iter().zip(tg) {
            truth[g].push(v);
        }
        Ok(hyp
            .iter()
            .zip(&truth)
            .map(|(a, b)| {
                let dist = levenshtein(a, b) as f32;
                if !normalize {
                    dist
                } else if b.is_empty() {
                    if a.is_empty() {
                        0.0
                    } else {
                        f32::INFINITY
                    }
                } else {
                    dist / b.len() as f32
                }
            })
            .collect())
    }
    let out = with_data!(h.values.data(), v => go(v, t.values, &hg, &tg, total, normalize)?);
    Tensor::from_vec(out_dims, out)
}

/// `BroadcastArgs`: the broadcast shape of two shape vectors.
pub fn broadcast_args(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    for t in [a, b] {
        if t.rank() != 1 {
            return Err(Error::invalid_argument(format!(
                "In[0] and In[1] must be vectors, got shape {}",
                t.shape()
            )));
        }
    }
    let (x, y) = (a.to_i64_vec()?, b.to_i64_vec()?);
    let text = |v: &[i64]| {
        format!(
            "[{}]",
            v.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(",")
        )
    };
    let n = x.len().max(y.len());
    let mut out = vec![0i64; n];
    for i in 0..n {
        let p = if i + x.len() >= n {
            x[i + x.len() - n]
        } else {
            1
        };
        let q = if i + y.len() >= n {
            y[i + y.len() - n]
        } else {
            1
        };
        out[i] = if p == q || q == 1 {
            p
        } else if p == 1 {
            q
        } else {
            return Err(Error::invalid_argument(format!(
                "Incompatible shapes: {} vs. {}",
                text(&x),
                text(&y)
            )));
        };
    }
    cast(&Tensor::vector(out), a.dtype())
}

/// `UniqueWithCounts`: [`unique`]'s values and indices, plus how often each
/// distinct value occurs (as `out_idx`).
pub fn unique_with_counts(x: &Tensor, out_idx: DType) -> Result<(Tensor, Tensor, Tensor)> {
    if x.rank() != 1 {
        return Err(Error::invalid_argument("unique expects a 1D vector."));
    }
    let (y, idx) = unique(x, out_idx)?;
    let mut counts = vec![0i64; y.num_elements()];
    for i in idx.to_i64_vec()? {
        counts[i as usize] += 1;
    }
    let counts = cast(&Tensor::vector(counts), out_idx)?;
    Ok((y, idx, counts))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iota(dims: &[usize]) -> Tensor {
        let n: usize = dims.iter().product();
        Tensor::from_vec(dims.to_vec(), (0..n as i32).collect::<Vec<_>>()).unwrap()
    }

    fn ints(t: &Tensor) -> Vec<i64> {
        t.to_i64_vec().unwrap()
    }

    #[test]
    fn roll_wraps_and_adds_repeated_axes() {
        let x = iota(&[2, 3]);
        let y = roll(
            &x,
            &Tensor::vector(vec![1i32, 1]),
            &Tensor::vector(vec![1i32, -1]),
        )
        .unwrap();
        assert_eq!(ints(&y), vec![1, 2, 0, 4, 5, 3]);
        let y = roll(&x, &Tensor::scalar(-1i32), &Tensor::scalar(0i32)).unwrap();
        assert_eq!(ints(&y), vec![3, 4, 5, 0, 1, 2]);
        let e = roll(&x, &Tensor::scalar(1i32), &Tensor::scalar(2i32)).unwrap_err();
        assert_eq!(e.message(), "axis 2 is out of range");
    }

    #[test]
    fn reverse_sequence_reverses_prefixes() {
        let x = iota(&[2, 4]);
        let y = reverse_sequence(&x, &Tensor::vector(vec![3i64, 0]), 1, 0).unwrap();
        assert_eq!(ints(&y), vec![2, 1, 0, 3, 4, 5, 6, 7]);
        let e = reverse_sequence(&x, &Tensor::vector(vec![5i64, 0]), 1, 0).unwrap_err();
        assert_eq!(e.message(), "seq_lens(0) > input.dims(1)");
    }

    #[test]
    fn space_to_batch_round_trips() {
        let x = iota(&[2, 4, 6, 3]);
        let block = Tensor::vector(vec![2i32, 3]);
        let pads = Tensor::from_vec([2, 2], vec![0i32, 0, 0, 0]).unwrap();
        let s = space_to_batch_nd(&x, &block, &pads).unwrap();
        assert_eq!(s.dims(), &[12, 2, 2, 3]);
        // The first batch entry holds block offset (0, 0) of image 0.
        assert_eq!(&ints(&s)[..6], &[0, 1, 2, 9, 10, 11]);
        let back = batch_to_space_nd(&s, &block, &pads).unwrap();
        assert_eq!(ints(&back), ints(&x));
        let pads = Tensor::from_vec([2, 2], vec![1i32, 1, 0, 3]).unwrap();
        let s = space_to_batch_nd(&x, &block, &pads).unwrap();
        assert_eq!(s.dims(), &[12, 3, 3, 3]);
        let back = batch_to_space_nd(&s, &block, &pads).unwrap();
        assert_eq!(ints(&back), ints(&x));
    }

    #[test]
    fn histogram_clamps_to_the_end_bins() {
        let v = Tensor::vector(vec![-1.0f32, 0.0, 1.5, 2.0, 5.0, 4.99]);
        let r = Tensor::vector(vec![0.0f32, 5.0]);
        let h = histogram_fixed_width(&v, &r, &Tensor::scalar(5i32), DType::Int32).unwrap();
        assert_eq!(ints(&h), vec![2, 1, 1, 0, 2]);
    }

    #[test]
    fn unravel_and_search() {
        let u = unravel_index(
            &Tensor::vector(vec![5i32, 1]),
            &Tensor::vector(vec![2i32, 3]),
        )
        .unwrap();
        assert_eq!(u.dims(), &[2, 2]);
        assert_eq!(ints(&u), vec![1, 0, 2, 1]);
        let s = Tensor::from_vec([1, 4], vec![1.0f64, 2.0, 2.0, 3.0]).unwrap();
        let v = Tensor::from_vec([1, 3], vec![2.0f64, 0.0, 9.0]).unwrap();
        assert_eq!(
            ints(&search_sorted(&s, &v, false, DType::Int32).unwrap()),
            vec![1, 0, 4]
        );
        assert_eq!(
            ints(&search_sorted(&s, &v, true, DType::Int64).unwrap()),
            vec![3, 0, 4]
        );
    }

    #[test]
    fn edit_distance_of_strings() {
        let s = |v: &[&str]| {
            Tensor::vector(v.iter().map(|x| x.as_bytes().to_vec()).collect::<Vec<_>>())
        };
        let hi = Tensor::from_vec([3, 2], vec![0i64, 0, 0, 1, 1, 0]).unwrap();
        let ti = Tensor::from_vec([3, 2], vec![0i64, 0, 1, 0, 1, 1]).unwrap();
        let hv = s(&["a", "b", "c"]);
        let tv = s(&["a", "c", "d"]);
        let hs = Tensor::vector(vec![2i64, 2]);
        let ts = Tensor::vector(vec![2i64, 3]);
        let d = edit_distance([&hi, &hv, &hs, &ti, &tv, &ts], true).unwrap();
        assert_eq!(d.as_slice::<f32>().unwrap(), &[1.0, 0.5]);
        let d = edit_distance([&hi, &hv, &hs, &ti, &tv, &ts], false).unwrap();
        assert_eq!(d.as_slice::<f32>().unwrap(), &[1.0, 1.0]);
    }

    #[test]
    fn volume_patches_valid() {
        let x = iota(&[1, 2, 2, 2, 1]);
        let w = VolumeWindows::parse(&[1, 2, 2, 2, 1], &[1, 1, 1, 1, 1], "VALID").unwrap();
        let p = extract_volume_patches(&x, &w).unwrap();
        assert_eq!(p.dims(), &[1, 1, 1, 1, 8]);
        assert_eq!(ints(&p), (0..8).collect::<Vec<_>>());
        let w = VolumeWindows::parse(&[1, 2, 1, 1, 1], &[1, 1, 1, 1, 1], "SAME").unwrap();
        let p = extract_volume_patches(&x, &w).unwrap();
        assert_eq!(p.dims(), &[1, 2, 2, 2, 2]);
        // The last plane's windows hang over the border.
        assert_eq!(&ints(&p)[8..10], &[4, 0]);
    }

    #[test]
    fn broadcast_args_and_unique_counts() {
        let b = broadcast_args(
            &Tensor::vector(vec![2i32, 1, 3]),
            &Tensor::vector(vec![4i32, 1]),
        )
        .unwrap();
        assert_eq!(ints(&b), vec![2, 4, 3]);
        let e = broadcast_args(
            &Tensor::vector(vec![2i32, 3]),
            &Tensor::vector(vec![4i32, 1]),
        )
        .unwrap_err();
        assert_eq!(e.message(), "Incompatible shapes: [2,3] vs. [4,1]");
        let (y, i, c) =
            unique_with_counts(&Tensor::vector(vec![3i64, 1, 3, 3]), DType::Int32).unwrap();
        assert_eq!(ints(&y), vec![3, 1]);
        assert_eq!(ints(&i), vec![0, 1, 0, 0]);
        assert_eq!(ints(&c), vec![3, 1]);
    }
}
