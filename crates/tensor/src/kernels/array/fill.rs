//! Tensors made from a few numbers: `Fill`, `Range`, `LinSpace` and
//! `OneHot`.

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::{normalize_axis, Shape};
use crate::tensor::{Data, Element, Tensor};
use crate::with_data;

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
        return crate::kernels::elementwise::cast(&Tensor::vector(iv), dtype);
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
    crate::kernels::elementwise::cast(&Tensor::vector(v), dtype)
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
    crate::kernels::elementwise::cast(&Tensor::vector(v), dtype)
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
