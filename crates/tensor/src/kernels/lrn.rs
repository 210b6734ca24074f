//! Local response normalization across channels (TensorFlow's `LRN` and
//! `LRNGrad`), and the block rearrangements `SpaceToDepth`/`DepthToSpace`
//! (NHWC).
//!
//! `LRN`: for each pixel and channel `d`,
//! `y[d] = x[d] / (bias + alpha * sum(x[k]^2 for |k - d| <= radius))^beta`.
//! Pixels are independent; they run in parallel chunks. Sums are in `f64`.

use super::array::transpose;
use super::elementwise::cast;
use super::parallel::filled;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// The attributes of `LRN` and `LRNGrad`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LrnParams {
    pub depth_radius: usize,
    pub bias: f32,
    pub alpha: f32,
    pub beta: f32,
}

fn float_input(op: &str, what: &str, t: &Tensor) -> Result<Tensor> {
    if t.rank() != 4 {
        return Err(Error::invalid_argument(format!(
            "{op}: {what} must be 4-dimensional, got shape {}",
            t.shape()
        )));
    }
    match t.dtype() {
        DType::Float32 => Ok(t.clone()),
        DType::Float16 | DType::BFloat16 => cast(t, DType::Float32),
        d => Err(Error::invalid_argument(format!(
            "{op}: {what} must be float16, bfloat16 or float32, got {d}"
        ))),
    }
}

fn back_to(t: Tensor, d: DType) -> Result<Tensor> {
    if d == DType::Float32 {
        Ok(t)
    } else {
        cast(&t, d)
    }
}

/// The window `[lo, hi)` of channels around `d`.
#[inline]
fn window(d: usize, r: usize, c: usize) -> (usize, usize) {
    (d.saturating_sub(r), (d + r + 1).min(c))
}

/// `bias + alpha * sum(x[k]^2)` over each channel's window, for one pixel.
fn norms(px: &[f32], p: &LrnParams, out: &mut [f64]) {
    let c = px.len();
    for (d, o) in out.iter_mut().enumerate() {
        let (lo, hi) = window(d, p.depth_radius, c);
        let s: f64 = px[lo..hi].iter().map(|&v| (v as f64) * (v as f64)).sum();
        *o = p.bias as f64 + p.alpha as f64 * s;
    }
}

/// Runs `f(pixel_in, pixel_out)` over the channels-last pixels of `n`
/// elements with `c` channels into a fresh buffer, in parallel chunks.
fn per_pixel(n: usize, c: usize, f: impl Fn(usize, &mut [f32]) + Sync) -> Vec<f32> {
    if c == 0 {
        return vec![0.0; n];
    }
    filled(n, |start, chunk| {
        let mut row = vec![0f32; c];
        let mut i = 0;
        while i < chunk.len() {
            let e = start + i;
            let (px, col) = (e / c, e % c);
            let k = (c - col).min(chunk.len() - i);
            if col == 0 && k == c {
                f(px, &mut chunk[i..i + c]);
            } else {
                f(px, &mut row);
                chunk[i..i + k].copy_from_slice(&row[col..col + k]);
            }
            i += k;
        }
    })
}

/// `LRN` of a 4-D (NHWC) `input`.
pub fn lrn(input: &Tensor, p: &LrnParams) -> Result<Tensor> {
    let x = float_input("LRN", "input", input)?;
    let c = x.dims()[3];
    let xs = x.as_slice::<f32>()?;
    let beta = p.beta as f64;
    let y = per_pixel(xs.len(), c, |px, out| {
        let xp = &xs[px * c..][..c];
        let mut nrm = vec![0f64; c];
        norms(xp, p, &mut nrm);
        for ((o, &v), &n) in out.iter_mut().zip(xp).zip(&nrm) {
            *o = (v as f64 * n.powf(-beta)) as f32;
        }
    });
    back_to(Tensor::from_vec(x.dims().to_vec(), y)?, input.dtype())
}

/// `LRNGrad(input_grads, input_image, output_image)`: the gradient of
/// [`lrn`] at `input_image` given the output gradient `input_grads`.
pub fn lrn_grad(grads: &Tensor, image: &Tensor, output: &Tensor, p: &LrnParams) -> Result<Tensor> {
    let op = "LRNGrad";
    let dy = float_input(op, "input_grads", grads)?;
    let x = float_input(op, "input_image", image)?;
    let y = float_input(op, "output_image", output)?;
    if dy.dims() != x.dims() || y.dims() != x.dims() {
        return Err(Error::invalid_argument(format!(
            "{op}: input_grads, input_image and output_image must have the same shape, got {}, {} and {}",
            dy.shape(),
            x.shape(),
            y.shape()
        )));
    }
    let c = x.dims()[3];
    let (xs, ds) = (x.as_slice::<f32>()?, dy.as_slice::<f32>()?);
    let (alpha, beta) = (p.alpha as f64, p.beta as f64);
    let dx = per_pixel(xs.len(), c, |px, out| {
        let xp = &xs[px * c..][..c];
        let dp = &ds[px * c..][..c];
        let mut nrm = vec![0f64; c];
        norms(xp, p, &mut nrm);
        // dx[i] = dy[i] * n_i^-b - 2ab x[i] * sum_{j: i in win(j)} dy[j] x[j] n_j^(-b-1)
        let t: Vec<f64> = (0..c)
            .map(|j| dp[j] as f64 * xp[j] as f64 * nrm[j].powf(-beta - 1.0))
            .collect();
        for (i, o) in out.iter_mut().enumerate() {
            let (lo, hi) = window(i, p.depth_radius, c);
            let s: f64 = t[lo..hi].iter().sum();
            let v = dp[i] as f64 * nrm[i].powf(-beta) - 2.0 * alpha * beta * xp[i] as f64 * s;
            *o = v as f32;
        }
    });
    back_to(Tensor::from_vec(x.dims().to_vec(), dx)?, grads.dtype())
}

