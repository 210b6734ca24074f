//! Data movement: transpose, concat, split, slicing, gather, tile, pad,
//! one_hot, scatter and friends. These are generic over every dtype
//! (strings included), since they only move elements.

use super::scalar::Scalar;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::{normalize_axis, Shape};
use crate::tensor::{Data, Element, Tensor};
use crate::with_data;

/// Builds a tensor from `shape` and the output of a generic element
/// function, for whatever dtype `$x` holds.
macro_rules! map_any {
    ($x:expr, $shape:expr, $v:ident => $body:expr) => {{
        let data: Data = with_data!($x.data(), $v => Element::wrap($body));
        Tensor::new($shape, data)
    }};
}

/// `out[i] = x[offset(i)]` for an N-d strided window: per dimension a start,
/// a (possibly negative) step and a count.
fn gather_strided<T: Clone>(
    x: &[T],
    dims: &[usize],
    starts: &[i64],
    steps: &[i64],
    counts: &[usize],
) -> Vec<T> {
    let n: usize = counts.iter().product();
    let mut out = Vec::with_capacity(n);
    if n == 0 {
        return out;
    }
    if dims.is_empty() {
        out.push(x[0].clone());
        return out;
    }
    // Merge trailing dimensions taken whole into the one before them when
    // that one steps forward by one: the merged run is contiguous. An image
    // crop ([h, w, 3] -> [h', w', 3]) then copies whole rows, not pixels.
    let (mut dims, mut starts, mut steps, mut counts) = (
        dims.to_vec(),
        starts.to_vec(),
        steps.to_vec(),
        counts.to_vec(),
    );
    while dims.len() > 1 {
        let l = dims.len() - 1;
        let whole = starts[l] == 0 && steps[l] == 1 && counts[l] == dims[l];
        if !whole || steps[l - 1] != 1 {
            break;
        }
        dims[l - 1] *= dims[l];
        starts[l - 1] *= dims[l] as i64;
        counts[l - 1] *= dims[l];
        for v in [&mut dims, &mut counts] {
            v.pop();
        }
        starts.pop();
        steps.pop();
    }
    let rank = dims.len();
    let strides = Shape::new(&dims).strides();
    let last = rank - 1;
    let (s0, st, run) = (starts[last], steps[last], counts[last]);
    // The innermost loop covers the last two dimensions; the odometer only
    // moves the ones outside them.
    let (outer_rank, rows, row_start, row_step, row_stride) = if rank >= 2 {
        (
            rank - 2,
            counts[rank - 2],
            starts[rank - 2],
            steps[rank - 2],
            strides[rank - 2] as i64,
        )
    } else {
        (0, 1, 0, 0, 0)
    };
    // Plain values are written in place (not pushed): a pixel's few channels
    // are then plain stores, where pushes or a memcpy call per pixel cost
    // several times more. Strings are pushed, so each is cloned only once.
    if std::mem::needs_drop::<T>() {
        return gather_strided_pushed(x, &strides, &starts, &steps, &counts, n);
    }
    out.resize(n, x[0].clone());
    let mut at = 0;
    let mut idx = vec![0usize; outer_rank];
    loop {
        let mut base: i64 = 0;
        for d in 0..outer_rank {
            base += (starts[d] + idx[d] as i64 * steps[d]) * strides[d] as i64;
        }
        for r in 0..rows as i64 {
            let row = base + (row_start + r * row_step) * row_stride + s0;
            let dst = &mut out[at..at + run];
            at += run;
            if st == 1 {
                let b = row as usize;
                if run <= 8 {
                    for (o, v) in dst.iter_mut().zip(&x[b..b + run]) {
                        *o = v.clone();
                    }
                } else {
                    dst.clone_from_slice(&x[b..b + run]);
                }
            } else {
                for (k, o) in dst.iter_mut().enumerate() {
                    *o = x[(row + k as i64 * st) as usize].clone();
                }
            }
        }
        // Advance the odometer over the outer dimensions.
        let mut d = outer_rank;
        loop {
            if d == 0 {
                return out;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < counts[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// [`gather_strided`] for values that own memory (strings), by pushes,
/// with `strides` and the rest already merged.
fn gather_strided_pushed<T: Clone>(
    x: &[T],
    strides: &[usize],
    starts: &[i64],
    steps: &[i64],
    counts: &[usize],
    n: usize,
) -> Vec<T> {
    let rank = counts.len();
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; rank];
    loop {
        let mut at: i64 = 0;
        for d in 0..rank {
            at += (starts[d] + idx[d] as i64 * steps[d]) * strides[d] as i64;
        }
        out.push(x[at as usize].clone());
        let mut d = rank;
        loop {
            if d == 0 {
                return out;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < counts[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

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

/// `x[begin : begin + size]` per dimension; a size of -1 takes the rest.
pub fn slice(x: &Tensor, begin: &[i64], size: &[i64]) -> Result<Tensor> {
    let dims = x.dims();
    let rank = dims.len();
    if begin.len() != rank || size.len() != rank {
        return Err(Error::invalid_argument(format!(
            "Slice: begin and size must have {rank} elements for input of shape {}, got {} and {}",
            x.shape(),
            begin.len(),
            size.len()
        )));
    }
    let mut counts = Vec::with_capacity(rank);
    for d in 0..rank {
        let b = begin[d];
        let s = if size[d] == -1 {
            dims[d] as i64 - b
        } else {
            size[d]
        };
        if b < 0 || s < 0 || b + s > dims[d] as i64 {
            return Err(Error::invalid_argument(format!(
                "Expected begin[{d}] in [0, {}] and size[{d}] in [0, {}], but got {} and {}",
                dims[d],
                dims[d] as i64 - b.max(0),
                b,
                size[d]
            )));
        }
        counts.push(s as usize);
    }
    if counts.as_slice() == dims {
        return Ok(x.clone());
    }
    let steps = vec![1i64; rank];
    map_any!(x, Shape::from(counts.clone()), v => gather_strided(v, dims, begin, &steps, &counts))
}

/// The bit masks of `StridedSlice`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SliceMasks {
    pub begin: i64,
    pub end: i64,
    pub ellipsis: i64,
    pub new_axis: i64,
    pub shrink_axis: i64,
}

/// What a strided slice selects: per input dimension `(start, step, count)`
/// (`None` where the input dimension is unknown), and the final shape.
#[derive(Clone, Debug, PartialEq)]
pub struct StridedSlicePlan {
    pub windows: Vec<Option<(i64, i64, usize)>>,
    pub final_shape: Vec<Option<usize>>,
}

/// Resolves `StridedSlice` arguments against an input shape (dims may be
/// unknown, for shape inference). Follows TensorFlow's rules for masks,
/// negative indices, clamping and the implicit trailing ellipsis.
pub fn strided_slice_plan(
    dims: &[Option<usize>],
    begin: &[i64],
    end: &[i64],
    strides: &[i64],
    m: SliceMasks,
) -> Result<StridedSlicePlan> {
    strided_slice_plan_partial(dims, Some(begin), Some(end), strides, m)
}

/// Like [`strided_slice_plan`] when `begin` or `end` may be unknown (shape
/// inference of `x[i:i + 2]` with a tensor `i`): dimensions whose bounds are
/// unknown and not masked come out unknown.
pub fn strided_slice_plan_partial(
    dims: &[Option<usize>],
    begin: Option<&[i64]>,
    end: Option<&[i64]>,
    strides: &[i64],
    m: SliceMasks,
) -> Result<StridedSlicePlan> {
    let n = strides.len();
    let (bl, el) = (begin.map_or(n, <[i64]>::len), end.map_or(n, <[i64]>::len));
    if bl != n || el != n {
        return Err(Error::invalid_argument(format!(
            "StridedSlice: begin, end and strides must have one length, got {bl}, {el} and {n}"
        )));
    }
    let begin_at = |i: usize| begin.map(|b| b[i]);
    let end_at = |i: usize| end.map(|e| e[i]);
    let stride_at = |i: usize| strides[i];
    let bit = |mask: i64, i: usize| mask & (1 << i) != 0;
    let mut ellipsis_mask = m.ellipsis;
    let mut sparse_n = n;
    if ellipsis_mask == 0 {
        ellipsis_mask = 1 << n;
        sparse_n += 1;
    } else if (ellipsis_mask & (ellipsis_mask - 1)) != 0 {
        return Err(Error::invalid_argument(
            "Multiple ellipses in slice spec not allowed",
        ));
    }
    let rank = dims.len();
    // Dense entries: (begin, end, stride, begin_masked, end_masked, shrink) per input dim.
    #[derive(Clone, Copy)]
    enum Out {
        Dim(usize),
        NewAxis,
        Shrink,
    }
    #[allow(clippy::type_complexity)]
    let mut dense: Vec<(Option<i64>, Option<i64>, i64, bool, bool, bool)> =
        Vec::with_capacity(rank);
    let mut final_gather: Vec<Out> = Vec::new();
    let mut full = 0usize;
    for i in 0..sparse_n {
        if bit(ellipsis_mask, i) {
            let new_after = (i + 1..sparse_n).filter(|&j| bit(m.new_axis, j)).count();
            let next = (rank + i + 1 + new_after)
                .saturating_sub(sparse_n)
                .min(rank);
            while full < next {
                dense.push((Some(0), Some(0), 1, true, true, false));
                final_gather.push(Out::Dim(full));
                full += 1;
            }
        } else if bit(m.new_axis, i) {
            final_gather.push(Out::NewAxis);
        } else {
            if full >= rank {
                return Err(Error::invalid_argument(format!(
                    "Index out of range using input dim {full}; input has only {rank} dims"
                )));
            }
            let shrink = bit(m.shrink_axis, i);
            dense.push((
                begin_at(i),
                end_at(i),
                stride_at(i),
                bit(m.begin, i),
                bit(m.end, i),
                shrink,
            ));
            final_gather.push(if shrink { Out::Shrink } else { Out::Dim(full) });
            full += 1;
        }
    }
    if dense.len() != rank {
        return Err(Error::invalid_argument(format!(
            "StridedSlice: spec covers {} dims but the input has {rank}",
            dense.len()
        )));
    }
    let mut windows = Vec::with_capacity(rank);
    let mut sizes: Vec<Option<usize>> = Vec::with_capacity(rank);
    for (d, &(b, e, s, bm, em, shrink)) in dense.iter().enumerate() {
        if s == 0 {
            return Err(Error::invalid_argument(format!(
                "strides[{d}] must be non-zero"
            )));
        }
        if shrink && s <= 0 {
            return Err(Error::invalid_argument(
                "only stride 1 allowed on non-range indexing.",
            ));
        }
        let unknown_bounds = (b.is_none() && !bm) || (e.is_none() && !em && !shrink);
        let (Some(dim), false) = (dims[d], unknown_bounds) else {
            windows.push(None);
            sizes.push(if shrink { Some(1) } else { None });
            continue;
        };
        let dim = dim as i64;
        let (b, e) = (b.unwrap_or(0), e.unwrap_or(0));
        let (start, stop) = if shrink {
            let x = if b < 0 { dim + b } else { b };
            if x < 0 || x >= dim {
                return Err(Error::invalid_argument(format!(
                    "slice index {b} of dimension {d} out of bounds."
                )));
            }
            (x, x + 1)
        } else {
            let range = if s > 0 { (0, dim) } else { (-1, dim - 1) };
            let canon = |x: i64, masked: bool, is_end: bool| -> i64 {
                if masked {
                    // Begin takes the first element in the stride's direction, end the last.
                    match (s > 0, is_end) {
                        (true, false) | (false, true) => range.0,
                        _ => range.1,
                    }
                } else {
                    let f = if x < 0 { dim + x } else { x };
                    f.clamp(range.0, range.1)
                }
            };
            (canon(b, bm, false), canon(e, em, true))
        };
        let len = stop - start;
        let count = if shrink {
            1
        } else if len == 0 || ((len < 0) != (s < 0)) {
            0
        } else {
            (len / s + i64::from(len % s != 0)) as usize
        };
        windows.push(Some((start, s, count)));
        sizes.push(Some(count));
    }
    let final_shape = final_gather
        .iter()
        .filter_map(|o| match o {
            Out::Dim(d) => Some(sizes[*d]),
            Out::NewAxis => Some(Some(1)),
            Out::Shrink => None,
        })
        .collect();
    Ok(StridedSlicePlan {
        windows,
        final_shape,
    })
}

/// TensorFlow's `StridedSlice` (what `tensor[...]` builds).
pub fn strided_slice(
    x: &Tensor,
    begin: &[i64],
    end: &[i64],
    strides: &[i64],
    masks: SliceMasks,
) -> Result<Tensor> {
    let dims: Vec<Option<usize>> = x.dims().iter().map(|&d| Some(d)).collect();
    let plan = strided_slice_plan(&dims, begin, end, strides, masks)?;
    let (mut starts, mut steps, mut counts) = (vec![], vec![], vec![]);
    for w in &plan.windows {
        let (s, st, c) = w.expect("known dims");
        starts.push(s);
        steps.push(st);
        counts.push(c);
    }
    let shape: Shape = plan
        .final_shape
        .iter()
        .map(|d| d.expect("known dims"))
        .collect();
    map_any!(x, shape, v => gather_strided(v, x.dims(), &starts, &steps, &counts))
}

fn dims_string(d: &[usize]) -> String {
    let parts: Vec<String> = d.iter().map(usize::to_string).collect();
    format!("[{}]", parts.join(","))
}

/// TensorFlow's `StridedSliceAssign` (`v[1:3].assign(...)` on a variable):
/// writes `value` into the strided slice of `x`, in place when `x` holds its
/// buffer alone. As in TensorFlow, `value` is broadcast into the slice's
/// final shape (leading size-1 dimensions of a higher-rank `value` are
/// dropped), and an empty slice assigns nothing whatever `value`'s shape. On
/// error `x` is left unchanged.
pub fn strided_slice_assign(
    x: &mut Tensor,
    begin: &[i64],
    end: &[i64],
    strides: &[i64],
    masks: SliceMasks,
    value: &Tensor,
) -> Result<()> {
    if value.dtype() != x.dtype() {
        return Err(Error::invalid_argument(format!(
            "StridedSliceAssign: cannot assign a {} value into a {} tensor",
            value.dtype(),
            x.dtype()
        )));
    }
    let dims: Vec<Option<usize>> = x.dims().iter().map(|&d| Some(d)).collect();
    let plan = strided_slice_plan(&dims, begin, end, strides, masks)?;
    let windows: Vec<(i64, i64, usize)> = plan
        .windows
        .iter()
        .map(|w| w.expect("known dims"))
        .collect();
    let n: usize = windows.iter().map(|w| w.2).product();
    if n == 0 {
        return Ok(());
    }
    let final_shape: Vec<usize> = plan
        .final_shape
        .iter()
        .map(|d| d.expect("known dims"))
        .collect();
    let vdims = value.dims();
    let cannot = || {
        Error::invalid_argument(format!(
            "Cannot broadcast input shape {} into final shape {}",
            dims_string(vdims),
            dims_string(&final_shape)
        ))
    };
    // `value`'s dims aligned with the final shape: extra leading dims must be 1.
    let r = final_shape.len();
    let aligned: Vec<usize> = if vdims.len() > r {
        let (lead, rest) = vdims.split_at(vdims.len() - r);
        if lead.iter().any(|&d| d != 1) {
            return Err(cannot());
        }
        rest.to_vec()
    } else {
        std::iter::repeat_n(1, r - vdims.len())
            .chain(vdims.iter().copied())
            .collect()
    };
    // Element strides of `value` per final dimension (0 where it broadcasts).
    let mut vstrides = vec![0usize; r];
    let mut acc = 1usize;
    for d in (0..r).rev() {
        if aligned[d] == final_shape[d] {
            vstrides[d] = if aligned[d] == 1 { 0 } else { acc };
        } else if aligned[d] != 1 {
            return Err(cannot());
        }
        acc *= aligned[d];
    }
    // Source offset in `value` of each selected element, in row-major order
    // of the final shape (the order of the slice's elements).
    let mut sources = Vec::with_capacity(n);
    let mut idx = vec![0usize; r];
    for _ in 0..n {
        sources.push(idx.iter().zip(&vstrides).map(|(i, s)| i * s).sum::<usize>());
        for d in (0..r).rev() {
            idx[d] += 1;
            if idx[d] < final_shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    let xstrides = x.shape().strides();
    fn write<T: Element>(
        x: &mut Tensor,
        src: &[T],
        sources: &[usize],
        windows: &[(i64, i64, usize)],
        xstrides: &[usize],
    ) -> Result<()> {
        let out = x.make_mut::<T>()?;
        let rank = windows.len();
        let mut idx = vec![0usize; rank];
        for &s in sources {
            let off: i64 = (0..rank)
                .map(|d| (windows[d].0 + idx[d] as i64 * windows[d].1) * xstrides[d] as i64)
                .sum();
            out[off as usize] = src[s].clone();
            for d in (0..rank).rev() {
                idx[d] += 1;
                if idx[d] < windows[d].2 {
                    break;
                }
                idx[d] = 0;
            }
        }
        Ok(())
    }
    with_data!(value.data(), v => write(x, v.as_slice(), &sources, &windows, &xstrides))
}

fn index_error(pos: usize, v: i64, n: usize) -> Error {
    Error::invalid_argument(format!("indices[{pos}] = {v} is not in [0, {n})"))
}

/// Gathers slices along `axis` of `params` at `indices` (`GatherV2`).
pub fn gather(params: &Tensor, indices: &Tensor, axis: i64, batch_dims: i64) -> Result<Tensor> {
    let prank = params.rank();
    let ax = normalize_axis(axis, prank, "GatherV2")?;
    let irank = indices.rank() as i64;
    let b = if batch_dims < 0 {
        batch_dims + irank
    } else {
        batch_dims
    };
    if b < 0 || b > irank || b as usize > ax {
        return Err(Error::invalid_argument(format!(
            "GatherV2: batch_dims {batch_dims} must be in [0, {}] and not exceed axis {ax}",
            irank
        )));
    }
    let b = b as usize;
    let pd = params.dims();
    let id = indices.dims();
    if pd[..b] != id[..b] {
        return Err(Error::invalid_argument(format!(
            "GatherV2: batch dimensions of params {} and indices {} must match",
            params.shape(),
            indices.shape()
        )));
    }
    let idx = indices.to_i64_vec()?;
    let batch: usize = pd[..b].iter().product();
    let outer: usize = pd[b..ax].iter().product();
    let n = pd[ax];
    let inner: usize = pd[ax + 1..].iter().product();
    let k: usize = id[b..].iter().product();
    if let Some((pos, &v)) = idx
        .iter()
        .enumerate()
        .find(|(_, &v)| v < 0 || v as usize >= n)
    {
        return Err(index_error(pos, v, n));
    }
    let out_shape: Shape = pd[..ax]
        .iter()
        .chain(&id[b..])
        .chain(&pd[ax + 1..])
        .copied()
        .collect();
    fn go<T: Clone>(
        p: &[T],
        idx: &[i64],
        batch: usize,
        outer: usize,
        n: usize,
        inner: usize,
        k: usize,
    ) -> Vec<T> {
        let mut out = Vec::with_capacity(batch * outer * k * inner);
        for bi in 0..batch {
            for o in 0..outer {
                let base = (bi * outer + o) * n;
                for &i in &idx[bi * k..(bi + 1) * k] {
                    let s = (base + i as usize) * inner;
                    out.extend_from_slice(&p[s..s + inner]);
                }
            }
        }
        out
    }
    map_any!(params, out_shape, v => go(v, &idx, batch, outer, n, inner, k))
}

/// `GatherNd`: the last dimension of `indices` indexes the leading
/// dimensions of `params`.
pub fn gather_nd(params: &Tensor, indices: &Tensor) -> Result<Tensor> {
    let id = indices.dims();
    let pd = params.dims();
    if id.is_empty() {
        return Err(Error::invalid_argument(
            "GatherNd: indices must be at least a vector",
        ));
    }
    let depth = id[id.len() - 1];
    if depth > pd.len() {
        return Err(Error::invalid_argument(format!(
            "GatherNd: index innermost dimension {depth} exceeds params rank {}",
            pd.len()
        )));
    }
    let idx = indices.to_i64_vec()?;
    let count: usize = id[..id.len() - 1].iter().product();
    let inner: usize = pd[depth..].iter().product();
    let strides = params.shape().strides();
    let mut offsets = Vec::with_capacity(count);
    for c in 0..count {
        let mut off = 0usize;
        for d in 0..depth {
            let v = idx[c * depth + d];
            if v < 0 || v as usize >= pd[d] {
                return Err(Error::invalid_argument(format!(
                    "indices{:?} = {:?} does not index into param shape {}",
                    &id[..id.len() - 1],
                    &idx[c * depth..(c + 1) * depth],
                    params.shape()
                )));
            }
            off += v as usize * if d < pd.len() { strides[d] } else { 1 };
        }
        offsets.push(off);
    }
    let out_shape: Shape = id[..id.len() - 1]
        .iter()
        .chain(&pd[depth..])
        .copied()
        .collect();
    fn go<T: Clone>(p: &[T], offsets: &[usize], inner: usize) -> Vec<T> {
        let mut out = Vec::with_capacity(offsets.len() * inner);
        for &o in offsets {
            out.extend_from_slice(&p[o..o + inner]);
        }
        out
    }
    map_any!(params, out_shape, v => go(v, &offsets, inner))
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

/// `OneHot`: a new axis of length `depth` holding `on` at each index, `off` elsewhere.
pub fn one_hot(
    indices: &Tensor,
    depth: i64,
    on: &Tensor,
    off: &Tensor,
    axis: i64,
) -> Result<Tensor> {
    if depth < 0 {
        return Err(Error::invalid_argument(format!(
            "OneHot: depth must be non-negative, got {depth}"
        )));
    }
    let rank = indices.rank();
    let ax = if axis == -1 {
        rank
    } else {
        normalize_axis(axis, rank + 1, "OneHot")?
    };
    let depth = usize::try_from(depth).unwrap_or(usize::MAX);
    let mut out_dims = indices.dims().to_vec();
    out_dims.insert(ax, depth);
    Tensor::check_allocation("OneHot", on.dtype(), &out_dims)?;
    let idx = indices.to_i64_vec()?;
    let outer: usize = indices.dims()[..ax].iter().product();
    let inner: usize = indices.dims()[ax..].iter().product();
    let mut out_shape = indices.shape().clone();
    out_shape.insert(ax, depth);
    fn go<T: Element>(
        on: &Tensor,
        off: &Tensor,
        idx: &[i64],
        outer: usize,
        depth: usize,
        inner: usize,
    ) -> Result<Vec<T>> {
        let on = on.as_slice::<T>()?[0].clone();
        let off = off.as_slice::<T>()?[0].clone();
        let mut out = vec![off; outer * depth * inner];
        for o in 0..outer {
            for i in 0..inner {
                let v = idx[o * inner + i];
                if v >= 0 && (v as usize) < depth {
                    out[(o * depth + v as usize) * inner + i] = on.clone();
                }
            }
        }
        Ok(out)
    }
    if on.dtype() != off.dtype() {
        return Err(Error::invalid_argument(
            "OneHot: on_value and off_value must have one dtype",
        ));
    }
    let data: Data = with_data!(on.data(), v => {
        fn ty<T: Element>(_: &std::sync::Arc<Vec<T>>, on: &Tensor, off: &Tensor, idx: &[i64], o: usize, d: usize, i: usize) -> Result<Data> {
            Ok(T::wrap(go::<T>(on, off, idx, o, d, i)?))
        }
        ty(v, on, off, &idx, outer, depth, inner)?
    });
    Tensor::new(out_shape, data)
}

/// TensorFlow's `Unique`: the distinct elements of the vector `x` in order
/// of first appearance, and for every element of `x` the position of its
/// value among them (as `out_idx`, int32 or int64). Floats compare by value
/// (`-0.0` equals `0.0`; every NaN is distinct, as NaN != NaN).
pub fn unique(x: &Tensor, out_idx: DType) -> Result<(Tensor, Tensor)> {
    if x.rank() != 1 {
        return Err(Error::invalid_argument(format!(
            "unique expects a 1D vector, got a tensor of shape {}",
            x.shape()
        )));
    }
    /// What decides equality: the value for integers and bools, the bits
    /// of the value for floats (no key for NaN), the bytes for strings.
    #[derive(Hash, PartialEq, Eq)]
    enum Key<'a> {
        Int(i64),
        Bits(u64),
        Bytes(&'a [u8]),
    }
    let (firsts, idx) = match x.data() {
        // Integer ids (embedding lookups): a hash of the value alone, with
        // room reserved up front; SipHash over the general key made this
        // most of an embedding step's Unique.
        Data::I32(_) | Data::I64(_) | Data::I8(_) | Data::I16(_) | Data::U8(_) | Data::U16(_) => {
            unique_ints(&x.to_i64_vec()?)
        }
        _ => {
            let keys: Vec<Option<Key<'_>>> = match x.data() {
                Data::Str(v) => v.iter().map(|b| Some(Key::Bytes(b))).collect(),
                Data::F32(_) | Data::F64(_) | Data::F16(_) | Data::BF16(_) => x
                    .to_f64_vec()?
                    .into_iter()
                    .map(|f| (!f.is_nan()).then(|| Key::Bits((f + 0.0).to_bits())))
                    .collect(),
                Data::Bool(v) => v.iter().map(|&b| Some(Key::Int(b as i64))).collect(),
                _ => x
                    .to_i64_vec()?
                    .into_iter()
                    .map(|i| Some(Key::Int(i)))
                    .collect(),
            };
            let mut seen: std::collections::HashMap<Key<'_>, i64> =
                std::collections::HashMap::new();
            let mut firsts: Vec<i64> = Vec::new();
            let mut idx: Vec<i64> = Vec::with_capacity(keys.len());
            for (i, key) in keys.into_iter().enumerate() {
                let mut fresh = || {
                    firsts.push(i as i64);
                    firsts.len() as i64 - 1
                };
                idx.push(match key {
                    Some(k) => *seen.entry(k).or_insert_with(fresh),
                    None => fresh(),
                });
            }
            (firsts, idx)
        }
    };
    let y = gather(x, &Tensor::vector(firsts), 0, 0)?;
    let idx = match out_idx {
        DType::Int32 => Tensor::vector(idx.into_iter().map(|i| i as i32).collect::<Vec<_>>()),
        DType::Int64 => Tensor::vector(idx),
        d => {
            return Err(Error::invalid_argument(format!(
                "unique: out_idx must be int32 or int64, got {d}"
            )))
        }
    };
    Ok((y, idx))
}

/// Hashes an integer key in one multiply (the 128-bit product folded), for
/// maps keyed by ids: SipHash's flooding resistance buys nothing there.
#[derive(Default)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, v: u64) {
        let p = u128::from(v ^ self.0).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = (p as u64) ^ ((p >> 64) as u64);
    }

    fn write_i64(&mut self, v: i64) {
        self.write_u64(v as u64);
    }
}

/// `Unique` of integers: the index of each value's first occurrence, in
/// order, and each element's position among them.
fn unique_ints(v: &[i64]) -> (Vec<i64>, Vec<i64>) {
    let mut seen: std::collections::HashMap<i64, i64, std::hash::BuildHasherDefault<IdHasher>> =
        std::collections::HashMap::with_capacity_and_hasher(v.len(), Default::default());
    let mut firsts = Vec::new();
    let idx = v
        .iter()
        .enumerate()
        .map(|(i, &key)| {
            *seen.entry(key).or_insert_with(|| {
                firsts.push(i as i64);
                firsts.len() as i64 - 1
            })
        })
        .collect();
    (firsts, idx)
}

/// Coordinates of the true (non-zero) elements, as int64 `[n, rank]` (`Where`).
pub fn where_indices(cond: &Tensor) -> Result<Tensor> {
    let mask: Vec<bool> = match cond.data() {
        Data::Bool(v) => v.to_vec(),
        Data::Str(_) => {
            return Err(Error::invalid_argument(
                "Where: condition must be bool or numeric",
            ))
        }
        _ => cond.to_f64_vec()?.into_iter().map(|x| x != 0.0).collect(),
    };
    let dims = cond.dims();
    let rank = dims.len();
    let strides = cond.shape().strides();
    let mut out = Vec::new();
    let mut n = 0;
    for (flat, _) in mask.iter().enumerate().filter(|(_, &m)| m) {
        let mut r = flat;
        for &s in strides.iter() {
            out.push((r / s) as i64);
            r %= s;
        }
        n += 1;
    }
    Tensor::from_vec([n, rank], out)
}

/// The number of elements of `Range(start, limit, delta)`, computed as
/// TensorFlow does in the output type (float32 ranges round in float32).
pub fn range_len(start: f64, limit: f64, delta: f64, dtype: DType) -> usize {
    let n = if dtype.is_integer() {
        let (s, l, d) = (start as i128, limit as i128, delta as i128);
        if d == 0 {
            return 0;
        }
        ((l - s).abs() + d.abs() - 1) / d.abs()
    } else if dtype == DType::Float32 {
        let (s, l, d) = (start as f32, limit as f32, delta as f32);
        ((l - s) / d).abs().ceil() as i128
    } else {
        ((limit - start) / delta).abs().ceil() as i128
    };
    n.clamp(0, usize::MAX as i128) as usize
}

/// `[start, start + delta, ...)` up to `limit` (exclusive), in `dtype`.
pub fn range(start: f64, limit: f64, delta: f64, dtype: DType) -> Result<Tensor> {
    if delta == 0.0 {
        return Err(Error::invalid_argument("Requires delta != 0"));
    }
    if (delta > 0.0 && start > limit) || (delta < 0.0 && start < limit) {
        return Err(Error::invalid_argument(format!(
            "Requires start <= limit when delta > 0: {start}/{limit}"
        )));
    }
    let n = range_len(start, limit, delta, dtype);
    Tensor::check_allocation("Range", dtype, &[n])?;
    if dtype.is_integer() {
        let (s, d) = (start as i64, delta as i64);
        let iv: Vec<i64> = (0..n as i64)
            .map(|i| s.wrapping_add(i.wrapping_mul(d)))
            .collect();
        return super::elementwise::cast(&Tensor::vector(iv), dtype);
    }
    if dtype == DType::Float32 {
        // TensorFlow accumulates `val += delta` in the output type.
        let (mut val, d) = (start as f32, delta as f32);
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(val);
            val += d;
        }
        return Ok(Tensor::vector(v));
    }
    let mut v = Vec::with_capacity(n);
    let mut val = start;
    for _ in 0..n {
        v.push(val);
        val += delta;
    }
    super::elementwise::cast(&Tensor::vector(v), dtype)
}

/// `num` evenly spaced values from `start` to `stop` inclusive.
pub fn linspace(start: f64, stop: f64, num: i64, dtype: DType) -> Result<Tensor> {
    if num <= 0 {
        return Err(Error::invalid_argument(format!("Requires num > 0: {num}")));
    }
    let n = num as usize;
    Tensor::check_allocation("LinSpace", dtype, &[n])?;
    let v: Vec<f64> = if n == 1 {
        vec![start]
    } else {
        let step = (stop - start) / (n - 1) as f64;
        (0..n)
            .map(|i| {
                if i == n - 1 {
                    stop
                } else {
                    start + i as f64 * step
                }
            })
            .collect()
    };
    super::elementwise::cast(&Tensor::vector(v), dtype)
}

/// A tensor of `shape` with every element `value[0]`.
pub fn fill(shape: &Shape, value: &Tensor) -> Result<Tensor> {
    if value.num_elements() != 1 {
        return Err(Error::invalid_argument(format!(
            "Fill: value must be a scalar, got shape {}",
            value.shape()
        )));
    }
    Tensor::check_allocation("Fill", value.dtype(), shape.dims())?;
    let n = shape.num_elements();
    fn repeat<T: Clone>(v: &[T], n: usize) -> Vec<T> {
        vec![v[0].clone(); n]
    }
    map_any!(value, shape.clone(), v => repeat(v, n))
}

/// The `k` largest entries of the last dimension, sorted descending, with
/// their indices (ties keep the lower index first).
pub fn top_k(x: &Tensor, k: usize) -> Result<(Tensor, Tensor)> {
    let dims = x.dims();
    let Some(&n) = dims.last() else {
        return Err(Error::invalid_argument(
            "TopKV2: input must be at least a vector",
        ));
    };
    if k > n {
        return Err(Error::invalid_argument(format!(
            "input must have at least k columns. Had {n}, needed {k}"
        )));
    }
    let rows = x.num_elements() / n.max(1);
    let mut shape = x.shape().clone();
    shape.set_dim(dims.len() - 1, k);
    fn go<T: Scalar>(v: &[T], rows: usize, n: usize, k: usize) -> (Vec<T>, Vec<i32>) {
        let mut vals = Vec::with_capacity(rows * k);
        let mut idx = Vec::with_capacity(rows * k);
        let mut order: Vec<usize> = Vec::with_capacity(n);
        for r in 0..rows {
            let row = &v[r * n..(r + 1) * n];
            order.clear();
            order.extend(0..n);
            order.sort_by(|&a, &b| {
                row[b]
                    .partial_cmp(&row[a])
                    .unwrap_or(std::cmp::Ordering::Equal)
                    .then(a.cmp(&b))
            });
            for &i in &order[..k] {
                vals.push(row[i]);
                idx.push(i as i32);
            }
        }
        (vals, idx)
    }
    let dtype = x.dtype();
    let wide;
    let src = if matches!(dtype, DType::Float16 | DType::BFloat16) {
        wide = super::elementwise::cast(x, DType::Float32)?;
        &wide
    } else {
        x
    };
    let (vals, idx): (Data, Vec<i32>) = crate::with_real!(src.data(), v => {
        let (a, b) = go(v, rows, n, k);
        (Element::wrap(a), b)
    }, _ => return Err(Error::invalid_argument(format!("TopKV2 is not supported for {dtype} tensors"))));
    let values = super::elementwise::cast(&Tensor::new(shape.clone(), vals)?, dtype)?;
    Ok((values, Tensor::from_vec(shape, idx)?))
}

/// `InTopKV2`: whether each target class is among the `k` largest predictions.
pub fn in_top_k(predictions: &Tensor, targets: &Tensor, k: i64) -> Result<Tensor> {
    let p = super::elementwise::cast(predictions, DType::Float32)?;
    let p = p.as_slice::<f32>()?;
    let t = targets.to_i64_vec()?;
    let dims = predictions.dims();
    if dims.len() != 2 || targets.rank() != 1 || dims[0] != t.len() {
        return Err(Error::invalid_argument(format!(
            "InTopK: predictions must be [batch, classes] and targets [batch], got {} and {}",
            predictions.shape(),
            targets.shape()
        )));
    }
    let classes = dims[1];
    let out: Vec<bool> = (0..dims[0])
        .map(|b| {
            let row = &p[b * classes..(b + 1) * classes];
            let tgt = t[b];
            // Like TensorFlow: an out-of-range target or any non-finite
            // prediction in the row gives false.
            if tgt < 0 || tgt as usize >= classes || row.iter().any(|x| !x.is_finite()) {
                return false;
            }
            let v = row[tgt as usize];
            let larger = row.iter().filter(|&&x| x > v).count() as i64;
            larger < k
        })
        .collect();
    Tensor::from_vec([dims[0]], out)
}

/// How a scatter combines an update with the current value.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ScatterOp {
    Update,
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
}

/// Updates rows of `var` in place: `var[indices[i], ...] op= updates[i, ...]`.
pub fn scatter(var: &mut Tensor, indices: &Tensor, updates: &Tensor, op: ScatterOp) -> Result<()> {
    let vd = var.dims().to_vec();
    if vd.is_empty() {
        return Err(Error::invalid_argument(
            "Scatter: the variable must be at least a vector",
        ));
    }
    let idx = indices.to_i64_vec()?;
    let inner: usize = vd[1..].iter().product();
    let expected: Vec<usize> = indices.dims().iter().chain(&vd[1..]).copied().collect();
    if updates.dims() != expected.as_slice() && updates.num_elements() != 1 {
        return Err(Error::invalid_argument(format!(
            "Scatter: updates must have shape {} (indices.shape + var.shape[1:]), got {}",
            Shape::from(expected),
            updates.shape()
        )));
    }
    if updates.dtype() != var.dtype() {
        return Err(Error::invalid_argument(format!(
            "Scatter: updates dtype {} does not match the variable's {}",
            updates.dtype(),
            var.dtype()
        )));
    }
    let n = vd[0];
    if let Some((pos, &v)) = idx
        .iter()
        .enumerate()
        .find(|(_, &v)| v < 0 || v as usize >= n)
    {
        return Err(index_error(pos, v, n));
    }
    let scalar_update = updates.num_elements() == 1 && updates.dims() != expected.as_slice();
    fn go<T: Scalar>(
        var: &mut Tensor,
        idx: &[i64],
        upd: &Tensor,
        inner: usize,
        op: ScatterOp,
        scalar: bool,
    ) -> Result<()> {
        let u = upd.as_slice::<T>()?.to_vec();
        let v = var.make_mut::<T>()?;
        for (k, &i) in idx.iter().enumerate() {
            let row = &mut v[i as usize * inner..(i as usize + 1) * inner];
            for (j, x) in row.iter_mut().enumerate() {
                let y = if scalar { u[0] } else { u[k * inner + j] };
                *x = match op {
                    ScatterOp::Update => y,
                    ScatterOp::Add => x.add(y),
                    ScatterOp::Sub => x.sub(y),
                    ScatterOp::Mul => x.mul(y),
                    ScatterOp::Div => x.div(y),
                    ScatterOp::Max => {
                        if y > *x {
                            y
                        } else {
                            *x
                        }
                    }
                    ScatterOp::Min => {
                        if y < *x {
                            y
                        } else {
                            *x
                        }
                    }
                };
            }
        }
        Ok(())
    }
    match var.dtype() {
        DType::Float32 => go::<f32>(var, &idx, updates, inner, op, scalar_update),
        DType::Float64 => go::<f64>(var, &idx, updates, inner, op, scalar_update),
        DType::Int32 => go::<i32>(var, &idx, updates, inner, op, scalar_update),
        DType::Int64 => go::<i64>(var, &idx, updates, inner, op, scalar_update),
        DType::Int8 => go::<i8>(var, &idx, updates, inner, op, scalar_update),
        DType::Int16 => go::<i16>(var, &idx, updates, inner, op, scalar_update),
        DType::UInt8 => go::<u8>(var, &idx, updates, inner, op, scalar_update),
        DType::UInt16 => go::<u16>(var, &idx, updates, inner, op, scalar_update),
        other => {
            // Half types: compute in f32 and round back.
            let mut wide = super::elementwise::cast(var, DType::Float32)?;
            let wu = super::elementwise::cast(updates, DType::Float32)?;
            go::<f32>(&mut wide, &idx, &wu, inner, op, scalar_update)?;
            *var = super::elementwise::cast(&wide, other)?;
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The element at each output position, computed the slow, obvious way.
    fn naive_gather<T: Clone>(
        x: &[T],
        dims: &[usize],
        starts: &[i64],
        steps: &[i64],
        counts: &[usize],
    ) -> Vec<T> {
        let n: usize = counts.iter().product();
        let strides = Shape::new(dims).strides();
        (0..n)
            .map(|mut i| {
                let mut at = 0i64;
                for d in (0..dims.len()).rev() {
                    let k = (i % counts[d]) as i64;
                    i /= counts[d];
                    at += (starts[d] + k * steps[d]) * strides[d] as i64;
                }
                x[at as usize].clone()
            })
            .collect()
    }

    #[test]
    fn strided_gather_matches_the_obvious_loop() {
        let mut seed = 12345u64;
        let mut next = |m: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % m
        };
        for _ in 0..300 {
            let rank = 1 + next(4);
            let dims: Vec<usize> = (0..rank).map(|_| 1 + next(5)).collect();
            let n: usize = dims.iter().product();
            let x: Vec<i32> = (0..n as i32).collect();
            let xs: Vec<Vec<u8>> = x.iter().map(|v| v.to_string().into_bytes()).collect();
            let (mut starts, mut steps, mut counts) = (vec![], vec![], vec![]);
            for &d in &dims {
                let start = next(d);
                if next(3) == 0 {
                    // Backwards from `start`.
                    let count = 1 + next(start + 1);
                    starts.push(start as i64);
                    steps.push(-1 - next(2) as i64 * (count == 1) as i64);
                    counts.push(count);
                } else {
                    let step = 1 + next(2);
                    let count = (d - start).div_ceil(step);
                    starts.push(start as i64);
                    steps.push(step as i64);
                    counts.push(if next(4) == 0 { d - start } else { count }.min(count));
                }
            }
            let want = naive_gather(&x, &dims, &starts, &steps, &counts);
            assert_eq!(
                gather_strided(&x, &dims, &starts, &steps, &counts),
                want,
                "{dims:?} {starts:?} {steps:?} {counts:?}"
            );
            let want_s = naive_gather(&xs, &dims, &starts, &steps, &counts);
            assert_eq!(gather_strided(&xs, &dims, &starts, &steps, &counts), want_s);
        }
    }

    #[test]
    fn unique_keeps_first_appearances_in_order() {
        let x = Tensor::vector(vec![7i64, 3, 7, 7, 1, 3]);
        let (y, idx) = unique(&x, DType::Int32).unwrap();
        assert_eq!(y.to_i64_vec().unwrap(), [7, 3, 1]);
        assert_eq!(idx.dtype(), DType::Int32);
        assert_eq!(idx.to_i64_vec().unwrap(), [0, 1, 0, 0, 2, 1]);
        let f = Tensor::vector(vec![0.0f32, -0.0, f32::NAN, 2.5, f32::NAN, 2.5]);
        let (y, idx) = unique(&f, DType::Int64).unwrap();
        assert_eq!(y.num_elements(), 4, "-0 is 0; each NaN stands alone");
        assert_eq!(idx.to_i64_vec().unwrap(), [0, 0, 1, 2, 3, 2]);
        let s = Tensor::vector(vec![b"a".to_vec(), b"b".to_vec(), b"a".to_vec()]);
        let (y, idx) = unique(&s, DType::Int32).unwrap();
        assert_eq!(y.num_elements(), 2);
        assert_eq!(idx.to_i64_vec().unwrap(), [0, 1, 0]);
        let (y, idx) = unique(&Tensor::vector(Vec::<i32>::new()), DType::Int32).unwrap();
        assert_eq!((y.num_elements(), idx.num_elements()), (0, 0));
        let m = Tensor::from_vec([2, 2], vec![1i32, 2, 3, 4]).unwrap();
        let err = unique(&m, DType::Int32).err().unwrap().to_string();
        assert!(err.contains("1D vector"), "{err}");
    }

    fn iota(shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        Tensor::from_vec(Shape::new(shape), (0..n as i32).collect::<Vec<_>>()).unwrap()
    }

    fn i32s(t: &Tensor) -> Vec<i32> {
        t.as_slice::<i32>().unwrap().to_vec()
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
    fn strided_slice_assign_broadcasts_like_tf() {
        let m = SliceMasks::default();
        // x[1:3, ::-2] = [[-1], [-2]] (broadcast along the columns)
        let mut x = iota(&[4, 5]);
        let v = Tensor::from_vec([2, 1], vec![-1i32, -2]).unwrap();
        let masks = SliceMasks {
            begin: 2,
            end: 2,
            ..m
        };
        strided_slice_assign(&mut x, &[1, 0], &[3, 0], &[1, -2], masks, &v).unwrap();
        let mut want = i32s(&iota(&[4, 5]));
        for (r, val) in [(1, -1), (2, -2)] {
            for c in [4, 2, 0] {
                want[r * 5 + c] = val;
            }
        }
        assert_eq!(i32s(&x), want);
        // x[1] = [[7, 7, 7, 7, 7]]: leading size-1 dims of the value are dropped.
        let v = Tensor::from_vec([1, 5], vec![7i32; 5]).unwrap();
        let shrink = SliceMasks {
            shrink_axis: 1,
            ..m
        };
        strided_slice_assign(&mut x, &[1], &[2], &[1], shrink, &v).unwrap();
        assert_eq!(&i32s(&x)[5..10], &[7; 5]);
        // A shape that does not broadcast is refused, naming both shapes; x is unchanged.
        let before = i32s(&x);
        let v = Tensor::from_vec([3], vec![1i32, 2, 3]).unwrap();
        let e = strided_slice_assign(
            &mut x,
            &[0, 0],
            &[2, 0],
            &[1, 1],
            SliceMasks { end: 2, ..m },
            &v,
        )
        .unwrap_err();
        assert_eq!(
            e.message(),
            "Cannot broadcast input shape [3] into final shape [2,5]"
        );
        assert_eq!(i32s(&x), before);
        // An empty slice assigns nothing, whatever the value's shape.
        strided_slice_assign(
            &mut x,
            &[3, 0],
            &[1, 0],
            &[1, 1],
            SliceMasks { end: 2, ..m },
            &v,
        )
        .unwrap();
        assert_eq!(i32s(&x), before);
        // The value's dtype must be the tensor's.
        let f = Tensor::scalar(1.0f32);
        assert!(strided_slice_assign(&mut x, &[0], &[1], &[1], m, &f).is_err());
        // Strings move too; a shared buffer is copied, not written through.
        let mut s = Tensor::vector(vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()]);
        let keep = s.clone();
        strided_slice_assign(
            &mut s,
            &[1],
            &[0],
            &[1],
            SliceMasks { end: 1, ..m },
            &Tensor::scalar(b"z".to_vec()),
        )
        .unwrap();
        assert_eq!(
            s.as_slice::<Vec<u8>>().unwrap(),
            &[b"a".to_vec(), b"z".to_vec(), b"z".to_vec()]
        );
        assert_eq!(keep.as_slice::<Vec<u8>>().unwrap()[1], b"b".to_vec());
    }

    #[test]
    fn strided_slices_follow_python_rules() {
        let x = iota(&[4, 5]);
        let m = SliceMasks::default();
        // x[1:3, ::-2]
        let s = strided_slice(
            &x,
            &[1, 0],
            &[3, 0],
            &[1, -2],
            SliceMasks {
                end: 2,
                begin: 2,
                ..m
            },
        )
        .unwrap();
        assert_eq!(s.dims(), &[2, 3]);
        assert_eq!(i32s(&s), vec![9, 7, 5, 14, 12, 10]);
        // x[-1] (shrink)
        let s = strided_slice(
            &x,
            &[-1],
            &[0],
            &[1],
            SliceMasks {
                shrink_axis: 1,
                ..m
            },
        )
        .unwrap();
        assert_eq!(s.dims(), &[5]);
        assert_eq!(i32s(&s), vec![15, 16, 17, 18, 19]);
        // x[..., newaxis, 2]
        let s = strided_slice(
            &x,
            &[0, 0, 2],
            &[0, 0, 3],
            &[1, 1, 1],
            SliceMasks {
                ellipsis: 1,
                new_axis: 2,
                shrink_axis: 4,
                ..m
            },
        )
        .unwrap();
        assert_eq!(s.dims(), &[4, 1]);
        assert_eq!(i32s(&s), vec![2, 7, 12, 17]);
        assert!(strided_slice(
            &x,
            &[9],
            &[0],
            &[1],
            SliceMasks {
                shrink_axis: 1,
                ..m
            }
        )
        .is_err());
    }

    #[test]
    fn gathers() {
        let p = iota(&[3, 2]);
        let i = Tensor::vector(vec![2i64, 0, 2]);
        let g = gather(&p, &i, 0, 0).unwrap();
        assert_eq!(g.dims(), &[3, 2]);
        assert_eq!(i32s(&g), vec![4, 5, 0, 1, 4, 5]);
        let g = gather(&p, &Tensor::vector(vec![1i32]), 1, 0).unwrap();
        assert_eq!(i32s(&g), vec![1, 3, 5]);
        let err = gather(&p, &Tensor::vector(vec![3i32]), 0, 0).unwrap_err();
        assert!(err.to_string().contains("indices[0] = 3 is not in [0, 3)"));
        let nd = gather_nd(&p, &Tensor::from_vec([2, 2], vec![0i64, 1, 2, 0]).unwrap()).unwrap();
        assert_eq!(i32s(&nd), vec![1, 4]);
    }

    #[test]
    fn tile_pad_onehot() {
        let x = iota(&[2, 2]);
        let t = tile(&x, &[1, 2]).unwrap();
        assert_eq!(i32s(&t), vec![0, 1, 0, 1, 2, 3, 2, 3]);
        let p = pad(
            &x,
            &[(1, 0), (0, 1)],
            PadMode::Constant,
            &Tensor::scalar(9i32),
        )
        .unwrap();
        assert_eq!(i32s(&p), vec![9, 9, 9, 0, 1, 9, 2, 3, 9]);
        let r = pad(
            &iota(&[3]),
            &[(2, 1)],
            PadMode::Reflect,
            &Tensor::scalar(0i32),
        )
        .unwrap();
        assert_eq!(i32s(&r), vec![2, 1, 0, 1, 2, 1]);
        let s = pad(
            &iota(&[3]),
            &[(2, 1)],
            PadMode::Symmetric,
            &Tensor::scalar(0i32),
        )
        .unwrap();
        assert_eq!(i32s(&s), vec![1, 0, 0, 1, 2, 2]);
        let o = one_hot(
            &Tensor::vector(vec![1i32, -1]),
            3,
            &Tensor::scalar(1.0f32),
            &Tensor::scalar(0.0f32),
            -1,
        )
        .unwrap();
        assert_eq!(
            o.as_slice::<f32>().unwrap(),
            &[0.0, 1.0, 0.0, 0.0, 0.0, 0.0]
        );
    }

    #[test]
    fn scatter_add_with_duplicates() {
        let mut v = Tensor::from_vec([3, 2], vec![0.0f32; 6]).unwrap();
        let idx = Tensor::vector(vec![0i32, 2, 0]);
        let upd = Tensor::from_vec([3, 2], vec![1.0f32, 1.0, 2.0, 2.0, 3.0, 3.0]).unwrap();
        scatter(&mut v, &idx, &upd, ScatterOp::Add).unwrap();
        assert_eq!(
            v.as_slice::<f32>().unwrap(),
            &[4.0, 4.0, 0.0, 0.0, 2.0, 2.0]
        );
    }

    #[test]
    fn ranges_and_topk() {
        let r = range(0.0, 5.0, 2.0, DType::Int32).unwrap();
        assert_eq!(i32s(&r), vec![0, 2, 4]);
        let r = range(1.0, 2.0, 0.25, DType::Float32).unwrap();
        assert_eq!(r.num_elements(), 4);
        let (v, i) = top_k(&Tensor::vector(vec![1.0f32, 3.0, 3.0, 2.0]), 2).unwrap();
        assert_eq!(v.as_slice::<f32>().unwrap(), &[3.0, 3.0]);
        assert_eq!(i32s(&i), vec![1, 2]);
        let w = where_indices(&Tensor::from_vec([2, 2], vec![true, false, false, true]).unwrap())
            .unwrap();
        assert_eq!(w.as_slice::<i64>().unwrap(), &[0, 0, 1, 1]);
    }
}
