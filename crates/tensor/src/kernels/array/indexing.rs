//! Parts of a tensor chosen or written by position: `Slice`, the strided
//! slice plan (shared with shape inference), `StridedSlice` and
//! `StridedSliceAssign`, `GatherV2`, `GatherNd`, the scatter updates,
//! `UnravelIndex` and `ExtractVolumePatches`.

use super::{for_each_index, gather_strided, take_flat};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::elementwise::cast;
use crate::kernels::scalar::Scalar;
use crate::shape::{normalize_axis, Shape};
use crate::tensor::{Data, Element, Tensor};
use crate::with_data;

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
    if count > 0 && params.num_elements() == 0 {
        // TF's check: even slices that would be empty (params [2, 0], index [1])
        // are an error when params holds nothing.
        return Err(Error::invalid_argument(format!(
            "Requested more than 0 entries, but params is empty.  Params shape: {}",
            params.shape()
        )));
    }
    let inner: usize = pd[depth..].iter().product();
    let strides = params.shape().strides();
    let mut offsets = Vec::with_capacity(count);
    for c in 0..count {
        let mut off = 0usize;
        for d in 0..depth {
            let v = idx[c * depth + d];
            if v < 0 || v as usize >= pd[d] {
                return Err(Error::invalid_argument(format!(
                    "indices[{c}] = {:?} does not index into param shape {}",
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
        DType::UInt32 => go::<u32>(var, &idx, updates, inner, op, scalar_update),
        DType::UInt64 => go::<u64>(var, &idx, updates, inner, op, scalar_update),
        other => {
            // Half types: compute in f32 and round back.
            let mut wide = crate::kernels::elementwise::cast(var, DType::Float32)?;
            let wu = crate::kernels::elementwise::cast(updates, DType::Float32)?;
            go::<f32>(&mut wide, &idx, &wu, inner, op, scalar_update)?;
            *var = crate::kernels::elementwise::cast(&wide, other)?;
            Ok(())
        }
    }
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

#[cfg(test)]
mod tests {
    use super::super::tests::{i32s, ints, iota};
    use super::*;

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
    fn unravel_index_of_flat_indices() {
        let u = unravel_index(
            &Tensor::vector(vec![5i32, 1]),
            &Tensor::vector(vec![2i32, 3]),
        )
        .unwrap();
        assert_eq!(u.dims(), &[2, 2]);
        assert_eq!(ints(&u), vec![1, 0, 2, 1]);
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
}
