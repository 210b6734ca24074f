//! Reductions (sum, mean, max, min, prod, any, all), arg-reductions and scans.
//!
//! Every reduction is rewritten as `[outer, reduced, inner]` (transposing
//! first only when the reduced axes are not one contiguous block). Long
//! contiguous runs are folded in fixed-size blocks with 16 independent
//! lanes, so the loop vectorises and the summation order — hence the result
//! — never depends on the thread count.

use super::array::transpose;
use super::parallel::PARALLEL_THRESHOLD;
use super::scalar::Scalar;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::{normalize_axis, Shape};
use crate::tensor::{Element, Tensor};
use smallvec::SmallVec;

/// A reduction over some axes.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Mean,
    Max,
    Min,
    Prod,
    Any,
    All,
}

impl ReduceOp {
    /// The op's name in error messages (`Sum`, `Max`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "Sum",
            ReduceOp::Mean => "Mean",
            ReduceOp::Max => "Max",
            ReduceOp::Min => "Min",
            ReduceOp::Prod => "Prod",
            ReduceOp::Any => "Any",
            ReduceOp::All => "All",
        }
    }
}

/// Elements folded per block of a long contiguous run.
const BLOCK: usize = 1 << 13;
const LANES: usize = 16;

#[inline]
fn fold_lanes<T: Copy, F: Fn(T, T) -> T>(x: &[T], init: T, f: &F) -> T {
    let mut acc = [init; LANES];
    let chunks = x.chunks_exact(LANES);
    let rest = chunks.remainder();
    for c in chunks {
        for i in 0..LANES {
            acc[i] = f(acc[i], c[i]);
        }
    }
    for (i, &v) in rest.iter().enumerate() {
        acc[i] = f(acc[i], v);
    }
    acc.iter().fold(init, |a, &b| f(a, b))
}

/// Folds a contiguous run in fixed blocks (in parallel when long).
fn fold_run<T: Copy + Send + Sync, F: Fn(T, T) -> T + Sync>(x: &[T], init: T, f: &F) -> T {
    if x.len() <= BLOCK {
        return fold_lanes(x, init, f);
    }
    let partials: Vec<T> = if x.len() >= PARALLEL_THRESHOLD {
        crate::team::map_chunks(x, BLOCK, |_, c| fold_lanes(c, init, f))
    } else {
        x.chunks(BLOCK).map(|c| fold_lanes(c, init, f)).collect()
    };
    partials.iter().fold(init, |a, &b| f(a, b))
}

/// Reduces `x` viewed as `[outer, red, inner]` over the middle axis.
pub fn fold_axis<T, F>(x: &[T], outer: usize, red: usize, inner: usize, init: T, f: F) -> Vec<T>
where
    T: Copy + Send + Sync,
    F: Fn(T, T) -> T + Sync,
{
    let mut out = vec![init; outer * inner];
    if red == 0 || out.is_empty() {
        return out;
    }
    let work = outer * red * inner;
    if inner == 1 {
        if outer >= 64 && work >= PARALLEL_THRESHOLD {
            let per_task = (PARALLEL_THRESHOLD / red).max(1);
            crate::team::for_each_chunk_mut(&mut out, per_task, |t, slots| {
                for (k, slot) in slots.iter_mut().enumerate() {
                    let o = t * per_task + k;
                    *slot = fold_run(&x[o * red..(o + 1) * red], init, &f);
                }
            });
        } else {
            for (o, slot) in out.iter_mut().enumerate() {
                *slot = fold_run(&x[o * red..(o + 1) * red], init, &f);
            }
        }
        return out;
    }
    // Accumulate whole rows of `inner` values; each output column is folded
    // in the same order (r = 0, 1, ...) whatever the split.
    let per_column_block = |o: usize, c0: usize, acc: &mut [T]| {
        for r in 0..red {
            let row = &x[(o * red + r) * inner + c0..(o * red + r) * inner + c0 + acc.len()];
            for (a, &v) in acc.iter_mut().zip(row) {
                *a = f(*a, v);
            }
        }
    };
    if work >= PARALLEL_THRESHOLD {
        const COLS: usize = 1024;
        if outer >= 8 {
            // Whole output rows per task, about a chunk of input each.
            let rows = (super::parallel::CHUNK / (red * inner)).max(1);
            crate::team::for_each_chunk_mut(&mut out, rows * inner, |t, block| {
                for (k, orow) in block.chunks_mut(inner).enumerate() {
                    per_column_block(t * rows + k, 0, orow);
                }
            });
        } else {
            for (o, orow) in out.chunks_mut(inner).enumerate() {
                crate::team::for_each_chunk_mut(orow, COLS, |k, acc| {
                    per_column_block(o, k * COLS, acc)
                });
            }
        }
    } else {
        for (o, orow) in out.chunks_mut(inner).enumerate() {
            per_column_block(o, 0, orow);
        }
    }
    out
}

