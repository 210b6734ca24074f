//! Fused batch normalization over channels-last tensors: TensorFlow's
//! `FusedBatchNorm`/`V2`/`V3` forward pass and `FusedBatchNormGrad`/`V2`/`V3`.
//!
//! `x` is viewed as `[rows, C]` (every dimension but the last is a row;
//! NHWC images are `N*H*W` rows). Statistics are per channel: each pass
//! walks rows with the channels innermost (vectorized), per-chunk partial
//! sums in `f64` are added in chunk order, so results do not depend on the
//! thread count. Half-precision `x` computes in `f32` and rounds once.
//!
//! Training mode normalizes with the batch's own mean and (biased)
//! variance and reports the Bessel-corrected variance `var * n / (n - 1)`,
//! blended into the running statistics as
//! `(1 - factor) * old + factor * new` when `exponential_avg_factor != 1`;
//! the reserve spaces hold the batch mean and biased variance for the
//! gradient. Inference mode normalizes with the given mean and variance.

use super::elementwise::cast;
use super::parallel::filled;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// Rows per partial sum (and per parallel task).
const ROWS_PER_CHUNK: usize = 2048;

/// Elements below which the passes run on the calling thread.
const PARALLEL_ELEMS: usize = 1 << 16;

/// The attributes of a fused batch norm.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BatchNormParams {
    /// Added to the variance before its reciprocal square root.
    pub epsilon: f32,
    /// Weight of this batch's statistics in the running ones (training).
    pub exponential_avg_factor: f32,
    /// Normalize with the batch's statistics (true) or the given ones.
    pub is_training: bool,
}

/// The outputs of [`fused_batch_norm`].
#[derive(Debug)]
pub struct BatchNormOutput {
    /// The normalized, scaled and shifted `x`.
    pub y: Tensor,
    /// The (running) mean: TensorFlow's `batch_mean` output.
    pub batch_mean: Tensor,
    /// The (running) Bessel-corrected variance: `batch_variance`.
    pub batch_variance: Tensor,
    /// The mean used to normalize (`reserve_space_1`).
    pub saved_mean: Tensor,
    /// The variance used to normalize, biased in training (`reserve_space_2`).
    pub saved_variance: Tensor,
}

/// The outputs of [`fused_batch_norm_grad`].
#[derive(Debug)]
pub struct BatchNormGrad {
    pub x_backprop: Tensor,
    pub scale_backprop: Tensor,
    pub offset_backprop: Tensor,
}

/// `[rows, C]` of `x`, requiring rank 4 as TensorFlow does.
fn layout(op: &str, x: &Tensor) -> Result<(usize, usize)> {
    if x.rank() != 4 {
        return Err(Error::invalid_argument(format!(
            "{op}: input must be 4-dimensional, got shape {}",
            x.shape()
        )));
    }
    let c = x.dims()[3];
    let rows = x.num_elements().checked_div(c).unwrap_or(0);
    Ok((rows, c))
}

/// A float32 vector input of `c` elements (`scale`, `offset`, ...).
fn channel_vec(op: &str, what: &str, t: &Tensor, c: usize) -> Result<Vec<f32>> {
    if t.dtype() != DType::Float32 {
        return Err(Error::invalid_argument(format!(
            "{op}: {what} must be float32, got {}",
            t.dtype()
        )));
    }
    if t.rank() != 1 || t.dims()[0] != c {
        return Err(Error::invalid_argument(format!(
            "{op}: {what} must have shape [{c}] (the depth of x), got {}",
            t.shape()
        )));
    }
    Ok(t.as_slice::<f32>()?.to_vec())
}

/// `x` as `f32` values (half types converted).
fn as_f32(op: &str, x: &Tensor) -> Result<Tensor> {
    match x.dtype() {
        DType::Float32 => Ok(x.clone()),
        DType::Float16 | DType::BFloat16 => cast(x, DType::Float32),
        d => Err(Error::invalid_argument(format!(
            "{op}: x must be float16, bfloat16 or float32, got {d}"
        ))),
    }
}

