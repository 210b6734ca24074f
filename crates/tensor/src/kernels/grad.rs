//! Kernels that only gradient graphs use: fused activation gradients,
//! broadcast-reduction axes, segment sums and scatters.

use super::array::{strided_slice_plan, SliceMasks};
use super::complex::Part;
use super::elementwise::cast;
use super::parallel;
use super::scalar::{Float, Scalar};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::Shape;
use crate::tensor::Tensor;
use num_complex::Complex;
use std::sync::Arc;

/// Fused gradients of activations: one pass over both inputs.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum ActivationGrad {
    /// `(gradients, features)`: `g * (x > 0)`.
    Relu,
    /// `(gradients, features)`: `g * (0 < x < 6)`.
    Relu6,
    /// `(gradients, outputs)`: `y < 0 ? g * (y + 1) : g`.
    Elu,
    /// `(gradients, outputs)`: `y < 0 ? g * (y + scale * alpha) : g * scale`.
    Selu,
    /// `(gradients, features)`: `g / (1 + exp(-x))`.
    Softplus,
    /// `(gradients, features)`: `g / (1 + |x|)^2`.
    Softsign,
    /// `(gradients, features)`: `x > 0 ? g : alpha * g`.
    LeakyRelu(f64),
    /// `(y, dy)`: `dy * (1 - y^2)`.
    Tanh,
    /// `(y, dy)`: `dy * y * (1 - y)`.
    Sigmoid,
    /// `(y, dy)`: `dy * 0.5 / y`.
    Sqrt,
    /// `(y, dy)`: `dy * -0.5 * y^3`.
    Rsqrt,
    /// `(y, dy)`: `-dy * y^2`.
    Reciprocal,
}

fn fused<T: Float>(op: ActivationGrad, a: Tensor, b: Tensor) -> Result<Tensor> {
    use ActivationGrad::*;
    let one = T::one();
    let zero = T::zero();
    let half = T::lit(0.5);
    // Each arm is its own monomorphised loop, so the closure inlines.
    match op {
        Relu => apply(a, b, move |g: T, x: T| if x > zero { g } else { zero }),
        Relu6 => {
            let six = T::lit(6.0);
            apply(
                a,
                b,
                move |g: T, x: T| if x > zero && x < six { g } else { zero },
            )
        }
        Elu => apply(
            a,
            b,
            move |g: T, y: T| if y < zero { g * (y + one) } else { g },
        ),
        Selu => {
            let scale = T::lit(1.050_700_987_355_480_5);
            let sa = T::lit(1.050_700_987_355_480_5 * 1.673_263_242_354_377_3);
            apply(
                a,
                b,
                move |g: T, y: T| if y < zero { g * (y + sa) } else { g * scale },
            )
        }
        Softplus => apply(a, b, move |g: T, x: T| g / (one + (-x).exp())),
        Softsign => apply(a, b, move |g: T, x: T| {
            let d = one + Scalar::abs(x);
            g / (d * d)
        }),
        LeakyRelu(alpha) => {
            // The `alpha` attr is a float32 in TensorFlow's op definition (as in
            // the forward kernel): 0.3 is 0.30000001192092896 for float64 too.
            let al = T::lit(alpha as f32 as f64);
            apply(a, b, move |g: T, x: T| if x > zero { g } else { al * g })
        }
        Tanh => apply(a, b, move |y: T, dy: T| dy * (one - y * y)),
        Sigmoid => apply(a, b, move |y: T, dy: T| dy * y * (one - y)),
        Sqrt => apply(a, b, move |y: T, dy: T| dy * half / y),
        Rsqrt => apply(a, b, move |y: T, dy: T| dy * -half * y * y * y),
        Reciprocal => apply(a, b, move |y: T, dy: T| -dy * y * y),
    }
}