/// Where the reduced axes are, after dropping size-1 dimensions.
struct ReducePlan {
    /// Input to reduce (possibly transposed so reduced axes are last).
    input: Tensor,
    outer: usize,
    red: usize,
    inner: usize,
    out_shape: Shape,
}

fn plan(x: &Tensor, axes: &[i64], keep_dims: bool, op: &str) -> Result<ReducePlan> {
    let rank = x.rank();
    let mut reduced: SmallVec<[bool; 6]> = SmallVec::from_elem(false, rank);
    for &a in axes {
        let ax = if rank == 0 && (a == 0 || a == -1) {
            // TensorFlow accepts axis 0 on a scalar only as a no-op range.
            return Err(Error::invalid_argument(format!(
                "{op}: Invalid reduction dimension ({a} for input with 0 dimension(s)"
            )));
        } else {
            normalize_axis(a, rank, op).map_err(|_| {
                Error::invalid_argument(format!(
                    "{op}: Invalid reduction dimension ({a} for input with {rank} dimension(s)"
                ))
            })?
        };
        if reduced[ax] {
            return Err(Error::invalid_argument(format!(
                "{op}: Axes contains duplicate dimension: {ax}"
            )));
        }
        reduced[ax] = true;
    }
    let dims = x.dims();
    let out_shape: Shape = if keep_dims {
        dims.iter()
            .zip(&reduced)
            .map(|(&d, &r)| if r { 1 } else { d })
            .collect()
    } else {
        dims.iter()
            .zip(&reduced)
            .filter(|(_, &r)| !r)
            .map(|(&d, _)| d)
            .collect()
    };
    // Group consecutive non-trivial dims by kind.
    let mut groups: SmallVec<[(bool, usize); 6]> = SmallVec::new();
    for (&d, &r) in dims.iter().zip(&reduced) {
        if d == 1 {
            continue;
        }
        match groups.last_mut() {
            Some((kind, n)) if *kind == r => *n *= d,
            _ => groups.push((r, d)),
        }
    }
    let kinds: SmallVec<[bool; 6]> = groups.iter().map(|g| g.0).collect();
    let size = |i: usize| groups[i].1;
    let (outer, red, inner) = match kinds.as_slice() {
        [] => (1, 1, 1),
        [false] => (size(0), 1, 1),
        [true] => (1, size(0), 1),
        [false, true] => (size(0), size(1), 1),
        [true, false] => (1, size(0), size(1)),
        [false, true, false] => (size(0), size(1), size(2)),
        _ => {
            let kept: Vec<usize> = (0..rank).filter(|&i| !reduced[i]).collect();
            let red_axes: Vec<usize> = (0..rank).filter(|&i| reduced[i]).collect();
            let perm: Vec<usize> = kept.iter().chain(&red_axes).copied().collect();
            let outer = kept.iter().map(|&i| dims[i]).product();
            let red = red_axes.iter().map(|&i| dims[i]).product();
            return Ok(ReducePlan {
                input: transpose(x, &perm)?,
                outer,
                red,
                inner: 1,
                out_shape,
            });
        }
    };
    Ok(ReducePlan {
        input: x.clone(),
        outer,
        red,
        inner,
        out_shape,
    })
}