/// Sums over rows of `f(row_index, row)` (each returning per-channel terms
/// added into an `f64` accumulator), in fixed chunks added in order.
fn channel_sums<F>(rows: usize, c: usize, nacc: usize, f: F) -> Vec<f64>
where
    F: Fn(usize, &mut [f64]) + Sync,
{
    let chunks: Vec<usize> = (0..rows.div_ceil(ROWS_PER_CHUNK)).collect();
    let partial = |_: usize, ids: &[usize]| -> Vec<f64> {
        let mut acc = vec![0.0; nacc * c];
        for &k in ids {
            let lo = k * ROWS_PER_CHUNK;
            let mut part = vec![0.0; nacc * c];
            for r in lo..(lo + ROWS_PER_CHUNK).min(rows) {
                f(r, &mut part);
            }
            for (a, p) in acc.iter_mut().zip(&part) {
                *a += p;
            }
        }
        acc
    };
    // One partial per chunk, in chunk order, wherever it ran.
    let partials: Vec<Vec<f64>> = if rows * c >= PARALLEL_ELEMS {
        crate::team::map_chunks(&chunks, 1, partial)
    } else {
        chunks.chunks(1).map(|ids| partial(0, ids)).collect()
    };
    let mut total = vec![0.0; nacc * c];
    for p in partials {
        for (t, v) in total.iter_mut().zip(p) {
            *t += v;
        }
    }
    total
}

/// A new `[rows, C]` buffer filled row by row by `f(row_index, row)`.
fn by_rows<F>(rows: usize, c: usize, f: F) -> Vec<f32>
where
    F: Fn(usize, &mut [f32]) + Sync,
{
    if c == 0 {
        return Vec::new();
    }
    // `filled` hands out chunks of whole rows only when its chunk is a
    // multiple of `c`; walk element ranges instead.
    filled(rows * c, |start, chunk| {
        let mut i = 0;
        while i < chunk.len() {
            let e = start + i;
            let (r, col) = (e / c, e % c);
            let n = (c - col).min(chunk.len() - i);
            if col == 0 && n == c {
                f(r, &mut chunk[i..i + c]);
            } else {
                let mut row = vec![0f32; c];
                f(r, &mut row);
                chunk[i..i + n].copy_from_slice(&row[col..col + n]);
            }
            i += n;
        }
    })
}

fn out_like(x: &Tensor, v: Vec<f32>) -> Result<Tensor> {
    let y = Tensor::from_vec(x.dims().to_vec(), v)?;
    if x.dtype() == DType::Float32 {
        Ok(y)
    } else {
        cast(&y, x.dtype())
    }
}