/// `f(a[i], b[i])` for same-shaped inputs, writing into whichever input
/// buffer is not shared.
fn apply<T: Float, F: Fn(T, T) -> T + Sync>(a: Tensor, b: Tensor, f: F) -> Result<Tensor> {
    let (shape, mut ad) = a.into_parts();
    let (_, mut bd) = b.into_parts();
    let bv = T::buffer(&bd)
        .ok_or_else(|| Error::internal("dtype"))?
        .clone();
    if let Some(av) = T::buffer_mut(&mut ad).and_then(Arc::get_mut) {
        parallel::fill_indexed(av, |start, chunk| {
            for (o, &y) in chunk.iter_mut().zip(&bv[start..]) {
                *o = f(*o, y);
            }
        });
        return Tensor::new(shape, ad);
    }
    let av = T::buffer(&ad)
        .ok_or_else(|| Error::internal("dtype"))?
        .clone();
    if let Some(bm) = T::buffer_mut(&mut bd).and_then(Arc::get_mut) {
        parallel::fill_indexed(bm, |start, chunk| {
            for (o, &x) in chunk.iter_mut().zip(&av[start..]) {
                *o = f(x, *o);
            }
        });
        return Tensor::new(shape, bd);
    }
    let mut out = parallel::zeroed::<T>(av.len());
    parallel::fill_indexed(&mut out, |start, chunk| {
        for ((o, &x), &y) in chunk.iter_mut().zip(&av[start..]).zip(&bv[start..]) {
            *o = f(x, y);
        }
    });
    Tensor::from_vec(shape, out)
}

/// The complex forms of the `(y, dy)` gradients, as TensorFlow's kernels
/// compute them: `Tanh` and `Sigmoid` take the conjugated output (their
/// gradient functions conjugate it); `Sqrt`, `Rsqrt` and `Reciprocal`
/// conjugate the output themselves and give 0 where `dy` is 0.
fn complex_fused<T: Part>(op: ActivationGrad, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    use ActivationGrad::*;
    let (ys, dys) = (T::complex_slice(a)?, T::complex_slice(b)?);
    let one = Complex::new(T::one(), T::zero());
    let zero = Complex::new(T::zero(), T::zero());
    let half = Complex::new(T::of(0.5), T::zero());
    macro_rules! m {
        ($f:expr) => {{
            let f = $f;
            let out: Vec<Complex<T>> = ys.iter().zip(dys).map(|(&y, &dy)| f(y, dy)).collect();
            Tensor::new(a.shape().clone(), T::wrap_complex(out))
        }};
    }
    match op {
        Tanh => m!(|y: Complex<T>, dy: Complex<T>| dy * (one - y * y)),
        Sigmoid => m!(|y: Complex<T>, dy: Complex<T>| dy * y * (one - y)),
        Sqrt => m!(|y: Complex<T>, dy: Complex<T>| if dy == zero {
            zero
        } else {
            (half * dy) / y.conj()
        }),
        Rsqrt => m!(|y: Complex<T>, dy: Complex<T>| if dy == zero {
            zero
        } else {
            let yc = y.conj();
            Complex::new(T::of(-0.5), T::zero()) * (dy * yc) * (yc * yc)
        }),
        Reciprocal => m!(|y: Complex<T>, dy: Complex<T>| if dy == zero {
            zero
        } else {
            let yc = y.conj();
            -yc * yc * dy
        }),
        _ => Err(Error::invalid_argument(format!(
            "{op:?}Grad is not supported for {}",
            a.dtype()
        ))),
    }
}

/// Applies a fused activation gradient to two same-shaped tensors.
pub fn activation_grad(op: ActivationGrad, a: Tensor, b: Tensor) -> Result<Tensor> {
    if a.shape() != b.shape() || a.dtype() != b.dtype() {
        return Err(Error::invalid_argument(format!(
            "{op:?}Grad: inputs must have one shape and dtype, got {} {} and {} {}",
            a.dtype(),
            a.shape(),
            b.dtype(),
            b.shape()
        )));
    }
    match a.dtype() {
        DType::Float32 => fused::<f32>(op, a, b),
        DType::Float64 => fused::<f64>(op, a, b),
        DType::Complex64 => complex_fused::<f32>(op, &a, &b),
        DType::Complex128 => complex_fused::<f64>(op, &a, &b),
        d @ (DType::Float16 | DType::BFloat16) => {
            let r = fused::<f32>(op, cast(&a, DType::Float32)?, cast(&b, DType::Float32)?)?;
            cast(&r, d)
        }
        d => Err(Error::invalid_argument(format!(
            "{op:?}Grad is not supported for {d}"
        ))),
    }
}

