//! Max pooling that also returns where each maximum came from (NHWC):
//! TensorFlow's `MaxPoolWithArgmax`, `MaxPoolGradWithArgmax` and
//! `MaxPoolGradGradWithArgmax`.
//!
//! The flat index of input element `[b, y, x, c]` is
//! `((b * height + y) * width + x) * channels + c`, without the `b` term
//! unless `include_batch_in_index`. Each window's first maximum in
//! row-major order wins, as in TensorFlow's CPU kernel.

use super::conv::{Pool2dParams, PoolGeom};
use super::elementwise::cast;
use super::scalar::Scalar;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// The sizes of one pool.
fn pool_typed<T: Scalar>(x: &[T], g: &PoolGeom, batch_index: bool) -> (Vec<T>, Vec<i64>) {
    let m = g.n * g.oh * g.ow * g.c;
    let (mut out, mut idx) = (vec![T::zero(); m], vec![0i64; m]);
    let img = g.h * g.w * g.c;
    let mut o = 0;
    for b in 0..g.n {
        let base = if batch_index { b * img } else { 0 };
        for oy in 0..g.oh {
            let y0 = (oy * g.sh) as isize - g.pt as isize;
            for ox in 0..g.ow {
                let x0 = (ox * g.sw) as isize - g.pl as isize;
                for ch in 0..g.c {
                    let mut best: Option<(T, usize)> = None;
                    for ky in 0..g.kh {
                        let y = y0 + ky as isize;
                        if y < 0 || y >= g.h as isize {
                            continue;
                        }
                        for kx in 0..g.kw {
                            let xx = x0 + kx as isize;
                            if xx < 0 || xx >= g.w as isize {
                                continue;
                            }
                            let i = (y as usize * g.w + xx as usize) * g.c + ch;
                            let v = x[b * img + i];
                            if best.is_none_or(|(m, _)| v > m) {
                                best = Some((v, i));
                            }
                        }
                    }
                    if let Some((v, i)) = best {
                        out[o] = v;
                        idx[o] = (base + i) as i64;
                    }
                    o += 1;
                }
            }
        }
    }
    (out, idx)
}

fn index_tensor(shape: [usize; 4], idx: Vec<i64>, dtype: DType) -> Result<Tensor> {
    match dtype {
        DType::Int64 => Tensor::from_vec(shape, idx),
        DType::Int32 => Tensor::from_vec(shape, idx.into_iter().map(|v| v as i32).collect()),
        d => Err(Error::invalid_argument(format!(
            "MaxPoolWithArgmax: Targmax must be int32 or int64, got {d}"
        ))),
    }
}

/// `MaxPoolWithArgmax`: the max pool of `input` and the flat index of each
/// maximum (as `index_dtype`, int32 or int64).
pub fn max_pool_with_argmax(
    input: &Tensor,
    p: &Pool2dParams,
    include_batch_in_index: bool,
    index_dtype: DType,
) -> Result<(Tensor, Tensor)> {
    let op = "MaxPoolWithArgmax";
    let g = p.geom(op, input.dims())?;
    let shape = [g.n, g.oh, g.ow, g.c];
    macro_rules! go {
        ($t:ty) => {{
            let (v, i) = pool_typed::<$t>(input.as_slice()?, &g, include_batch_in_index);
            (Tensor::from_vec(shape, v)?, i)
        }};
    }
    let (values, idx) = match input.dtype() {
        DType::Float32 => go!(f32),
        DType::Float64 => go!(f64),
        DType::Int8 => go!(i8),
        DType::Int16 => go!(i16),
        DType::Int32 => go!(i32),
        DType::Int64 => go!(i64),
        DType::UInt8 => go!(u8),
        DType::UInt16 => go!(u16),
        // Exact: f16/bf16 values are f32 values, and the max picks one.
        d @ (DType::Float16 | DType::BFloat16) => {
            let f = cast(input, DType::Float32)?;
            let (v, i) = pool_typed::<f32>(f.as_slice()?, &g, include_batch_in_index);
            (cast(&Tensor::from_vec(shape, v)?, d)?, i)
        }
        d => {
            return Err(Error::invalid_argument(format!(
                "{op} is not supported for {d} tensors"
            )))
        }
    };
    Ok((values, index_tensor(shape, idx, index_dtype)?))
}

/// Checks an argmax tensor against the pooled shape and input size; its
/// indices as absolute offsets into the whole input.
fn absolute_indices(
    op: &str,
    argmax: &Tensor,
    want: &[usize],
    input: &[usize],
    include_batch_in_index: bool,
) -> Result<Vec<usize>> {
    if argmax.dims() != want {
        return Err(Error::invalid_argument(format!(
            "{op}: argmax has shape {}, expected {want:?}",
            argmax.shape()
        )));
    }
    let total: usize = input.iter().product();
    let img = total.checked_div(input[0]).unwrap_or(0);
    let per_image = argmax.num_elements().checked_div(want[0]).unwrap_or(0);
    argmax
        .to_i64_vec()?
        .into_iter()
        .enumerate()
        .map(|(k, v)| {
            let base = if include_batch_in_index || per_image == 0 {
                0
            } else {
                (k / per_image) * img
            };
            let i = usize::try_from(v).ok().map(|v| v + base);
            i.filter(|&i| i < total).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "{op}: Invalid argmax index {v} for an input of {total} elements"
                ))
            })
        })
        .collect()
}