fn block_dims(op: &str, input: &Tensor, block: usize) -> Result<[usize; 4]> {
    if block < 2 {
        return Err(Error::invalid_argument(format!(
            "{op}: block_size must be at least 2, got {block}"
        )));
    }
    if input.rank() != 4 {
        return Err(Error::invalid_argument(format!(
            "{op}: input rank should be 4 instead of {}",
            input.rank()
        )));
    }
    let d = input.dims();
    Ok([d[0], d[1], d[2], d[3]])
}

/// `SpaceToDepth` (NHWC): each `block x block` patch becomes one pixel
/// of `block * block * C` channels, patch row-major then channel.
pub fn space_to_depth(input: &Tensor, block: usize) -> Result<Tensor> {
    let op = "SpaceToDepth";
    let [n, h, w, c] = block_dims(op, input, block)?;
    if h % block != 0 || w % block != 0 {
        return Err(Error::invalid_argument(format!(
            "{op}: Image width {w} and height {h} should be divisible by block_size: {block}"
        )));
    }
    let (oh, ow) = (h / block, w / block);
    let x = input.clone().with_shape([n, oh, block, ow, block, c])?;
    let t = transpose(&x, &[0, 1, 3, 2, 4, 5])?;
    t.with_shape([n, oh, ow, block * block * c])
}

/// `DepthToSpace` (NHWC): the inverse of [`space_to_depth`].
pub fn depth_to_space(input: &Tensor, block: usize) -> Result<Tensor> {
    let op = "DepthToSpace";
    let [n, h, w, c] = block_dims(op, input, block)?;
    let bb = block * block;
    if c % bb != 0 {
        return Err(Error::invalid_argument(format!(
            "{op}: Input depth dimension {c} should be divisible by: {bb}"
        )));
    }
    let oc = c / bb;
    let x = input.clone().with_shape([n, h, w, block, block, oc])?;
    let t = transpose(&x, &[0, 1, 3, 2, 4, 5])?;
    t.with_shape([n, h * block, w * block, oc])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize) -> Vec<f32> {
        (0..n)
            .map(|i| ((i * 29 % 53) as f32) / 20.0 - 1.3)
            .collect()
    }

    #[test]
    fn lrn_matches_the_formula_and_its_gradient_finite_differences() {
        let p = LrnParams {
            depth_radius: 2,
            bias: 1.0,
            alpha: 0.3,
            beta: 0.75,
        };
        let dims = [1, 2, 1, 7];
        let xv = data(14);
        let x = Tensor::from_vec(dims, xv.clone()).unwrap();
        let y = lrn(&x, &p).unwrap();
        let ys = y.as_slice::<f32>().unwrap();
        for px in 0..2 {
            for d in 0..7usize {
                let lo = d.saturating_sub(2);
                let hi = (d + 3).min(7);
                let s: f64 = (lo..hi).map(|k| (xv[px * 7 + k] as f64).powi(2)).sum();
                let want = xv[px * 7 + d] as f64 / (1.0f64 + 0.3 * s).powf(0.75);
                assert!((ys[px * 7 + d] as f64 - want).abs() < 1e-6);
            }
        }
        let w = data(17)[3..].to_vec();
        let dy = Tensor::from_vec(dims, w.clone()).unwrap();
        let dx = lrn_grad(&dy, &x, &y, &p).unwrap();
        let loss = |v: &[f32]| -> f64 {
            let y = lrn(&Tensor::from_vec(dims, v.to_vec()).unwrap(), &p).unwrap();
            let ys = y.as_slice::<f32>().unwrap();
            ys.iter().zip(&w).map(|(a, b)| *a as f64 * *b as f64).sum()
        };
        let h = 1e-2;
        for i in 0..14 {
            let (mut a, mut b) = (xv.clone(), xv.clone());
            a[i] += h;
            b[i] -= h;
            let fd = (loss(&a) - loss(&b)) / (2.0 * h as f64);
            let got = dx.as_slice::<f32>().unwrap()[i] as f64;
            assert!((fd - got).abs() < 2e-3, "dx[{i}] {fd} vs {got}");
        }
    }

    #[test]
    fn space_to_depth_round_trips_and_orders_like_tensorflow() {
        // TensorFlow's doc example: [1, 2, 2, 1] of 1..4 -> [1, 1, 1, 4].
        let x = Tensor::from_vec([1, 2, 2, 1], vec![1f32, 2.0, 3.0, 4.0]).unwrap();
        let y = space_to_depth(&x, 2).unwrap();
        assert_eq!(y.dims(), &[1, 1, 1, 4]);
        assert_eq!(y.as_slice::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
        let v: Vec<i32> = (0..2 * 4 * 6 * 3).collect();
        let x = Tensor::from_vec([2, 4, 6, 3], v.clone()).unwrap();
        let y = space_to_depth(&x, 2).unwrap();
        assert_eq!(y.dims(), &[2, 2, 3, 12]);
        let back = depth_to_space(&y, 2).unwrap();
        assert_eq!(back.as_slice::<i32>().unwrap(), &v[..]);
        assert!(space_to_depth(&x, 4).is_err());
        assert!(depth_to_space(&x, 2).is_err());
        assert!(space_to_depth(&x, 1).is_err());
    }
}