fn reduce_scalar<T: Scalar>(op: ReduceOp, p: &ReducePlan) -> Result<Vec<T>> {
    let x = p.input.as_slice::<T>()?;
    let (o, r, i) = (p.outer, p.red, p.inner);
    Ok(match op {
        ReduceOp::Sum => fold_axis(x, o, r, i, T::zero(), |a, b| a.add(b)),
        ReduceOp::Mean if !T::IS_FLOAT && T::DTYPE != DType::UInt64 => {
            // TensorFlow sums narrow integers without overflow (int64 wraps)
            // and divides with truncation toward zero. (uint64 wraps in its
            // own type and divides unsigned: the arm below.)
            let wide: Vec<i64> = x.iter().map(|v| v.to_i64()).collect();
            let s = fold_axis(&wide, o, r, i, 0i64, i64::wrapping_add);
            let n = (r as i64).max(1);
            s.into_iter().map(|v| T::from_i64(v / n)).collect()
        }
        ReduceOp::Mean => {
            let s = fold_axis(x, o, r, i, T::zero(), |a, b| a.add(b));
            if r == 0 {
                // Mean of nothing is NaN for floats (0/0), 0 for integers.
                let n = T::from_f64(if T::IS_FLOAT { f64::NAN } else { 0.0 });
                s.into_iter().map(|_| n).collect()
            } else {
                let n = T::from_i64(r as i64);
                s.into_iter().map(|v| v.div(n)).collect()
            }
        }
        ReduceOp::Max => fold_axis(x, o, r, i, T::min_value(), |a, b| {
            if a.is_nan() || a >= b {
                a
            } else {
                b
            }
        }),
        ReduceOp::Min => fold_axis(x, o, r, i, T::max_value(), |a, b| {
            if a.is_nan() || a <= b {
                a
            } else {
                b
            }
        }),
        ReduceOp::Prod => fold_axis(x, o, r, i, T::one(), |a, b| a.mul(b)),
        ReduceOp::Any | ReduceOp::All => {
            return Err(Error::invalid_argument(format!(
                "{op:?} needs a bool tensor, got {}",
                T::DTYPE
            )))
        }
    })
}

/// Reduces `x` over `axes` (all axes when `axes` is `None`).
pub fn reduce(op: ReduceOp, x: &Tensor, axes: Option<&[i64]>, keep_dims: bool) -> Result<Tensor> {
    let all: Vec<i64>;
    let axes = match axes {
        Some(a) => a,
        None => {
            all = (0..x.rank() as i64).collect();
            &all
        }
    };
    let name = op.name();
    let dtype = x.dtype();
    if matches!(dtype, DType::Float16 | DType::BFloat16) {
        let wide = super::elementwise::cast(x, DType::Float32)?;
        let r = reduce(op, &wide, Some(axes), keep_dims)?;
        return super::elementwise::cast(&r, dtype);
    }
    let p = plan(x, axes, keep_dims, name)?;
    let out = p.out_shape.clone();
    if p.red == 1 && dtype != DType::String {
        // Only size-1 (or no) axes are reduced: every op is the identity.
        // Gradients of broadcasting ops ask for this all the time (an empty
        // axis list when the operand already has the output's shape).
        return p.input.reshape(out);
    }
    match dtype {
        DType::Bool => {
            let v = p.input.as_slice::<bool>()?;
            let r = match op {
                ReduceOp::Any => fold_axis(v, p.outer, p.red, p.inner, false, |a, b| a | b),
                ReduceOp::All => fold_axis(v, p.outer, p.red, p.inner, true, |a, b| a & b),
                _ => {
                    return Err(Error::invalid_argument(format!(
                        "{name} is not supported for bool tensors"
                    )))
                }
            };
            Tensor::from_vec(out, r)
        }
        DType::Float32 => Tensor::from_vec(out, reduce_scalar::<f32>(op, &p)?),
        DType::Float64 => Tensor::from_vec(out, reduce_scalar::<f64>(op, &p)?),
        DType::Int8 => Tensor::from_vec(out, reduce_scalar::<i8>(op, &p)?),
        DType::Int16 => Tensor::from_vec(out, reduce_scalar::<i16>(op, &p)?),
        DType::Int32 => Tensor::from_vec(out, reduce_scalar::<i32>(op, &p)?),
        DType::Int64 => Tensor::from_vec(out, reduce_scalar::<i64>(op, &p)?),
        DType::UInt8 => Tensor::from_vec(out, reduce_scalar::<u8>(op, &p)?),
        DType::UInt16 => Tensor::from_vec(out, reduce_scalar::<u16>(op, &p)?),
        DType::UInt32 => Tensor::from_vec(out, reduce_scalar::<u32>(op, &p)?),
        DType::UInt64 => Tensor::from_vec(out, reduce_scalar::<u64>(op, &p)?),
        DType::Complex64 | DType::Complex128 => {
            super::complex::reduce_axis(op, &p.input, p.outer, p.red, p.inner, out)
        }
        _ => Err(Error::invalid_argument(format!(
            "{name} is not supported for {dtype} tensors"
        ))),
    }
}