/// The axes each of two broadcast operands must be summed over to receive
/// its gradient (TensorFlow's `BroadcastGradientArgs`).
pub fn broadcast_gradient_args(s0: &[i64], s1: &[i64]) -> Result<(Vec<i64>, Vec<i64>)> {
    let rank = s0.len().max(s1.len());
    let pad = |s: &[i64], i: usize| -> Option<i64> {
        (i + s.len() >= rank).then(|| s[i + s.len() - rank])
    };
    let (mut r0, mut r1) = (Vec::new(), Vec::new());
    for i in 0..rank {
        let (a, b) = (pad(s0, i), pad(s1, i));
        let out = match (a.unwrap_or(1), b.unwrap_or(1)) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            (x, y) => {
                return Err(Error::invalid_argument(format!(
                    "Incompatible shapes: {s0:?} vs. {s1:?} (dimension {i}: {x} vs {y})"
                )))
            }
        };
        if a.is_none() || (a == Some(1) && out != 1) {
            r0.push(i as i64);
        }
        if b.is_none() || (b == Some(1) && out != 1) {
            r1.push(i as i64);
        }
    }
    Ok((r0, r1))
}

/// `shape` with the `axes` set to 1 (the keep_dims shape of a reduction).
pub fn reduced_shape(shape: &[i64], axes: &[i64]) -> Result<Vec<i64>> {
    let rank = shape.len() as i64;
    let mut out = shape.to_vec();
    for &a in axes {
        if a < -rank || a >= rank {
            return Err(Error::invalid_argument(format!(
                "axis {a} out of range for rank {rank}"
            )));
        }
        out[(if a < 0 { a + rank } else { a }) as usize] = 1;
    }
    Ok(out)
}

/// The inverse of a permutation.
pub fn invert_permutation(p: &[i64]) -> Result<Vec<i64>> {
    let mut inv = vec![-1i64; p.len()];
    for (i, &v) in p.iter().enumerate() {
        if v < 0 || v as usize >= p.len() || inv[v as usize] != -1 {
            return Err(Error::invalid_argument(format!(
                "{p:?} is not a permutation"
            )));
        }
        inv[v as usize] = i as i64;
    }
    Ok(inv)
}

fn scalar_dispatch<R>(
    d: DType,
    what: &str,
    f32f: impl FnOnce() -> Result<R>,
    f64f: impl FnOnce() -> Result<R>,
) -> Result<R> {
    match d {
        DType::Float32 => f32f(),
        DType::Float64 => f64f(),
        other => Err(Error::invalid_argument(format!(
            "{what} is not supported for {other}"
        ))),
    }
}

/// `out[ids[i]] += data[i]` for `num` output rows (`UnsortedSegmentSum`;
/// see [`super::segment::unsorted_segment_reduce`]).
pub fn unsorted_segment_sum(data: &Tensor, ids: &Tensor, num: usize) -> Result<Tensor> {
    super::segment::unsorted_segment_reduce(data, ids, num as i64, super::segment::SegmentOp::Sum)
}

/// The gradient of a strided slice: `dy` written into zeros of `shape`.
pub fn strided_slice_grad(
    shape: &[i64],
    begin: &[i64],
    end: &[i64],
    strides: &[i64],
    masks: SliceMasks,
    dy: &Tensor,
) -> Result<Tensor> {
    let full = Shape::from_i64(shape)?;
    Tensor::check_allocation("StridedSliceGrad", dy.dtype(), full.dims())?;
    let dims: Vec<Option<usize>> = shape.iter().map(|&d| Some(d.max(0) as usize)).collect();
    let plan = strided_slice_plan(&dims, begin, end, strides, masks)?;
    let windows: Vec<(i64, i64, usize)> = plan
        .windows
        .iter()
        .map(|w| w.expect("known dims"))
        .collect();
    let count: usize = windows.iter().map(|w| w.2).product();
    if count != dy.num_elements() {
        return Err(Error::invalid_argument(format!(
            "StridedSliceGrad: dy has {} elements but the slice selects {count}",
            dy.num_elements()
        )));
    }
    fn go<T: Scalar>(full: &Shape, windows: &[(i64, i64, usize)], dy: &Tensor) -> Result<Tensor> {
        let src = dy.as_slice::<T>()?;
        let mut out = vec![T::zero(); full.num_elements()];
        let strides = full.strides();
        let rank = windows.len();
        let mut idx = vec![0usize; rank];
        for &v in src {
            let mut off = 0i64;
            for d in 0..rank {
                off += (windows[d].0 + idx[d] as i64 * windows[d].1) * strides[d] as i64;
            }
            out[off as usize] = v;
            for d in (0..rank).rev() {
                idx[d] += 1;
                if idx[d] < windows[d].2 {
                    break;
                }
                idx[d] = 0;
            }
        }
        Tensor::from_vec(full.clone(), out)
    }
    let dt = dy.dtype();
    if matches!(dt, DType::Float16 | DType::BFloat16) {
        let r = strided_slice_grad(
            shape,
            begin,
            end,
            strides,
            masks,
            &cast(dy, DType::Float32)?,
        )?;
        return cast(&r, dt);
    }
    scalar_dispatch(
        dt,
        "StridedSliceGrad",
        || go::<f32>(&full, &windows, dy),
        || go::<f64>(&full, &windows, dy),
    )
}

