//! Data movement: transpose, concat, split, slicing, gather, tile, pad,
//! one_hot, scatter and friends. These are generic over every dtype
//! (strings included), since they only move elements.
//!
//! * `layout`: whole tensors rearranged (transpose, concat/split,
//!   stack/unstack, tile, pad, reverse);
//! * `indexing`: parts chosen or written by position (slice, the strided
//!   slice plan, `StridedSlice` and its assignment, gather, gather_nd,
//!   scatter);
//! * `fill`: tensors made from a few numbers (fill, range, linspace,
//!   one_hot);
//! * `search`: elements chosen by their values (unique, where, top_k,
//!   in_top_k);
//! * this module: the strided gather the slicing and reversing kernels
//!   share, the `map_any!` dtype dispatch, and the re-exports, so callers
//!   name `kernels::array::transpose` and the rest as before.

use crate::shape::Shape;

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
    gather, gather_nd, scatter, slice, strided_slice, strided_slice_assign, strided_slice_plan,
    strided_slice_plan_partial, ScatterOp, SliceMasks, StridedSlicePlan,
};
pub use layout::{concat, pad, reverse, split, stack, tile, transpose, unstack, PadMode};
pub use search::{in_top_k, top_k, unique, where_indices};

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
}