/// Index of the largest (`max = true`) or smallest value along `axis`;
/// ties resolve to the first index.
pub fn arg_reduce(x: &Tensor, axis: i64, max: bool, out_type: DType) -> Result<Tensor> {
    let rank = x.rank();
    let op = if max { "ArgMax" } else { "ArgMin" };
    let ax = normalize_axis(axis, rank, op)?;
    let dims = x.dims();
    if dims[ax] == 0 {
        return Err(Error::invalid_argument(format!(
            "{op}: Reduction axis {axis} is empty in shape {}",
            x.shape()
        )));
    }
    let outer: usize = dims[..ax].iter().product();
    let red = dims[ax];
    let inner: usize = dims[ax + 1..].iter().product();
    let wide;
    let x = if matches!(x.dtype(), DType::Float16 | DType::BFloat16) {
        wide = super::elementwise::cast(x, DType::Float32)?;
        &wide
    } else {
        x
    };
    fn go<T: Scalar>(v: &[T], outer: usize, red: usize, inner: usize, max: bool) -> Vec<i64> {
        let mut out = vec![0i64; outer * inner];
        for o in 0..outer {
            for i in 0..inner {
                let mut best = v[o * red * inner + i];
                let mut bi = 0;
                for r in 1..red {
                    let c = v[(o * red + r) * inner + i];
                    // As TF (Eigen's reducers), NaNs never win: the first non-NaN
                    // extreme is the answer, index 0 when all are NaN.
                    let better = if max { c > best } else { c < best };
                    if better || (best.is_nan() && !c.is_nan()) {
                        best = c;
                        bi = r;
                    }
                }
                out[o * inner + i] = bi as i64;
            }
        }
        out
    }
    let idx = crate::with_real!(x.data(), v => go(v, outer, red, inner, max),
        _ => return Err(Error::invalid_argument(format!("{op} is not supported for {} tensors", x.dtype()))));
    let shape: Shape = dims[..ax].iter().chain(&dims[ax + 1..]).copied().collect();
    let t = Tensor::from_vec(shape, idx)?;
    match out_type {
        DType::Int64 => Ok(t),
        DType::Int32 => super::elementwise::cast(&t, DType::Int32),
        other => Err(Error::invalid_argument(format!(
            "{op}: output_type must be int32 or int64, got {other}"
        ))),
    }
}