/// `FusedBatchNormV3`'s computation (`mean`/`variance` may be empty in
/// training when `exponential_avg_factor` is 1, as TensorFlow allows).
pub fn fused_batch_norm(
    op: &str,
    x: &Tensor,
    scale: &Tensor,
    offset: &Tensor,
    mean: &Tensor,
    variance: &Tensor,
    p: &BatchNormParams,
) -> Result<BatchNormOutput> {
    let (rows, c) = layout(op, x)?;
    let scale = channel_vec(op, "scale", scale, c)?;
    let offset = channel_vec(op, "offset", offset, c)?;
    let running = !p.is_training || p.exponential_avg_factor != 1.0;
    let (old_mean, old_var) = if running || mean.num_elements() != 0 || variance.num_elements() != 0
    {
        (
            channel_vec(op, "mean", mean, c)?,
            channel_vec(op, "variance", variance, c)?,
        )
    } else {
        (Vec::new(), Vec::new())
    };
    let xf = as_f32(op, x)?;
    let xs = xf.as_slice::<f32>()?;
    let row = |r: usize| &xs[r * c..][..c];
    let (mean_v, var_v) = if p.is_training {
        let s = channel_sums(rows, c, 1, |r, acc| {
            for (a, &v) in acc.iter_mut().zip(row(r)) {
                *a += v as f64;
            }
        });
        let n = rows.max(1) as f64;
        let m64: Vec<f64> = s.iter().map(|v| v / n).collect();
        let m32: Vec<f32> = m64.iter().map(|&v| v as f32).collect();
        let ss = channel_sums(rows, c, 1, |r, acc| {
            for ((a, &v), &m) in acc.iter_mut().zip(row(r)).zip(&m32) {
                let d = (v - m) as f64;
                *a += d * d;
            }
        });
        (m32, ss.iter().map(|v| (v / n) as f32).collect::<Vec<_>>())
    } else {
        (old_mean.clone(), old_var.clone())
    };
    let inv: Vec<f32> = var_v.iter().map(|v| 1.0 / (v + p.epsilon).sqrt()).collect();
    // y = x * (scale * inv) + (offset - mean * scale * inv)
    let mul: Vec<f32> = scale.iter().zip(&inv).map(|(s, i)| s * i).collect();
    let add: Vec<f32> = offset
        .iter()
        .zip(&mean_v)
        .zip(&mul)
        .map(|((o, m), k)| o - m * k)
        .collect();
    let y = by_rows(rows, c, |r, out| {
        for (((o, &v), &k), &a) in out.iter_mut().zip(row(r)).zip(&mul).zip(&add) {
            *o = v * k + a;
        }
    });
    let y = out_like(x, y)?;
    let vec = |v: Vec<f32>| Tensor::from_vec([c], v);
    if !p.is_training {
        return Ok(BatchNormOutput {
            y,
            batch_mean: vec(mean_v.clone())?,
            batch_variance: vec(var_v.clone())?,
            saved_mean: vec(mean_v)?,
            saved_variance: vec(var_v)?,
        });
    }
    let bessel = if rows > 1 {
        rows as f32 / (rows as f32 - 1.0)
    } else {
        1.0
    };
    let corrected: Vec<f32> = var_v.iter().map(|v| v * bessel).collect();
    let f = p.exponential_avg_factor;
    let (run_mean, run_var) = if f == 1.0 {
        (mean_v.clone(), corrected)
    } else {
        let blend = |old: &[f32], new: &[f32]| -> Vec<f32> {
            old.iter()
                .zip(new)
                .map(|(o, n)| (1.0 - f) * o + f * n)
                .collect()
        };
        (blend(&old_mean, &mean_v), blend(&old_var, &corrected))
    };
    Ok(BatchNormOutput {
        y,
        batch_mean: vec(run_mean)?,
        batch_variance: vec(run_var)?,
        saved_mean: vec(mean_v)?,
        saved_variance: vec(var_v)?,
    })
}