/// `MaxPoolGradWithArgmax`: `grad` (pooled shape) added at each argmax into
/// zeros of `input`'s shape.
pub fn max_pool_grad_with_argmax(
    input: &Tensor,
    grad: &Tensor,
    argmax: &Tensor,
    p: &Pool2dParams,
    include_batch_in_index: bool,
) -> Result<Tensor> {
    let op = "MaxPoolGradWithArgmax";
    let g = p.geom(op, input.dims())?;
    let pooled = [g.n, g.oh, g.ow, g.c];
    if grad.dims() != pooled || grad.dtype() != input.dtype() {
        return Err(Error::invalid_argument(format!(
            "{op}: grad must be {} of shape {pooled:?}, got {} of shape {}",
            input.dtype(),
            grad.dtype(),
            grad.shape()
        )));
    }
    let at = absolute_indices(op, argmax, &pooled, input.dims(), include_batch_in_index)?;
    let g64 = cast(grad, DType::Float64)?;
    let mut dx = vec![0f64; input.num_elements()];
    for (&i, &v) in at.iter().zip(g64.as_slice::<f64>()?) {
        dx[i] += v;
    }
    cast(&Tensor::from_vec(input.dims().to_vec(), dx)?, input.dtype())
}

/// `MaxPoolGradGradWithArgmax`: `grad` (input shape) read at each argmax,
/// in the pooled shape.
pub fn max_pool_grad_grad_with_argmax(
    input: &Tensor,
    grad: &Tensor,
    argmax: &Tensor,
    p: &Pool2dParams,
    include_batch_in_index: bool,
) -> Result<Tensor> {
    let op = "MaxPoolGradGradWithArgmax";
    let g = p.geom(op, input.dims())?;
    let pooled = [g.n, g.oh, g.ow, g.c];
    if grad.dims() != input.dims() || grad.dtype() != input.dtype() {
        return Err(Error::invalid_argument(format!(
            "{op}: grad must have input's dtype and shape {}, got {} of shape {}",
            input.shape(),
            grad.dtype(),
            grad.shape()
        )));
    }
    let at = absolute_indices(op, argmax, &pooled, input.dims(), include_batch_in_index)?;
    let g64 = cast(grad, DType::Float64)?;
    let gs = g64.as_slice::<f64>()?;
    let out: Vec<f64> = at.iter().map(|&i| gs[i]).collect();
    cast(&Tensor::from_vec(pooled, out)?, input.dtype())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::conv::Padding;

    fn p(k: usize, s: usize, padding: Padding) -> Pool2dParams {
        Pool2dParams {
            ksize: [1, k, k, 1],
            strides: [1, s, s, 1],
            padding,
        }
    }

    #[test]
    fn argmax_indices_ties_and_gradients() {
        // 2 images of 3x3x1 with ties (the first maximum in row-major order wins).
        let x: Vec<f32> = vec![
            1., 5., 2., 0., 3., 9., 4., 4., 1., //
            7., 7., 0., 7., 7., 0., 1., 1., 1.,
        ];
        let t = Tensor::from_vec([2, 3, 3, 1], x).unwrap();
        let pp = p(2, 1, Padding::Valid);
        let (v, i) = max_pool_with_argmax(&t, &pp, false, DType::Int64).unwrap();
        assert_eq!(
            v.as_slice::<f32>().unwrap(),
            &[5., 9., 4., 9., 7., 7., 7., 7.]
        );
        assert_eq!(i.as_slice::<i64>().unwrap(), &[1, 5, 6, 5, 0, 1, 3, 4]);
        let (_, ib) = max_pool_with_argmax(&t, &pp, true, DType::Int32).unwrap();
        assert_eq!(ib.as_slice::<i32>().unwrap(), &[1, 5, 6, 5, 9, 10, 12, 13]);
        let dy = Tensor::from_vec([2, 2, 2, 1], vec![1f32; 8]).unwrap();
        let dx = max_pool_grad_with_argmax(&t, &dy, &i, &pp, false).unwrap();
        let dxb = max_pool_grad_with_argmax(&t, &dy, &ib, &pp, true).unwrap();
        assert_eq!(
            dx.as_slice::<f32>().unwrap(),
            dxb.as_slice::<f32>().unwrap()
        );
        assert_eq!(
            dx.as_slice::<f32>().unwrap(),
            &[0., 1., 0., 0., 0., 2., 1., 0., 0., 1., 1., 0., 1., 1., 0., 0., 0., 0.]
        );
        let gg = max_pool_grad_grad_with_argmax(&t, &t, &i, &pp, false).unwrap();
        assert_eq!(gg.as_slice::<f32>().unwrap(), v.as_slice::<f32>().unwrap());
        let bad = Tensor::from_vec([2, 2, 2, 1], vec![99i64; 8]).unwrap();
        assert!(max_pool_grad_with_argmax(&t, &dy, &bad, &pp, false).is_err());
    }

    #[test]
    fn same_padding_skips_the_padding() {
        let t = Tensor::from_vec([1, 2, 2, 1], vec![-3f32, -1., -2., -4.]).unwrap();
        let (v, i) =
            max_pool_with_argmax(&t, &p(2, 2, Padding::Same), false, DType::Int64).unwrap();
        assert_eq!(v.as_slice::<f32>().unwrap(), &[-1.]);
        assert_eq!(i.as_slice::<i64>().unwrap(), &[1]);
    }
}