/// Cumulative sum (`prod = false`) or product along `axis`.
pub fn cumulative(
    x: &Tensor,
    axis: i64,
    exclusive: bool,
    reverse: bool,
    prod: bool,
) -> Result<Tensor> {
    let name = if prod { "Cumprod" } else { "Cumsum" };
    let ax = normalize_axis(axis, x.rank(), name)?;
    let dims = x.dims();
    let outer: usize = dims[..ax].iter().product();
    let len = dims[ax];
    let inner: usize = dims[ax + 1..].iter().product();
    fn go<T: Scalar>(
        v: &[T],
        outer: usize,
        len: usize,
        inner: usize,
        ex: bool,
        rev: bool,
        prod: bool,
    ) -> Vec<T> {
        let mut out = vec![T::zero(); v.len()];
        let init = if prod { T::one() } else { T::zero() };
        for o in 0..outer {
            for i in 0..inner {
                let mut acc = init;
                for k in 0..len {
                    let r = if rev { len - 1 - k } else { k };
                    let at = (o * len + r) * inner + i;
                    if ex {
                        out[at] = acc;
                    }
                    acc = if prod { acc.mul(v[at]) } else { acc.add(v[at]) };
                    if !ex {
                        out[at] = acc;
                    }
                }
            }
        }
        out
    }
    let dtype = x.dtype();
    if matches!(dtype, DType::Float16 | DType::BFloat16) {
        let wide = super::elementwise::cast(x, DType::Float32)?;
        let r = cumulative(&wide, axis, exclusive, reverse, prod)?;
        return super::elementwise::cast(&r, dtype);
    }
    fn wrap<T: Element>(shape: &Shape, v: Vec<T>) -> Result<Tensor> {
        Tensor::from_vec(shape.clone(), v)
    }
    /// The complex scan: the same order as the real one.
    fn go_complex<T: super::complex::Part>(
        x: &Tensor,
        (outer, len, inner): (usize, usize, usize),
        ex: bool,
        rev: bool,
        prod: bool,
    ) -> Result<Tensor> {
        use num_complex::Complex;
        let v = T::complex_slice(x)?;
        let init = Complex::new(if prod { T::one() } else { T::zero() }, T::zero());
        let mut out = vec![Complex::new(T::zero(), T::zero()); v.len()];
        for o in 0..outer {
            for i in 0..inner {
                let mut acc = init;
                for k in 0..len {
                    let r = if rev { len - 1 - k } else { k };
                    let at = (o * len + r) * inner + i;
                    if ex {
                        out[at] = acc;
                    }
                    acc = if prod { acc * v[at] } else { acc + v[at] };
                    if !ex {
                        out[at] = acc;
                    }
                }
            }
        }
        Tensor::new(x.shape().clone(), T::wrap_complex(out))
    }
    match dtype {
        DType::Complex64 => {
            return go_complex::<f32>(x, (outer, len, inner), exclusive, reverse, prod)
        }
        DType::Complex128 => {
            return go_complex::<f64>(x, (outer, len, inner), exclusive, reverse, prod)
        }
        _ => {}
    }
    crate::with_real!(x.data(), v => wrap(x.shape(), go(v, outer, len, inner, exclusive, reverse, prod)),
        _ => Err(Error::invalid_argument(format!("{name} is not supported for {dtype} tensors"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(shape: &[usize], v: Vec<f64>) -> Tensor {
        Tensor::from_vec(Shape::new(shape), v).unwrap()
    }

    #[test]
    fn unsigned_means_follow_tensorflow() {
        // uint32 sums without overflow; uint64 wraps in its own type and
        // divides unsigned.
        let x = Tensor::from_vec([3], vec![u32::MAX, 4, 8]).unwrap();
        let m = reduce(ReduceOp::Mean, &x, None, false).unwrap();
        assert_eq!(m.as_slice::<u32>().unwrap(), &[1_431_655_769]);
        let y = Tensor::from_vec([2], vec![u64::MAX, 3]).unwrap();
        let m = reduce(ReduceOp::Mean, &y, None, false).unwrap();
        assert_eq!(m.as_slice::<u64>().unwrap(), &[1]);
        let y = Tensor::from_vec([2], vec![u64::MAX, u64::MAX - 2]).unwrap();
        let m = reduce(ReduceOp::Mean, &y, None, false).unwrap();
        assert_eq!(m.as_slice::<u64>().unwrap(), &[u64::MAX / 2 - 1]);
    }

    #[test]
    fn sums_over_axes() {
        let x = t(&[2, 3, 2], (0..12).map(|i| i as f64).collect());
        let s = reduce(ReduceOp::Sum, &x, Some(&[1]), false).unwrap();
        assert_eq!(s.dims(), &[2, 2]);
        assert_eq!(s.as_slice::<f64>().unwrap(), &[6.0, 9.0, 24.0, 27.0]);
        let s = reduce(ReduceOp::Sum, &x, Some(&[0, 2]), true).unwrap();
        assert_eq!(s.dims(), &[1, 3, 1]);
        assert_eq!(s.as_slice::<f64>().unwrap(), &[14.0, 22.0, 30.0]);
        let s = reduce(ReduceOp::Max, &x, None, false).unwrap();
        assert_eq!(s.dims(), &[] as &[usize]);
        assert_eq!(s.as_slice::<f64>().unwrap(), &[11.0]);
        assert!(reduce(ReduceOp::Sum, &x, Some(&[3]), false).is_err());
        assert!(reduce(ReduceOp::Sum, &x, Some(&[1, -2]), false).is_err());
    }

    #[test]
    fn long_sums_do_not_depend_on_threads() {
        let n = 1 << 20;
        let v: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1000) as f32 * 1e-3).collect();
        let x = Tensor::from_vec([n], v.clone()).unwrap();
        let a = reduce(ReduceOp::Sum, &x, None, false).unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let b = pool.install(|| reduce(ReduceOp::Sum, &x, None, false).unwrap());
        assert_eq!(a.as_slice::<f32>().unwrap(), b.as_slice::<f32>().unwrap());
        let exact: f64 = v.iter().map(|&x| x as f64).sum();
        let got = a.as_slice::<f32>().unwrap()[0] as f64;
        assert!((got - exact).abs() / exact < 1e-6, "{got} vs {exact}");
    }

    #[test]
    fn argmax_and_cumsum() {
        let x = t(&[2, 3], vec![1.0, 5.0, 5.0, 7.0, 0.0, 2.0]);
        let a = arg_reduce(&x, 1, true, DType::Int64).unwrap();
        assert_eq!(a.as_slice::<i64>().unwrap(), &[1, 0]);
        let c = cumulative(&x, 1, true, false, false).unwrap();
        assert_eq!(
            c.as_slice::<f64>().unwrap(),
            &[0.0, 1.0, 6.0, 0.0, 7.0, 7.0]
        );
        let c = cumulative(&x, 0, false, true, false).unwrap();
        assert_eq!(
            c.as_slice::<f64>().unwrap(),
            &[8.0, 5.0, 7.0, 7.0, 0.0, 2.0]
        );
    }
}
