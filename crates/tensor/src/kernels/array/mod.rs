//! Data movement: transpose, concat, split, slicing, gather, tile, pad,
//! one_hot, scatter and friends, with TensorFlow's checks and messages.
//! These are generic over every dtype (strings included), since they only
//! move elements.
//!
//! * `layout`: whole tensors rearranged (transpose, concat/split,
//!   stack/unstack, tile, pad, reverse, roll, reverse_sequence, the
//!   space/batch ops);
//! * `indexing`: parts chosen or written by position (slice, the strided
//!   slice plan, `StridedSlice` and its assignment, gather, gather_nd,
//!   scatter, unravel_index, extract_volume_patches);
//! * `fill`: tensors made from a few numbers (fill, range, linspace,
//!   one_hot);
//! * `search`: elements chosen or counted by their values (unique,
//!   unique_with_counts, where, top_k, in_top_k, the bound searches,
//!   histogram_fixed_width, edit_distance);
//! * this module: the strided gather the slicing and reversing kernels
//!   share, the flat-index gather (`take_flat`) and row-major walk
//!   (`for_each_index`) of roll, reverse_sequence and the volume patches,
//!   `broadcast_args`, the `map_any!` dtype dispatch, and the re-exports,
//!   so callers name `kernels::array::transpose` and the rest as before.

use crate::error::{Error, Result};
use crate::kernels::elementwise::cast;
use crate::shape::Shape;
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

// `map_any!` is defined above the submodules so that they can use it.
mod fill;
mod indexing;
mod layout;
mod search;

pub use fill::{fill, linspace, one_hot, range, range_len};
pub use indexing::{
    extract_volume_patches, gather, gather_nd, scatter, slice, strided_slice, strided_slice_assign,
    strided_slice_plan, strided_slice_plan_partial, unravel_index, ScatterOp, SliceMasks,
    StridedSlicePlan, VolumeWindows,
};
pub use layout::{
    batch_to_space_nd, concat, pad, reverse, reverse_sequence, roll, space_to_batch_nd, split,
    stack, tile, transpose, unstack, PadMode,
};
pub use search::{
    edit_distance, histogram_fixed_width, in_top_k, search_sorted, top_k, unique,
    unique_with_counts, where_indices,
};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;
    use crate::tensor::Tensor;

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

    pub(super) fn iota(shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        Tensor::from_vec(Shape::new(shape), (0..n as i32).collect::<Vec<_>>()).unwrap()
    }

    pub(super) fn i32s(t: &Tensor) -> Vec<i32> {
        t.as_slice::<i32>().unwrap().to_vec()
    }

    pub(super) fn ints(t: &Tensor) -> Vec<i64> {
        t.to_i64_vec().unwrap()
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

    #[test]
    fn broadcast_args_of_two_shapes() {
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
    }
}