/// `FusedBatchNormGradV3`'s computation: the gradients of `x`, `scale` and
/// `offset` given `dy`, with `saved_mean`/`saved_variance` the batch mean
/// and biased variance (training) or the population ones (inference).
#[allow(clippy::too_many_arguments)] // TensorFlow's inputs and attrs, one each
pub fn fused_batch_norm_grad(
    op: &str,
    dy: &Tensor,
    x: &Tensor,
    scale: &Tensor,
    saved_mean: &Tensor,
    saved_variance: &Tensor,
    epsilon: f32,
    is_training: bool,
) -> Result<BatchNormGrad> {
    let (rows, c) = layout(op, x)?;
    if dy.dims() != x.dims() || dy.dtype() != x.dtype() {
        return Err(Error::invalid_argument(format!(
            "{op}: y_backprop and x must have the same shape and dtype, got {} {} and {} {}",
            dy.dtype(),
            dy.shape(),
            x.dtype(),
            x.shape()
        )));
    }
    let scale = channel_vec(op, "scale", scale, c)?;
    let mean = channel_vec(op, "reserve_space_1", saved_mean, c)?;
    let var = channel_vec(op, "reserve_space_2", saved_variance, c)?;
    let xf = as_f32(op, x)?;
    let df = as_f32(op, dy)?;
    let (xs, ds) = (xf.as_slice::<f32>()?, df.as_slice::<f32>()?);
    let inv: Vec<f32> = var.iter().map(|v| 1.0 / (v + epsilon).sqrt()).collect();
    // Per channel: sum(dy) and sum(dy * (x - mean)).
    let sums = channel_sums(rows, c, 2, |r, acc| {
        let (sd, sdx) = acc.split_at_mut(c);
        let (xr, dr) = (&xs[r * c..][..c], &ds[r * c..][..c]);
        for i in 0..c {
            sd[i] += dr[i] as f64;
            sdx[i] += (dr[i] * (xr[i] - mean[i])) as f64;
        }
    });
    let (sum_dy, sum_dyx) = sums.split_at(c);
    let offset_bp: Vec<f32> = sum_dy.iter().map(|&v| v as f32).collect();
    let scale_bp: Vec<f32> = sum_dyx
        .iter()
        .zip(&inv)
        .map(|(&v, &i)| (v * i as f64) as f32)
        .collect();
    let dx = if is_training {
        // dx = scale * inv * (dy - mean(dy) - (x - mean) * inv^2 * mean(dy * (x - mean)))
        let n = rows.max(1) as f64;
        let k: Vec<f32> = scale.iter().zip(&inv).map(|(s, i)| s * i).collect();
        let mdy: Vec<f32> = sum_dy.iter().map(|v| (v / n) as f32).collect();
        let mdx: Vec<f32> = sum_dyx
            .iter()
            .zip(&inv)
            .map(|(v, &i)| (v / n) as f32 * i * i)
            .collect();
        by_rows(rows, c, |r, out| {
            let (xr, dr) = (&xs[r * c..][..c], &ds[r * c..][..c]);
            for i in 0..c {
                out[i] = k[i] * (dr[i] - mdy[i] - (xr[i] - mean[i]) * mdx[i]);
            }
        })
    } else {
        let k: Vec<f32> = scale.iter().zip(&inv).map(|(s, i)| s * i).collect();
        by_rows(rows, c, |r, out| {
            for ((o, &d), &k) in out.iter_mut().zip(&ds[r * c..][..c]).zip(&k) {
                *o = d * k;
            }
        })
    };
    let vec = |v: Vec<f32>| Tensor::from_vec([c], v);
    Ok(BatchNormGrad {
        x_backprop: out_like(x, dx)?,
        scale_backprop: vec(scale_bp)?,
        offset_backprop: vec(offset_bp)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(dims: &[usize], v: Vec<f32>) -> Tensor {
        Tensor::from_vec(dims.to_vec(), v).unwrap()
    }

    fn data(n: usize) -> Vec<f32> {
        (0..n)
            .map(|i| ((i * 37 % 101) as f32) / 25.0 - 2.0)
            .collect()
    }

    fn params(is_training: bool, f: f32) -> BatchNormParams {
        BatchNormParams {
            epsilon: 0.001,
            exponential_avg_factor: f,
            is_training,
        }
    }

    #[test]
    fn training_normalizes_and_reports_bessel_variance() {
        let (rows, c) = (2 * 3 * 3, 2);
        let xv = data(rows * c);
        let x = t(&[2, 3, 3, 2], xv.clone());
        let scale = t(&[2], vec![1.0, 2.0]);
        let offset = t(&[2], vec![0.1, 0.2]);
        let empty = t(&[0], vec![]);
        let o = fused_batch_norm(
            "FusedBatchNormV3",
            &x,
            &scale,
            &offset,
            &empty,
            &empty,
            &params(true, 1.0),
        )
        .unwrap();
        let y = o.y.as_slice::<f32>().unwrap();
        for ch in 0..c {
            let col: Vec<f64> = (0..rows).map(|r| xv[r * c + ch] as f64).collect();
            let m = col.iter().sum::<f64>() / rows as f64;
            let v = col.iter().map(|a| (a - m) * (a - m)).sum::<f64>() / rows as f64;
            let got_m = o.batch_mean.as_slice::<f32>().unwrap()[ch] as f64;
            let got_v = o.batch_variance.as_slice::<f32>().unwrap()[ch] as f64;
            let saved_v = o.saved_variance.as_slice::<f32>().unwrap()[ch] as f64;
            assert!((got_m - m).abs() < 1e-5);
            assert!((got_v - v * rows as f64 / (rows as f64 - 1.0)).abs() < 1e-5);
            assert!((saved_v - v).abs() < 1e-5);
            let (s, b) = ([1.0, 2.0][ch], [0.1, 0.2][ch]);
            for r in 0..rows {
                let want = (col[r] - m) / (v + 0.001).sqrt() * s + b;
                assert!((y[r * c + ch] as f64 - want).abs() < 1e-5);
            }
        }
        // Running averages with a factor.
        let mean = t(&[2], vec![0.0, 1.0]);
        let var = t(&[2], vec![1.0, 2.0]);
        let p = params(true, 0.5);
        let h = fused_batch_norm("FusedBatchNormV3", &x, &scale, &offset, &mean, &var, &p).unwrap();
        let bm = h.batch_mean.as_slice::<f32>().unwrap();
        let om = o.batch_mean.as_slice::<f32>().unwrap();
        assert!((bm[1] - (0.5 + 0.5 * om[1])).abs() < 1e-6);
    }

    /// The gradient against central differences of `sum(w * y)`.
    #[test]
    fn gradient_matches_finite_differences() {
        for training in [true, false] {
            let dims = [1, 2, 3, 3];
            let n = 18;
            let xv: Vec<f32> = data(n);
            let w: Vec<f32> = (0..n).map(|i| ((i * 7 % 11) as f32) / 5.0 - 1.0).collect();
            let scale = t(&[3], vec![0.5, 1.5, -1.0]);
            let offset = t(&[3], vec![0.0, 0.3, 0.1]);
            let mean = t(&[3], vec![0.1, -0.2, 0.3]);
            let var = t(&[3], vec![1.0, 0.5, 2.0]);
            let p = params(training, 1.0);
            let loss = |xv: &[f32], sv: &[f32]| -> f64 {
                let o = fused_batch_norm(
                    "FusedBatchNormV3",
                    &t(&dims, xv.to_vec()),
                    &t(&[3], sv.to_vec()),
                    &offset,
                    &mean,
                    &var,
                    &p,
                )
                .unwrap();
                let y = o.y.as_slice::<f32>().unwrap();
                y.iter()
                    .zip(&w)
                    .map(|(a, b)| (*a as f64) * (*b as f64))
                    .sum()
            };
            let x = t(&dims, xv.clone());
            let o =
                fused_batch_norm("FusedBatchNormV3", &x, &scale, &offset, &mean, &var, &p).unwrap();
            let g = fused_batch_norm_grad(
                "FusedBatchNormGradV3",
                &t(&dims, w.clone()),
                &x,
                &scale,
                &o.saved_mean,
                &o.saved_variance,
                0.001,
                training,
            )
            .unwrap();
            let dx = g.x_backprop.as_slice::<f32>().unwrap();
            let sv = scale.as_slice::<f32>().unwrap().to_vec();
            let h = 1e-2f32;
            for i in [0, 4, 9, 17] {
                let (mut a, mut b) = (xv.clone(), xv.clone());
                a[i] += h;
                b[i] -= h;
                let fd = (loss(&a, &sv) - loss(&b, &sv)) / (2.0 * h as f64);
                assert!(
                    (fd - dx[i] as f64).abs() < 2e-3,
                    "dx[{i}] {fd} vs {}",
                    dx[i]
                );
            }
            let ds = g.scale_backprop.as_slice::<f32>().unwrap();
            for ch in 0..3 {
                let (mut a, mut b) = (sv.clone(), sv.clone());
                a[ch] += h;
                b[ch] -= h;
                let fd = (loss(&xv, &a) - loss(&xv, &b)) / (2.0 * h as f64);
                assert!((fd - ds[ch] as f64).abs() < 2e-3, "dscale[{ch}]");
            }
            let doff = g.offset_backprop.as_slice::<f32>().unwrap();
            for ch in 0..3 {
                let want: f32 = (0..6).map(|r| w[r * 3 + ch]).sum();
                assert!((doff[ch] - want).abs() < 1e-5);
            }
        }
    }

    #[test]
    fn bad_inputs_are_typed_errors() {
        let x = t(&[2, 3], vec![0.0; 6]);
        let s = t(&[3], vec![1.0; 3]);
        let p = params(true, 1.0);
        let e = fused_batch_norm("FusedBatchNormV3", &x, &s, &s, &s, &s, &p).unwrap_err();
        assert!(e.message().contains("4-dimensional"));
        let x = t(&[1, 1, 2, 3], vec![0.0; 6]);
        let bad = t(&[2], vec![1.0; 2]);
        let e = fused_batch_norm("FusedBatchNormV3", &x, &bad, &s, &s, &s, &p).unwrap_err();
        assert!(e.message().contains("scale must have shape [3]"), "{e}");
        let e = fused_batch_norm(
            "FusedBatchNormV3",
            &x,
            &s,
            &s,
            &bad,
            &s,
            &params(false, 1.0),
        )
        .unwrap_err();
        assert!(e.message().contains("mean"), "{e}");
    }
}
