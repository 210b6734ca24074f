//! Whole tensors rearranged: transpose, concat, split, stack, unstack, tile,
//! pad and reverse.

use super::{gather_strided, slice};
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

#[cfg(test)]
mod tests {
    use super::super::tests::{i32s, iota};
    use super::*;

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
}