/// `ScatterNd`: a zero tensor of `shape` with `updates` added at `indices`
/// (see [`super::segment::scatter_nd_apply`]).
pub fn scatter_nd(indices: &Tensor, updates: &Tensor, shape: &[i64]) -> Result<Tensor> {
    let full = Shape::from_i64(shape)?;
    Tensor::check_allocation("ScatterNd", updates.dtype(), full.dims())?;
    let mut out = Tensor::zeros(updates.dtype(), full);
    super::segment::scatter_nd_apply(
        &mut out,
        indices,
        updates,
        super::array::ScatterOp::Add,
        "ScatterNd",
        false,
    )?;
    Ok(out)
}

/// The gradient of `MirrorPad`: each position of the padded gradient `g` is
/// added to the input element it was copied from (REFLECT excludes the edge,
/// SYMMETRIC repeats it).
pub fn mirror_pad_grad(g: &Tensor, paddings: &[(i64, i64)], symmetric: bool) -> Result<Tensor> {
    let dims = g.dims();
    let rank = dims.len();
    if paddings.len() != rank {
        return Err(Error::invalid_argument(format!(
            "MirrorPadGrad: paddings must have {rank} rows for a gradient of shape {}, got {}",
            g.shape(),
            paddings.len()
        )));
    }
    let mut in_dims = Vec::with_capacity(rank);
    for (d, (&n, &(b, a))) in dims.iter().zip(paddings).enumerate() {
        let m = n as i64 - b - a;
        let limit = if symmetric { m } else { m - 1 };
        if b < 0 || a < 0 || m < 1 || b > limit || a > limit {
            return Err(Error::invalid_argument(format!(
                "MirrorPadGrad: paddings ({b}, {a}) are invalid for dimension {d} of size {n} in {} mode",
                if symmetric { "SYMMETRIC" } else { "REFLECT" }
            )));
        }
        in_dims.push(m as usize);
    }
    // For each dim, the input index each padded position copies.
    let maps: Vec<Vec<usize>> = (0..rank)
        .map(|d| {
            let m = in_dims[d] as i64;
            (0..dims[d] as i64)
                .map(|o| {
                    let i = o - paddings[d].0;
                    let src = if (0..m).contains(&i) {
                        i
                    } else if symmetric {
                        if i < 0 {
                            -i - 1
                        } else {
                            2 * m - 1 - i
                        }
                    } else if i < 0 {
                        -i
                    } else {
                        2 * (m - 1) - i
                    };
                    src as usize
                })
                .collect()
        })
        .collect();
    let out_shape = Shape::new(&in_dims);
    fn go<T: Scalar>(g: &Tensor, maps: &[Vec<usize>], out_shape: Shape) -> Result<Tensor> {
        let src = g.as_slice::<T>()?;
        let mut out = vec![T::zero(); out_shape.num_elements()];
        let strides = out_shape.strides();
        let rank = maps.len();
        let mut idx = vec![0usize; rank];
        for &v in src {
            let off: usize = (0..rank).map(|d| maps[d][idx[d]] * strides[d]).sum();
            out[off] = out[off].add(v);
            for d in (0..rank).rev() {
                idx[d] += 1;
                if idx[d] < maps[d].len() {
                    break;
                }
                idx[d] = 0;
            }
        }
        Tensor::from_vec(out_shape, out)
    }
    let dt = g.dtype();
    if matches!(dt, DType::Float16 | DType::BFloat16) {
        let r = mirror_pad_grad(&cast(g, DType::Float32)?, paddings, symmetric)?;
        return cast(&r, dt);
    }
    scalar_dispatch(
        dt,
        "MirrorPadGrad",
        || go::<f32>(g, &maps, out_shape.clone()),
        || go::<f64>(g, &maps, out_shape.clone()),
    )
}

