//! Whole tensors rearranged: transpose, concat, split, stack, unstack, tile,
//! pad, reverse, `Roll`, `ReverseSequence` and
//! `SpaceToBatchND`/`BatchToSpaceND`.

use super::{for_each_index, gather_strided, slice, take_flat};
use crate::error::{Error, Result};
use crate::shape::{normalize_axis, Shape};
use crate::tensor::{Data, Element, Tensor};
use crate::with_data;

/// Permutes dimensions: output dim `i` is input dim `perm[i]`.
pub fn transpose(x: &Tensor, perm: &[usize]) -> Result<Tensor> {
    let rank = x.rank();
    let mut seen = vec![false; rank];
    if perm.len() != rank
        || perm
            .iter()
            .any(|&p| p >= rank || std::mem::replace(&mut seen[p], true))
    {
        return Err(Error::invalid_argument(format!(
            "transpose expects a permutation of 0..{rank}, got {perm:?}"
        )));
    }
    if perm.iter().enumerate().all(|(i, &p)| i == p) {
        return Ok(x.clone());
    }
    let dims = x.dims();
    let in_strides = x.shape().strides();
    let out_shape: Shape = perm.iter().map(|&p| dims[p]).collect();
    let out_strides: Vec<usize> = perm.iter().map(|&p| in_strides[p]).collect();
    // Walk output order; read input with permuted strides.
    fn go<T: Clone>(x: &[T], out_dims: &[usize], st: &[usize]) -> Vec<T> {
        let n: usize = out_dims.iter().product();
        let mut out = Vec::with_capacity(n);
        if n == 0 {
            return out;
        }
        let rank = out_dims.len();
        let mut idx = vec![0usize; rank];
        let last = rank - 1;
        loop {
            let base: usize = (0..last).map(|d| idx[d] * st[d]).sum();
            let s = st[last];
            for k in 0..out_dims[last] {
                out.push(x[base + k * s].clone());
            }
            let mut d = last;
            loop {
                if d == 0 {
                    return out;
                }
                d -= 1;
                idx[d] += 1;
                if idx[d] < out_dims[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
    }
    map_any!(x, out_shape.clone(), v => go(v, out_shape.dims(), &out_strides))
}

/// Joins tensors along `axis`.
pub fn concat(inputs: &[Tensor], axis: i64) -> Result<Tensor> {
    let first = inputs
        .first()
        .ok_or_else(|| Error::invalid_argument("ConcatV2 needs at least one input"))?;
    let rank = first.rank();
    if rank == 0 {
        return Err(Error::invalid_argument(
            "ConcatV2: cannot concatenate scalars (use stack)",
        ));
    }
    let ax = normalize_axis(axis, rank, "ConcatV2")?;
    let mut out_dims = first.dims().to_vec();
    out_dims[ax] = 0;
    for t in inputs {
        let ok = t.rank() == rank
            && t.dtype() == first.dtype()
            && (0..rank).all(|d| d == ax || t.dims()[d] == first.dims()[d]);
        if !ok {
            return Err(Error::invalid_argument(format!(
                "ConcatV2: Dimensions of inputs should match: shape[0] = {} vs. shape[{}] = {} ({} vs {})",
                first.shape(),
                inputs.iter().position(|x| std::ptr::eq(x, t)).unwrap_or(0),
                t.shape(),
                first.dtype(),
                t.dtype()
            )));
        }
        out_dims[ax] += t.dims()[ax];
    }
    if inputs.len() == 1 {
        return Ok(first.clone());
    }
    let outer: usize = out_dims[..ax].iter().product();
    let inner: usize = out_dims[ax + 1..].iter().product();
    fn go<T: Element>(
        _: &std::sync::Arc<Vec<T>>,
        inputs: &[Tensor],
        outer: usize,
        inner: usize,
        ax: usize,
    ) -> Result<Vec<T>> {
        let parts: Vec<(&[T], usize)> = inputs
            .iter()
            .map(|t| Ok((t.as_slice::<T>()?, t.dims()[ax] * inner)))
            .collect::<Result<_>>()?;
        let total: usize = parts.iter().map(|p| p.1).sum::<usize>() * outer;
        let mut out = Vec::with_capacity(total);
        for o in 0..outer {
            for (s, run) in &parts {
                out.extend_from_slice(&s[o * run..(o + 1) * run]);
            }
        }
        Ok(out)
    }
    let data: Data = with_data!(first.data(), v => Element::wrap(go(v, inputs, outer, inner, ax)?));
    Tensor::new(Shape::from(out_dims), data)
}

/// Splits along `axis` into pieces of the given sizes (which must add up).
pub fn split(x: &Tensor, axis: i64, sizes: &[usize]) -> Result<Vec<Tensor>> {
    let ax = normalize_axis(axis, x.rank(), "Split")?;
    let dims = x.dims();
    if sizes.iter().sum::<usize>() != dims[ax] {
        return Err(Error::invalid_argument(format!(
            "Split: sizes {sizes:?} do not add up to dimension {ax} of shape {}",
            x.shape()
        )));
    }
    if dims[..ax].iter().all(|&d| d == 1) {
        // Every piece is one contiguous run of the input (always so along
        // the first axis: unstacking rows, a TensorArray's unstack).
        let inner: usize = dims[ax + 1..].iter().product();
        let mut piece_dims = dims.to_vec();
        let mut start = 0;
        return sizes
            .iter()
            .map(|&s| {
                piece_dims[ax] = s;
                let (begin, end) = (start * inner, (start + s) * inner);
                start += s;
                with_data!(x.data(), v => Tensor::from_vec(Shape::new(&piece_dims), v[begin..end].to_vec()))
            })
            .collect();
    }
    let mut start = 0i64;
    let mut out = Vec::with_capacity(sizes.len());
    for &s in sizes {
        let mut begin = vec![0i64; dims.len()];
        let mut size: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
        begin[ax] = start;
        size[ax] = s as i64;
        out.push(slice(x, &begin, &size)?);
        start += s as i64;
    }
    Ok(out)
}

/// Repeats `x` `multiples[d]` times along each dimension.
pub fn tile(x: &Tensor, multiples: &[i64]) -> Result<Tensor> {
    let dims = x.dims();
    if multiples.len() != dims.len() || multiples.iter().any(|&m| m < 0) {
        return Err(Error::invalid_argument(format!(
            "Tile: expected {} non-negative multiples for input of shape {}, got {multiples:?}",
            dims.len(),
            x.shape()
        )));
    }
    let out_dims: Vec<usize> = dims
        .iter()
        .zip(multiples)
        .map(|(&d, &m)| d.saturating_mul(m as usize))
        .collect();
    Tensor::check_allocation("Tile", x.dtype(), &out_dims)?;
    let out_shape = Shape::new(&out_dims);
    fn go<T: Clone>(x: &[T], dims: &[usize], out: &[usize]) -> Vec<T> {
        // Tile the innermost dimension, then repeat whole blocks outward.
        let rank = dims.len();
        if rank == 0 {
            return x.to_vec();
        }
        let mut cur: Vec<T> = x.to_vec();
        let mut cur_dims: Vec<usize> = dims.to_vec();
        for d in (0..rank).rev() {
            let m = out[d] / dims[d].max(1);
            if dims[d] == 0 || out[d] == 0 {
                return Vec::new();
            }
            if m == 1 {
                continue;
            }
            let outer: usize = cur_dims[..d].iter().product();
            let block: usize = cur_dims[d..].iter().product();
            let mut next = Vec::with_capacity(cur.len() * m);
            for o in 0..outer {
                for _ in 0..m {
                    next.extend_from_slice(&cur[o * block..(o + 1) * block]);
                }
            }
            cur = next;
            cur_dims[d] *= m;
        }
        cur
    }
    if out_shape.num_elements() == 0 {
        return Ok(Tensor::zeros(x.dtype(), out_shape));
    }
    map_any!(x, out_shape.clone(), v => go(v, dims, out_shape.dims()))
}

/// Padding modes of `tf.pad`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PadMode {
    Constant,
    Reflect,
    Symmetric,
}

/// Pads each dimension by `paddings[d] = (before, after)`.
pub fn pad(
    x: &Tensor,
    paddings: &[(i64, i64)],
    mode: PadMode,
    constant: &Tensor,
) -> Result<Tensor> {
    let dims = x.dims();
    let rank = dims.len();
    if paddings.len() != rank {
        return Err(Error::invalid_argument(format!(
            "Pad: paddings must have {rank} rows for input of shape {}, got {}",
            x.shape(),
            paddings.len()
        )));
    }
    for (d, &(b, a)) in paddings.iter().enumerate() {
        let limit = match mode {
            PadMode::Constant => i64::MAX,
            PadMode::Reflect => dims[d] as i64 - 1,
            PadMode::Symmetric => dims[d] as i64,
        };
        if b < 0 || a < 0 || b > limit || a > limit {
            return Err(Error::invalid_argument(format!(
                "Pad: paddings must be non-negative (and at most {limit} for {mode:?}) in dimension {d}, got ({b}, {a})"
            )));
        }
    }
    if constant.dtype() != x.dtype() {
        return Err(Error::invalid_argument(
            "Pad: constant_values must have the input's dtype",
        ));
    }
    let out_dims: Vec<usize> = dims
        .iter()
        .zip(paddings)
        .map(|(&d, &(b, a))| d.saturating_add(b as usize).saturating_add(a as usize))
        .collect();
    Tensor::check_allocation("Pad", x.dtype(), &out_dims)?;
    // For each dim, the source index of each output position (None: padding).
    let maps: Vec<Vec<Option<usize>>> = (0..rank)
        .map(|d| {
            let n = dims[d] as i64;
            let b = paddings[d].0;
            (0..out_dims[d] as i64)
                .map(|o| {
                    let i = o - b;
                    if (0..n).contains(&i) {
                        return Some(i as usize);
                    }
                    match mode {
                        PadMode::Constant => None,
                        PadMode::Reflect => Some(if i < 0 { -i } else { 2 * (n - 1) - i } as usize),
                        PadMode::Symmetric => {
                            Some(if i < 0 { -i - 1 } else { 2 * n - 1 - i } as usize)
                        }
                    }
                })
                .collect()
        })
        .collect();
    fn go<T: Element>(
        x: &[T],
        c: &Tensor,
        dims: &[usize],
        out_dims: &[usize],
        maps: &[Vec<Option<usize>>],
    ) -> Result<Vec<T>> {
        let fill = c
            .as_slice::<T>()?
            .first()
            .cloned()
            .ok_or_else(|| Error::invalid_argument("Pad: constant_values is empty"))?;
        let n: usize = out_dims.iter().product();
        let rank = dims.len();
        let strides = Shape::new(dims).strides();
        let mut out = Vec::with_capacity(n);
        let mut idx = vec![0usize; rank];
        for _ in 0..n {
            let mut off = Some(0usize);
            for d in 0..rank {
                off = match (off, maps[d][idx[d]]) {
                    (Some(o), Some(i)) => Some(o + i * strides[d]),
                    _ => None,
                };
            }
            out.push(match off {
                Some(o) => x[o].clone(),
                None => fill.clone(),
            });
            for d in (0..rank).rev() {
                idx[d] += 1;
                if idx[d] < out_dims[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        Ok(out)
    }
    let data: Data =
        with_data!(x.data(), v => Element::wrap(go(v, constant, dims, &out_dims, &maps)?));
    Tensor::new(Shape::from(out_dims), data)
}

/// Stacks equal-shaped tensors along a new `axis` (`Pack`).
pub fn stack(inputs: &[Tensor], axis: i64) -> Result<Tensor> {
    let first = inputs
        .first()
        .ok_or_else(|| Error::invalid_argument("Pack needs at least one input"))?;
    let ax = normalize_axis(axis, first.rank() + 1, "Pack")?;
    let mut expanded = Vec::with_capacity(inputs.len());
    for (i, t) in inputs.iter().enumerate() {
        if t.shape() != first.shape() {
            return Err(Error::invalid_argument(format!(
                "Pack: shapes of all inputs must match: values[0].shape = {} != values[{i}].shape = {}",
                first.shape(),
                t.shape()
            )));
        }
        let mut s = t.shape().clone();
        s.insert(ax, 1);
        expanded.push(t.reshape(s)?);
    }
    if expanded.len() == 1 {
        return Ok(expanded.pop().expect("one input"));
    }
    concat(&expanded, ax as i64)
}

/// Splits along `axis` into its slices, removing that dimension (`Unpack`).
pub fn unstack(x: &Tensor, axis: i64) -> Result<Vec<Tensor>> {
    let ax = normalize_axis(axis, x.rank(), "Unpack")?;
    let n = x.dims()[ax];
    let mut shape = x.shape().clone();
    shape.remove(ax);
    split(x, ax as i64, &vec![1; n])?
        .into_iter()
        .map(|t| t.with_shape(shape.clone()))
        .collect()
}

/// Reverses the given axes.
pub fn reverse(x: &Tensor, axes: &[usize]) -> Result<Tensor> {
    let dims = x.dims();
    let mut starts = vec![0i64; dims.len()];
    let mut steps = vec![1i64; dims.len()];
    for &a in axes {
        if a >= dims.len() {
            return Err(Error::invalid_argument(format!(
                "ReverseV2: axis {a} out of range"
            )));
        }
        starts[a] = dims[a] as i64 - 1;
        steps[a] = -1;
    }
    map_any!(x, x.shape().clone(), v => gather_strided(v, dims, &starts, &steps, dims))
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
    slice(&t, &begin, &size)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{i32s, ints, iota};
    use super::*;

    #[test]
    fn split_into_contiguous_runs_equals_slicing() {
        // (shape, axis, sizes): the contiguous case (only size-1 dims before
        // the axis), empty pieces included.
        let cases: [(&[usize], usize, &[usize]); 4] = [
            (&[5, 3], 0, &[2, 0, 3]),
            (&[1, 6, 2], 1, &[2, 4]),
            (&[1, 1, 4], 2, &[1, 1, 1, 1]),
            (&[4], 0, &[4]),
        ];
        for (dims, axis, sizes) in cases {
            let x = iota(dims);
            let pieces = split(&x, axis as i64, sizes).unwrap();
            let mut start = 0i64;
            for (piece, &s) in pieces.iter().zip(sizes) {
                let mut begin = vec![0i64; dims.len()];
                let mut size: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
                begin[axis] = start;
                size[axis] = s as i64;
                let expect = super::super::slice(&x, &begin, &size).unwrap();
                assert_eq!(piece.dims(), expect.dims());
                assert_eq!(i32s(piece), i32s(&expect));
                start += s as i64;
            }
        }
        let rows = unstack(&iota(&[3, 2]), 0).unwrap();
        assert_eq!(
            rows.iter().map(i32s).collect::<Vec<_>>(),
            vec![vec![0, 1], vec![2, 3], vec![4, 5]]
        );
        assert!(rows.iter().all(|r| r.dims() == [2]));
    }

    #[test]
    fn transpose_and_concat() {
        let x = iota(&[2, 3]);
        let t = transpose(&x, &[1, 0]).unwrap();
        assert_eq!(t.dims(), &[3, 2]);
        assert_eq!(i32s(&t), vec![0, 3, 1, 4, 2, 5]);
        let c = concat(&[x.clone(), x.clone()], 1).unwrap();
        assert_eq!(c.dims(), &[2, 6]);
        assert_eq!(i32s(&c), vec![0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5]);
        assert!(transpose(&x, &[0, 0]).is_err());
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
}