/// Sum of `g` over every axis but the channel axis (`BiasAddGrad`).
pub fn bias_add_grad(g: &Tensor, nchw: bool) -> Result<Tensor> {
    let rank = g.rank();
    if rank < 2 {
        return Err(Error::invalid_argument(format!(
            "BiasAddGrad: input must be at least 2-D, got {}",
            g.shape()
        )));
    }
    let channel = if nchw { 1 } else { rank - 1 };
    let axes: Vec<i64> = (0..rank as i64).filter(|&a| a != channel as i64).collect();
    super::reduce::reduce(super::reduce::ReduceOp::Sum, g, Some(&axes), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcast_args_match_tensorflow() {
        assert_eq!(
            broadcast_gradient_args(&[2, 3, 5], &[1]).unwrap(),
            (vec![], vec![0, 1, 2])
        );
        assert_eq!(
            broadcast_gradient_args(&[3, 1], &[1, 4]).unwrap(),
            (vec![1], vec![0])
        );
        assert_eq!(
            broadcast_gradient_args(&[2, 3], &[2, 3]).unwrap(),
            (vec![], vec![])
        );
        assert!(broadcast_gradient_args(&[2], &[3]).is_err());
    }

    #[test]
    fn segment_sum_and_scatter() {
        let d = Tensor::from_vec([3, 2], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        let s = unsorted_segment_sum(&d, &Tensor::vector(vec![1i32, 1, 0]), 3).unwrap();
        assert_eq!(
            s.as_slice::<f32>().unwrap(),
            &[5.0, 6.0, 4.0, 6.0, 0.0, 0.0]
        );
        let i = Tensor::from_vec([2, 1], vec![2i64, 0]).unwrap();
        let u = Tensor::from_vec([2, 2], vec![1.0f64, 2.0, 3.0, 4.0]).unwrap();
        let r = scatter_nd(&i, &u, &[3, 2]).unwrap();
        assert_eq!(
            r.as_slice::<f64>().unwrap(),
            &[3.0, 4.0, 0.0, 0.0, 1.0, 2.0]
        );
    }

    #[test]
    fn leaky_relu_grad_uses_a_float32_alpha() {
        let g = Tensor::from_vec([2], vec![1.0f64, 1.0]).unwrap();
        let x = Tensor::from_vec([2], vec![-1.0f64, 1.0]).unwrap();
        let r = activation_grad(ActivationGrad::LeakyRelu(0.3), g, x).unwrap();
        assert_eq!(r.as_slice::<f64>().unwrap(), &[0.3f32 as f64, 1.0]);
    }

    #[test]
    fn mirror_pad_grad_adds_the_copies() {
        // REFLECT [a b c] by (2, 1) -> [c b a b c b]: a gets 1, b gets 3, c gets 2.
        let g = Tensor::from_vec([6], vec![1.0f64; 6]).unwrap();
        let r = mirror_pad_grad(&g, &[(2, 1)], false).unwrap();
        assert_eq!(r.as_slice::<f64>().unwrap(), &[1.0, 3.0, 2.0]);
        // SYMMETRIC [a b c] by (1, 2) -> [a a b c c b].
        let g = Tensor::from_vec([6], vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
        let r = mirror_pad_grad(&g, &[(1, 2)], true).unwrap();
        assert_eq!(r.as_slice::<f32>().unwrap(), &[3.0, 9.0, 9.0]);
        // Empty dimension: an error, not a panic.
        let g = Tensor::from_vec([2], vec![1.0f32, 2.0]).unwrap();
        assert!(mirror_pad_grad(&g, &[(1, 1)], false).is_err());
    }

    #[test]
    fn strided_slice_grad_scatters() {
        let dy = Tensor::from_vec([2], vec![1.0f32, 2.0]).unwrap();
        let g = strided_slice_grad(&[5], &[4], &[0], &[-3], SliceMasks::default(), &dy).unwrap();
        assert_eq!(g.as_slice::<f32>().unwrap(), &[0.0, 2.0, 0.0, 0.0, 1.0]);
    }
}
